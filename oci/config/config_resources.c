/* linux.resources (also the payload of `update`): cgroup limits. */
#include <stdio.h>
#include <string.h>

#include "config_walk.h"
#include "config_resources.h"

static int parse_device_rule(struct walk *w, yajl_val v, struct oci_device_rule *d)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_allow = false;
	/* Absent type/major/minor are wildcards, as docker's deny-all rule has it. */
	d->type = 'a';
	d->major = d->minor = -1;
	strcpy(d->access, "rwm");
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		char *s = NULL;
		if (streq(k, "allow"))
			r = walk_bool(w, val, &d->allow), has_allow = r > 0;
		else if (streq(k, "type")) {
			r = walk_str(w, val, &s);
			if (r > 0 && !*s)
				d->type = 'a';
			else if (r > 0 && strlen(s) == 1 && strchr("acb", s[0]))
				d->type = s[0];
			else if (r > 0)
				return walk_fail(w, "unknown device type \"%.100s\" (want a, c or b)", s);
		} else if (streq(k, "major"))
			r = walk_i64(w, val, -1, UINT32_MAX, &d->major);
		else if (streq(k, "minor"))
			r = walk_i64(w, val, -1, UINT32_MAX, &d->minor);
		else if (streq(k, "access")) {
			r = walk_str(w, val, &s);
			if (r > 0 && *s) {
				size_t n = strlen(s);
				bool ok = n <= 3 && strspn(s, "rwm") == n;
				for (size_t i = 0; ok && i < n; i++)
					ok = !strchr(s + i + 1, s[i]);
				if (!ok)
					return walk_fail(w, "\"%.100s\" is not a combination of r, w and m", s);
				strcpy(d->access, s);
			}
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_allow)
		return walk_missing(w, "allow");
	return 1;
}

static int parse_device_rules(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	res->devices = arena_alloc(w->a, v->u.array.len * sizeof *res->devices);
	yajl_val item;
	WALK_ITEMS(w, v, i, item)
		if (parse_device_rule(w, item, &res->devices[i]) < 0)
			return -1;
	res->n_devices = v->u.array.len;
	return 1;
}

/* Byte limits: -1 means unlimited; anything below is a mistake. */
#define LIMIT(field) \
	(r = walk_i64(w, val, -1, INT64_MAX, &res->memory.field), res->memory.has_##field = r > 0)

static int parse_memory(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "limit"))
			LIMIT(limit);
		else if (streq(k, "reservation"))
			LIMIT(reservation);
		else if (streq(k, "swap"))
			LIMIT(swap);
		else if (streq(k, "kernel"))
			LIMIT(kernel);
		else if (streq(k, "kernelTCP"))
			LIMIT(kernel_tcp);
		else if (streq(k, "swappiness")) {
			uint64_t s = 0;
			r = walk_u64(w, val, UINT64_MAX, &s);
			/* Old engines wrote -1 through a uint64 for "unset". */
			if (r > 0 && s != UINT64_MAX) {
				if (s > 100)
					return walk_fail(w, "%llu is out of range (0..100)", (unsigned long long)s);
				res->memory.swappiness = s;
				res->memory.has_swappiness = true;
			}
		} else if (streq(k, "disableOOMKiller"))
			r = walk_bool(w, val, &res->memory.disable_oom_killer),
			res->memory.has_disable_oom_killer = r > 0;
		else if (streq(k, "useHierarchy"))
			r = walk_bool(w, val, &res->memory.use_hierarchy),
			res->memory.has_use_hierarchy = r > 0;
		else if (streq(k, "checkBeforeUpdate"))
			r = walk_bool(w, val, &res->memory.check_before_update),
			res->memory.has_check_before_update = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}
#undef LIMIT

static int parse_cpu_set(struct walk *w, yajl_val v, char **out)
{
	int r = walk_str(w, v, out);
	if (r > 0 && **out && !cpu_list_valid(*out))
		return walk_fail(w, "not a list (like \"0-3,7\"): \"%.100s\"", *out);
	return r;
}

static int parse_cpu(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	typeof(res->cpu) *c = &res->cpu;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "shares"))
			r = walk_u64(w, val, UINT64_MAX, &c->shares), c->has_shares = r > 0;
		else if (streq(k, "quota"))
			r = walk_i64(w, val, -1, INT64_MAX, &c->quota), c->has_quota = r > 0;
		else if (streq(k, "burst"))
			r = walk_u64(w, val, UINT64_MAX, &c->burst), c->has_burst = r > 0;
		else if (streq(k, "period"))
			r = walk_u64(w, val, UINT64_MAX, &c->period), c->has_period = r > 0;
		else if (streq(k, "realtimeRuntime"))
			r = walk_i64(w, val, -1, INT64_MAX, &c->realtime_runtime),
			c->has_realtime_runtime = r > 0;
		else if (streq(k, "realtimePeriod"))
			r = walk_u64(w, val, UINT64_MAX, &c->realtime_period),
			c->has_realtime_period = r > 0;
		else if (streq(k, "cpus"))
			r = parse_cpu_set(w, val, &c->cpus);
		else if (streq(k, "mems"))
			r = parse_cpu_set(w, val, &c->mems);
		else if (streq(k, "idle"))
			r = walk_i64(w, val, 0, 1, &c->idle), c->has_idle = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}

static int parse_pids(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "limit"))
			r = walk_i64(w, val, INT64_MIN, INT64_MAX, &res->pids.limit),
			res->pids.has_limit = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!res->pids.has_limit)
		return walk_missing(w, "limit");
	return 1;
}

/* major and minor of a block device entry; both required. */
static int parse_major_minor(struct walk *w, const char *k, yajl_val val, int64_t *major,
			     int64_t *minor, bool *has_major, bool *has_minor)
{
	int r = 0;
	if (streq(k, "major"))
		r = walk_i64(w, val, 0, UINT32_MAX, major), *has_major = r > 0;
	else if (streq(k, "minor"))
		r = walk_i64(w, val, 0, UINT32_MAX, minor), *has_minor = r > 0;
	else
		r = walk_unknown(w);
	return r;
}

static int parse_weight_device(struct walk *w, yajl_val v, struct oci_weight_device *d)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_major = false, has_minor = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		uint64_t x = 0;
		if (streq(k, "weight"))
			r = walk_u64(w, val, UINT16_MAX, &x), d->weight = (uint16_t)x, d->has_weight = r > 0;
		else if (streq(k, "leafWeight"))
			r = walk_u64(w, val, UINT16_MAX, &x), d->leaf_weight = (uint16_t)x,
			d->has_leaf_weight = r > 0;
		else
			r = parse_major_minor(w, k, val, &d->major, &d->minor, &has_major, &has_minor);
		if (r < 0)
			return r;
	}
	if (!has_major)
		return walk_missing(w, "major");
	if (!has_minor)
		return walk_missing(w, "minor");
	return 1;
}

static int parse_throttle_device(struct walk *w, yajl_val v, struct oci_throttle_device *d)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_major = false, has_minor = false, has_rate = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "rate"))
			r = walk_u64(w, val, UINT64_MAX, &d->rate), has_rate = r > 0;
		else
			r = parse_major_minor(w, k, val, &d->major, &d->minor, &has_major, &has_minor);
		if (r < 0)
			return r;
	}
	if (!has_major)
		return walk_missing(w, "major");
	if (!has_minor)
		return walk_missing(w, "minor");
	if (!has_rate)
		return walk_missing(w, "rate");
	return 1;
}

static int parse_throttle_list(struct walk *w, yajl_val v, struct oci_throttle_device **out,
			       size_t *n)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	*out = arena_alloc(w->a, v->u.array.len * sizeof **out);
	yajl_val item;
	WALK_ITEMS(w, v, i, item)
		if (parse_throttle_device(w, item, &(*out)[i]) < 0)
			return -1;
	*n = v->u.array.len;
	return 1;
}

static int parse_block_io(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	typeof(res->block_io) *b = &res->block_io;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		uint64_t x = 0;
		if (streq(k, "weight"))
			r = walk_u64(w, val, UINT16_MAX, &x), b->weight = (uint16_t)x, b->has_weight = r > 0;
		else if (streq(k, "leafWeight"))
			r = walk_u64(w, val, UINT16_MAX, &x), b->leaf_weight = (uint16_t)x,
			b->has_leaf_weight = r > 0;
		else if (streq(k, "weightDevice")) {
			r = walk_arr(w, val);
			if (r > 0) {
				b->weight_device = arena_alloc(w->a, val->u.array.len * sizeof *b->weight_device);
				b->n_weight_device = val->u.array.len;
				yajl_val item;
				WALK_ITEMS(w, val, i, item)
					if (parse_weight_device(w, item, &b->weight_device[i]) < 0)
						return -1;
			}
		} else if (streq(k, "throttleReadBpsDevice"))
			r = parse_throttle_list(w, val, &b->throttle_read_bps, &b->n_throttle_read_bps);
		else if (streq(k, "throttleWriteBpsDevice"))
			r = parse_throttle_list(w, val, &b->throttle_write_bps, &b->n_throttle_write_bps);
		else if (streq(k, "throttleReadIOPSDevice"))
			r = parse_throttle_list(w, val, &b->throttle_read_iops, &b->n_throttle_read_iops);
		else if (streq(k, "throttleWriteIOPSDevice"))
			r = parse_throttle_list(w, val, &b->throttle_write_iops, &b->n_throttle_write_iops);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}

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

static int parse_hugepage_limit(struct walk *w, yajl_val v, struct oci_hugepage_limit *h)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_limit = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "pageSize")) {
			r = walk_str(w, val, &h->page_size);
			if (r > 0 && !valid_page_size(h->page_size))
				return walk_fail(w, "not a page size (like \"2MB\"): \"%.100s\"", h->page_size);
		} else if (streq(k, "limit"))
			r = walk_u64(w, val, UINT64_MAX, &h->limit), has_limit = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!h->page_size)
		return walk_missing(w, "pageSize");
	if (!has_limit)
		return walk_missing(w, "limit");
	return 1;
}

static int parse_hugepage_limits(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	res->hugepage_limits = arena_alloc(w->a, v->u.array.len * sizeof *res->hugepage_limits);
	yajl_val item;
	WALK_ITEMS(w, v, i, item)
		if (parse_hugepage_limit(w, item, &res->hugepage_limits[i]) < 0)
			return -1;
	res->n_hugepage_limits = v->u.array.len;
	return 1;
}

static int parse_priority(struct walk *w, yajl_val v, struct oci_kv *kv)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_prio = false;
	uint32_t prio = 0;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "name"))
			r = walk_nonempty_str(w, val, &kv->key);
		else if (streq(k, "priority"))
			r = walk_u32(w, val, &prio), has_prio = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!kv->key)
		return walk_missing(w, "name");
	if (!has_prio)
		return walk_missing(w, "priority");
	kv->value = arena_printf(w->a, "%u", prio);
	return 1;
}

static int parse_network(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "classID"))
			r = walk_u32(w, val, &res->network.class_id), res->network.has_class_id = r > 0;
		else if (streq(k, "priorities")) {
			r = walk_arr(w, val);
			if (r > 0) {
				res->network.priorities =
					arena_alloc(w->a, val->u.array.len * sizeof *res->network.priorities);
				res->network.n_priorities = val->u.array.len;
				yajl_val item;
				WALK_ITEMS(w, val, i, item)
					if (parse_priority(w, item, &res->network.priorities[i]) < 0)
						return -1;
			}
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}

static int parse_rdma(struct walk *w, yajl_val v, struct oci_resources *res)
{
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
		r = walk_obj(w, lim);
		if (r <= 0)
			return r < 0 ? r : walk_fail(w, "expected an object, got null");
		/* Absent counts mean "no limit": rdma.max spells that "max". */
		char handles[16] = "max", objects[16] = "max";
		const char *k;
		yajl_val val;
		WALK_FIELDS(w, lim, k, val) {
			uint32_t x = 0;
			char *dst;
			if (streq(k, "hcaHandles"))
				dst = handles;
			else if (streq(k, "hcaObjects"))
				dst = objects;
			else
				return walk_unknown(w);
			r = walk_u32(w, val, &x);
			if (r < 0)
				return r;
			if (r > 0)
				snprintf(dst, sizeof handles, "%u", x);
		}
		res->rdma[n].key = arena_strdup(w->a, dev);
		res->rdma[n].value = arena_printf(w->a, "hca_handle=%s hca_object=%s", handles, objects);
		n++;
	}
	res->n_rdma = n;
	return 1;
}

static int parse_unified(struct walk *w, yajl_val v, struct oci_resources *res)
{
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

int parse_resources(struct walk *w, yajl_val v, struct oci_resources *res)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "devices"))
			r = parse_device_rules(w, val, res);
		else if (streq(k, "memory"))
			r = parse_memory(w, val, res);
		else if (streq(k, "cpu"))
			r = parse_cpu(w, val, res);
		else if (streq(k, "pids"))
			r = parse_pids(w, val, res);
		else if (streq(k, "blockIO"))
			r = parse_block_io(w, val, res);
		else if (streq(k, "hugepageLimits"))
			r = parse_hugepage_limits(w, val, res);
		else if (streq(k, "network"))
			r = parse_network(w, val, res);
		else if (streq(k, "rdma"))
			r = parse_rdma(w, val, res);
		else if (streq(k, "unified"))
			r = parse_unified(w, val, res);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}
