/* spec: a default config.json, close to runc's, for a rootfs at "rootfs". */
#include "commands.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>

static void str_array(struct json_out *o, const char *key, const char *const *v, size_t n)
{
	json_key(o, key);
	json_arr_begin(o);
	for (size_t i = 0; i < n; i++)
		json_str(o, v[i]);
	json_arr_end(o);
}

static void mount_entry(struct json_out *o, const char *dest, const char *type, const char *src,
			const char *const *opts, size_t n)
{
	json_obj_begin(o);
	json_kv_str(o, "destination", dest);
	json_kv_str(o, "type", type);
	json_kv_str(o, "source", src);
	str_array(o, "options", opts, n);
	json_obj_end(o);
}

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
	str_array(o, "args", args, 1);
	str_array(o, "env", env, 2);
	json_kv_str(o, "cwd", "/");
	json_key(o, "capabilities");
	json_obj_begin(o);
	str_array(o, "bounding", caps, 3);
	str_array(o, "effective", caps, 3);
	str_array(o, "permitted", caps, 3);
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
	static const char *const proc_o[] = {"nosuid", "noexec", "nodev"};
	static const char *const dev_o[] = {"nosuid", "strictatime", "mode=755", "size=65536k"};
	static const char *const pts_o[] = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"};
	static const char *const shm_o[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"};
	static const char *const mq_o[] = {"nosuid", "noexec", "nodev"};
	static const char *const sys_o[] = {"nosuid", "noexec", "nodev", "ro"};
	static const char *const cg_o[] = {"nosuid", "noexec", "nodev", "relatime", "ro"};
	mount_entry(o, "/proc", "proc", "proc", proc_o, 3);
	mount_entry(o, "/dev", "tmpfs", "tmpfs", dev_o, 4);
	mount_entry(o, "/dev/pts", "devpts", "devpts", pts_o, rootless ? 5 : 6);
	mount_entry(o, "/dev/shm", "tmpfs", "shm", shm_o, 5);
	mount_entry(o, "/dev/mqueue", "mqueue", "mqueue", mq_o, 3);
	mount_entry(o, "/sys", "sysfs", "sysfs", sys_o, 4);
	mount_entry(o, "/sys/fs/cgroup", "cgroup", "cgroup", cg_o, 5);
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
	static const char *const ns[] = {"pid", "network", "ipc", "uts", "mount", "cgroup", "user"};
	for (size_t i = 0; i < (rootless ? 7u : 6u); i++) {
		json_obj_begin(o);
		json_kv_str(o, "type", ns[i]);
		json_obj_end(o);
	}
	json_arr_end(o);
	static const char *const masked[] = {
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
		"/proc/scsi", "/sys/devices/virtual/powercap"};
	static const char *const ro[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"};
	str_array(o, "maskedPaths", masked, ARRAY_SIZE(masked));
	str_array(o, "readonlyPaths", ro, ARRAY_SIZE(ro));
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
