#include "agent_config.h"
#include "agent_credentials.h"
#include "yml.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

/* What Docker, Podman and runc mask, and /proc/kallsyms and /sys/kernel: an
 * engine may send none (docker --security-opt systempaths=unconfined). */
static const char *const default_masked[] = {
	"/proc/kallsyms", "/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/timer_stats",
	"/proc/sched_debug", "/proc/latency_stats", "/proc/asound", "/proc/acpi", "/proc/scsi",
	"/sys/firmware", "/sys/kernel", "/sys/devices/virtual/powercap",
};

/* The kernel's knobs: writable, they give root on the host (kernel.core_pattern). */
static const char *const default_readonly[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

/* Devices a config may ask for on top of the standard set: useless without
 * privileges the floor refuses (mounting, CAP_NET_ADMIN), needed by FUSE file
 * systems and VPN clients. */
static const struct floor_device default_allow_devices[] = {
	{'c', 10, 229},     /* fuse */
	{'c', 10, 200},     /* net/tun */
};

/* Names floor.allow_devices knows besides "TYPE MAJOR:MINOR". */
static const struct {
	const char *name;
	struct floor_device dev;
} device_names[] = {
	{"fuse", {'c', 10, 229}}, {"net/tun", {'c', 10, 200}}, {"kvm", {'c', 10, 232}},
	{"vhost-net", {'c', 10, 238}}, {"vhost-vsock", {'c', 10, 241}}, {"loop-control", {'c', 10, 237}},
};

static void defaults(struct agent_config *c)
{
	*c = (struct agent_config){
		.seccomp_profile = "agent",
		.egress_enforce = true,
		.egress_hook_anchor = true,
		.refuse_privileged = true,
		.refuse_host_devices = true,
		.refuse_host_network = true,
		.refuse_host_pid = true,
		.refuse_host_ipc = true,
		.refuse_no_pivot = true,
		.force_no_new_privileges = true,
		.masked_paths = (char **)default_masked,
		.n_masked_paths = ARRAY_SIZE(default_masked),
		.readonly_paths = (char **)default_readonly,
		.n_readonly_paths = ARRAY_SIZE(default_readonly),
		.allow_devices = (struct floor_device *)default_allow_devices,
		.n_allow_devices = ARRAY_SIZE(default_allow_devices),
		.netns_pool = NETNS_POOL_DEFAULT_SIZE,
	};
}

/* A YAML list or a single string of comma-separated entries, joined with ','. */
static int get_entry_list(struct arena *a, const struct yml_node *n, const char *path,
			  const char **ret, struct ab_err *err)
{
	if (n->kind == YML_SCALAR)
		return yml_get_str(n, path, ret, err);
	char **items;
	size_t count;
	if (yml_get_str_list(a, n, path, &items, &count, err) < 0)
		return -1;
	size_t len = 1;
	for (size_t i = 0; i < count; i++)
		len += strlen(items[i]) + 1;
	char *joined = arena_alloc(a, len);
	for (size_t i = 0; i < count; i++) {
		if (i)
			strcat(joined, ",");
		strcat(joined, items[i]);
	}
	*ret = joined;
	return 0;
}

static int load_seccomp(const struct yml_node *n, struct agent_config *c, struct ab_err *err)
{
	static const char *const keys[] = {"profile", NULL};
	if (yml_check_map(n, "seccomp", keys, err) < 0)
		return -1;
	const struct yml_node *p = yml_map_get(n, "profile");
	if (p) {
		if (yml_get_str(p, "seccomp.profile", &c->seccomp_profile, err) < 0)
			return -1;
		if (!streq(c->seccomp_profile, "agent") && !streq(c->seccomp_profile, "default") &&
		    !streq(c->seccomp_profile, "none"))
			return yml_error(err, p, "seccomp.profile", "unknown profile \"%s\" (agent, default, none)",
					 c->seccomp_profile);
	}
	return 0;
}

static int load_egress(struct arena *a, const struct yml_node *n, struct agent_config *c,
		       struct ab_err *err)
{
	static const char *const keys[] = {"enforce", "allow", "deny", "internal", "annotations_may_widen", "hook_anchor",
					   "live_may_widen", "proxy", "learn_allowed", NULL};
	if (yml_check_map(n, "egress", keys, err) < 0)
		return -1;
	const struct yml_node *v;
	if ((v = yml_map_get(n, "enforce")) && yml_get_bool(v, "egress.enforce", &c->egress_enforce, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "allow")) && get_entry_list(a, v, "egress.allow", &c->egress_allow, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "deny")) && get_entry_list(a, v, "egress.deny", &c->egress_deny, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "internal")) && get_entry_list(a, v, "egress.internal", &c->egress_internal, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "annotations_may_widen")) &&
	    yml_get_bool(v, "egress.annotations_may_widen", &c->egress_annotations_may_widen, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "live_may_widen")) &&
	    yml_get_bool(v, "egress.live_may_widen", &c->egress_live_may_widen, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "learn_allowed")) &&
	    yml_get_bool(v, "egress.learn_allowed", &c->egress_learn_allowed, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "hook_anchor")) &&
	    yml_get_bool(v, "egress.hook_anchor", &c->egress_hook_anchor, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "proxy")) && yml_get_bool(v, "egress.proxy", &c->egress_proxy, err) < 0)
		return -1;
	return 0;
}

static int get_path_list(struct arena *a, const struct yml_node *v, const char *key, char ***ret,
			 size_t *ret_n, struct ab_err *err)
{
	if (yml_get_str_list(a, v, key, ret, ret_n, err) < 0)
		return -1;
	for (size_t i = 0; i < *ret_n; i++)
		if ((*ret)[i][0] != '/')
			return yml_error(err, v->items[i], key, "\"%s\" is not an absolute path", (*ret)[i]);
	return 0;
}

/* "c MAJOR:MINOR" or "b MAJOR:MINOR" (either number may be "*"), or a name. */
static bool parse_device(const char *s, struct floor_device *d)
{
	for (size_t i = 0; i < ARRAY_SIZE(device_names); i++)
		if (streq(s, device_names[i].name)) {
			*d = device_names[i].dev;
			return true;
		}
	if ((s[0] != 'c' && s[0] != 'b') || s[1] != ' ')
		return false;
	d->type = s[0];
	const char *p = s + 2;
	int64_t *nums[2] = {&d->major, &d->minor};
	for (int k = 0; k < 2; k++) {
		if (*p == '*') {
			*nums[k] = -1;
			p++;
		} else {
			char *end;
			errno = 0;
			unsigned long v = strtoul(p, &end, 10);
			if (end == p || errno || v > UINT32_MAX || *p == '-' || *p == '+')
				return false;
			*nums[k] = (int64_t)v;
			p = end;
		}
		if (k == 0 && *p++ != ':')
			return false;
	}
	return *p == 0;
}

static int get_device_list(struct arena *a, const struct yml_node *v, struct agent_config *c,
			   struct ab_err *err)
{
	char **items;
	size_t count;
	if (yml_get_str_list(a, v, "floor.allow_devices", &items, &count, err) < 0)
		return -1;
	c->allow_devices = arena_alloc(a, sizeof *c->allow_devices * (count ? count : 1));
	for (size_t i = 0; i < count; i++)
		if (!parse_device(items[i], &c->allow_devices[i]))
			return yml_error(err, v->items[i], "floor.allow_devices",
					 "\"%s\" is not a device (\"c MAJOR:MINOR\", \"b MAJOR:MINOR\" with \"*\" for any number, or fuse, net/tun, kvm, vhost-net, vhost-vsock, loop-control)",
					 items[i]);
	c->n_allow_devices = count;
	return 0;
}

static int load_floor(struct arena *a, const struct yml_node *n, struct agent_config *c,
		      struct ab_err *err)
{
	static const char *const keys[] = {"refuse_privileged", "allow_capabilities", "refuse_host_devices",
					   "allow_devices", "refuse_host_network", "refuse_host_pid",
					   "refuse_host_ipc", "refuse_no_pivot", "force_no_new_privileges",
					   "masked_paths", "readonly_paths", NULL};
	if (yml_check_map(n, "floor", keys, err) < 0)
		return -1;
	static const struct {
		const char *key;
		size_t off;
	} bools[] = {
		{"refuse_privileged", offsetof(struct agent_config, refuse_privileged)},
		{"refuse_host_devices", offsetof(struct agent_config, refuse_host_devices)},
		{"refuse_host_network", offsetof(struct agent_config, refuse_host_network)},
		{"refuse_host_pid", offsetof(struct agent_config, refuse_host_pid)},
		{"refuse_host_ipc", offsetof(struct agent_config, refuse_host_ipc)},
		{"refuse_no_pivot", offsetof(struct agent_config, refuse_no_pivot)},
		{"force_no_new_privileges", offsetof(struct agent_config, force_no_new_privileges)},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bools); i++) {
		const struct yml_node *v = yml_map_get(n, bools[i].key);
		char path[64];
		snprintf(path, sizeof path, "floor.%s", bools[i].key);
		if (v && yml_get_bool(v, path, (bool *)((char *)c + bools[i].off), err) < 0)
			return -1;
	}
	const struct yml_node *v = yml_map_get(n, "allow_capabilities");
	if (v) {
		char **names;
		size_t count;
		if (yml_get_str_list(a, v, "floor.allow_capabilities", &names, &count, err) < 0)
			return -1;
		for (size_t i = 0; i < count; i++) {
			cap_value_t cap;
			if (strncmp(names[i], "CAP_", 4) != 0 || cap_from_name(names[i], &cap) < 0)
				return yml_error(err, v->items[i], "floor.allow_capabilities", "unknown capability \"%s\"", names[i]);
			c->allowed_capabilities |= 1ULL << cap;
		}
	}
	if ((v = yml_map_get(n, "masked_paths")) &&
	    get_path_list(a, v, "floor.masked_paths", &c->masked_paths, &c->n_masked_paths, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "readonly_paths")) &&
	    get_path_list(a, v, "floor.readonly_paths", &c->readonly_paths, &c->n_readonly_paths, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "allow_devices")) && get_device_list(a, v, c, err) < 0)
		return -1;
	return 0;
}

static int load_runtime(const struct yml_node *n, struct agent_config *c, struct ab_err *err)
{
	static const char *const keys[] = {"netns_pool", NULL};
	if (yml_check_map(n, "runtime", keys, err) < 0)
		return -1;
	const struct yml_node *v = yml_map_get(n, "netns_pool");
	int64_t size;
	if (v) {
		if (yml_get_int(v, "runtime.netns_pool", 0, NETNS_POOL_MAX_SIZE, &size, err) < 0)
			return -1;
		c->netns_pool = (unsigned)size;
	}
	return 0;
}

/* log: where the durable egress log goes, and its bounds (deny_log.c). */
static int load_log(const struct yml_node *n, struct agent_config *c, struct ab_err *err)
{
	static const char *const keys[] = {"dir", "max_bytes", "max_total", NULL};
	if (yml_check_map(n, "log", keys, err) < 0)
		return -1;
	const struct yml_node *v;
	if ((v = yml_map_get(n, "dir"))) {
		if (yml_get_str(v, "log.dir", &c->log_dir, err) < 0)
			return -1;
		if (c->log_dir[0] != '/')
			return yml_error(err, v, "log.dir", "\"%s\" is not an absolute path", c->log_dir);
	}
	int64_t size;
	/* a few records at least; no more than a file system is likely to hold */
	if ((v = yml_map_get(n, "max_bytes"))) {
		if (yml_get_int(v, "log.max_bytes", 4096, INT64_C(1) << 40, &size, err) < 0)
			return -1;
		c->log_max_bytes = (uint64_t)size;
	}
	if ((v = yml_map_get(n, "max_total"))) {
		if (yml_get_int(v, "log.max_total", 65536, INT64_C(1) << 50, &size, err) < 0)
			return -1;
		c->log_max_total = (uint64_t)size;
	}
	return 0;
}

int agent_config_load(const char *path, struct arena *a, struct agent_config *ret, struct ab_err *err)
{
	defaults(ret);
	const char *file = path ? path : DEFAULT_AGENT_CONFIG;
	ret->credentials.file = file;
	if (!path && access(file, F_OK) < 0)
		return 0;     /* no file: the built-in defaults */
	struct yml_node *root;
	if (yml_load(a, file, NULL, &root, err) < 0)
		return ab_wrap(err, "--config");
	ret->path = arena_strdup(a, file);
	if (!root)
		return 0;
	static const char *const keys[] = {"seccomp", "egress", "floor", "runtime", "log", "credentials", "gateway",
					   NULL};
	if (yml_check_map(root, NULL, keys, err) < 0)
		return -1;
	const struct yml_node *n;
	if ((n = yml_map_get(root, "seccomp")) && load_seccomp(n, ret, err) < 0)
		return -1;
	if ((n = yml_map_get(root, "egress")) && load_egress(a, n, ret, err) < 0)
		return -1;
	if ((n = yml_map_get(root, "floor")) && load_floor(a, n, ret, err) < 0)
		return -1;
	if ((n = yml_map_get(root, "runtime")) && load_runtime(n, ret, err) < 0)
		return -1;
	if ((n = yml_map_get(root, "log")) && load_log(n, ret, err) < 0)
		return -1;
	if (agent_credentials_load(a, yml_map_get(root, "credentials"), yml_map_get(root, "gateway"),
				   agent_config_name(ret), &ret->credentials, err) < 0)
		return -1;
	return 0;
}
