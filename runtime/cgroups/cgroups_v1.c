/* cgroup v1: one hierarchy per controller (or co-mounted groups of them). Resources,
 * freezer, statistics and the OOM eventfd. */

#include "cgroups_v1.h"
#include "cgroups_files.h"
#include "cgroups_host.h"
#include "cgroups_resources.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "util.h"

static int not_mounted(struct ab_err *err, const char *ctrl, const char *what)
{
	return ab_error(err, 0, "linux.resources.%s: the %s cgroup controller is not mounted",
			what, ctrl);
}

/* "-1" stays "-1": v1 limit files take it as "unlimited". */
static int write_i64(const char *dir, const char *file, int64_t v, struct ab_err *err)
{
	return cg_writef(dir, file, err, "%" PRId64, v);
}

int cg_v1_cpuset_inherit(const char *dir, bool fresh, struct ab_err *err)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 0;
	*slash = 0;
	int parent_empty = 0;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *cur = NULL, *up = NULL;
		/* a cpuset made a moment ago is empty (unless its parent has
		 * cgroup.clone_children, and then the copy is harmless) */
		if (!fresh) {
			if (cg_read(dir, files[i], &cur, err) < 0)
				return -1;
			if (cur[strspn(cur, " \n")] != 0)
				continue;       /* already set */
		}
		if (cg_read(parent, files[i], &up, err) < 0)
			return -1;
		up[strcspn(up, "\n")] = 0;
		if (!*up)
			parent_empty = 1;
		else if (cg_write(dir, files[i], up, err) < 0)
			return -1;
	}
	return parent_empty;
}

static int v1_memory(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	int64_t lim = r->memory.has_limit ? r->memory.limit : 0;
	int64_t swap = r->memory.has_swap ? r->memory.swap : 0;
	bool memsw = (swap || lim == -1) && cg_exists(dir, "memory.memsw.limit_in_bytes");
	if (swap && !memsw) {
		log_debug("cgroups: no swap accounting (memory.memsw.*): memory.swap ignored");
		swap = 0;
	}
	/* No memory limit and no word on swap: no memory+swap limit either, as
	 * runc does; else a swap limit set before (update --memory-swap) would
	 * refuse the unlimited memory (the kernel wants limit <= memsw.limit). */
	if (lim == -1 && !swap && memsw)
		swap = -1;
	if (lim && swap) {
		/* The kernel wants limit <= memsw.limit after every single write, so the
		 * order depends on which way the limits move. */
		uint64_t cur = 0;
		bool swap_first = swap == -1 ||
				  (cg_read_u64(dir, "memory.limit_in_bytes", &cur) == 0 &&
				   cur < (uint64_t)swap);
		if (swap_first) {
			if (write_i64(dir, "memory.memsw.limit_in_bytes", swap, err) < 0 ||
			    write_i64(dir, "memory.limit_in_bytes", lim, err) < 0)
				return -1;
		} else {
			if (write_i64(dir, "memory.limit_in_bytes", lim, err) < 0 ||
			    write_i64(dir, "memory.memsw.limit_in_bytes", swap, err) < 0)
				return -1;
		}
	} else {
		if (lim && write_i64(dir, "memory.limit_in_bytes", lim, err) < 0)
			return -1;
		if (swap && write_i64(dir, "memory.memsw.limit_in_bytes", swap, err) < 0)
			return -1;
	}
	if (r->memory.has_reservation && r->memory.reservation &&
	    write_i64(dir, "memory.soft_limit_in_bytes", r->memory.reservation, err) < 0)
		return -1;
	if (r->memory.has_kernel && r->memory.kernel)
		log_debug("cgroups: memory.kernel is deprecated by the kernel: ignored");
	if (r->memory.has_kernel_tcp) {
		if (cg_exists(dir, "memory.kmem.tcp.limit_in_bytes")) {
			if (write_i64(dir, "memory.kmem.tcp.limit_in_bytes", r->memory.kernel_tcp, err) < 0)
				return -1;
		} else {
			log_debug("cgroups: no memory.kmem.tcp.limit_in_bytes: memory.kernelTCP ignored");
		}
	}
	if (r->memory.has_swappiness &&
	    cg_writef(dir, "memory.swappiness", err, "%" PRIu64, r->memory.swappiness) < 0)
		return -1;
	if (r->memory.has_disable_oom_killer &&
	    cg_write(dir, "memory.oom_control", r->memory.disable_oom_killer ? "1" : "0", err) < 0)
		return -1;
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ real-time CPU */

/* With RT group scheduling (cpu.rt_runtime_us), a cgroup's real-time share is
 * runtime/period, and its children's shares may add up to no more than its
 * own (the kernel's to_ratio: runtime << 20 / period). A new cgroup has none,
 * so agentbox's own parent /agentbox has none to give either: before a
 * container's realtimeRuntime goes in, each level of /agentbox above it that
 * lacks room is raised, top down, to what its children then hold. Cgroups
 * elsewhere (an engine's parent) are the engine's to provision: the kernel's
 * refusal stands there, as with runc. */
#define RT_SHIFT 20

static uint64_t rt_ratio(const char *dir)
{
	uint64_t period = 0, runtime = 0;
	if (cg_read_u64(dir, "cpu.rt_period_us", &period) < 0 || !period ||
	    cg_read_u64(dir, "cpu.rt_runtime_us", &runtime) < 0)
		return 0;
	return runtime == UINT64_MAX ? UINT64_MAX : (runtime << RT_SHIFT) / period;   /* -1: unlimited */
}

/* Ratio held by the children of dir, except the one named skip. */
static uint64_t rt_children(const char *dir, const char *skip)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	uint64_t sum = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char sub[PATH_MAX];
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || streq(de->d_name, skip) ||
		    snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) >= (int)sizeof sub)
			continue;
		uint64_t r = rt_ratio(sub);
		sum = r == UINT64_MAX || sum + r < sum ? UINT64_MAX : sum + r;
	}
	return sum;
}

static int v1_rt_make_room(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	const struct cg_hier *h = cg_v1_hier("cpu");
	size_t root = h ? strlen(h->mnt) : 0;
	static const char own[] = "/agentbox/";
	if (!h || strncmp(dir, h->mnt, root) != 0 || strncmp(dir + root, own, sizeof own - 1) != 0 ||
	    r->cpu.realtime_runtime <= 0)
		return 0;
	uint64_t period = r->cpu.has_realtime_period && r->cpu.realtime_period ? r->cpu.realtime_period : 0;
	if (!period && (cg_read_u64(dir, "cpu.rt_period_us", &period) < 0 || !period))
		return 0;   /* the leaf's own write reports it */
	uint64_t need = ((uint64_t)r->cpu.realtime_runtime << RT_SHIFT) / period;

	/* the levels between the hierarchy's root and dir, bottom up */
	char levels[16][PATH_MAX];
	uint64_t needs[16];
	size_t n = 0;
	char cur[PATH_MAX];
	snprintf(cur, sizeof cur, "%s", dir);
	for (char *slash; n < ARRAY_SIZE(levels) && (slash = strrchr(cur, '/')) && (size_t)(slash - cur) > root;) {
		const char *child = slash + 1;
		char name[NAME_MAX + 1];
		snprintf(name, sizeof name, "%s", child);
		*slash = 0;
		need += rt_children(cur, name);
		if (rt_ratio(cur) >= need)
			break;
		snprintf(levels[n], sizeof levels[n], "%s", cur);
		needs[n++] = need;
	}
	while (n-- > 0) {
		uint64_t p = 0;
		if (cg_read_u64(levels[n], "cpu.rt_period_us", &p) < 0 || !p)
			return ab_error(err, 0, "read %s/cpu.rt_period_us", levels[n]);
		uint64_t runtime = (needs[n] * p + (1u << RT_SHIFT) - 1) >> RT_SHIFT;
		if (cg_writef(levels[n], "cpu.rt_runtime_us", err, "%" PRIu64, runtime) < 0)
			return ab_wrap(err, "give the parent cgroup room for realtimeRuntime");
	}
	return 0;
}

/* The levels of /agentbox above cgroup path hold, once it is gone, no more
 * real-time time than their remaining children: what v1_rt_make_room gave
 * goes back (a parent outside /agentbox is never touched). The kernel counts
 * a removed cgroup's share until it has freed the cgroup, which takes up to
 * about 1.5 s after a kill here (the parent refuses the lower value until
 * then): retried for up to 3 s, only when there is time to give back, then
 * left with a debug line. */
void cg_v1_rt_release(const char *path)
{
	static const char own[] = "/agentbox/";
	char dir[PATH_MAX];
	uint64_t runtime = 0;
	if (strncmp(path, own, sizeof own - 1) != 0 || cg_v1_dir("cpu", path, dir, sizeof dir) < 0)
		return;
	const struct cg_hier *h = cg_v1_hier("cpu");
	size_t root = strlen(h->mnt);
	for (char *slash; (slash = strrchr(dir, '/')) && (size_t)(slash - dir) > root;) {
		*slash = 0;
		if (cg_read_u64(dir, "cpu.rt_runtime_us", &runtime) < 0 || runtime == 0 || runtime == UINT64_MAX)
			return;         /* nothing (more) was given here */
		uint64_t period = 0;
		if (cg_read_u64(dir, "cpu.rt_period_us", &period) < 0 || !period)
			return;
		uint64_t keep = (rt_children(dir, "") * period + (1u << RT_SHIFT) - 1) >> RT_SHIFT;
		if (keep >= runtime)
			return;
		struct ab_err e;
		int r = -EBUSY;
		for (int i = 0; i < 300 && (r == -EBUSY || r == -EINVAL); i++) {
			if (i)
				sleep_ms(10);
			r = cg_writef(dir, "cpu.rt_runtime_us", &e, "%" PRIu64, keep);
		}
		if (r < 0) {
			log_debug("cgroups: give back real-time time of %s: %s", dir, e.msg);
			return;
		}
	}
}

static int v1_cpu(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	if (r->cpu.has_shares && r->cpu.shares &&
	    cg_writef(dir, "cpu.shares", err, "%" PRIu64, r->cpu.shares) < 0)
		return -1;
	bool quota = r->cpu.has_quota && r->cpu.quota;
	if (r->cpu.has_period && r->cpu.period) {
		int ret = cg_writef(dir, "cpu.cfs_period_us", err, "%" PRIu64, r->cpu.period);
		/* A shorter period can be refused while the old quota is in force: set
		 * the quota first and try again. */
		if (ret == -EINVAL && quota) {
			if (write_i64(dir, "cpu.cfs_quota_us", r->cpu.quota, err) < 0)
				return -1;
			ret = cg_writef(dir, "cpu.cfs_period_us", err, "%" PRIu64, r->cpu.period);
		}
		if (ret < 0)
			return -1;
	}
	if (quota && write_i64(dir, "cpu.cfs_quota_us", r->cpu.quota, err) < 0)
		return -1;
	if (r->cpu.has_burst && cg_writef(dir, "cpu.cfs_burst_us", err, "%" PRIu64, r->cpu.burst) < 0)
		return -1;
	if (r->cpu.has_realtime_runtime && v1_rt_make_room(dir, r, err) < 0)
		return -1;
	/* period before runtime: the runtime is checked against the period. */
	if (r->cpu.has_realtime_period && r->cpu.realtime_period &&
	    cg_writef(dir, "cpu.rt_period_us", err, "%" PRIu64, r->cpu.realtime_period) < 0)
		return -1;
	if (r->cpu.has_realtime_runtime && r->cpu.realtime_runtime &&
	    write_i64(dir, "cpu.rt_runtime_us", r->cpu.realtime_runtime, err) < 0)
		return -1;
	if (r->cpu.has_idle && write_i64(dir, "cpu.idle", r->cpu.idle, err) < 0)
		return -1;
	return 0;
}

/* CFQ offered blkio.weight, BFQ offers blkio.bfq.weight: use whichever is there. */
static const char *weight_file(const char *dir, const char *cfq, const char *bfq)
{
	return !cg_exists(dir, cfq) && cg_exists(dir, bfq) ? bfq : cfq;
}

static int v1_blkio(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	const typeof(r->block_io) *b = &r->block_io;
	if (b->has_weight && b->weight &&
	    cg_writef(dir, weight_file(dir, "blkio.weight", "blkio.bfq.weight"), err, "%u",
		      b->weight) < 0)
		return -1;
	if (b->has_leaf_weight && b->leaf_weight) {
		if (cg_exists(dir, "blkio.leaf_weight")) {
			if (cg_writef(dir, "blkio.leaf_weight", err, "%u", b->leaf_weight) < 0)
				return -1;
		} else {
			log_debug("cgroups: no blkio.leaf_weight: blockIO.leafWeight ignored");
		}
	}
	const char *wdev = weight_file(dir, "blkio.weight_device", "blkio.bfq.weight_device");
	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct oci_weight_device *w = &b->weight_device[i];
		if (w->has_weight && cg_writef(dir, wdev, err, "%" PRId64 ":%" PRId64 " %u", w->major,
					       w->minor, w->weight) < 0)
			return -1;
		if (w->has_leaf_weight &&
		    cg_writef(dir, "blkio.leaf_weight_device", err, "%" PRId64 ":%" PRId64 " %u",
			      w->major, w->minor, w->leaf_weight) < 0)
			return -1;
	}
	struct cg_throttle_list th[CG_THROTTLE_LISTS];
	cg_throttle_lists(r, th);
	for (size_t t = 0; t < ARRAY_SIZE(th); t++)
		for (size_t i = 0; i < th[t].n; i++)
			if (cg_writef(dir, th[t].v1_file, err, "%" PRId64 ":%" PRId64 " %" PRIu64,
				      th[t].d[i].major, th[t].d[i].minor, th[t].d[i].rate) < 0)
				return -1;
	return 0;
}

static int v1_hugetlb(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	return cg_write_hugetlb(dir, r, "limit_in_bytes", err);
}

/* a device number of a rule, or "*" (no snprintf: a dozen rules a create) */
static void dev_num(char buf[24], int64_t v)
{
	if (v < 0) {
		strcpy(buf, "*");
		return;
	}
	char rev[24];
	size_t n = 0;
	do
		rev[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	for (size_t i = 0; i < n; i++)
		buf[i] = rev[n - 1 - i];
	buf[n] = 0;
}

/* Rules are written in order, so the kernel's list ends up as the config says;
 * each file is opened once for all its rules. Type "a" can only mean
 * "everything" to the v1 kernel; a narrower "a" rule is written as its char and
 * block halves. */
static int v1_devices(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	_cleanup_close_ int allow_fd = -1;
	_cleanup_close_ int deny_fd = -1;
	for (size_t i = 0; i < r->n_devices; i++) {
		const struct oci_device_rule *d = &r->devices[i];
		const char *file = d->allow ? "devices.allow" : "devices.deny";
		int *fd = d->allow ? &allow_fd : &deny_fd;
		bool all_access = strchr(d->access, 'r') && strchr(d->access, 'w') &&
				  strchr(d->access, 'm');
		if (d->type == 'a' && d->major < 0 && d->minor < 0 && all_access) {
			if (cg_write_keep(dir, file, fd, "a", err) < 0)
				return -1;
			continue;
		}
		char maj[24], min[24], rule[80];
		dev_num(maj, d->major);
		dev_num(min, d->minor);
		const char *types = d->type == 'a' ? "cb" : d->type == 'b' ? "b" : "c";
		/* "c 1:3 rwm" */
		size_t lmaj = strlen(maj), lmin = strlen(min), lacc = strnlen(d->access, sizeof d->access);
		for (const char *t = types; *t; t++) {
			char *w = rule;
			*w++ = *t;
			*w++ = ' ';
			memcpy(w, maj, lmaj);
			w += lmaj;
			*w++ = ':';
			memcpy(w, min, lmin);
			w += lmin;
			*w++ = ' ';
			memcpy(w, d->access, lacc);
			w[lacc] = 0;
			if (cg_write_keep(dir, file, fd, rule, err) < 0)
				return -1;
		}
	}
	return 0;
}

static int v1_net_cls(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	return cg_writef(dir, "net_cls.classid", err, "%u", r->network.class_id);
}

static int v1_net_prio(const char *dir, const struct oci_resources *r, struct ab_err *err)
{
	for (size_t i = 0; i < r->network.n_priorities; i++)
		if (cg_writef(dir, "net_prio.ifpriomap", err, "%s %s", r->network.priorities[i].key,
			      r->network.priorities[i].value) < 0)
			return -1;
	return 0;
}

int cg_v1_apply(const char *path, const struct oci_resources *r, unsigned skip, struct ab_err *err)
{
	char dir[PATH_MAX];
	const struct {
		bool set;
		unsigned group;
		const char *ctrl, *what;
		int (*fn)(const char *dir, const struct oci_resources *r, struct ab_err *err);
	} steps[] = {
		{ cg_res_memory_set(r), CG_RES_MEMORY, "memory", "memory", v1_memory },
		{ cg_res_cpu_set(r), CG_RES_CPU, "cpu", "cpu", v1_cpu },
		{ cg_res_cpuset_set(r), CG_RES_CPUSET, "cpuset", "cpu.cpus", cg_write_cpuset },
		{ cg_res_pids_set(r), CG_RES_PIDS, "pids", "pids", cg_write_pids },
		{ cg_res_blkio_set(r), CG_RES_IO, "blkio", "blockIO", v1_blkio },
		{ r->n_hugepage_limits > 0, CG_RES_HUGETLB, "hugetlb", "hugepageLimits", v1_hugetlb },
		{ r->n_devices > 0, CG_RES_DEVICES, "devices", "devices", v1_devices },
		{ r->n_rdma > 0, CG_RES_RDMA, "rdma", "rdma", cg_write_rdma },
		/* as every other group: refused where its controller is not mounted */
		{ r->network.has_class_id, CG_RES_NET, "net_cls", "network.classID", v1_net_cls },
		{ r->network.n_priorities > 0, CG_RES_NET, "net_prio", "network.priorities", v1_net_prio },
	};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (!steps[i].set || (skip & steps[i].group))
			continue;
		int ret = cg_v1_dir(steps[i].ctrl, path, dir, sizeof dir);
		if (ret == -ENOENT)
			return not_mounted(err, steps[i].ctrl, steps[i].what);
		if (ret < 0)
			return ab_error(err, -ret, "cgroup path %s", path);
		if (steps[i].fn(dir, r, err) < 0)
			return ab_wrap(err, "linux.resources.%s", steps[i].what);
	}
	if (r->n_unified && !(skip & CG_RES_UNIFIED))
		return ab_error(err, 0, "linux.resources.unified: needs cgroup v2, and this "
				"host has cgroup v1 only");
	return 0;
}

/* ------------------------------------------------------------------ freezer */

static int read_state(const char *dir, char *buf, size_t len, struct ab_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = cg_read(dir, "freezer.state", &s, err);
	if (r < 0)
		return r;
	s[strcspn(s, "\n")] = 0;
	snprintf(buf, len, "%s", s);
	return 0;
}

int cg_v1_freeze(const char *path, bool frozen, struct ab_err *err)
{
	char dir[PATH_MAX], state[32] = "";
	if (cg_v1_dir("freezer", path, dir, sizeof dir) < 0)
		return ab_error(err, ENOTSUP, "the freezer cgroup controller is not mounted");
	const char *want = frozen ? "FROZEN" : "THAWED";
	/* FREEZING can linger while a task is in an uninterruptible sleep; asking
	 * again now and then nudges the kernel. About 5 s in all. */
	for (int i = 0; i < 600; i++) {
		if (i % 25 == 0 && cg_write(dir, "freezer.state", want, err) < 0)
			return -1;
		if (read_state(dir, state, sizeof state, err) < 0)
			return -1;
		if (streq(state, want))
			return 0;
		sleep_ms(i < 100 ? 1 : 10);
	}
	if (frozen) {
		struct ab_err tmp;
		(void)cg_write(dir, "freezer.state", "THAWED", &tmp);
	}
	return ab_error(err, ETIMEDOUT, "%s %s: still %s", frozen ? "freeze" : "thaw", dir, state);
}

int cg_v1_is_frozen(const char *path, struct ab_err *err)
{
	char dir[PATH_MAX], state[32];
	if (cg_v1_dir("freezer", path, dir, sizeof dir) < 0)
		return ab_error(err, ENOTSUP, "the freezer cgroup controller is not mounted");
	if (read_state(dir, state, sizeof state, err) < 0)
		return -1;
	return streq(state, "FROZEN");
}

/* ------------------------------------------------------------------ stats */

/* "N N N ..." as a JSON array. */
static void array_file(struct json_out *o, const char *key, const char *dir, const char *file)
{
	_cleanup_free_ char *s = NULL;
	struct ab_err e;
	if (cg_read(dir, file, &s, &e) < 0)
		return;
	json_key(o, key);
	json_arr_begin(o);
	for (char *p = s, *end;; p = end) {
		unsigned long long v = strtoull(p, &end, 10);
		if (end == p)
			break;
		json_uint(o, v);
	}
	json_arr_end(o);
}

static void stats_cpu(const char *path, struct json_out *o)
{
	char acct[PATH_MAX], cpu[PATH_MAX];
	bool has_acct = cg_v1_dir("cpuacct", path, acct, sizeof acct) == 0;
	bool has_cpu = cg_v1_dir("cpu", path, cpu, sizeof cpu) == 0;
	json_key(o, "cpu");
	json_obj_begin(o);
	json_key(o, "usage");
	json_obj_begin(o);
	if (has_acct) {
		cg_json_file(o, "total", acct, "cpuacct.usage");
		array_file(o, "percpu", acct, "cpuacct.usage_percpu");
		array_file(o, "percpu_kernel", acct, "cpuacct.usage_percpu_sys");
		array_file(o, "percpu_user", acct, "cpuacct.usage_percpu_user");
		/* cpuacct.stat counts USER_HZ ticks; runc reports nanoseconds. */
		_cleanup_free_ char *s = NULL;
		struct ab_err e;
		uint64_t user, sys;
		long hz = sysconf(_SC_CLK_TCK);
		if (hz > 0 && cg_read(acct, "cpuacct.stat", &s, &e) == 0 &&
		    cg_kv(s, "user", &user) == 0 && cg_kv(s, "system", &sys) == 0) {
			json_kv_uint(o, "kernel", sys * (1000000000ull / (uint64_t)hz));
			json_kv_uint(o, "user", user * (1000000000ull / (uint64_t)hz));
		}
	}
	json_obj_end(o);
	json_key(o, "throttling");
	json_obj_begin(o);
	_cleanup_free_ char *st = NULL;
	struct ab_err e;
	uint64_t v;
	if (has_cpu && cg_read(cpu, "cpu.stat", &st, &e) == 0) {
		if (cg_kv(st, "nr_periods", &v) == 0)
			json_kv_uint(o, "periods", v);
		if (cg_kv(st, "nr_throttled", &v) == 0)
			json_kv_uint(o, "throttledPeriods", v);
		if (cg_kv(st, "throttled_time", &v) == 0)
			json_kv_uint(o, "throttledTime", v);
	}
	json_obj_end(o);
	json_obj_end(o);
}

/* {limit, usage, max, failcnt} from <prefix>limit_in_bytes etc., if any of them exists. */
static void mem_entry(struct json_out *o, const char *key, const char *dir, const char *prefix)
{
	char f[4][96];
	static const char *const names[] = { "limit_in_bytes", "usage_in_bytes",
					     "max_usage_in_bytes", "failcnt" };
	static const char *const keys[] = { "limit", "usage", "max", "failcnt" };
	bool any = false;
	for (int i = 0; i < 4; i++) {
		snprintf(f[i], sizeof f[i], "%s%s", prefix, names[i]);
		any |= cg_exists(dir, f[i]);
	}
	if (!any)
		return;
	json_key(o, key);
	json_obj_begin(o);
	for (int i = 0; i < 4; i++)
		cg_json_file(o, keys[i], dir, f[i]);
	json_obj_end(o);
}

static void stats_memory(const char *path, struct json_out *o)
{
	char dir[PATH_MAX];
	if (cg_v1_dir("memory", path, dir, sizeof dir) < 0)
		return;
	json_key(o, "memory");
	json_obj_begin(o);
	_cleanup_free_ char *st = NULL;
	struct ab_err e;
	uint64_t cache;
	bool have_stat = cg_read(dir, "memory.stat", &st, &e) == 0;
	if (have_stat && cg_kv(st, "cache", &cache) == 0)
		json_kv_uint(o, "cache", cache);
	mem_entry(o, "usage", dir, "memory.");
	mem_entry(o, "swap", dir, "memory.memsw.");
	mem_entry(o, "kernel", dir, "memory.kmem.");
	mem_entry(o, "kernelTCP", dir, "memory.kmem.tcp.");
	if (have_stat)
		cg_stats_raw(o, "raw", st);
	json_obj_end(o);
}

/* Lines "MAJ:MIN Op value" of the first of files that has any. */
static void blkio_entries(struct json_out *o, const char *key, const char *dir,
			  const char *const files[], size_t n_files)
{
	for (size_t i = 0; i < n_files; i++) {
		_cleanup_free_ char *s = NULL;
		struct ab_err e;
		if (cg_read(dir, files[i], &s, &e) < 0)
			continue;
		bool started = false;
		char *save = NULL;
		for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			unsigned maj, min;
			char op[32];
			unsigned long long v;
			if (sscanf(line, "%u:%u %31s %llu", &maj, &min, op, &v) != 4)
				continue;   /* the "Total N" line */
			cg_stats_blkio_entry(o, key, &started, maj, min, op, v);
		}
		if (started) {
			json_arr_end(o);
			return;
		}
	}
}

static void stats_blkio(const char *path, struct json_out *o)
{
	char dir[PATH_MAX];
	if (cg_v1_dir("blkio", path, dir, sizeof dir) < 0)
		return;
	/* CFQ's files, else BFQ's, else the throttle layer's, which always counts. */
	static const char *const bytes[] = { "blkio.io_service_bytes_recursive",
					     "blkio.bfq.io_service_bytes_recursive",
					     "blkio.throttle.io_service_bytes_recursive" };
	static const char *const ios[] = { "blkio.io_serviced_recursive",
					   "blkio.bfq.io_serviced_recursive",
					   "blkio.throttle.io_serviced_recursive" };
	json_key(o, "blkio");
	json_obj_begin(o);
	blkio_entries(o, "ioServiceBytesRecursive", dir, bytes, ARRAY_SIZE(bytes));
	blkio_entries(o, "ioServicedRecursive", dir, ios, ARRAY_SIZE(ios));
	json_obj_end(o);
}

static void stats_hugetlb(const char *path, struct json_out *o)
{
	char dir[PATH_MAX], sizes[8][16];
	if (cg_v1_dir("hugetlb", path, dir, sizeof dir) < 0)
		return;
	size_t n = cg_hugepage_sizes(sizes, ARRAY_SIZE(sizes));
	json_key(o, "hugetlb");
	json_obj_begin(o);
	for (size_t i = 0; i < n; i++) {
		char f[3][64];
		snprintf(f[0], sizeof f[0], "hugetlb.%s.usage_in_bytes", sizes[i]);
		snprintf(f[1], sizeof f[1], "hugetlb.%s.max_usage_in_bytes", sizes[i]);
		snprintf(f[2], sizeof f[2], "hugetlb.%s.failcnt", sizes[i]);
		if (!cg_exists(dir, f[0]))
			continue;
		json_key(o, sizes[i]);
		json_obj_begin(o);
		cg_json_file(o, "usage", dir, f[0]);
		cg_json_file(o, "max", dir, f[1]);
		cg_json_file(o, "failcnt", dir, f[2]);
		json_obj_end(o);
	}
	json_obj_end(o);
}

void cg_v1_stats(const char *path, struct json_out *o, bool hugetlb)
{
	char dir[PATH_MAX];
	stats_cpu(path, o);
	stats_memory(path, o);
	if (cg_v1_dir("pids", path, dir, sizeof dir) == 0)
		cg_stats_pids(o, dir);
	stats_blkio(path, o);
	if (hugetlb)
		stats_hugetlb(path, o);
}

/* ------------------------------------------------------------------ OOM */

int cg_v1_oom_watch(const char *path, struct ab_err *err)
{
	char dir[PATH_MAX], file[PATH_MAX + 32];
	if (cg_v1_dir("memory", path, dir, sizeof dir) < 0)
		return -1;
	snprintf(file, sizeof file, "%s/memory.oom_control", dir);
	_cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		return ab_error(err, errno, "eventfd");
	_cleanup_close_ int ofd = open(file, O_RDONLY | O_CLOEXEC);
	if (ofd < 0)
		return ab_error(err, errno, "open %s", file);
	/* The kernel keeps what it needs after registration; ofd can go. */
	if (cg_writef(dir, "cgroup.event_control", err, "%d %d", efd, ofd) < 0)
		return ab_wrap(err, "watch OOM events");
	return TAKE_FD(efd);
}

int cg_v1_oom_count(const char *path, uint64_t *ret, struct ab_err *err)
{
	char dir[PATH_MAX];
	*ret = 0;
	if (cg_v1_dir("memory", path, dir, sizeof dir) < 0)
		return 0;
	/* no such field before 4.13, or no cgroup: 0 */
	return cg_read_counter(dir, "memory.oom_control", "oom_kill", ret, err);
}
