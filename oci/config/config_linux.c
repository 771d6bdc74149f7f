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

static int parse_namespace(struct walk *w, yajl_val v, struct oci_namespace *ns)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	char *type = NULL;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "type")) {
			r = walk_str(w, val, &type);
			if (r > 0) {
				size_t i = 0;
				while (i < ARRAY_SIZE(ns_types) && !streq(type, ns_types[i].name))
					i++;
				if (i == ARRAY_SIZE(ns_types))
					return walk_fail(w, "unknown namespace type \"%.100s\"", type);
				ns->kind = ns_types[i].kind;
				ns->clone_flag = ns_types[i].flag;
			}
		} else if (streq(k, "path"))
			r = walk_abs_path(w, val, &ns->path);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!type)
		return walk_missing(w, "type");
	return 1;
}

static int parse_namespaces(struct walk *w, yajl_val v, struct oci_linux *l)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	l->namespaces = arena_alloc(w->a, v->u.array.len * sizeof *l->namespaces);
	yajl_val item;
	WALK_ITEMS(w, v, i, item) {
		if (parse_namespace(w, item, &l->namespaces[i]) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (l->namespaces[j].kind == l->namespaces[i].kind)
				return walk_fail(w, "duplicate namespace type \"%s\" (also at index %zu)",
						 oci_ns_kind_name(l->namespaces[i].kind), j);
	}
	l->n_namespaces = v->u.array.len;
	return 1;
}

static int parse_id_mapping(struct walk *w, yajl_val v, struct oci_id_mapping *m)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_c = false, has_h = false, has_s = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "containerID"))
			r = walk_u32(w, val, &m->container_id), has_c = r > 0;
		else if (streq(k, "hostID"))
			r = walk_u32(w, val, &m->host_id), has_h = r > 0;
		else if (streq(k, "size")) {
			r = walk_u32(w, val, &m->size), has_s = r > 0;
			if (r > 0 && m->size == 0)
				return walk_fail(w, "must be greater than zero");
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_c)
		return walk_missing(w, "containerID");
	if (!has_h)
		return walk_missing(w, "hostID");
	if (!has_s)
		return walk_missing(w, "size");
	/* Ids are 32-bit; a range running past the top is meaningless. */
	if ((uint64_t)m->container_id + m->size > (UINT64_C(1) << 32) ||
	    (uint64_t)m->host_id + m->size > (UINT64_C(1) << 32))
		return walk_fail(w, "range %u+%u runs past the largest id", m->host_id, m->size);
	return 1;
}

int parse_id_mappings(struct walk *w, yajl_val v, struct oci_id_mapping **out, size_t *n)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	struct oci_id_mapping *maps = arena_alloc(w->a, v->u.array.len * sizeof *maps);
	yajl_val item;
	WALK_ITEMS(w, v, i, item)
		if (parse_id_mapping(w, item, &maps[i]) < 0)
			return -1;
	*out = maps;
	*n = v->u.array.len;
	return 1;
}

static int parse_device(struct walk *w, yajl_val v, struct oci_device *d)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_major = false, has_minor = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "type")) {
			char *t = NULL;
			r = walk_str(w, val, &t);
			if (r > 0 && (strlen(t) != 1 || !strchr("cbup", t[0])))
				return walk_fail(w, "unknown device type \"%.100s\" (want c, b, u or p)", t);
			if (r > 0)
				d->type = t[0];
		} else if (streq(k, "path"))
			r = walk_abs_path(w, val, &d->path);
		else if (streq(k, "major"))
			r = walk_i64(w, val, 0, UINT32_MAX, &d->major), has_major = r > 0;
		else if (streq(k, "minor"))
			r = walk_i64(w, val, 0, UINT32_MAX, &d->minor), has_minor = r > 0;
		else if (streq(k, "fileMode"))
			/* Kept as written (podman adds S_IFCHR bits); masked on use. */
			r = walk_u32(w, val, &d->file_mode), d->has_file_mode = r > 0;
		else if (streq(k, "uid"))
			r = walk_u32(w, val, &d->uid), d->has_uid = r > 0;
		else if (streq(k, "gid"))
			r = walk_u32(w, val, &d->gid), d->has_gid = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!d->type)
		return walk_missing(w, "type");
	if (!d->path)
		return walk_missing(w, "path");
	if (d->type != 'p' && !has_major)
		return walk_missing(w, "major");
	if (d->type != 'p' && !has_minor)
		return walk_missing(w, "minor");
	return 1;
}

static int parse_devices(struct walk *w, yajl_val v, struct oci_linux *l)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	l->devices = arena_alloc(w->a, v->u.array.len * sizeof *l->devices);
	yajl_val item;
	WALK_ITEMS(w, v, i, item)
		if (parse_device(w, item, &l->devices[i]) < 0)
			return -1;
	l->n_devices = v->u.array.len;
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

static int parse_sysctl(struct walk *w, yajl_val v, struct oci_linux *l)
{
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

static int parse_rootfs_propagation(struct walk *w, yajl_val v, struct oci_linux *l)
{
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
static int parse_intel_rdt(struct walk *w, yajl_val v)
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

static int parse_personality(struct walk *w, yajl_val v, struct oci_linux *l)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "domain")) {
			r = walk_str(w, val, &l->personality_domain);
			if (r > 0 && streq(l->personality_domain, "LINUX"))
				l->personality = PER_LINUX;
			else if (r > 0 && streq(l->personality_domain, "LINUX32"))
				l->personality = PER_LINUX32;
			else if (r > 0)
				return walk_fail(w, "unknown personality domain \"%.100s\" (want LINUX or LINUX32)",
						 l->personality_domain);
		} else if (streq(k, "flags")) {
			/* The spec names none yet: one given would be dropped */
			char **flags;
			size_t n;
			r = walk_str_array(w, val, &flags, &n);
			if (r > 0 && n) {
				walk_push_index(w, 0);
				return walk_fail(w, "unknown personality flag \"%.100s\": not applied, so refused", flags[0]);
			}
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!l->personality_domain)
		return walk_missing(w, "domain");
	l->has_personality = true;
	return 1;
}

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

static int parse_memory_policy(struct walk *w, yajl_val v, struct oci_linux *l)
{
	struct oci_memory_policy *mp = &l->memory_policy;
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	bool need_nodes = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "mode")) {
			r = walk_str(w, val, &mp->mode);
			size_t i = 0;
			while (r > 0 && i < ARRAY_SIZE(mempolicy_modes) && !streq(mp->mode, mempolicy_modes[i].name))
				i++;
			if (r > 0 && i == ARRAY_SIZE(mempolicy_modes))
				return walk_fail(w, "unknown memory policy mode \"%.100s\"", mp->mode);
			if (r > 0)
				mp->mode_num = mempolicy_modes[i].mode, need_nodes = mempolicy_modes[i].nodes;
		} else if (streq(k, "nodes")) {
			r = walk_str(w, val, &mp->nodes);
			if (r > 0 && *mp->nodes && parse_node_list(w, mp) < 0)
				return -1;
		} else if (streq(k, "flags")) {
			char **flags;
			size_t n;
			r = walk_str_array(w, val, &flags, &n);
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
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!mp->mode)
		return walk_missing(w, "mode");
	/* what set_mempolicy(2) would refuse, named here rather than as EINVAL */
	if (need_nodes && !mp->maxnode)
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

static int parse_time_offset(struct walk *w, yajl_val v, int64_t *secs, uint32_t *nsecs)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "secs"))
			r = walk_i64(w, val, INT64_MIN, INT64_MAX, secs);
		else if (streq(k, "nanosecs")) {
			uint64_t ns = 0;
			r = walk_u64(w, val, 999999999, &ns);
			*nsecs = (uint32_t)ns;
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}

static int parse_time_offsets(struct walk *w, yajl_val v, struct oci_linux *l)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "monotonic"))
			r = parse_time_offset(w, val, &l->time_monotonic_secs, &l->time_monotonic_nanosecs);
		else if (streq(k, "boottime"))
			r = parse_time_offset(w, val, &l->time_boottime_secs, &l->time_boottime_nanosecs);
		else
			return walk_fail(w, "unknown clock (want monotonic or boottime)");
		if (r < 0)
			return r;
	}
	l->has_time_offsets = true;
	return 1;
}

/* A network interface name as the kernel takes it (dev_valid_name). */
static bool valid_ifname(const char *s)
{
	return *s && strlen(s) < 16 && !streq(s, ".") && !streq(s, "..") &&
	       !s[strcspn(s, "/: \t\n\r\f\v")];
}

static int parse_net_devices(struct walk *w, yajl_val v, struct oci_linux *l)
{
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
		r = walk_obj(w, dev);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		const char *k;
		yajl_val val;
		WALK_FIELDS(w, dev, k, val) {
			if (!streq(k, "name"))
				return walk_unknown(w);
			if (walk_str(w, val, &kv->value) < 0)
				return -1;
			if (kv->value && !valid_ifname(kv->value))
				return walk_fail(w, "not a network interface name: \"%.100s\"", kv->value);
		}
	}
	l->n_net_devices = n;
	return 1;
}

int parse_linux(struct walk *w, yajl_val v, struct oci_linux *l)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "namespaces"))
			r = parse_namespaces(w, val, l);
		else if (streq(k, "uidMappings"))
			r = parse_id_mappings(w, val, &l->uid_mappings, &l->n_uid_mappings);
		else if (streq(k, "gidMappings"))
			r = parse_id_mappings(w, val, &l->gid_mappings, &l->n_gid_mappings);
		else if (streq(k, "timeOffsets"))
			r = parse_time_offsets(w, val, l);
		else if (streq(k, "devices"))
			r = parse_devices(w, val, l);
		else if (streq(k, "cgroupsPath"))
			r = walk_str(w, val, &l->cgroups_path);
		else if (streq(k, "resources"))
			r = parse_resources(w, val, &l->resources), l->has_resources = r > 0;
		else if (streq(k, "intelRdt"))
			r = parse_intel_rdt(w, val);
		else if (streq(k, "sysctl"))
			r = parse_sysctl(w, val, l);
		else if (streq(k, "seccomp"))
			r = parse_seccomp(w, val, &l->seccomp);
		else if (streq(k, "rootfsPropagation"))
			r = parse_rootfs_propagation(w, val, l);
		else if (streq(k, "maskedPaths"))
			r = parse_abs_paths(w, val, &l->masked_paths, &l->n_masked_paths);
		else if (streq(k, "readonlyPaths"))
			r = parse_abs_paths(w, val, &l->readonly_paths, &l->n_readonly_paths);
		else if (streq(k, "mountLabel"))
			r = walk_str(w, val, &l->mount_label);
		else if (streq(k, "personality"))
			r = parse_personality(w, val, l);
		else if (streq(k, "netDevices"))
			r = parse_net_devices(w, val, l);
		else if (streq(k, "memoryPolicy"))
			r = parse_memory_policy(w, val, l);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
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
