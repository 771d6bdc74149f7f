/* cgroups: host layout detection, cgroupsPath resolution, and the lifecycle
 * (create, enter, freeze, kill, destroy, stats) over v1, v2 and the hybrid layout.
 * Resource writers live in cgroups_v1.c and cgroups_v2.c, the v2 device program in
 * cgroups_bpf.c. */
#include "cgroups.h"
#include "cgroups_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "json.h"
#include "log.h"
#include "util.h"

#define CG_FILE_MAX (4u << 20)

/* ------------------------------------------------------------------ host layout */

static struct cg_host host;
static bool host_done;

/* v1 controllers a container joins and agentbox knows how to drive or account. */
static const char *const known_ctrls[] = {
	"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "net_cls", "net_prio",
	"blkio", "perf_event", "hugetlb", "pids", "rdma", "misc",
};

static bool known_ctrl(const char *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_ctrls); i++)
		if (streq(c, known_ctrls[i]))
			return true;
	return false;
}

bool cg_hier_has(const struct cg_hier *h, const char *ctrl)
{
	size_t n = strlen(ctrl);
	for (const char *p = h->ctrls; *p;) {
		const char *e = strchrnul(p, ',');
		if ((size_t)(e - p) == n && strncmp(p, ctrl, n) == 0)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

bool cg_hier_used(const struct cg_hier *h)
{
	if (cg_hier_has(h, "name=systemd"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(known_ctrls); i++)
		if (cg_hier_has(h, known_ctrls[i]))
			return true;
	return false;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* A copy of s in host->strs; NULL when full. */
static const char *host_strdup(struct cg_host *host, const char *s)
{
	size_t len = strlen(s) + 1;
	if (len > sizeof host->strs - host->strs_used)
		return NULL;
	char *p = host->strs + host->strs_used;
	memcpy(p, s, len);
	host->strs_used += len;
	return p;
}

/* Parse one mountinfo line of a v1 cgroup mount into h, its paths kept in
 * host->strs; false for anything else. */
static bool parse_mountinfo_line(char *line, struct cg_hier *h, struct cg_host *host)
{
	char *f[10] = {0};
	char *save = NULL, *tok;
	int n = 0;
	/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (n < 5) {
			f[n++] = tok;
		} else if (streq(tok, "-")) {
			f[5] = strtok_r(NULL, " \n", &save);
			f[6] = strtok_r(NULL, " \n", &save);
			f[7] = strtok_r(NULL, " \n", &save);
			break;
		}
	}
	if (n < 5 || !f[5] || !f[7] || !streq(f[5], "cgroup"))
		return false;
	unsigned maj, min;
	if (sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return false;
	h->dev = makedev(maj, min);
	h->ctrls[0] = 0;
	unescape_octal(f[3]);
	unescape_octal(f[4]);
	if (!(h->root = host_strdup(host, f[3])) || !(h->mnt = host_strdup(host, f[4])))
		return false;
	size_t len = 0;
	char *s2 = NULL;
	for (tok = strtok_r(f[7], ",", &s2); tok; tok = strtok_r(NULL, ",", &s2)) {
		if (!known_ctrl(tok) && strncmp(tok, "name=", 5) != 0)
			continue;
		int w = snprintf(h->ctrls + len, sizeof h->ctrls - len, "%s%s", len ? "," : "", tok);
		if (w < 0 || (size_t)w >= sizeof h->ctrls - len)
			break;
		len += (size_t)w;
	}
	return len > 0;
}

/* Every v1 hierarchy, once each. Mounts below base are preferred, so that a test root
 * (AGENTBOX_CGROUP_ROOT) is not mixed with the host's hierarchies; only when there is
 * none below base is mountinfo read a second time for the others. Entries are parsed
 * straight into h->hier: no scratch table to fill and zero. */
static void scan_v1_pass(FILE *f, struct cg_host *h, bool under_base)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0 && h->n_hier < CG_MAX_HIER) {
		struct cg_hier *slot = &h->hier[h->n_hier];
		size_t strs_before = h->strs_used;
		bool keep = parse_mountinfo_line(line, slot, h) && (!under_base || path_under(slot->mnt, h->base));
		for (size_t j = 0; keep && j < h->n_hier; j++)
			if (h->hier[j].dev == slot->dev)
				keep = false;
		if (keep)
			h->n_hier++;
		else
			h->strs_used = strs_before;
	}
}

static void scan_v1_mounts(struct cg_host *h)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	scan_v1_pass(f, h, true);
	if (h->n_hier == 0) {
		rewind(f);
		scan_v1_pass(f, h, false);
	}
}

static bool is_cgroup2(const char *path)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static void detect(struct cg_host *h)
{
	/* field by field: zeroing all of it would write ~60 KiB */
	h->mode = CGROUP_MODE_DISABLED;
	h->unified[0] = 0;
	h->n_hier = 0;
	h->strs_used = 0;
	h->root_controllers_read = false;
	const char *env = secure_getenv("AGENTBOX_CGROUP_ROOT");
	snprintf(h->base, sizeof h->base, "%s", env && *env ? env : "/sys/fs/cgroup");
	size_t bl = strlen(h->base);
	while (bl > 1 && h->base[bl - 1] == '/')
		h->base[--bl] = 0;

	struct statfs sf;
	if (statfs(h->base, &sf) < 0) {
		h->mode = CGROUP_MODE_DISABLED;
		return;
	}
	if (sf.f_type == CGROUP2_SUPER_MAGIC) {
		h->mode = CGROUP_MODE_V2;
		snprintf(h->unified, sizeof h->unified, "%s", h->base);
		return;
	}
	/* tmpfs (or a v1 hierarchy itself): v1 controllers, maybe a unified mount too. */
	scan_v1_mounts(h);
	char uni[PATH_MAX];
	bool has_unified = snprintf(uni, sizeof uni, "%s/unified", h->base) < (int)sizeof uni &&
			   is_cgroup2(uni);
	if (h->n_hier == 0) {
		h->mode = has_unified ? CGROUP_MODE_V2 : CGROUP_MODE_DISABLED;
		if (has_unified)
			snprintf(h->unified, sizeof h->unified, "%s", uni);
		return;
	}
	h->mode = has_unified ? CGROUP_MODE_HYBRID : CGROUP_MODE_V1;
	if (has_unified)
		snprintf(h->unified, sizeof h->unified, "%s", uni);
}

const struct cg_host *cg_host_get(void)
{
	if (!host_done) {
		detect(&host);
		host_done = true;
		log_debug("cgroups: %s layout, base %s", cgroup_mode_name(host.mode), host.base);
	}
	return &host;
}

void cg_host_reset(void)
{
	host_done = false;
}

void cgroup_host_release(void)
{
	/* the static tables: zero pages again, detected anew if ever asked */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)&host + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)&host + sizeof host) & ~(page - 1);
	host_done = false;
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

enum cgroup_mode cgroup_host_mode(void)
{
	return cg_host_get()->mode;
}

const char *cgroup_mode_name(enum cgroup_mode m)
{
	switch (m) {
	case CGROUP_MODE_V1: return "v1";
	case CGROUP_MODE_HYBRID: return "hybrid";
	case CGROUP_MODE_V2: return "v2";
	case CGROUP_MODE_DISABLED: break;
	}
	return "disabled";
}

int cgroup_mode_from_name(const char *name, enum cgroup_mode *ret)
{
	static const enum cgroup_mode all[] = { CGROUP_MODE_DISABLED, CGROUP_MODE_V1,
						CGROUP_MODE_HYBRID, CGROUP_MODE_V2 };
	for (size_t i = 0; name && i < ARRAY_SIZE(all); i++)
		if (streq(name, cgroup_mode_name(all[i]))) {
			*ret = all[i];
			return 0;
		}
	return -EINVAL;
}

const struct cg_hier *cg_v1_hier(const char *ctrl)
{
	const struct cg_host *h = cg_host_get();
	for (size_t i = 0; i < h->n_hier; i++)
		if (cg_hier_has(&h->hier[i], ctrl))
			return &h->hier[i];
	return NULL;
}

int cg_hier_dir(const struct cg_hier *h, const char *path, char *buf, size_t len)
{
	/* A hierarchy bind-mounted from a sub-cgroup: paths are still absolute in the
	 * hierarchy, so drop the part the mount already covers. */
	if (!streq(h->root, "/") && path_under(path, h->root))
		path += strlen(h->root);
	if (snprintf(buf, len, "%s%s", h->mnt, path) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int cg_v1_dir(const char *ctrl, const char *path, char *buf, size_t len)
{
	const struct cg_hier *h = cg_v1_hier(ctrl);
	if (!h)
		return -ENOENT;
	return cg_hier_dir(h, path, buf, len);
}

int cg_v2_dir(const char *path, char *buf, size_t len)
{
	const struct cg_host *h = cg_host_get();
	if (!h->unified[0])
		return -ENOENT;
	if (snprintf(buf, len, "%s%s", h->unified, path) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

const char *cg_next_word(const char **p, size_t *n)
{
	const char *w = *p;
	while (isspace((unsigned char)*w))
		w++;
	const char *e = w;
	while (*e && !isspace((unsigned char)*e))
		e++;
	*p = e;
	*n = (size_t)(e - w);
	return *n ? w : NULL;
}

bool cg_has_word(const char *list, const char *w, size_t n)
{
	size_t len;
	for (const char *p = list, *c; (c = cg_next_word(&p, &len));)
		if (len == n && strncmp(c, w, n) == 0)
			return true;
	return false;
}

const char *cg_v2_root_controllers(void)
{
	/* read once per layout detected: asked for each resource group the
	 * unified hierarchy might handle, and by each create */
	(void)cg_host_get();
	struct cg_host *h = &host;
	if (!h->root_controllers_read) {
		_cleanup_free_ char *s = NULL;
		struct ab_err e;
		if (!h->unified[0] || cg_read(h->unified, "cgroup.controllers", &s, &e) < 0)
			return NULL;
		snprintf(h->root_controllers, sizeof h->root_controllers, "%s", s);
		h->root_controllers_read = true;
	}
	return h->root_controllers;
}

bool cg_v2_root_has(const char *ctrl)
{
	const char *all = cg_v2_root_controllers();
	return all && cg_has_word(all, ctrl, strlen(ctrl));
}

/* ------------------------------------------------------------------ file helpers */

bool cg_exists(const char *dir, const char *file)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
		return false;
	return access(p, F_OK) == 0;
}

int cg_write_keep(const char *dir, const char *file, int *fd, const char *val, struct ab_err *err)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
		return ab_error(err, ENAMETOOLONG, "write %s/%s", dir, file);
	log_debug("cgroups: write \"%s\" to %s", val, p);
	if (*fd < 0 && (*fd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
		return ab_error(err, errno, "write \"%s\" to %s", val, p);
	/* One write(2): cgroup files take one value a call. */
	size_t len = strlen(val);
	ssize_t n;
	do
		n = write(*fd, val, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ab_error(err, errno, "write \"%s\" to %s", val, p);
	return 0;
}

int cg_write(const char *dir, const char *file, const char *val, struct ab_err *err)
{
	_cleanup_close_ int fd = -1;
	return cg_write_keep(dir, file, &fd, val, err);
}

int cg_writef(const char *dir, const char *file, struct ab_err *err, const char *fmt, ...)
{
	char val[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(val, sizeof val, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof val)
		return ab_error(err, EINVAL, "write %s/%s: value too long", dir, file);
	return cg_write(dir, file, val, err);
}

int cg_read(const char *dir, const char *file, char **ret, struct ab_err *err)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
		return ab_error(err, ENAMETOOLONG, "read %s/%s", dir, file);
	int r = read_file_at(AT_FDCWD, p, CG_FILE_MAX, ret, NULL, err);
	return r < 0 ? (err->code ? -err->code : -EIO) : 0;
}

int cg_read_u64(const char *dir, const char *file, uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	struct ab_err e;
	int r = cg_read(dir, file, &s, &e);
	if (r < 0)
		return r;
	s[strcspn(s, " \n")] = 0;
	if (streq(s, "max")) {
		*ret = UINT64_MAX;
		return 0;
	}
	/* v1 reads "-1" for an unlimited quota; callers that care read the text. */
	return parse_uint64(s, ret) < 0 ? -EINVAL : 0;
}

int cg_kv(const char *text, const char *key, uint64_t *ret)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, n) == 0 && p[n] == ' ') {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(p + n + 1, &end, 10);
			if (errno || end == p + n + 1)
				return -EINVAL;
			*ret = v;
			return 0;
		}
	}
	return -ENOENT;
}

int cg_read_kv(const char *dir, const char *file, const char *key, uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	struct ab_err e;
	int r = cg_read(dir, file, &s, &e);
	return r < 0 ? r : cg_kv(s, key, ret);
}

/* ------------------------------------------------------------------ stats helpers */

void cg_json_file(struct json_out *o, const char *key, const char *dir, const char *file)
{
	uint64_t v;
	if (cg_read_u64(dir, file, &v) == 0)
		json_kv_uint(o, key, v);
}

/* memory.stat, io.stat-like "key value" lines as an object of numbers. */
void cg_stats_raw(struct json_out *o, const char *key, const char *text)
{
	json_key(o, key);
	json_obj_begin(o);
	for (const char *p = text; *p;) {
		const char *sp = strchr(p, ' '), *nl = strchrnul(p, '\n');
		if (sp && sp < nl) {
			char k[128];
			snprintf(k, sizeof k, "%.*s", (int)(sp - p), p);
			json_kv_uint(o, k, strtoull(sp + 1, NULL, 10));
		}
		p = *nl ? nl + 1 : nl;
	}
	json_obj_end(o);
}

void cg_stats_pids(struct json_out *o, const char *dir)
{
	uint64_t v;
	json_key(o, "pids");
	json_obj_begin(o);
	cg_json_file(o, "current", dir, "pids.current");
	/* runc reports an unlimited pids.max as 0 */
	if (cg_read_u64(dir, "pids.max", &v) == 0)
		json_kv_uint(o, "limit", v == UINT64_MAX ? 0 : v);
	json_obj_end(o);
}

/* ------------------------------------------------------------------ resources */

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

/* A name that can only be a file in the cgroup directory itself. */
static bool plain_file_name(const char *s)
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
	const struct { const struct oci_throttle_device *d; size_t n; const char *name; } th[] = {
		{ b->throttle_read_bps, b->n_throttle_read_bps, "throttleReadBpsDevice" },
		{ b->throttle_write_bps, b->n_throttle_write_bps, "throttleWriteBpsDevice" },
		{ b->throttle_read_iops, b->n_throttle_read_iops, "throttleReadIOPSDevice" },
		{ b->throttle_write_iops, b->n_throttle_write_iops, "throttleWriteIOPSDevice" },
	};
	for (size_t t = 0; t < ARRAY_SIZE(th); t++)
		for (size_t i = 0; i < th[t].n; i++)
			if (th[t].d[i].major < 0 || th[t].d[i].minor < 0)
				return ab_error(err, 0, "linux.resources.blockIO.%s[%zu]: invalid "
						"device %" PRId64 ":%" PRId64, th[t].name, i,
						th[t].d[i].major, th[t].d[i].minor);

	for (size_t i = 0; i < r->n_hugepage_limits; i++) {
		const char *ps = r->hugepage_limits[i].page_size;
		if (!plain_file_name(ps) || strchr(ps, '.'))
			return ab_error(err, 0, "linux.resources.hugepageLimits[%zu].pageSize: "
					"invalid page size \"%s\"", i, ps ? ps : "");
	}
	for (size_t i = 0; i < r->n_unified; i++)
		if (!plain_file_name(r->unified[i].key))
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

/* ------------------------------------------------------------------ resolve */

/* Clean an absolute or relative cgroup path into "/a/b": no empty or "." parts, and
 * no ".." at all, since it could climb out of the hierarchy's root. */
static int normalize(const char *in, char *out, size_t len, struct ab_err *err)
{
	size_t o = 0;
	out[0] = 0;
	for (const char *p = in; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return ab_error(err, EINVAL, "cgroupsPath \"%s\": \"..\" is not allowed", in);
		if (n && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > len)
				return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", in);
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
			out[o] = 0;
		}
		p = e;
	}
	return 0;
}

/* The runtime's own cgroup, the base of relative cgroupsPaths. With v1 controllers the
 * hierarchies can disagree (here memory sits in /process_api/... while the others are at
 * /), so one is picked: name=systemd, else pids, the hierarchies that only group
 * processes; on v2 the one unified path. */
static int own_cgroup(enum cgroup_mode mode, char *buf, size_t len, struct ab_err *err)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return ab_error(err, errno, "open /proc/self/cgroup");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	/* not zero-filled: 12 KiB of stack written for nothing */
	char systemd[PATH_MAX], pids[PATH_MAX], unified[PATH_MAX];
	systemd[0] = pids[0] = unified[0] = 0;
	bool have_systemd = false, have_pids = false, have_unified = false;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctrls = c1 + 1, *path = c2 + 1;
		struct cg_hier tmp;
		snprintf(tmp.ctrls, sizeof tmp.ctrls, "%s", ctrls);
		if (!*ctrls && strncmp(line, "0:", 2) == 0) {
			snprintf(unified, sizeof unified, "%s", path);
			have_unified = true;
		} else if (cg_hier_has(&tmp, "name=systemd")) {
			snprintf(systemd, sizeof systemd, "%s", path);
			have_systemd = true;
		} else if (cg_hier_has(&tmp, "pids")) {
			snprintf(pids, sizeof pids, "%s", path);
			have_pids = true;
		}
	}
	const char *pick = mode == CGROUP_MODE_V2 ? (have_unified ? unified : NULL)
			 : have_systemd ? systemd : have_pids ? pids : NULL;
	if (!pick)
		return ab_error(err, ENOENT, "cannot find the runtime's own cgroup in /proc/self/cgroup");
	snprintf(buf, len, "%s", streq(pick, "/") ? "" : pick);
	return 0;
}

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" is the root. */
static int expand_slice(const char *slice, char *out, size_t len, struct ab_err *err)
{
	size_t n = strlen(slice);
	const char *suffix = ".slice";
	if (n < 6 || strcmp(slice + n - 6, suffix) != 0 || strchr(slice, '/'))
		return ab_error(err, EINVAL, "invalid systemd slice \"%s\"", slice);
	out[0] = 0;
	if (streq(slice, "-.slice"))
		return 0;
	size_t stem = n - 6, o = 0;
	if (slice[0] == '-' || slice[stem - 1] == '-' || strstr(slice, "--"))
		return ab_error(err, EINVAL, "invalid systemd slice \"%s\"", slice);
	for (size_t i = 0; i <= stem; i++) {
		if (i < stem && slice[i] != '-')
			continue;
		/* each '-' (and the end) closes one level: "/" + slice[0..i) + ".slice" */
		int w = snprintf(out + o, len - o, "/%.*s%s", (int)i, slice, suffix);
		if (w < 0 || (size_t)w >= len - o)
			return ab_error(err, ENAMETOOLONG, "systemd slice \"%s\"", slice);
		o += (size_t)w;
	}
	return 0;
}

static int systemd_path(const char *spec, char *out, size_t len, struct ab_err *err)
{
	_cleanup_free_ char *s = xstrdup(spec);
	char *c1 = strchr(s, ':');
	char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':'))
		return ab_error(err, EINVAL, "cgroupsPath \"%s\": expected \"slice:prefix:name\" "
				"for the systemd cgroup driver", spec);
	*c1 = *c2 = 0;
	const char *slice = *s ? s : "system.slice", *prefix = c1 + 1, *name = c2 + 1;
	if (!plain_file_name(name) || strchr(prefix, '/'))
		return ab_error(err, EINVAL, "cgroupsPath \"%s\": invalid unit name", spec);
	char sl[PATH_MAX];
	if (expand_slice(slice, sl, sizeof sl, err) < 0)
		return ab_wrap(err, "cgroupsPath \"%s\"", spec);
	size_t nl = strlen(name);
	bool is_slice = nl > 6 && streq(name + nl - 6, ".slice");
	int w;
	if (is_slice)
		w = snprintf(out, len, "%s/%s", sl, name);
	else if (*prefix)
		w = snprintf(out, len, "%s/%s-%s.scope", sl, prefix, name);
	else
		w = snprintf(out, len, "%s/%s.scope", sl, name);
	if (w < 0 || (size_t)w >= len)
		return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", spec);
	return 0;
}

int cgroup_resolve(const char *cgroups_path, const char *id, bool systemd, bool disabled,
		   struct cgroup_ref *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	ret->mode = disabled ? CGROUP_MODE_DISABLED : cgroup_host_mode();
	if (ret->mode == CGROUP_MODE_DISABLED)
		return 0;

	char raw[PATH_MAX * 2];
	if (!cgroups_path || !*cgroups_path) {
		if (!id || !container_id_valid(id))
			return ab_error(err, EINVAL, "cgroup path: invalid container id \"%s\"",
					id ? id : "");
		snprintf(raw, sizeof raw, "/agentbox/%s", id);
	} else if (systemd) {
		if (systemd_path(cgroups_path, raw, sizeof raw, err) < 0)
			return -1;
		/* No D-Bus client here: the unit's cgroup is made directly, where systemd
		 * would have put it. */
		if (access("/run/systemd/system", F_OK) == 0)
			log_debug("systemd cgroup driver: creating the cgroup directly at %s", raw);
		else
			log_debug("systemd cgroup driver without systemd: using cgroupfs path %s", raw);
	} else if (cgroups_path[0] == '/') {
		snprintf(raw, sizeof raw, "%s", cgroups_path);
	} else {
		char own[PATH_MAX];
		char rel[PATH_MAX];
		/* check ".." before joining, so the message names what the user wrote */
		if (normalize(cgroups_path, rel, sizeof rel, err) < 0)
			return -1;
		if (own_cgroup(ret->mode, own, sizeof own, err) < 0)
			return -1;
		if (snprintf(raw, sizeof raw, "%s%s", own, rel) >= (int)sizeof raw)
			return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", cgroups_path);
	}
	if (normalize(raw, ret->path, sizeof ret->path, err) < 0)
		return -1;
	if (!ret->path[0])
		return ab_error(err, EINVAL, "cgroupsPath \"%s\": the root cgroup cannot be a "
				"container's cgroup", cgroups_path ? cgroups_path : "");
	return 0;
}

/* ------------------------------------------------------------------ directories */

/* Every directory a cgroup has: one per v1 hierarchy it uses, plus the unified one.
 * The paths are packed into one buffer: a PATH_MAX array each put eleven pages of
 * stack between them, and every page the runtime first writes after cloning the
 * init costs a copy-on-write fault with a TLB flush (a hypervisor exit on a VM). */
struct cg_dirs {
	size_t n, used;
	char buf[4 * PATH_MAX];
	struct {
		const char *path;
		size_t root_len;    /* length of the hierarchy's mount part */
		bool cpuset;
		bool v2;
	} d[CG_MAX_HIER + 1];
};

/* Append path (r: what making it returned) to ds->buf as entry ds->n. */
static int cg_dirs_add(struct cg_dirs *ds, int r, const char *path)
{
	size_t len = strlen(path) + 1;
	if (r < 0 || len > sizeof ds->buf - ds->used)
		return -1;
	memcpy(ds->buf + ds->used, path, len);
	ds->d[ds->n].path = ds->buf + ds->used;
	ds->used += len;
	return 0;
}

static int cg_dirs_get(const struct cgroup_ref *cg, struct cg_dirs *ds, struct ab_err *err)
{
	const struct cg_host *h = cg_host_get();
	char dir[PATH_MAX];
	ds->n = ds->used = 0;
	if (cg->mode == CGROUP_MODE_V1 || cg->mode == CGROUP_MODE_HYBRID) {
		for (size_t i = 0; i < h->n_hier; i++) {
			if (!cg_hier_used(&h->hier[i]))
				continue;
			if (cg_dirs_add(ds, cg_hier_dir(&h->hier[i], cg->path, dir, sizeof dir), dir) < 0)
				return ab_error(err, ENAMETOOLONG, "cgroup path %s", cg->path);
			ds->d[ds->n].root_len = strlen(h->hier[i].mnt);
			ds->d[ds->n].cpuset = cg_hier_has(&h->hier[i], "cpuset");
			ds->d[ds->n].v2 = false;
			ds->n++;
		}
	}
	if ((cg->mode == CGROUP_MODE_HYBRID || cg->mode == CGROUP_MODE_V2) && h->unified[0]) {
		if (cg_dirs_add(ds, cg_v2_dir(cg->path, dir, sizeof dir), dir) < 0)
			return ab_error(err, ENAMETOOLONG, "cgroup path %s", cg->path);
		ds->d[ds->n].root_len = strlen(h->unified);
		ds->d[ds->n].cpuset = false;
		ds->d[ds->n].v2 = true;
		ds->n++;
	}
	if (ds->n == 0 && cg->mode != CGROUP_MODE_DISABLED)
		return ab_error(err, ENOENT, "no cgroup hierarchy for %s layout",
				cgroup_mode_name(cg->mode));
	return 0;
}

/* The directory processes are listed from; every hierarchy holds the same set. */
static int cg_main_dir(const struct cgroup_ref *cg, char *buf, size_t len, struct ab_err *err)
{
	if (cg->mode == CGROUP_MODE_V2) {
		if (cg_v2_dir(cg->path, buf, len) < 0)
			return ab_error(err, ENOENT, "no cgroup2 mount");
		return 0;
	}
	static const char *const order[] = { "pids", "freezer", "memory", "cpu", "name=systemd" };
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (cg_v1_dir(order[i], cg->path, buf, len) == 0)
			return 0;
	const struct cg_host *h = cg_host_get();
	for (size_t i = 0; i < h->n_hier; i++)
		if (cg_hier_used(&h->hier[i]))
			return cg_hier_dir(&h->hier[i], cg->path, buf, len);
	if (cg_v2_dir(cg->path, buf, len) == 0)
		return 0;
	return ab_error(err, ENOENT, "no cgroup hierarchy to list processes from");
}

struct made_dirs {
	char **v;
	size_t n;
};

static void made_dirs_undo(struct made_dirs *m)
{
	for (size_t i = m->n; i-- > 0;) {
		if (rmdir(m->v[i]) < 0 && errno != ENOENT)
			log_debug("cgroups: cleanup: rmdir %s: %m", m->v[i]);
		free(m->v[i]);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static void made_dirs_forget(struct made_dirs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static void made_dirs_add(struct made_dirs *m, const char *dir)
{
	m->v = xrealloc(m->v, (m->n + 1) * sizeof *m->v);
	m->v[m->n++] = xstrdup(dir);
}

/* mkdir each component of dir after its first root_len bytes, remembering what we
 * made. The parents usually exist already: the leaf is tried first, which saves a
 * failing mkdir per level and hierarchy on every create. In a cpuset hierarchy
 * every level must have cpus and mems before a process can join below it: a new
 * leaf copies its parent's, and only when the parent has none, or the leaf was
 * there before, are the levels walked from the top and filled in. */
static int mkdir_tracked(const char *dir, size_t root_len, bool cpuset, struct made_dirs *m,
			 struct ab_err *err)
{
	if (mkdir(dir, 0755) == 0) {
		made_dirs_add(m, dir);
		if (!cpuset)
			return 0;
		int r = cg_v1_cpuset_inherit(dir, true, err);
		if (r <= 0)
			return r;
	} else if (errno == EEXIST) {
		if (!cpuset)
			return 0;
	} else if (errno != ENOENT) {
		return ab_error(err, errno, "mkdir %s", dir);
	}
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", dir);
	for (char *p = buf + root_len + 1;; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char c = *p;
		*p = 0;
		bool fresh = mkdir(buf, 0755) == 0;
		if (fresh)
			made_dirs_add(m, buf);
		else if (errno != EEXIST)
			return ab_error(err, errno, "mkdir %s", buf);
		if (cpuset && cg_v1_cpuset_inherit(buf, fresh, err) < 0)
			return -1;
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

/* Which resource groups the unified hierarchy handles in hybrid mode: what v1 lacks. */
static unsigned hybrid_v2_groups(void)
{
	unsigned g = CG_RES_UNIFIED;
	if (!cg_v1_hier("hugetlb") && cg_v2_root_has("hugetlb"))
		g |= CG_RES_HUGETLB;
	if (!cg_v1_hier("rdma") && cg_v2_root_has("rdma"))
		g |= CG_RES_RDMA;
	return g;
}

/* ------------------------------------------------------------------ lifecycle */

int cgroup_create(const struct cgroup_ref *cg, const struct oci_resources *res, struct ab_err *err)
{
	if (cg->mode == CGROUP_MODE_DISABLED)
		return 0;
	if (res && cg_validate(res, err) < 0)
		return -1;
	struct cg_dirs ds;
	if (cg_dirs_get(cg, &ds, err) < 0)
		return ab_wrap(err, "create cgroup %s", cg->path);

	struct made_dirs made = {0};
	for (size_t i = 0; i < ds.n; i++) {
		if (mkdir_tracked(ds.d[i].path, ds.d[i].root_len, ds.d[i].cpuset, &made, err) < 0)
			goto fail;
		if (ds.d[i].v2)
			cg_v2_enable_controllers(cg->path);
	}
	if (res && cgroup_apply(cg, res, err) < 0)
		goto fail;
	made_dirs_forget(&made);
	return 0;
fail:
	made_dirs_undo(&made);
	return ab_wrap(err, "create cgroup %s", cg->path);
}

static int enter(const struct cgroup_ref *cg, pid_t pid, bool v2_only, struct ab_err *err)
{
	if (cg->mode == CGROUP_MODE_DISABLED || (v2_only && cg->mode == CGROUP_MODE_V1))
		return 0;
	struct cg_dirs ds;
	if (cg_dirs_get(cg, &ds, err) < 0)
		return -1;
	for (size_t i = 0; i < ds.n; i++)
		if ((ds.d[i].v2 || !v2_only) && cg_writef(ds.d[i].path, "cgroup.procs", err, "%d", (int)pid) < 0)
			return ab_wrap(err, "move process %d into cgroup %s", (int)pid, cg->path);
	return 0;
}

int cgroup_enter(const struct cgroup_ref *cg, pid_t pid, struct ab_err *err)
{
	return enter(cg, pid, false, err);
}

int cgroup_enter_v2(const struct cgroup_ref *cg, pid_t pid, struct ab_err *err)
{
	return enter(cg, pid, true, err);
}

_Static_assert(CGROUP_JOIN_MAX >= CG_MAX_HIER, "a join fd for every v1 hierarchy");

int cgroup_join_open(const struct cgroup_ref *cg, struct cgroup_join *j, struct ab_err *err)
{
	j->n = 0;
	if (cg->mode != CGROUP_MODE_V1 && cg->mode != CGROUP_MODE_HYBRID)
		return 0;
	const struct cg_host *h = cg_host_get();
	char dir[PATH_MAX], p[PATH_MAX];
	for (size_t i = 0; i < h->n_hier; i++) {
		if (!cg_hier_used(&h->hier[i]))
			continue;
		if (cg_hier_dir(&h->hier[i], cg->path, dir, sizeof dir) < 0 ||
		    snprintf(p, sizeof p, "%s/tasks", dir) >= (int)sizeof p) {
			cgroup_join_close(j);
			return ab_error(err, ENAMETOOLONG, "cgroup path %s", cg->path);
		}
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			cgroup_join_close(j);
			return ab_error(err, e, "open %s", p);
		}
		j->hier[j->n] = h->hier[i].mnt;
		j->fd[j->n++] = fd;
	}
	return 0;
}

int cgroup_join_self(struct cgroup_join *j, const char *cgroup_path, struct ab_err *err)
{
	int r = 0;
	for (size_t i = 0; i < j->n; i++) {
		ssize_t n;
		do
			n = write(j->fd[i], "0", 1);
		while (n < 0 && errno == EINTR);
		if (n < 0 && r == 0)
			r = ab_error(err, errno, "join cgroup %s in %s", cgroup_path, j->hier[i]);
	}
	cgroup_join_close(j);
	return r;
}

void cgroup_join_close(struct cgroup_join *j)
{
	for (size_t i = 0; i < j->n; i++)
		close(j->fd[i]);
	j->n = 0;
}

int cgroup_v2_dirfd(const struct cgroup_ref *cg)
{
	char dir[PATH_MAX];
	if ((cg->mode != CGROUP_MODE_V2 && cg->mode != CGROUP_MODE_HYBRID) || cg_v2_dir(cg->path, dir, sizeof dir) < 0)
		return -1;
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int cgroup_apply(const struct cgroup_ref *cg, const struct oci_resources *res, struct ab_err *err)
{
	if (!res)
		return 0;
	if (cg_validate(res, err) < 0)
		return -1;
	char dir[PATH_MAX];
	switch (cg->mode) {
	case CGROUP_MODE_DISABLED:
		return 0;
	case CGROUP_MODE_V1:
		return cg_v1_apply(cg->path, res, 0, err);
	case CGROUP_MODE_HYBRID: {
		unsigned v2 = hybrid_v2_groups();
		if (cg_v1_apply(cg->path, res, v2, err) < 0)
			return -1;
		if (cg_v2_dir(cg->path, dir, sizeof dir) < 0)
			return ab_error(err, ENOENT, "no cgroup2 mount");
		return cg_v2_apply(dir, res, v2, err);
	}
	case CGROUP_MODE_V2:
		if (cg_v2_dir(cg->path, dir, sizeof dir) < 0)
			return ab_error(err, ENOENT, "no cgroup2 mount");
		return cg_v2_apply(dir, res, CG_RES_ALL, err);
	}
	return 0;
}

/* Hybrid without a v1 freezer: the unified cgroup holds the same processes and has
 * cgroup.freeze (5.2+), so freeze there. */
static bool v1_freezer_missing(const struct cgroup_ref *cg)
{
	return cg->mode == CGROUP_MODE_HYBRID && !cg_v1_hier("freezer");
}

int cgroup_freeze(const struct cgroup_ref *cg, bool frozen, struct ab_err *err)
{
	char dir[PATH_MAX];
	switch (cg->mode) {
	case CGROUP_MODE_DISABLED:
		return ab_error(err, ENOTSUP, "cannot %s: cgroups are disabled",
				frozen ? "freeze" : "thaw");
	case CGROUP_MODE_V1:
	case CGROUP_MODE_HYBRID:
		if (v1_freezer_missing(cg))
			goto v2;
		return cg_v1_freeze(cg->path, frozen, err);
	case CGROUP_MODE_V2:
	v2:
		if (cg_v2_dir(cg->path, dir, sizeof dir) < 0)
			return ab_error(err, ENOENT, "no cgroup2 mount");
		return cg_v2_freeze(dir, frozen, err);
	}
	return 0;
}

int cgroup_is_frozen(const struct cgroup_ref *cg, struct ab_err *err)
{
	char dir[PATH_MAX];
	switch (cg->mode) {
	case CGROUP_MODE_DISABLED:
		return 0;
	case CGROUP_MODE_V1:
	case CGROUP_MODE_HYBRID:
		if (v1_freezer_missing(cg))
			goto v2;
		return cg_v1_is_frozen(cg->path, err);
	case CGROUP_MODE_V2:
	v2:
		if (cg_v2_dir(cg->path, dir, sizeof dir) < 0)
			return ab_error(err, ENOENT, "no cgroup2 mount");
		return cg_v2_is_frozen(dir, err);
	}
	return 0;
}

struct pid_list {
	pid_t *v;
	size_t n, cap;
};

/* Processes of dir and of every cgroup below it (a container may make sub-cgroups). */
static int collect_pids(const char *dir, struct pid_list *l, int depth, struct ab_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = cg_read(dir, "cgroup.procs", &s, err);
	if (r == -ENOENT && depth > 0)
		return 0;   /* removed under us */
	if (r < 0)
		return r;
	for (char *p = s; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 16;
			l->v = xrealloc(l->v, l->cap * sizeof *l->v);
		}
		l->v[l->n++] = (pid_t)v;
		p = end;
		while (*p == '\n')
			p++;
	}
	if (depth > 32)
		return 0;
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		char sub[PATH_MAX];
		if (snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) >= (int)sizeof sub)
			continue;
		if (collect_pids(sub, l, depth + 1, err) < 0)
			return -1;
	}
	return 0;
}

int cgroup_pids(const struct cgroup_ref *cg, pid_t **ret, size_t *ret_n, struct ab_err *err)
{
	*ret = NULL;
	*ret_n = 0;
	if (cg->mode == CGROUP_MODE_DISABLED)
		return 0;
	char dir[PATH_MAX];
	if (cg_main_dir(cg, dir, sizeof dir, err) < 0)
		return -1;
	struct pid_list l = {0};
	if (collect_pids(dir, &l, 0, err) < 0) {
		free(l.v);
		return ab_wrap(err, "list processes of cgroup %s", cg->path);
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

int cgroup_kill_all(const struct cgroup_ref *cg, int sig, struct ab_err *err)
{
	if (cg->mode == CGROUP_MODE_DISABLED)
		return 0;
	char dir[PATH_MAX];
	if (cg->mode == CGROUP_MODE_V2 && sig == SIGKILL &&
	    cg_v2_dir(cg->path, dir, sizeof dir) == 0 && cg_exists(dir, "cgroup.kill"))
		return cg_write(dir, "cgroup.kill", "1", err);

	/* Freeze so nothing forks between listing and signalling. A frozen process dies
	 * of SIGKILL only once thawed, so SIGKILL always thaws; other signals leave a
	 * paused container paused. */
	struct ab_err tmp;
	int was_frozen = cgroup_is_frozen(cg, &tmp);
	bool froze = was_frozen == 0 && cgroup_freeze(cg, true, &tmp) == 0;
	if (!froze && was_frozen < 0)
		log_debug("cgroups: kill without freezing %s: %s", cg->path, tmp.msg);

	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int r = cgroup_pids(cg, &pids, &n, err);
	if (r == 0) {
		for (size_t i = 0; i < n; i++)
			if (kill(pids[i], sig) < 0 && errno != ESRCH) {
				r = ab_error(err, errno, "kill %d with signal %d", (int)pids[i], sig);
				break;
			}
	} else if (err->code == ENOENT) {
		r = 0;      /* no cgroup, no processes */
	}
	if (froze || (was_frozen == 1 && sig == SIGKILL)) {
		if (cgroup_freeze(cg, false, &tmp) < 0 && r == 0)
			log_debug("cgroups: thaw %s after kill: %s", cg->path, tmp.msg);
	}
	return r;
}

/* rmdir dir after every cgroup below it. A cgroup with none goes at the first
 * rmdir; only one that is busy is listed for sub-cgroups (a container may make
 * them). */
static int rmdir_tree(const char *dir, int depth)
{
	if (rmdir(dir) == 0 || errno == ENOENT)
		return 0;
	if (errno != EBUSY && errno != ENOTEMPTY)
		return -errno;
	if (depth < 32) {
		_cleanup_closedir_ DIR *d = opendir(dir);
		if (!d)
			return errno == ENOENT ? 0 : -errno;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
				continue;
			char sub[PATH_MAX];
			if (snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) >= (int)sizeof sub)
				return -ENAMETOOLONG;
			int r = rmdir_tree(sub, depth + 1);
			if (r < 0)
				return r;
		}
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int cgroup_destroy(const struct cgroup_ref *cg, struct ab_err *err)
{
	if (cg->mode == CGROUP_MODE_DISABLED)
		return 0;
	struct cg_dirs ds;
	if (cg_dirs_get(cg, &ds, err) < 0)
		return ab_wrap(err, "remove cgroup %s", cg->path);

	struct ab_err tmp;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	if (cgroup_pids(cg, &pids, &n, &tmp) == 0 && n > 0)
		(void)cgroup_kill_all(cg, SIGKILL, &tmp);

	/* Exiting processes keep a cgroup busy for a moment; a process stuck in D state
	 * can keep it busy forever, hence the bound (about 5 s). */
	for (size_t i = 0; i < ds.n; i++) {
		int r = 0;
		for (int attempt = 0; attempt < 60; attempt++) {
			r = rmdir_tree(ds.d[i].path, 0);
			if (r != -EBUSY)
				break;
			if (attempt % 10 == 9)
				(void)cgroup_kill_all(cg, SIGKILL, &tmp);
			struct timespec ts = { 0, (attempt < 10 ? 10 : 100) * 1000000L };
			nanosleep(&ts, NULL);
		}
		if (r < 0)
			return ab_error(err, -r, "remove cgroup %s", ds.d[i].path);
	}
	return 0;
}

int cgroup_stats(const struct cgroup_ref *cg, struct json_out *o, struct ab_err *err)
{
	char dir[PATH_MAX];
	json_obj_begin(o);
	switch (cg->mode) {
	case CGROUP_MODE_DISABLED:
		break;
	case CGROUP_MODE_V1:
		cg_v1_stats(cg->path, o, true);
		break;
	case CGROUP_MODE_HYBRID: {
		bool v1_huge = cg_v1_hier("hugetlb") != NULL;
		cg_v1_stats(cg->path, o, v1_huge);
		if (!v1_huge && cg_v2_dir(cg->path, dir, sizeof dir) == 0)
			cg_v2_stats(dir, o, true);
		break;
	}
	case CGROUP_MODE_V2:
		if (cg_v2_dir(cg->path, dir, sizeof dir) == 0)
			cg_v2_stats(dir, o, false);
		break;
	}
	json_obj_end(o);
	(void)err;
	return 0;
}

/* -1 with err untouched means "no OOM notification here" (no memory controller);
 * callers that care clear err first and check it. */
int cgroup_oom_watch(const struct cgroup_ref *cg, struct ab_err *err)
{
	char dir[PATH_MAX];
	switch (cg->mode) {
	case CGROUP_MODE_DISABLED:
		return -1;
	case CGROUP_MODE_V1:
	case CGROUP_MODE_HYBRID:
		return cg_v1_oom_watch(cg->path, err);
	case CGROUP_MODE_V2:
		if (cg_v2_dir(cg->path, dir, sizeof dir) < 0)
			return -1;
		return cg_v2_oom_watch(dir, err);
	}
	return -1;
}

int cgroup_oom_count(const struct cgroup_ref *cg, uint64_t *ret, struct ab_err *err)
{
	char dir[PATH_MAX];
	*ret = 0;
	switch (cg->mode) {
	case CGROUP_MODE_DISABLED:
		return 0;
	case CGROUP_MODE_V1:
	case CGROUP_MODE_HYBRID:
		return cg_v1_oom_count(cg->path, ret, err);
	case CGROUP_MODE_V2:
		if (cg_v2_dir(cg->path, dir, sizeof dir) < 0)
			return 0;
		return cg_v2_oom_count(dir, ret, err);
	}
	return 0;
}
