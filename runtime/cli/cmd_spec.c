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

static int spec_options(int argc, char **argv, const char **bundle, bool *rootless, struct ab_err *err)
{
	static const struct option opts[] = {
		{"bundle", required_argument, NULL, 'b'}, {"rootless", no_argument, NULL, 'r'}, {0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "b:", opts, NULL)) != -1) {
		if (c == 'b')
			*bundle = optarg;
		else if (c == 'r')
			*rootless = true;
		else
			return ab_error(err, 0, "spec: unknown or incomplete option \"%s\"", argv[optind - 1]);
	}
	if (optind != argc)
		return ab_error(err, 0, "spec: takes no arguments");
	return 0;
}

static void spec_process(struct json_out *o)
{
	static const char *const caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
	static const char *const env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"};
	static const char *const args[] = {"sh"};
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
}

static void spec_linux(struct json_out *o, bool rootless)
{
	json_key(o, "linux");
	json_obj_begin(o);
	if (rootless) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		oci_one_id_mapping(o, "uidMappings", 0, uid);
		oci_one_id_mapping(o, "gidMappings", 0, gid);
	}
	json_key(o, "resources");
	json_obj_begin(o);
	oci_default_device_rules(o);
	json_obj_end(o);
	/* A cgroup namespace only where the container's /sys/fs/cgroup is the one
	 * cgroup2 tree (pure v2), as runc's template does: on v1 and hybrid hosts
	 * the tools in the container expect the host's paths. */
	bool cgroupns = cgroup_host_mode() == CGROUP_MODE_V2;
	const char *ns[7] = {"pid", "network", "ipc", "uts", "mount"};
	size_t n = 5;
	if (cgroupns)
		ns[n++] = "cgroup";
	if (rootless)
		ns[n++] = "user";
	oci_namespaces(o, ns, n);
	oci_default_paths(o);
	json_obj_end(o);
}

/* BUNDLE/config.json, created: an existing one is never replaced. */
static int write_spec(const char *bundle, struct json_out *o, struct ab_err *err)
{
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
	return r;
}

int cmd_spec(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	const char *bundle = ".";
	bool rootless = false;
	if (spec_options(argc, argv, &bundle, &rootless, err) < 0)
		return -1;

	struct json_out *o = json_out_new(true);
	json_obj_begin(o);
	json_kv_str(o, "ociVersion", "1.2.0");
	spec_process(o);
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
	spec_linux(o, rootless);
	json_obj_end(o);

	int r = write_spec(bundle, o, err);
	json_out_free(o);
	return r;
}
