/* cgroups: the lifecycle (create, enter, join, apply, freeze, list, kill, destroy,
 * stats, OOM watch) over v1, v2 and the hybrid layout, dispatched to the back ends:
 * resource writers in cgroups_v1.c and cgroups_v2.c, the v2 device program in
 * cgroups_bpf.c. The layout, file helpers, checks and path resolution they share
 * are below all of them (cgroups_host.h, cgroups_files.h, cgroups_resources.h,
 * cgroups_path.h). */

#include "cgroups.h"
#include "cgroups_files.h"
#include "cgroups_host.h"
#include "cgroups_resources.h"
#include "cgroups_v1.h"
#include "cgroups_v2.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "json.h"
#include "log.h"
#include "util.h"

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
 * there before, are the levels walked from the top and filled in. A leaf that
 * was there sets *ret_existed. */
static int mkdir_tracked(const char *dir, size_t root_len, bool cpuset, struct made_dirs *m,
			 bool *ret_existed, struct ab_err *err)
{
	if (mkdir(dir, 0755) == 0) {
		made_dirs_add(m, dir);
		if (!cpuset)
			return 0;
		int r = cg_v1_cpuset_inherit(dir, true, err);
		if (r <= 0)
			return r;
	} else if (errno == EEXIST) {
		*ret_existed = true;
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

/* A hybrid host may have its freezer on the unified hierarchy only. */
static bool v1_freezer_missing(const struct cgroup_ref *cg)
{
	return cg->mode == CGROUP_MODE_HYBRID && !cg_v1_hier("freezer");
}

/* Frozen, or being frozen, on request: v1 freezer.state not THAWED, v2 cgroup.freeze 1. */
static bool frozen_on_request(const struct cgroup_ref *cg)
{
	char dir[PATH_MAX];
	if (cg->mode != CGROUP_MODE_V2 && !v1_freezer_missing(cg)) {
		_cleanup_free_ char *state = NULL;
		struct ab_err e;
		return cg_v1_dir("freezer", cg->path, dir, sizeof dir) == 0 &&
		       cg_read(dir, "freezer.state", &state, &e) >= 0 && strncmp(state, "THAWED", 6) != 0;
	}
	uint64_t v = 0;
	return cg_v2_dir(cg->path, dir, sizeof dir) == 0 && cg_read_u64(dir, "cgroup.freeze", &v) == 0 && v == 1;
}

/* A cgroup that was there before the container: the engine or the user made it.
 * A frozen one would stop the init before it reports, so create would wait
 * forever: refused. One with processes is shared: said, as runc does, since
 * kill --all and delete --force of the container reach them too. */
static int check_existing(const struct cgroup_ref *cg, struct ab_err *err)
{
	if (frozen_on_request(cg))
		return ab_error(err, 0, "container's cgroup unexpectedly frozen (paused by its freezer): "
				"thaw it or choose another linux.cgroupsPath");
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	struct ab_err e;
	if (cgroup_pids(cg, &pids, &n, &e) == 0 && n > 0)
		log_warn("container's cgroup is not empty: %zu process%s already in %s, which kill --all "
			 "and delete --force of this container reach too", n, n == 1 ? "" : "es", cg->path);
	return 0;
}

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
	bool existed = false;
	for (size_t i = 0; i < ds.n; i++) {
		if (mkdir_tracked(ds.d[i].path, ds.d[i].root_len, ds.d[i].cpuset, &made, &existed, err) < 0)
			goto fail;
		if (ds.d[i].v2)
			cg_v2_enable_controllers(cg->path);
	}
	if (existed && check_existing(cg, err) < 0)
		goto fail;
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

int cgroup_v2_path(const char *path, char *buf, size_t len)
{
	return cg_v2_dir(path, buf, len);
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

/* The cgroup2 directory that freezes cg into dir, or "" where v1's freezer
 * does. Hybrid without a v1 freezer: the unified cgroup holds the same
 * processes and has cgroup.freeze (5.2+), so freeze there. */
static int freezer_v2_dir(const struct cgroup_ref *cg, char dir[PATH_MAX], struct ab_err *err)
{
	dir[0] = 0;
	if (cg->mode != CGROUP_MODE_V2 && !v1_freezer_missing(cg))
		return 0;
	if (cg_v2_dir(cg->path, dir, PATH_MAX) < 0)
		return ab_error(err, ENOENT, "no cgroup2 mount");
	return 0;
}

int cgroup_freeze(const struct cgroup_ref *cg, bool frozen, struct ab_err *err)
{
	char dir[PATH_MAX];
	if (cg->mode == CGROUP_MODE_DISABLED)
		return ab_error(err, ENOTSUP, "cannot %s: cgroups are disabled",
				frozen ? "freeze" : "thaw");
	if (freezer_v2_dir(cg, dir, err) < 0)
		return -1;
	return dir[0] ? cg_v2_freeze(dir, frozen, err) : cg_v1_freeze(cg->path, frozen, err);
}

int cgroup_is_frozen(const struct cgroup_ref *cg, struct ab_err *err)
{
	char dir[PATH_MAX];
	if (cg->mode == CGROUP_MODE_DISABLED)
		return 0;
	if (freezer_v2_dir(cg, dir, err) < 0)
		return -1;
	return dir[0] ? cg_v2_is_frozen(dir, err) : cg_v1_is_frozen(cg->path, err);
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
	if (cg->mode == CGROUP_MODE_V1 || cg->mode == CGROUP_MODE_HYBRID)
		cg_v1_rt_release(cg->path);
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
