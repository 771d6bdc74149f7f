/* cgroups: what a config's linux.resources asks for: which groups are set, hugepage
 * size names, the checks that refuse what no kernel accepts before anything is
 * written, and the groups v1 and v2 write alike. */

#include "cgroups_resources.h"
#include "cgroups_files.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "util.h"

bool cg_res_memory_set(const struct oci_resources *r)
{
	return (r->memory.has_limit && r->memory.limit) ||
	       (r->memory.has_reservation && r->memory.reservation) ||
	       (r->memory.has_swap && r->memory.swap) || r->memory.has_swappiness ||
	       r->memory.has_disable_oom_killer || r->memory.has_kernel_tcp;
}

bool cg_res_cpu_set(const struct oci_resources *r)
{
	return (r->cpu.has_shares && r->cpu.shares) || (r->cpu.has_quota && r->cpu.quota) ||
	       (r->cpu.has_period && r->cpu.period) || r->cpu.has_burst ||
	       (r->cpu.has_realtime_runtime && r->cpu.realtime_runtime) ||
	       (r->cpu.has_realtime_period && r->cpu.realtime_period) || r->cpu.has_idle;
}

bool cg_res_cpuset_set(const struct oci_resources *r)
{
	return (r->cpu.cpus && *r->cpu.cpus) || (r->cpu.mems && *r->cpu.mems);
}

bool cg_res_pids_set(const struct oci_resources *r)
{
	return r->pids.has_limit;
}

bool cg_res_blkio_set(const struct oci_resources *r)
{
	const typeof(r->block_io) *b = &r->block_io;
	return (b->has_weight && b->weight) || (b->has_leaf_weight && b->leaf_weight) ||
	       b->n_weight_device || b->n_throttle_read_bps || b->n_throttle_write_bps ||
	       b->n_throttle_read_iops || b->n_throttle_write_iops;
}

void cg_throttle_lists(const struct oci_resources *r, struct cg_throttle_list th[CG_THROTTLE_LISTS])
{
	const typeof(r->block_io) *b = &r->block_io;
	th[0] = (struct cg_throttle_list){ b->throttle_read_bps, b->n_throttle_read_bps, "throttleReadBpsDevice",
					   "blkio.throttle.read_bps_device", "rbps" };
	th[1] = (struct cg_throttle_list){ b->throttle_write_bps, b->n_throttle_write_bps, "throttleWriteBpsDevice",
					   "blkio.throttle.write_bps_device", "wbps" };
	th[2] = (struct cg_throttle_list){ b->throttle_read_iops, b->n_throttle_read_iops, "throttleReadIOPSDevice",
					   "blkio.throttle.read_iops_device", "riops" };
	th[3] = (struct cg_throttle_list){ b->throttle_write_iops, b->n_throttle_write_iops, "throttleWriteIOPSDevice",
					   "blkio.throttle.write_iops_device", "wiops" };
}

const char *cg_res_requested(const struct oci_resources *r)
{
	if (cg_res_memory_set(r))
		return "memory";
	if (cg_res_cpu_set(r) || cg_res_cpuset_set(r))
		return "cpu";
	if (cg_res_pids_set(r))
		return "pids";
	if (cg_res_blkio_set(r))
		return "blockIO";
	if (r->n_hugepage_limits)
		return "hugepageLimits";
	if (r->network.has_class_id || r->network.n_priorities)
		return "network";
	if (r->n_rdma)
		return "rdma";
	if (r->n_unified)
		return "unified";
	return NULL;
}

void cg_hugepage_name(uint64_t kb, char *buf, size_t len)
{
	const char *unit = "KB";
	if (kb >= (1u << 20) && kb % (1u << 20) == 0) {
		kb >>= 20;
		unit = "GB";
	} else if (kb >= 1024 && kb % 1024 == 0) {
		kb >>= 10;
		unit = "MB";
	}
	if (snprintf(buf, len, "%" PRIu64 "%s", kb, unit) >= (int)len)
		buf[0] = 0;
}

size_t cg_hugepage_sizes(char names[][16], size_t max)
{
	_cleanup_closedir_ DIR *d = opendir("/sys/kernel/mm/hugepages");
	size_t n = 0;
	struct dirent *de;
	while (d && n < max && (de = readdir(d))) {
		unsigned long long kb;
		if (sscanf(de->d_name, "hugepages-%llukB", &kb) == 1)
			cg_hugepage_name(kb, names[n++], 16);
	}
	return n;
}

bool cg_plain_file_name(const char *s)
{
	return s && *s && !strchr(s, '/') && !streq(s, ".") && !streq(s, "..");
}

static int bad_value(struct ab_err *err, const char *field, int64_t v)
{
	return ab_error(err, 0, "linux.resources.%s: invalid value %" PRId64, field, v);
}

/* Refuse what no kernel accepts before anything is written, so a bad config never leaves
 * a cgroup half-configured. 0 means "not set" for the memory and cpu figures, as in runc;
 * -1 means unlimited. */
int cg_validate(const struct oci_resources *r, struct ab_err *err)
{
	const struct { bool has; int64_t v; const char *name; } neg[] = {
		{ r->memory.has_limit, r->memory.limit, "memory.limit" },
		{ r->memory.has_reservation, r->memory.reservation, "memory.reservation" },
		{ r->memory.has_swap, r->memory.swap, "memory.swap" },
		{ r->memory.has_kernel, r->memory.kernel, "memory.kernel" },
		{ r->memory.has_kernel_tcp, r->memory.kernel_tcp, "memory.kernelTCP" },
		{ r->cpu.has_quota, r->cpu.quota, "cpu.quota" },
		{ r->cpu.has_realtime_runtime, r->cpu.realtime_runtime, "cpu.realtimeRuntime" },
		{ r->pids.has_limit, r->pids.limit, "pids.limit" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(neg); i++)
		if (neg[i].has && neg[i].v < -1)
			return bad_value(err, neg[i].name, neg[i].v);
	if (r->memory.has_swappiness && r->memory.swappiness > 100)
		return bad_value(err, "memory.swappiness", (int64_t)r->memory.swappiness);
	if (r->memory.has_swap && r->memory.swap > 0 && r->memory.has_limit &&
	    r->memory.limit > 0 && r->memory.swap < r->memory.limit)
		return ab_error(err, EINVAL,
				"linux.resources.memory.swap: memory+swap limit %" PRId64
				" is lower than the memory limit %" PRId64,
				r->memory.swap, r->memory.limit);
	if (r->cpu.has_idle && r->cpu.idle != 0 && r->cpu.idle != 1)
		return bad_value(err, "cpu.idle", r->cpu.idle);
	if (r->cpu.has_shares && r->cpu.shares > 262144)
		return bad_value(err, "cpu.shares", (int64_t)r->cpu.shares);

	const typeof(r->block_io) *b = &r->block_io;
	if (b->has_weight && b->weight && (b->weight < 10 || b->weight > 1000))
		return bad_value(err, "blockIO.weight", b->weight);
	if (b->has_leaf_weight && b->leaf_weight && (b->leaf_weight < 10 || b->leaf_weight > 1000))
		return bad_value(err, "blockIO.leafWeight", b->leaf_weight);
	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct oci_weight_device *w = &b->weight_device[i];
		if (w->major < 0 || w->minor < 0)
			return ab_error(err, 0, "linux.resources.blockIO.weightDevice[%zu]: "
					"invalid device %" PRId64 ":%" PRId64, i, w->major, w->minor);
		if (w->has_weight && (w->weight < 10 || w->weight > 1000))
			return ab_error(err, 0, "linux.resources.blockIO.weightDevice[%zu].weight: "
					"invalid value %u", i, w->weight);
	}
	struct cg_throttle_list th[CG_THROTTLE_LISTS];
	cg_throttle_lists(r, th);
	for (size_t t = 0; t < ARRAY_SIZE(th); t++)
		for (size_t i = 0; i < th[t].n; i++)
			if (th[t].d[i].major < 0 || th[t].d[i].minor < 0)
				return ab_error(err, 0, "linux.resources.blockIO.%s[%zu]: invalid "
						"device %" PRId64 ":%" PRId64, th[t].field, i,
						th[t].d[i].major, th[t].d[i].minor);

	for (size_t i = 0; i < r->n_hugepage_limits; i++) {
		const char *ps = r->hugepage_limits[i].page_size;
		if (!cg_plain_file_name(ps) || strchr(ps, '.'))
			return ab_error(err, 0, "linux.resources.hugepageLimits[%zu].pageSize: "
					"invalid page size \"%s\"", i, ps ? ps : "");
	}
	for (size_t i = 0; i < r->n_unified; i++)
		if (!cg_plain_file_name(r->unified[i].key))
			return ab_error(err, 0, "linux.resources.unified: invalid key \"%s\": "
					"must be a file name in the cgroup directory",
					r->unified[i].key ? r->unified[i].key : "");
	for (size_t i = 0; i < r->n_rdma; i++)
		if (!r->rdma[i].key || !*r->rdma[i].key || strpbrk(r->rdma[i].key, " \n"))
			return ab_error(err, 0, "linux.resources.rdma: invalid device name \"%s\"",
					r->rdma[i].key ? r->rdma[i].key : "");
	for (size_t i = 0; i < r->n_devices; i++) {
		const struct oci_device_rule *d = &r->devices[i];
		if (d->type != 'a' && d->type != 'c' && d->type != 'b')
			return ab_error(err, 0, "linux.resources.devices[%zu].type: invalid "
					"value \"%c\"", i, d->type ? d->type : '?');
		if (d->major < -1 || d->major > INT32_MAX || d->minor < -1 || d->minor > INT32_MAX)
			return ab_error(err, 0, "linux.resources.devices[%zu]: invalid device "
					"%" PRId64 ":%" PRId64, i, d->major, d->minor);
		if (strspn(d->access, "rwm") != strlen(d->access))
			return ab_error(err, 0, "linux.resources.devices[%zu].access: invalid "
					"value \"%s\"", i, d->access);
	}
	return 0;
}

/* ------------------------------------------------------------------ writers v1 and v2 share */

int cg_write_cpuset(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	if (r->cpu.cpus && *r->cpu.cpus && cg_write(dir, "cpuset.cpus", r->cpu.cpus, err) < 0)
		return -1;
	if (r->cpu.mems && *r->cpu.mems && cg_write(dir, "cpuset.mems", r->cpu.mems, err) < 0)
		return -1;
	return 0;
}

int cg_write_pids(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	if (r->pids.limit <= 0)
		return cg_write(dir, "pids.max", "max", err);
	return cg_writef(dir, "pids.max", err, "%" PRId64, r->pids.limit);
}

int cg_write_rdma(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	for (size_t i = 0; i < r->n_rdma; i++)
		if (cg_writef(dir, "rdma.max", err, "%s %s", r->rdma[i].key, r->rdma[i].value) < 0)
			return -1;
	return 0;
}

int cg_write_hugetlb(const char *dir, const struct oci_resources *r, const char *limit, struct ab_err *err)
{
	for (size_t i = 0; i < r->n_hugepage_limits; i++) {
		const struct oci_hugepage_limit *h = &r->hugepage_limits[i];
		char file[64], rsvd[80];
		snprintf(file, sizeof file, "hugetlb.%s.%s", h->page_size, limit);
		snprintf(rsvd, sizeof rsvd, "hugetlb.%s.rsvd.%s", h->page_size, limit);
		if (cg_writef(dir, file, err, "%" PRIu64, h->limit) < 0)
			return -1;
		/* Reservations are charged separately since 5.7: limit them alike. */
		if (cg_exists(dir, rsvd) && cg_writef(dir, rsvd, err, "%" PRIu64, h->limit) < 0)
			return -1;
	}
	return 0;
}
