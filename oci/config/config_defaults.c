/* The standard file systems and hidden paths of a default config.json, shared
 * by `agentbox spec` and kit build so the two never drift apart. */
#include "config_defaults.h"

#include "json.h"
#include "util.h"

static void mount_obj(struct json_out *o, const char *dest, const char *type, const char *src,
		      const char *const *opts, size_t n)
{
	json_obj_begin(o);
	json_kv_str(o, "destination", dest);
	json_kv_str(o, "type", type);
	json_kv_str(o, "source", src);
	json_kv_strs(o, "options", opts, n);
	json_obj_end(o);
}

void oci_default_mounts(struct json_out *o, bool devpts_tty_group)
{
	static const char *const proc[] = {"nosuid", "noexec", "nodev"};
	static const char *const dev[] = {"nosuid", "strictatime", "mode=755", "size=65536k"};
	/* gid=5 last: left out where group 5 may not exist */
	static const char *const pts[] = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"};
	static const char *const shm[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"};
	static const char *const sys[] = {"nosuid", "noexec", "nodev", "ro"};
	static const char *const cg[] = {"nosuid", "noexec", "nodev", "relatime", "ro"};
	mount_obj(o, "/proc", "proc", "proc", proc, ARRAY_SIZE(proc));
	mount_obj(o, "/dev", "tmpfs", "tmpfs", dev, ARRAY_SIZE(dev));
	mount_obj(o, "/dev/pts", "devpts", "devpts", pts, ARRAY_SIZE(pts) - !devpts_tty_group);
	mount_obj(o, "/dev/shm", "tmpfs", "shm", shm, ARRAY_SIZE(shm));
	mount_obj(o, "/dev/mqueue", "mqueue", "mqueue", proc, ARRAY_SIZE(proc));
	mount_obj(o, "/sys", "sysfs", "sysfs", sys, ARRAY_SIZE(sys));
	mount_obj(o, "/sys/fs/cgroup", "cgroup", "cgroup", cg, ARRAY_SIZE(cg));
}

void oci_default_paths(struct json_out *o)
{
	static const char *const masked[] = {
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
		"/proc/scsi", "/sys/devices/virtual/powercap",
	};
	/* the kernel's knobs: writable, they give root on the host */
	static const char *const readonly[] = {
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	};
	json_kv_strs(o, "maskedPaths", masked, ARRAY_SIZE(masked));
	json_kv_strs(o, "readonlyPaths", readonly, ARRAY_SIZE(readonly));
}

void oci_default_device_rules(struct json_out *o)
{
	json_key(o, "devices");
	json_arr_begin(o);
	json_obj_begin(o);
	json_kv_bool(o, "allow", false);
	json_kv_str(o, "access", "rwm");
	json_obj_end(o);
	json_arr_end(o);
}

void oci_namespaces(struct json_out *o, const char *const *types, size_t n)
{
	json_key(o, "namespaces");
	json_arr_begin(o);
	for (size_t i = 0; i < n; i++) {
		json_obj_begin(o);
		json_kv_str(o, "type", types[i]);
		json_obj_end(o);
	}
	json_arr_end(o);
}

void oci_one_id_mapping(struct json_out *o, const char *key, uint32_t container_id, uint32_t host_id)
{
	json_key(o, key);
	json_arr_begin(o);
	json_obj_begin(o);
	json_kv_uint(o, "containerID", container_id);
	json_kv_uint(o, "hostID", host_id);
	json_kv_uint(o, "size", 1);
	json_obj_end(o);
	json_arr_end(o);
}
