/* spec: a default config.json, close to runc's, for a rootfs at "rootfs". */
#include "commands.h"
#include "cgroups_host.h"
#include "config_defaults.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>

int cmd_spec(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"bundle", required_argument, NULL, 'b'}, {"rootless", no_argument, NULL, 'r'}, {0}};
	const char *bundle = ".";
	bool rootless = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "b:", opts, NULL)) != -1) {
		if (c == 'b')
			bundle = optarg;
		else if (c == 'r')
			rootless = true;
		else
			return ab_error(err, 0, "spec: unknown or incomplete option \"%s\"", argv[optind - 1]);
	}
	if (optind != argc)
		return ab_error(err, 0, "spec: takes no arguments");

	static const char *const caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
	static const char *const env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"};
	static const char *const args[] = {"sh"};
	struct json_out *o = json_out_new(true);
	json_obj_begin(o);
	json_kv_str(o, "ociVersion", "1.2.0");
	json_key(o, "process");
	json_obj_begin(o);
	json_kv_bool(o, "terminal", true);
	json_key(o, "user");
	json_obj_begin(o);
	json_kv_int(o, "uid", 0);
	json_kv_int(o, "gid", 0);
	json_obj_end(o);
	json_kv_strs(o, "args", args, 1);
	json_kv_strs(o, "env", env, 2);
	json_kv_str(o, "cwd", "/");
	json_key(o, "capabilities");
	json_obj_begin(o);
	json_kv_strs(o, "bounding", caps, 3);
	json_kv_strs(o, "effective", caps, 3);
	json_kv_strs(o, "permitted", caps, 3);
	json_obj_end(o);
	json_key(o, "rlimits");
	json_arr_begin(o);
	json_obj_begin(o);
	json_kv_str(o, "type", "RLIMIT_NOFILE");
	json_kv_uint(o, "hard", 1024);
	json_kv_uint(o, "soft", 1024);
	json_obj_end(o);
	json_arr_end(o);
	json_kv_bool(o, "noNewPrivileges", true);
	json_obj_end(o);
	json_key(o, "root");
	json_obj_begin(o);
	json_kv_str(o, "path", "rootfs");
	json_kv_bool(o, "readonly", true);
	json_obj_end(o);
	json_kv_str(o, "hostname", "agentbox");
	json_key(o, "mounts");
	json_arr_begin(o);
	oci_default_mounts(o, !rootless);
	json_arr_end(o);
	json_key(o, "linux");
	json_obj_begin(o);
	if (rootless) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		json_key(o, "uidMappings");
		json_arr_begin(o);
		json_obj_begin(o);
		json_kv_int(o, "containerID", 0);
		json_kv_int(o, "hostID", uid);
		json_kv_int(o, "size", 1);
		json_obj_end(o);
		json_arr_end(o);
		json_key(o, "gidMappings");
		json_arr_begin(o);
		json_obj_begin(o);
		json_kv_int(o, "containerID", 0);
		json_kv_int(o, "hostID", gid);
		json_kv_int(o, "size", 1);
		json_obj_end(o);
		json_arr_end(o);
	}
	json_key(o, "resources");
	json_obj_begin(o);
	json_key(o, "devices");
	json_arr_begin(o);
	json_obj_begin(o);
	json_kv_bool(o, "allow", false);
	json_kv_str(o, "access", "rwm");
	json_obj_end(o);
	json_arr_end(o);
	json_obj_end(o);
	json_key(o, "namespaces");
	json_arr_begin(o);
	/* A cgroup namespace only where the container's /sys/fs/cgroup is the one
	 * cgroup2 tree (pure v2), as runc's template does: on v1 and hybrid hosts
	 * the tools in the container expect the host's paths. */
	bool cgroupns = cgroup_host_mode() == CGROUP_MODE_V2;
	static const char *const ns[] = {"pid", "network", "ipc", "uts", "mount"};
	for (size_t i = 0; i < ARRAY_SIZE(ns) + cgroupns + rootless; i++) {
		json_obj_begin(o);
		json_kv_str(o, "type", i < ARRAY_SIZE(ns) ? ns[i] : i == ARRAY_SIZE(ns) && cgroupns ? "cgroup" : "user");
		json_obj_end(o);
	}
	json_arr_end(o);
	oci_default_paths(o);
	json_obj_end(o);
	json_obj_end(o);

	char path[4096];
	snprintf(path, sizeof path, "%s/config.json", bundle);
	size_t len;
	const char *text = json_out_text(o, &len);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int r = 0;
	if (fd < 0)
		r = errno == EEXIST ? ab_error(err, 0, "spec: %s already exists; remove it first", path)
				    : ab_error(err, errno, "spec: create %s", path);
	else {
		if (write_all(fd, text, len) < 0 || write_all(fd, "\n", 1) < 0)
			r = ab_error(err, errno, "spec: write %s", path);
		close(fd);
	}
	json_out_free(o);
	return r;
}
