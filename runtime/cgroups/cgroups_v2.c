/* cgroup v2: one unified hierarchy. Resources, freezer, statistics and OOM watch.
 * In hybrid mode the same code drives the unified mount for what v1 lacks. */

#include "cgroups_v2.h"
#include "cgroups_bpf.h"
#include "cgroups_files.h"
#include "cgroups_host.h"
#include "cgroups_resources.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------------------ controllers */

/* Does the leaf offer every controller of the root already? Then every level above
 * it has them all on: the usual case once a parent has held one container. One read
 * instead of two per level. */
static bool leaf_has_all(const char *path)
{
	char dir[PATH_MAX];
	_cleanup_free_ char *leaf = NULL;
	struct ab_err e;
	const char *root = cg_v2_root_controllers();
	if (!root || cg_v2_dir(path, dir, sizeof dir) < 0 || cg_read(dir, "cgroup.controllers", &leaf, &e) < 0)
		return false;
	size_t n;
	for (const char *p = root, *c; (c = cg_next_word(&p, &n));)
		if (!cg_has_word(leaf, c, n))
			return false;
	return true;
}

/* A controller must be on in every ancestor's cgroup.subtree_control for its files to
 * appear in the leaf. Enable whatever each level offers, as runc does; a controller
 * that cannot be enabled (say, cpu with realtime tasks about) is skipped and only
 * fails later if a limit needs it, with an error naming the missing file. */
void cg_v2_enable_controllers(const char *path)
{
	if (leaf_has_all(path))
		return;
	char dir[PATH_MAX];
	if (cg_v2_dir("", dir, sizeof dir) < 0)
		return;
	size_t base = strlen(dir);
	for (const char *p = path;;) {
		_cleanup_free_ char *avail = NULL, *on = NULL;
		struct ab_err e;
		if (cg_read(dir, "cgroup.controllers", &avail, &e) == 0 &&
		    cg_read(dir, "cgroup.subtree_control", &on, &e) == 0) {
			size_t n;
			for (const char *q = avail, *c; (c = cg_next_word(&q, &n));)
				if (!cg_has_word(on, c, n) &&
				    cg_writef(dir, "cgroup.subtree_control", &e, "+%.*s", (int)n, c) < 0)
					log_debug("cgroups: %s", e.msg);
		}
		/* next component; stop before the leaf */
		while (*p == '/')
			p++;
		const char *next = strchrnul(p, '/');
		if (!*next)
			break;
		if (base + 1 + (size_t)(next - p) >= sizeof dir)
			break;
		dir[base++] = '/';
		memcpy(dir + base, p, (size_t)(next - p));
		base += (size_t)(next - p);
		dir[base] = 0;
		p = next;
	}
}

/* ------------------------------------------------------------------ conversions */

/* v (0: not set) clamped to [lo, hi] and mapped linearly onto 1..10000 */
static uint64_t scale_weight(uint64_t v, uint64_t lo, uint64_t hi)
{
	if (v == 0)
		return 0;
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return 1 + ((v - lo) * 9999) / (hi - lo);
}

uint64_t cg_shares_to_weight(uint64_t shares)
{
	return scale_weight(shares, 2, 262144);
}

uint64_t cg_blkio_to_io_weight(uint64_t w)
{
	return scale_weight(w, 10, 1000);
}

/* OCI's swap is memory+swap (v1's memsw); v2 limits swap alone. */
int cg_v2_swap_value(int64_t swap, int64_t limit, int64_t *ret, struct ab_err *err)
{
	/* unlimited memory and no word on swap: unlimited swap too, as v1 would have it */
	if (limit == -1 && swap == 0) {
		*ret = -1;
		return 0;
	}
	if (swap == -1 || swap == 0) {
		*ret = swap;
		return 0;
	}
	if (limit == 0 || limit == -1)
		return ab_error(err, 0, "linux.resources.memory.swap: a swap limit needs a "
				"memory limit");
	if (swap < limit)
		return ab_error(err, 0, "linux.resources.memory.swap: memory+swap limit %" PRId64
				" is lower than the memory limit %" PRId64, swap, limit);
	*ret = swap - limit;
	return 0;
}

/* ------------------------------------------------------------------ resources */

static int write_limit(const char *dir, const char *file, int64_t v, struct ab_err *err)
{
	if (v < 0)
		return cg_write(dir, file, "max", err);
	return cg_writef(dir, file, err, "%" PRId64, v);
}

static int v2_memory(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	int64_t lim = r->memory.has_limit ? r->memory.limit : 0;
	int64_t swap = 0;
	if (cg_v2_swap_value(r->memory.has_swap ? r->memory.swap : 0, lim, &swap, err) < 0)
		return -1;
	if (swap) {
		if (cg_exists(dir, "memory.swap.max")) {
			if (write_limit(dir, "memory.swap.max", swap, err) < 0)
				return -1;
		} else {
			log_debug("cgroups: no memory.swap.max (no swap accounting): swap ignored");
		}
	}
	if (lim && write_limit(dir, "memory.max", lim, err) < 0)
		return -1;
	if (r->memory.has_reservation && r->memory.reservation &&
	    write_limit(dir, "memory.low", r->memory.reservation, err) < 0)
		return -1;
	/* v1-only knobs: v2 has no per-cgroup swappiness, OOM-killer switch or tcp limit */
	if (r->memory.has_swappiness || r->memory.has_disable_oom_killer ||
	    r->memory.has_kernel_tcp || (r->memory.has_kernel && r->memory.kernel))
		log_debug("cgroups: memory swappiness/disableOOMKiller/kernel/kernelTCP have no "
			  "cgroup v2 equivalent: ignored");
	return 0;
}

static int v2_cpu(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	if ((r->cpu.has_realtime_runtime && r->cpu.realtime_runtime) ||
	    (r->cpu.has_realtime_period && r->cpu.realtime_period))
		return ab_error(err, 0, "linux.resources.cpu.realtimeRuntime/realtimePeriod: "
				"not supported with cgroup v2");
	if (r->cpu.has_shares && r->cpu.shares &&
	    cg_writef(dir, "cpu.weight", err, "%" PRIu64, cg_shares_to_weight(r->cpu.shares)) < 0)
		return -1;
	bool quota = r->cpu.has_quota && r->cpu.quota;
	bool period = r->cpu.has_period && r->cpu.period;
	if (quota || period) {
		/* "max" alone keeps the current period */
		char val[64];
		int n = quota && r->cpu.quota > 0
			? snprintf(val, sizeof val, "%" PRId64, r->cpu.quota)
			: snprintf(val, sizeof val, "max");
		if (period)
			snprintf(val + n, sizeof val - (size_t)n, " %" PRIu64, r->cpu.period);
		if (cg_write(dir, "cpu.max", val, err) < 0)
			return -1;
	}
	if (r->cpu.has_burst && cg_writef(dir, "cpu.max.burst", err, "%" PRIu64, r->cpu.burst) < 0)
		return -1;
	if (r->cpu.has_idle && cg_writef(dir, "cpu.idle", err, "%" PRId64, r->cpu.idle) < 0)
		return -1;
	return 0;
}

static void rate_text(char *buf, size_t len, uint64_t rate)
{
	/* v1 takes 0 as "no limit"; v2 spells that "max" */
	if (rate == 0)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, rate);
}

static int v2_io(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	const typeof(r->block_io) *b = &r->block_io;
	/* BFQ takes the blkio scale (1..1000) as is; io.weight wants 1..10000. */
	bool bfq = cg_exists(dir, "io.bfq.weight");
	if (b->has_weight && b->weight) {
		int ret = bfq ? cg_writef(dir, "io.bfq.weight", err, "%u", b->weight)
			      : cg_writef(dir, "io.weight", err, "%" PRIu64,
					  cg_blkio_to_io_weight(b->weight));
		if (ret < 0)
			return -1;
	}
	if (b->has_leaf_weight && b->leaf_weight)
		log_debug("cgroups: blockIO.leafWeight has no cgroup v2 equivalent: ignored");
	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct oci_weight_device *w = &b->weight_device[i];
		if (!w->has_weight)
			continue;
		int ret = bfq ? cg_writef(dir, "io.bfq.weight", err, "%" PRId64 ":%" PRId64 " %u",
					  w->major, w->minor, w->weight)
			      : cg_writef(dir, "io.weight", err, "%" PRId64 ":%" PRId64 " %" PRIu64,
					  w->major, w->minor, cg_blkio_to_io_weight(w->weight));
		if (ret < 0)
			return -1;
	}
	struct cg_throttle_list th[CG_THROTTLE_LISTS];
	cg_throttle_lists(r, th);
	/* One line a limit: the kernel merges them per device. */
	for (size_t t = 0; t < ARRAY_SIZE(th); t++)
		for (size_t i = 0; i < th[t].n; i++) {
			char rate[32];
			rate_text(rate, sizeof rate, th[t].d[i].rate);
			if (cg_writef(dir, "io.max", err, "%" PRId64 ":%" PRId64 " %s=%s",
				      th[t].d[i].major, th[t].d[i].minor, th[t].v2_key, rate) < 0)
				return -1;
		}
	return 0;
}

static int v2_hugetlb(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	return cg_write_hugetlb(dir, r, "max", err);
}

static int v2_devices(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	return cg_bpf_devices_apply(dir, r->devices, r->n_devices, err);
}

/* Keys were checked to be plain file names (cg_validate); values go in as written. */
static int v2_unified(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	for (size_t i = 0; i < r->n_unified; i++) {
		const struct oci_kv *kv = &r->unified[i];
		int ret = cg_write(dir, kv->key, kv->value ? kv->value : "", err);
		/* "memory.min" where memory is not on this cgroup2 hierarchy (a
		 * hybrid host has it on v1): say so, not just ENOENT */
		const char *dot = strchr(kv->key, '.');
		const char *ctrls = cg_v2_root_controllers();
		if (ret == -ENOENT && dot && ctrls && !cg_has_word(ctrls, kv->key, (size_t)(dot - kv->key)) &&
		    strncmp(kv->key, "cgroup.", 7) != 0)
			return ab_error(err, 0, "unified[\"%s\"]: invalid configuration on this host: the %.*s "
					"controller is not on its cgroup2 hierarchy", kv->key, (int)(dot - kv->key), kv->key);
		if (ret < 0)
			return ab_wrap(err, "unified[\"%s\"]", kv->key);
	}
	return 0;
}

int cg_v2_apply(const char *dir, const struct oci_resources *r, unsigned what, struct ab_err *err)
{
	const struct {
		bool set;
		unsigned group;
		const char *what;
		int (*fn)(const char *dir, const struct oci_resources *r, struct ab_err *err);
	} steps[] = {
		{ cg_res_memory_set(r), CG_RES_MEMORY, "memory", v2_memory },
		{ cg_res_cpu_set(r), CG_RES_CPU, "cpu", v2_cpu },
		{ cg_res_cpuset_set(r), CG_RES_CPUSET, "cpu.cpus", cg_write_cpuset },
		{ cg_res_pids_set(r), CG_RES_PIDS, "pids", cg_write_pids },
		{ cg_res_blkio_set(r), CG_RES_IO, "blockIO", v2_io },
		{ r->n_hugepage_limits > 0, CG_RES_HUGETLB, "hugepageLimits", v2_hugetlb },
		{ r->n_devices > 0, CG_RES_DEVICES, "devices", v2_devices },
		{ r->n_rdma > 0, CG_RES_RDMA, "rdma", cg_write_rdma },
		/* last, so a raw key can refine what the fields above wrote */
		{ r->n_unified > 0, CG_RES_UNIFIED, "unified", v2_unified },
	};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (!steps[i].set || !(what & steps[i].group))
			continue;
		if (steps[i].fn(dir, r, err) < 0) {
			/* validation errors already carry their JSON path */
			if (strncmp(err->msg, "linux.resources.", 16) == 0)
				return -1;
			return ab_wrap(err, "linux.resources.%s", steps[i].what);
		}
	}
	/* refused rather than dropped, as a controller v1 has not mounted is */
	if ((what & CG_RES_NET) && (r->network.has_class_id || r->network.n_priorities))
		return ab_error(err, 0, "linux.resources.network: cgroup v2 has no net_cls or net_prio controller");
	return 0;
}

/* ------------------------------------------------------------------ freezer */

static int events_frozen(const char *dir, uint64_t *ret)
{
	int r = cg_read_kv(dir, "cgroup.events", "frozen", ret);
	if (r == -ENOENT)
		r = cg_read_u64(dir, "cgroup.freeze", ret);
	return r;
}

int cg_v2_freeze(const char *dir, bool frozen, struct ab_err *err)
{
	if (!cg_exists(dir, "cgroup.freeze"))
		return ab_error(err, ENOTSUP, "%s/cgroup.freeze missing: the kernel (< 5.2) cannot "
				"freeze a cgroup v2", dir);
	if (cg_write(dir, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
		return -1;
	/* cgroup.events says "frozen 1" once every task has stopped; about 5 s at most. */
	uint64_t v = !frozen;
	for (int i = 0; i < 600; i++) {
		int r = events_frozen(dir, &v);
		if (r < 0)
			return ab_error(err, -r, "read %s/cgroup.events", dir);
		if (v == (uint64_t)frozen)
			return 0;
		struct timespec ts = { 0, (i < 100 ? 1 : 10) * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (frozen) {
		struct ab_err tmp;
		(void)cg_write(dir, "cgroup.freeze", "0", &tmp);
	}
	return ab_error(err, ETIMEDOUT, "%s %s: timed out", frozen ? "freeze" : "thaw", dir);
}

int cg_v2_is_frozen(const char *dir, struct ab_err *err)
{
	uint64_t v = 0;
	if (!cg_exists(dir, "cgroup.freeze"))
		return 0;
	int r = events_frozen(dir, &v);
	if (r < 0)
		return ab_error(err, -r, "read %s/cgroup.events", dir);
	return v == 1;
}

/* ------------------------------------------------------------------ stats */

static void stats_cpu(const char *dir, struct json_out *o)
{
	_cleanup_free_ char *st = NULL;
	struct ab_err e;
	uint64_t v;
	bool have = cg_read(dir, "cpu.stat", &st, &e) == 0;
	/* cpu.stat counts microseconds; runc reports nanoseconds */
	json_key(o, "cpu");
	json_obj_begin(o);
	json_key(o, "usage");
	json_obj_begin(o);
	if (have && cg_kv(st, "usage_usec", &v) == 0)
		json_kv_uint(o, "total", v * 1000);
	if (have && cg_kv(st, "system_usec", &v) == 0)
		json_kv_uint(o, "kernel", v * 1000);
	if (have && cg_kv(st, "user_usec", &v) == 0)
		json_kv_uint(o, "user", v * 1000);
	json_obj_end(o);
	json_key(o, "throttling");
	json_obj_begin(o);
	if (have && cg_kv(st, "nr_periods", &v) == 0)
		json_kv_uint(o, "periods", v);
	if (have && cg_kv(st, "nr_throttled", &v) == 0)
		json_kv_uint(o, "throttledPeriods", v);
	if (have && cg_kv(st, "throttled_usec", &v) == 0)
		json_kv_uint(o, "throttledTime", v * 1000);
	json_obj_end(o);
	json_obj_end(o);
}

static void stats_memory(const char *dir, struct json_out *o)
{
	if (!cg_exists(dir, "memory.current"))
		return;
	_cleanup_free_ char *st = NULL;
	struct ab_err e;
	uint64_t cur = 0, max = UINT64_MAX, v;
	bool have_stat = cg_read(dir, "memory.stat", &st, &e) == 0;
	json_key(o, "memory");
	json_obj_begin(o);
	if (have_stat && cg_kv(st, "file", &v) == 0)
		json_kv_uint(o, "cache", v);
	json_key(o, "usage");
	json_obj_begin(o);
	if (cg_read_u64(dir, "memory.current", &cur) == 0)
		json_kv_uint(o, "usage", cur);
	if (cg_read_u64(dir, "memory.max", &max) == 0)
		json_kv_uint(o, "limit", max);
	cg_json_file(o, "max", dir, "memory.peak");
	/* times usage ran into memory.max: the nearest thing to v1's failcnt */
	if (cg_read_kv(dir, "memory.events", "max", &v) == 0)
		json_kv_uint(o, "failcnt", v);
	json_obj_end(o);
	uint64_t swap_cur, swap_max;
	if (cg_read_u64(dir, "memory.swap.current", &swap_cur) == 0) {
		/* v1 reported memory+swap here; keep that meaning */
		json_key(o, "swap");
		json_obj_begin(o);
		json_kv_uint(o, "usage", swap_cur + cur);
		if (cg_read_u64(dir, "memory.swap.max", &swap_max) == 0)
			json_kv_uint(o, "limit", swap_max == UINT64_MAX || max == UINT64_MAX
						 ? UINT64_MAX : swap_max + max);
		json_obj_end(o);
	}
	if (have_stat)
		cg_stats_raw(o, "raw", st);
	json_obj_end(o);
}

/* io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N" */
static void io_entries(struct json_out *o, const char *text, const char *key, const char *rkey,
		       const char *wkey)
{
	bool started = false;
	for (const char *p = text; *p;) {
		const char *nl = strchrnul(p, '\n');
		unsigned maj, min;
		if (sscanf(p, "%u:%u", &maj, &min) == 2) {
			const char *ks[2] = { rkey, wkey }, *ops[2] = { "Read", "Write" };
			for (int i = 0; i < 2; i++) {
				char pat[32];
				snprintf(pat, sizeof pat, " %s=", ks[i]);
				const char *f = strstr(p, pat);
				if (!f || f > nl)
					continue;
				cg_stats_blkio_entry(o, key, &started, maj, min, ops[i],
						     strtoull(f + strlen(pat), NULL, 10));
			}
		}
		p = *nl ? nl + 1 : nl;
	}
	if (started)
		json_arr_end(o);
}

static void stats_io(const char *dir, struct json_out *o)
{
	_cleanup_free_ char *st = NULL;
	struct ab_err e;
	if (cg_read(dir, "io.stat", &st, &e) < 0)
		return;
	json_key(o, "blkio");
	json_obj_begin(o);
	io_entries(o, st, "ioServiceBytesRecursive", "rbytes", "wbytes");
	io_entries(o, st, "ioServicedRecursive", "rios", "wios");
	json_obj_end(o);
}

static void stats_hugetlb(const char *dir, struct json_out *o)
{
	char sizes[8][16];
	size_t n = cg_hugepage_sizes(sizes, ARRAY_SIZE(sizes));
	bool started = false;
	for (size_t i = 0; i < n; i++) {
		char cur[64], events[64];
		snprintf(cur, sizeof cur, "hugetlb.%s.current", sizes[i]);
		snprintf(events, sizeof events, "hugetlb.%s.events", sizes[i]);
		if (!cg_exists(dir, cur))
			continue;
		if (!started) {
			json_key(o, "hugetlb");
			json_obj_begin(o);
			started = true;
		}
		json_key(o, sizes[i]);
		json_obj_begin(o);
		cg_json_file(o, "usage", dir, cur);
		uint64_t v;
		if (cg_read_kv(dir, events, "max", &v) == 0)
			json_kv_uint(o, "failcnt", v);
		json_obj_end(o);
	}
	if (started)
		json_obj_end(o);
}

void cg_v2_stats(const char *dir, struct json_out *o, bool hugetlb_only)
{
	if (!hugetlb_only) {
		stats_cpu(dir, o);
		stats_memory(dir, o);
		if (cg_exists(dir, "pids.current"))
			cg_stats_pids(o, dir);
		stats_io(dir, o);
	}
	stats_hugetlb(dir, o);
}

/* ------------------------------------------------------------------ OOM */

int cg_v2_oom_watch(const char *dir, struct ab_err *err)
{
	char file[PATH_MAX + 16];
	snprintf(file, sizeof file, "%s/memory.events", dir);
	if (access(file, F_OK) < 0)
		return -1;
	_cleanup_close_ int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fd < 0)
		return ab_error(err, errno, "inotify_init1");
	/* memory.events is "modified" whenever one of its counters moves */
	if (inotify_add_watch(fd, file, IN_MODIFY) < 0)
		return ab_error(err, errno, "inotify_add_watch %s", file);
	return TAKE_FD(fd);
}

int cg_v2_oom_count(const char *dir, uint64_t *ret, struct ab_err *err)
{
	*ret = 0;
	return cg_read_counter(dir, "memory.events", "oom_kill", ret, err);
}
