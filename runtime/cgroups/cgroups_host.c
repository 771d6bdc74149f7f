/* cgroups: the host's layout (which v1 hierarchies are mounted where, the cgroup2
 * mount, the unified root's controllers) and the directory of a cgroup path in
 * each. The shared floor of the cgroups module: the dispatcher (cgroups.c) and the
 * back ends (cgroups_v1.c, cgroups_v2.c) call down into it, it calls none of them. */

#include "cgroups_host.h"
#include "cgroups_files.h"
#include "test_hooks.h"

#include <ctype.h>
#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "log.h"
#include "util.h"

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
	/* Most lines are other file systems: passed over without splitting them.
	 * Paths in mountinfo have their blanks escaped (\040), so " - " is only
	 * ever the separator before the fstype. */
	if (!strstr(line, " - cgroup "))
		return false;
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
	const char *env = test_hook("AGENTBOX_CGROUP_ROOT");
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

/* a + b into buf (no snprintf: ~20 directories a create) */
static int concat(char *buf, size_t len, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + lb >= len)
		return -ENAMETOOLONG;
	memcpy(buf, a, la);
	memcpy(buf + la, b, lb + 1);
	return 0;
}

int cg_hier_dir(const struct cg_hier *h, const char *path, char *buf, size_t len)
{
	/* A hierarchy bind-mounted from a sub-cgroup: paths are still absolute in the
	 * hierarchy, so drop the part the mount already covers. */
	if (!streq(h->root, "/") && path_under(path, h->root))
		path += strlen(h->root);
	return concat(buf, len, h->mnt, path);
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
	return concat(buf, len, h->unified, path);
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
