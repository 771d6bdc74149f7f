/* features: the runtime-spec features document, truthful to what is compiled in. */
#include "caps.h"
#include "commands.h"
#include "config_linux.h"
#include "json.h"
#include "seccomp.h"
#include "util.h"

#include <string.h>

#include <sys/capability.h>

static void str_array(struct json_out *o, const char *key, const char *const *v, size_t n)
{
	json_key(o, key);
	json_arr_begin(o);
	for (size_t i = 0; i < n; i++)
		json_str(o, v[i]);
	json_arr_end(o);
}

/* "capabilities": every one the kernel knows, as CAP_NAME */
static void capabilities(struct json_out *o)
{
	json_key(o, "capabilities");
	json_arr_begin(o);
	int last = caps_last_cap();
	for (int c = 0; c <= last; c++) {
		char *name = cap_to_name(c);
		if (!name)
			continue;
		char upper[64];
		size_t i = 0;
		for (; name[i] && i < sizeof upper - 1; i++)
			upper[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
		upper[i] = 0;
		json_str(o, upper);
		cap_free(name);
	}
	json_arr_end(o);
}

/* "key": {"enabled": on} */
static void enabled(struct json_out *o, const char *key, bool on)
{
	json_key(o, key);
	json_obj_begin(o);
	json_kv_bool(o, "enabled", on);
	json_obj_end(o);
}

/* "memoryPolicy": the modes and flags config.json may name */
static void memory_policy(struct json_out *o)
{
	json_key(o, "memoryPolicy");
	json_obj_begin(o);
	json_key(o, "modes");
	json_arr_begin(o);
	for (size_t i = 0; oci_mempolicy_mode_name(i); i++)
		json_str(o, oci_mempolicy_mode_name(i));
	json_arr_end(o);
	json_key(o, "flags");
	json_arr_begin(o);
	for (size_t i = 0; oci_mempolicy_flag_name(i); i++)
		json_str(o, oci_mempolicy_flag_name(i));
	json_arr_end(o);
	json_obj_end(o);
}

/* "linux": {...} */
static void linux_features(struct json_out *o)
{
	static const char *const ns[] = {"cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"};
	json_key(o, "linux");
	json_obj_begin(o);
	str_array(o, "namespaces", ns, ARRAY_SIZE(ns));
	capabilities(o);
	json_key(o, "cgroup");
	json_obj_begin(o);
	json_kv_bool(o, "v1", true);
	json_kv_bool(o, "v2", true);
	json_kv_bool(o, "systemd", false);
	json_kv_bool(o, "systemdUser", false);
	json_kv_bool(o, "rdma", false);
	json_obj_end(o);
	json_key(o, "seccomp");
	json_obj_begin(o);
	seccomp_features_json(o);
	json_obj_end(o);
	enabled(o, "apparmor", true);
	enabled(o, "selinux", false);
	enabled(o, "intelRdt", false);
	json_key(o, "mountExtensions");
	json_obj_begin(o);
	enabled(o, "idmap", true);      /* idmap.c */
	json_obj_end(o);
	memory_policy(o);
	json_obj_end(o);
}

int cmd_features(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	/* JSON is its only output: --json, asked for as elsewhere, changes nothing */
	if (argc != 1 && !(argc == 2 && streq(argv[1], "--json")))
		return ab_error(err, 0, "features: takes no arguments");
	static const char *const hooks[] = {"prestart", "createRuntime", "createContainer",
					    "startContainer", "poststart", "poststop"};
	static const char *const mount_opts[] = {
		"acl", "async", "atime", "bind", "defaults", "dev", "diratime", "dirsync", "exec",
		"idmap", "lazytime", "loud", "mand", "noacl", "noatime", "nodev", "nodiratime",
		"noexec", "nolazytime", "nomand", "norelatime", "nostrictatime", "nosuid", "nosymfollow",
		"private", "ratime", "rbind", "rdev", "rdiratime", "relatime", "remount", "rexec",
		"rnoatime", "rnodev", "rnodiratime", "rnoexec", "rnorelatime", "rnostrictatime",
		"rnosuid", "rnosymfollow", "ro", "rprivate", "rrelatime", "rro", "rrw", "rshared",
		"rslave", "rstrictatime", "rsuid", "rsymfollow", "runbindable", "rw", "shared",
		"silent", "slave", "strictatime", "suid", "symfollow", "sync", "tmpcopyup",
		"unbindable"};
	struct json_out *o = json_out_new(true);
	json_obj_begin(o);
	json_kv_str(o, "ociVersionMin", "1.0.0");
	json_kv_str(o, "ociVersionMax", "1.2.0");
	str_array(o, "hooks", hooks, ARRAY_SIZE(hooks));
	str_array(o, "mountOptions", mount_opts, ARRAY_SIZE(mount_opts));
	linux_features(o);
	json_key(o, "annotations");
	json_obj_begin(o);
	json_kv_str(o, "io.github.agentbox.version", AGENTBOX_VERSION);
	json_kv_str(o, "io.github.agentbox.seccomp.profiles", "agent,default,none");
	json_obj_end(o);
	json_obj_end(o);
	print_json(o);
	return 0;
}
