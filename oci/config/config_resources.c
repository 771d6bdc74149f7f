/* linux.resources (also the payload of `update`): cgroup limits. */
#include <stdio.h>
#include <string.h>

#include "config_walk.h"
#include "config_resources.h"

#define RES struct oci_resources
/* its parts, each read by a table of its own */
#define MEM __typeof__(((RES *)0)->memory)
#define CPU __typeof__(((RES *)0)->cpu)
#define PIDS __typeof__(((RES *)0)->pids)
#define BLKIO __typeof__(((RES *)0)->block_io)
#define NET __typeof__(((RES *)0)->network)

static int parse_device_type(struct walk *w, yajl_val v, void *at)
{
	char *s = NULL;
	int r = walk_str(w, v, &s);
	if (r > 0 && !*s)
		*(char *)at = 'a';
	else if (r > 0 && strlen(s) == 1 && strchr("acb", s[0]))
		*(char *)at = s[0];
	else if (r > 0)
		return walk_fail(w, "unknown device type \"%.100s\" (want a, c or b)", s);
	return r;
}

static int parse_device_access(struct walk *w, yajl_val v, void *at)
{
	char *s = NULL;
	int r = walk_str(w, v, &s);
	if (r > 0 && *s) {
		size_t n = strlen(s);
		bool ok = n <= 3 && strspn(s, "rwm") == n;
		for (size_t i = 0; ok && i < n; i++)
			ok = !strchr(s + i + 1, s[i]);
		if (!ok)
			return walk_fail(w, "\"%.100s\" is not a combination of r, w and m", s);
		strcpy(at, s);
	}
	return r;
}

static const struct walk_field device_rule_fields[] = {
	{ "allow", WF_BOOL(struct oci_device_rule, allow), .required = true },
	{ "type", WF_CUSTOM(struct oci_device_rule, type, parse_device_type) },
	{ "major", WF_I64(struct oci_device_rule, major, -1, UINT32_MAX) },
	{ "minor", WF_I64(struct oci_device_rule, minor, -1, UINT32_MAX) },
	{ "access", WF_CUSTOM(struct oci_device_rule, access, parse_device_access) },
	{ 0 },
};

static int parse_device_rule(struct walk *w, yajl_val v, void *at)
{
	struct oci_device_rule *d = at;
	/* Absent type/major/minor are wildcards, as docker's deny-all rule has it. */
	d->type = 'a';
	d->major = d->minor = -1;
	strcpy(d->access, "rwm");
	return walk_fields(w, v, device_rule_fields, d, NULL);
}

static int parse_swappiness(struct walk *w, yajl_val v, void *at)
{
	MEM *m = at;
	uint64_t s = 0;
	int r = walk_u64(w, v, UINT64_MAX, &s);
	/* Old engines wrote -1 through a uint64 for "unset". */
	if (r > 0 && s != UINT64_MAX) {
		if (s > 100)
			return walk_fail(w, "%llu is out of range (0..100)", (unsigned long long)s);
		m->swappiness = s;
		m->has_swappiness = true;
	}
	return r;
}

/* Byte limits: -1 means unlimited; anything below is a mistake. */
#define LIMIT(field) WF_I64(MEM, field, -1, INT64_MAX), WF_HAS(MEM, has_##field)

static const struct walk_field memory_fields[] = {
	{ "limit", LIMIT(limit) },
	{ "reservation", LIMIT(reservation) },
	{ "swap", LIMIT(swap) },
	{ "kernel", LIMIT(kernel) },
	{ "kernelTCP", LIMIT(kernel_tcp) },
	{ "swappiness", WF_PARSE(parse_swappiness) },
	{ "disableOOMKiller", WF_BOOL(MEM, disable_oom_killer), WF_HAS(MEM, has_disable_oom_killer) },
	{ "useHierarchy", WF_BOOL(MEM, use_hierarchy), WF_HAS(MEM, has_use_hierarchy) },
	{ "checkBeforeUpdate", WF_BOOL(MEM, check_before_update),
	  WF_HAS(MEM, has_check_before_update) },
	{ 0 },
};
#undef LIMIT

static bool cpu_list_or_empty(const char *s)
{
	return !*s || cpu_list_valid(s);
}

#define LIST "a list (like \"0-3,7\")"
static const struct walk_field cpu_fields[] = {
	{ "shares", WF_U64(CPU, shares, UINT64_MAX), WF_HAS(CPU, has_shares) },
	{ "quota", WF_I64(CPU, quota, -1, INT64_MAX), WF_HAS(CPU, has_quota) },
	{ "burst", WF_U64(CPU, burst, UINT64_MAX), WF_HAS(CPU, has_burst) },
	{ "period", WF_U64(CPU, period, UINT64_MAX), WF_HAS(CPU, has_period) },
	{ "realtimeRuntime", WF_I64(CPU, realtime_runtime, -1, INT64_MAX), WF_HAS(CPU, has_realtime_runtime) },
	{ "realtimePeriod", WF_U64(CPU, realtime_period, UINT64_MAX), WF_HAS(CPU, has_realtime_period) },
	{ "cpus", WF_VALID_STR(CPU, cpus, cpu_list_or_empty, LIST) },
	{ "mems", WF_VALID_STR(CPU, mems, cpu_list_or_empty, LIST) },
	{ "idle", WF_I64(CPU, idle, 0, 1), WF_HAS(CPU, has_idle) },
	{ 0 },
};
#undef LIST

static const struct walk_field pids_fields[] = {
	{ "limit", WF_I64(PIDS, limit, INT64_MIN, INT64_MAX), WF_HAS(PIDS, has_limit), .required = true },
	{ 0 },
};

/* major and minor of a block device entry; both required. */
#define MAJOR_MINOR(T)                                                          \
	{ "major", WF_I64(T, major, 0, UINT32_MAX), .required = true },         \
	{ "minor", WF_I64(T, minor, 0, UINT32_MAX), .required = true }

static const struct walk_field weight_device_fields[] = {
	{ "weight", WF_U16(struct oci_weight_device, weight, UINT16_MAX), WF_HAS(struct oci_weight_device, has_weight) },
	{ "leafWeight", WF_U16(struct oci_weight_device, leaf_weight, UINT16_MAX),
	  WF_HAS(struct oci_weight_device, has_leaf_weight) },
	MAJOR_MINOR(struct oci_weight_device),
	{ 0 },
};

static const struct walk_field throttle_device_fields[] = {
	MAJOR_MINOR(struct oci_throttle_device),
	{ "rate", WF_U64(struct oci_throttle_device, rate, UINT64_MAX), .required = true },
	{ 0 },
};
#undef MAJOR_MINOR

#define THROTTLE(list) WF_LIST(BLKIO, throttle_##list, n_throttle_##list, \
			       struct oci_throttle_device), .fields = throttle_device_fields

static const struct walk_field block_io_fields[] = {
	{ "weight", WF_U16(BLKIO, weight, UINT16_MAX), WF_HAS(BLKIO, has_weight) },
	{ "leafWeight", WF_U16(BLKIO, leaf_weight, UINT16_MAX), WF_HAS(BLKIO, has_leaf_weight) },
	{ "weightDevice", WF_LIST(BLKIO, weight_device, n_weight_device, struct oci_weight_device),
	  .fields = weight_device_fields },
	{ "throttleReadBpsDevice", THROTTLE(read_bps) },
	{ "throttleWriteBpsDevice", THROTTLE(write_bps) },
	{ "throttleReadIOPSDevice", THROTTLE(read_iops) },
	{ "throttleWriteIOPSDevice", THROTTLE(write_iops) },
	{ 0 },
};
#undef THROTTLE

/* "<size><unit prefix>B" as the hugetlb controller names its files: 2MB, 1GB, 64KB. */
static bool valid_page_size(const char *s)
{
	size_t n = strspn(s, "0123456789");
	if (!n)
		return false;
	s += n;
	if (*s && strchr("KMGTP", *s))
		s++;
	return streq(s, "B");
}

static const struct walk_field hugepage_limit_fields[] = {
	{ "pageSize", WF_VALID_STR(struct oci_hugepage_limit, page_size, valid_page_size, "a page size (like \"2MB\")"),
	  .required = true },
	{ "limit", WF_U64(struct oci_hugepage_limit, limit, UINT64_MAX), .required = true },
	{ 0 },
};

/* A priority goes into the kv's value as decimal text. */
static int parse_priority_value(struct walk *w, yajl_val v, void *at)
{
	uint32_t prio = 0;
	int r = walk_u32(w, v, &prio);
	if (r > 0)
		*(char **)at = arena_printf(w->a, "%u", prio);
	return r;
}

static const struct walk_field priority_fields[] = {
	{ "name", WF_NONEMPTY_STR(struct oci_kv, key), .required = true },
	{ "priority", WF_CUSTOM(struct oci_kv, value, parse_priority_value), .required = true },
	{ 0 },
};

static const struct walk_field network_fields[] = {
	{ "classID", WF_U32(NET, class_id, UINT32_MAX), WF_HAS(NET, has_class_id) },
	{ "priorities", WF_LIST(NET, priorities, n_priorities, struct oci_kv),
	  .fields = priority_fields },
	{ 0 },
};

/* One device's limits; absent counts mean "no limit": rdma.max spells that "max". */
struct rdma_limit {
	bool has_handles, has_objects;
	uint32_t handles, objects;
};

static const struct walk_field rdma_limit_fields[] = {
	{ "hcaHandles", WF_U32(struct rdma_limit, handles, UINT32_MAX), WF_HAS(struct rdma_limit, has_handles) },
	{ "hcaObjects", WF_U32(struct rdma_limit, objects, UINT32_MAX), WF_HAS(struct rdma_limit, has_objects) },
	{ 0 },
};

static int parse_rdma(struct walk *w, yajl_val v, void *at)
{
	RES *res = at;
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	res->rdma = arena_alloc(w->a, (v->u.object.len + 1) * sizeof *res->rdma);
	const char *dev;
	yajl_val lim;
	size_t n = 0;
	WALK_MAP(w, v, dev, lim) {
		if (!*dev || strpbrk(dev, " \t\n"))
			return walk_fail(w, "not an RDMA device name");
		if (YAJL_IS_NULL(lim))
			return walk_fail(w, "expected an object, got null");
		struct rdma_limit l = { 0 };
		if (walk_fields(w, lim, rdma_limit_fields, &l, NULL) < 0)
			return -1;
		char handles[16] = "max", objects[16] = "max";
		if (l.has_handles)
			snprintf(handles, sizeof handles, "%u", l.handles);
		if (l.has_objects)
			snprintf(objects, sizeof objects, "%u", l.objects);
		res->rdma[n].key = arena_strdup(w->a, dev);
		res->rdma[n].value = arena_printf(w->a, "hca_handle=%s hca_object=%s", handles, objects);
		n++;
	}
	res->n_rdma = n;
	return 1;
}

static int parse_unified(struct walk *w, yajl_val v, void *at)
{
	RES *res = at;
	int r = walk_str_map(w, v, &res->unified, &res->n_unified);
	for (size_t i = 0; r > 0 && i < res->n_unified; i++) {
		const char *key = res->unified[i].key;
		/* Each key names a file in the container's cgroup directory:
		 * never a path out of it. */
		if (!*key || key[0] == '.' || strchr(key, '/')) {
			walk_push_map_key(w, key);
			return walk_fail(w, "not a cgroup file name");
		}
	}
	return r;
}

static const struct walk_field resources_fields[] = {
	{ "devices", WF_LIST(RES, devices, n_devices, struct oci_device_rule), .parse = parse_device_rule },
	{ "memory", WF_OBJECT(RES, memory, memory_fields) },
	{ "cpu", WF_OBJECT(RES, cpu, cpu_fields) },
	{ "pids", WF_OBJECT(RES, pids, pids_fields) },
	{ "blockIO", WF_OBJECT(RES, block_io, block_io_fields) },
	{ "hugepageLimits", WF_LIST(RES, hugepage_limits, n_hugepage_limits, struct oci_hugepage_limit),
	  .fields = hugepage_limit_fields },
	{ "network", WF_OBJECT(RES, network, network_fields) },
	{ "rdma", WF_PARSE(parse_rdma) },
	{ "unified", WF_PARSE(parse_unified) },
	{ 0 },
};

int parse_resources(struct walk *w, yajl_val v, void *at)
{
	return walk_fields(w, v, resources_fields, at, NULL);
}
