/* config.json "linux": namespaces, id mappings, devices, sysctl, paths,
 * propagation, personality, time offsets and net devices. Resources and
 * seccomp have their own files. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>

#include "config_walk.h"
#include "config_linux.h"
#include "config_resources.h"
#include "config_seccomp.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	const char *name;
	enum oci_ns_kind kind;
	int flag;
} ns_types[] = {
	{ "pid", NS_PID, CLONE_NEWPID },       { "network", NS_NETWORK, CLONE_NEWNET },
	{ "mount", NS_MOUNT, CLONE_NEWNS },    { "ipc", NS_IPC, CLONE_NEWIPC },
	{ "uts", NS_UTS, CLONE_NEWUTS },       { "user", NS_USER, CLONE_NEWUSER },
	{ "cgroup", NS_CGROUP, CLONE_NEWCGROUP }, { "time", NS_TIME, CLONE_NEWTIME },
};

#define LNX struct oci_linux

static int parse_namespace_type(struct walk *w, yajl_val v, void *at)
{
	struct oci_namespace *ns = at;
	char *type = NULL;
	int r = walk_str(w, v, &type);
	if (r > 0) {
		size_t i = 0;
		while (i < ARRAY_SIZE(ns_types) && !streq(type, ns_types[i].name))
			i++;
		if (i == ARRAY_SIZE(ns_types))
			return walk_fail(w, "unknown namespace type \"%.100s\"", type);
		ns->kind = ns_types[i].kind;
		ns->clone_flag = ns_types[i].flag;
	}
	return r;
}

static const struct walk_field namespace_fields[] = {
	{ "type", WF_PARSE(parse_namespace_type), .required = true },
	{ "path", WF_ABS_PATH(struct oci_namespace, path) },
	{ 0 },
};

static int namespace_unique(struct walk *w, const void *items, size_t i)
{
	const struct oci_namespace *ns = items;
	for (size_t j = 0; j < i; j++)
		if (ns[j].kind == ns[i].kind)
			return walk_fail(w, "duplicate namespace type \"%s\" (also at index %zu)",
					 oci_ns_kind_name(ns[i].kind), j);
	return 0;
}

static int parse_id_size(struct walk *w, yajl_val v, void *at)
{
	uint32_t *size = at;
	int r = walk_u32(w, v, size);
	if (r > 0 && *size == 0)
		return walk_fail(w, "must be greater than zero");
	return r;
}

static const struct walk_field id_mapping_fields[] = {
	{ "containerID", WF_U32(struct oci_id_mapping, container_id, UINT32_MAX), .required = true },
	{ "hostID", WF_U32(struct oci_id_mapping, host_id, UINT32_MAX), .required = true },
	{ "size", WF_CUSTOM(struct oci_id_mapping, size, parse_id_size), .required = true },
	{ 0 },
};

int parse_id_mapping(struct walk *w, yajl_val v, void *at)
{
	struct oci_id_mapping *m = at;
	int r = walk_fields(w, v, id_mapping_fields, m, NULL);
	if (r <= 0)
		return r;
	/* Ids are 32-bit; a range running past the top is meaningless. */
	if ((uint64_t)m->container_id + m->size > (UINT64_C(1) << 32) ||
	    (uint64_t)m->host_id + m->size > (UINT64_C(1) << 32))
		return walk_fail(w, "range %u+%u runs past the largest id", m->host_id, m->size);
	return 1;
}

static int parse_device_type(struct walk *w, yajl_val v, void *at)
{
	char *t = NULL;
	int r = walk_str(w, v, &t);
	if (r > 0 && (strlen(t) != 1 || !strchr("cbup", t[0])))
		return walk_fail(w, "unknown device type \"%.100s\" (want c, b, u or p)", t);
	if (r > 0)
		*(char *)at = t[0];
	return r;
}

enum { DEVICE_MAJOR = 2, DEVICE_MINOR = 3 };    /* their places in device_fields */

static const struct walk_field device_fields[] = {
	{ "type", WF_CUSTOM(struct oci_device, type, parse_device_type), .required = true },
	{ "path", WF_ABS_PATH(struct oci_device, path), .required = true },
	[DEVICE_MAJOR] = { "major", WF_I64(struct oci_device, major, 0, UINT32_MAX) },
	[DEVICE_MINOR] = { "minor", WF_I64(struct oci_device, minor, 0, UINT32_MAX) },
	/* Kept as written (podman adds S_IFCHR bits); masked on use. */
	{ "fileMode", WF_U32(struct oci_device, file_mode, UINT32_MAX), WF_HAS(struct oci_device, has_file_mode) },
	{ "uid", WF_U32(struct oci_device, uid, UINT32_MAX), WF_HAS(struct oci_device, has_uid) },
	{ "gid", WF_U32(struct oci_device, gid, UINT32_MAX), WF_HAS(struct oci_device, has_gid) },
	{ 0 },
};

static int parse_device(struct walk *w, yajl_val v, void *at)
{
	struct oci_device *d = at;
	uint64_t seen;
	int r = walk_fields(w, v, device_fields, d, &seen);
	if (r <= 0)
		return r;
	if (d->type != 'p' && !WF_SEEN(seen, DEVICE_MAJOR))
		return walk_missing(w, "major");
	if (d->type != 'p' && !WF_SEEN(seen, DEVICE_MINOR))
		return walk_missing(w, "minor");
	return 1;
}

static int parse_abs_paths(struct walk *w, yajl_val v, char ***out, size_t *n)
{
	int r = walk_str_array(w, v, out, n);
	for (size_t i = 0; r > 0 && i < *n; i++) {
		if ((*out)[i][0] != '/') {
			walk_push_index(w, i);
			return walk_fail(w, "must be an absolute path, got \"%.300s\"", (*out)[i]);
		}
	}
	return r;
}

static int parse_masked_paths(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	return parse_abs_paths(w, v, &l->masked_paths, &l->n_masked_paths);
}

static int parse_readonly_paths(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	return parse_abs_paths(w, v, &l->readonly_paths, &l->n_readonly_paths);
}

static int parse_sysctl(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	int r = walk_str_map(w, v, &l->sysctl, &l->n_sysctl);
	for (size_t i = 0; r > 0 && i < l->n_sysctl; i++) {
		const char *key = l->sysctl[i].key;
		/* The key becomes a path under /proc/sys: keep it there. */
		if (!*key || key[0] == '/' || key[0] == '.' || strstr(key, "..")) {
			walk_push_map_key(w, key);
			return walk_fail(w, "not a sysctl name");
		}
	}
	return r;
}

static int parse_rootfs_propagation(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	static const struct {
		const char *name;
		unsigned long flag;
	} modes[] = {
		{ "private", MS_PRIVATE }, { "rprivate", MS_PRIVATE },
		{ "shared", MS_SHARED },   { "rshared", MS_SHARED },
		{ "slave", MS_SLAVE },     { "rslave", MS_SLAVE },
		{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE },
	};
	int r = walk_str(w, v, &l->rootfs_propagation);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		if (streq(l->rootfs_propagation, modes[i].name)) {
			l->rootfs_propagation_flags = modes[i].flag | MS_REC;
			return 1;
		}
	}
	return walk_fail(w, "unknown propagation \"%.100s\" (want private, shared, slave or unbindable)",
			 l->rootfs_propagation);
}

/* Intel RDT (resctrl) is not applied here: an empty object (what engines send
 * when nothing is asked) passes, anything asked for is refused. */
static int parse_intel_rdt(struct walk *w, yajl_val v, void *at)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	if (v->u.object.len) {
		walk_push_key(w, v->u.object.keys[0]);
		return walk_fail(w, "Intel RDT (resctrl) is not supported by agentbox: refused rather than ignored");
	}
	return 1;
}

static int parse_personality_domain(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	int r = walk_str(w, v, &l->personality_domain);
	if (r > 0 && streq(l->personality_domain, "LINUX"))
		l->personality = PER_LINUX;
	else if (r > 0 && streq(l->personality_domain, "LINUX32"))
		l->personality = PER_LINUX32;
	else if (r > 0)
		return walk_fail(w, "unknown personality domain \"%.100s\" (want LINUX or LINUX32)",
				 l->personality_domain);
	return r;
}

/* The spec names none yet: one given would be dropped */
static int parse_personality_flags(struct walk *w, yajl_val v, void *at)
{
	char **flags;
	size_t n;
	int r = walk_str_array(w, v, &flags, &n);
	if (r > 0 && n) {
		walk_push_index(w, 0);
		return walk_fail(w, "unknown personality flag \"%.100s\": not applied, so refused", flags[0]);
	}
	return r;
}

static const struct walk_field personality_fields[] = {
	{ "domain", WF_PARSE(parse_personality_domain), .required = true },
	{ "flags", WF_PARSE(parse_personality_flags) },
	{ 0 },
};

/* The kernel's numbers (linux/mempolicy.h): the spec names them. */
static const struct {
	const char *name;
	int mode;
	bool nodes;                 /* needs a node list */
} mempolicy_modes[] = {
	{ "MPOL_DEFAULT", 0, false },   { "MPOL_PREFERRED", 1, false }, { "MPOL_BIND", 2, true },
	{ "MPOL_INTERLEAVE", 3, true }, { "MPOL_LOCAL", 4, false },     { "MPOL_PREFERRED_MANY", 5, true },
	{ "MPOL_WEIGHTED_INTERLEAVE", 6, true },
};

static const struct {
	const char *name;
	unsigned flag;
} mempolicy_flags[] = {
	{ "MPOL_F_NUMA_BALANCING", 1u << 13 }, { "MPOL_F_RELATIVE_NODES", 1u << 14 },
	{ "MPOL_F_STATIC_NODES", 1u << 15 },
};

/* "0-3,7" into the node mask; -1 with w->err filled. */
static int parse_node_list(struct walk *w, struct oci_memory_policy *mp)
{
	if (!cpu_list_valid(mp->nodes))
		return walk_fail(w, "not a node list like \"0-3,7\": \"%.100s\"", mp->nodes);
	const char *p = mp->nodes;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi >= OCI_NUMA_NODES_MAX)
			return walk_fail(w, "node %lu is out of range (0..%d)", hi, OCI_NUMA_NODES_MAX - 1);
		for (unsigned long n = lo; n <= hi; n++)
			mp->nodemask[n / (8 * sizeof(unsigned long))] |= 1UL << (n % (8 * sizeof(unsigned long)));
		if (hi + 2 > mp->maxnode)
			mp->maxnode = hi + 2;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int parse_mempolicy_mode(struct walk *w, yajl_val v, void *at)
{
	struct oci_memory_policy *mp = at;
	int r = walk_str(w, v, &mp->mode);
	size_t i = 0;
	while (r > 0 && i < ARRAY_SIZE(mempolicy_modes) && !streq(mp->mode, mempolicy_modes[i].name))
		i++;
	if (r > 0 && i == ARRAY_SIZE(mempolicy_modes))
		return walk_fail(w, "unknown memory policy mode \"%.100s\"", mp->mode);
	if (r > 0)
		mp->mode_num = mempolicy_modes[i].mode;
	return r;
}

static int parse_mempolicy_nodes(struct walk *w, yajl_val v, void *at)
{
	struct oci_memory_policy *mp = at;
	int r = walk_str(w, v, &mp->nodes);
	if (r > 0 && *mp->nodes && parse_node_list(w, mp) < 0)
		return -1;
	return r;
}

static int parse_mempolicy_flags(struct walk *w, yajl_val v, void *at)
{
	struct oci_memory_policy *mp = at;
	char **flags;
	size_t n;
	int r = walk_str_array(w, v, &flags, &n);
	for (size_t i = 0; r > 0 && i < n; i++) {
		size_t j = 0;
		while (j < ARRAY_SIZE(mempolicy_flags) && !streq(flags[i], mempolicy_flags[j].name))
			j++;
		if (j == ARRAY_SIZE(mempolicy_flags)) {
			walk_push_index(w, i);
			return walk_fail(w, "unknown memory policy flag \"%.100s\"", flags[i]);
		}
		mp->flags |= mempolicy_flags[j].flag;
	}
	return r;
}

static const struct walk_field mempolicy_fields[] = {
	{ "mode", WF_PARSE(parse_mempolicy_mode), .required = true },
	{ "nodes", WF_PARSE(parse_mempolicy_nodes) },
	{ "flags", WF_PARSE(parse_mempolicy_flags) },
	{ 0 },
};

static bool mempolicy_needs_nodes(int mode_num)
{
	for (size_t i = 0; i < ARRAY_SIZE(mempolicy_modes); i++)
		if (mempolicy_modes[i].mode == mode_num)
			return mempolicy_modes[i].nodes;
	return false;
}

static int parse_memory_policy(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	struct oci_memory_policy *mp = &l->memory_policy;
	int r = walk_fields(w, v, mempolicy_fields, mp, NULL);
	if (r <= 0)
		return r;
	/* what set_mempolicy(2) would refuse, named here rather than as EINVAL */
	if (mempolicy_needs_nodes(mp->mode_num) && !mp->maxnode)
		return walk_fail(w, "%s needs nodes", mp->mode);
	if ((mp->mode_num == 0 || mp->mode_num == 4) && mp->maxnode)
		return walk_fail(w, "%s takes no nodes", mp->mode);
	if ((mp->flags & (1u << 14)) && (mp->flags & (1u << 15)))
		return walk_fail(w, "MPOL_F_RELATIVE_NODES and MPOL_F_STATIC_NODES exclude each other");
	l->has_memory_policy = true;
	return 1;
}

const char *oci_mempolicy_mode_name(size_t i)
{
	return i < ARRAY_SIZE(mempolicy_modes) ? mempolicy_modes[i].name : NULL;
}

const char *oci_mempolicy_flag_name(size_t i)
{
	return i < ARRAY_SIZE(mempolicy_flags) ? mempolicy_flags[i].name : NULL;
}

static const struct walk_field monotonic_fields[] = {
	{ "secs", WF_I64(LNX, time_monotonic_secs, INT64_MIN, INT64_MAX) },
	{ "nanosecs", WF_U32(LNX, time_monotonic_nanosecs, 999999999) },
	{ 0 },
};

static const struct walk_field boottime_fields[] = {
	{ "secs", WF_I64(LNX, time_boottime_secs, INT64_MIN, INT64_MAX) },
	{ "nanosecs", WF_U32(LNX, time_boottime_nanosecs, 999999999) },
	{ 0 },
};

static int unknown_clock(struct walk *w, yajl_val v, void *at)
{
	return walk_fail(w, "unknown clock (want monotonic or boottime)");
}

static const struct walk_field time_offsets_fields[] = {
	{ "monotonic", WF_FLAT(monotonic_fields) },
	{ "boottime", WF_FLAT(boottime_fields) },
	{ .parse = unknown_clock },
};

/* A network interface name as the kernel takes it (dev_valid_name). */
static bool valid_ifname(const char *s)
{
	return *s && strlen(s) < 16 && !streq(s, ".") && !streq(s, "..") &&
	       !s[strcspn(s, "/: \t\n\r\f\v")];
}

static const struct walk_field net_device_fields[] = {
	{ "name", WF_VALID_STR(struct oci_kv, value, valid_ifname, "a network interface name") },
	{ 0 },
};

static int parse_net_devices(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	l->net_devices = arena_alloc(w->a, (v->u.object.len + 1) * sizeof *l->net_devices);
	const char *host;
	yajl_val dev;
	size_t n = 0;
	WALK_MAP(w, v, host, dev) {
		if (!valid_ifname(host))
			return walk_fail(w, "not a network interface name");
		struct oci_kv *kv = &l->net_devices[n++];
		kv->key = arena_strdup(w->a, host);
		if (walk_fields(w, dev, net_device_fields, kv, NULL) < 0)
			return -1;
	}
	l->n_net_devices = n;
	return 1;
}

static const struct walk_field linux_fields[] = {
	{ "namespaces", WF_LIST(LNX, namespaces, n_namespaces, struct oci_namespace),
	  .fields = namespace_fields, .check = namespace_unique },
	{ "uidMappings", WF_LIST(LNX, uid_mappings, n_uid_mappings, struct oci_id_mapping), .parse = parse_id_mapping },
	{ "gidMappings", WF_LIST(LNX, gid_mappings, n_gid_mappings, struct oci_id_mapping), .parse = parse_id_mapping },
	{ "timeOffsets", WF_FLAT(time_offsets_fields), WF_HAS(LNX, has_time_offsets) },
	{ "devices", WF_LIST(LNX, devices, n_devices, struct oci_device), .parse = parse_device },
	{ "cgroupsPath", WF_STR(LNX, cgroups_path) },
	{ "resources", WF_CUSTOM(LNX, resources, parse_resources), WF_HAS(LNX, has_resources) },
	{ "intelRdt", WF_PARSE(parse_intel_rdt) },
	{ "sysctl", WF_PARSE(parse_sysctl) },
	{ "seccomp", WF_CUSTOM(LNX, seccomp, parse_seccomp) },
	{ "rootfsPropagation", WF_PARSE(parse_rootfs_propagation) },
	{ "maskedPaths", WF_PARSE(parse_masked_paths) },
	{ "readonlyPaths", WF_PARSE(parse_readonly_paths) },
	{ "mountLabel", WF_STR(LNX, mount_label) },
	{ "personality", WF_FLAT(personality_fields), WF_HAS(LNX, has_personality) },
	{ "netDevices", WF_PARSE(parse_net_devices) },
	{ "memoryPolicy", WF_PARSE(parse_memory_policy) },
	{ 0 },
};

int parse_linux(struct walk *w, yajl_val v, void *at)
{
	LNX *l = at;
	int r = walk_fields(w, v, linux_fields, l, NULL);
	if (r <= 0)
		return r;
	/* Mappings only mean something for a user namespace. Its absence with
	 * mappings is a mistake; a user namespace without mappings is left to
	 * the runtime to decide. */
	bool userns = false;
	for (size_t i = 0; i < l->n_namespaces; i++)
		userns |= l->namespaces[i].kind == NS_USER;
	if ((l->n_uid_mappings || l->n_gid_mappings) && !userns) {
		walk_push_key(w, l->n_uid_mappings ? "uidMappings" : "gidMappings");
		return walk_fail(w, "given without a user namespace in linux.namespaces");
	}
	return 1;
}

/* ---- helpers over a parsed config's namespaces ---- */

const struct oci_namespace *oci_namespace_find(const struct oci_config *c, enum oci_ns_kind kind)
{
	for (size_t i = 0; i < c->linux_.n_namespaces; i++)
		if (c->linux_.namespaces[i].kind == kind)
			return &c->linux_.namespaces[i];
	return NULL;
}

const char *oci_ns_kind_name(enum oci_ns_kind kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_types); i++)
		if (ns_types[i].kind == kind)
			return ns_types[i].name;
	return "unknown";
}
