/* The workspace guard's sweep at the end of a kit run (kit_sweep.h). */
#include "kit_sweep.h"
#include "kit_git.h"
#include "kit_guard.h"
#include "kit_rundir.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* deeper than this, or a path longer than PATH_MAX: a directory the box
 * changed is held back whole */
#define MAX_DEPTH 512
#define GITMODULES_MAX (1u << 20)

struct walker {
	struct kit_sweep *s;
	int wsfd;
	struct stat ws_st;
	struct kit_guard_report report;
	struct kit_guard_marks top;
	struct arena a;                 /* marks below the top, config references */
	char rel[PATH_MAX];             /* the entry being judged, relative to the workspace */
	int qfd;                        /* the run's quarantine directory: -1 not yet, -2 cannot */
	struct stat q_st;               /* ... which the walk does not enter */
	char run[96];
	unsigned next;
	bool out_of_reach_noted;
	uint64_t mnt_id;                /* the workspace's mount (0: unknown) */
	size_t entries;
	char dents[16384] __attribute__((aligned(8)));   /* getdents64's buffer */
};

/* A directory being walked; its path is w->rel[0..len). */
struct dir {
	int fd;
	size_t len;
	const struct kit_guard_marks *marks;
	enum kit_guard_scope scope;
	int depth;
	dev_t dev;
	bool gitdir;
	bool dotgit;                    /* named .git: a worktree is its parent */
	/* every entry is judged by its inode: the directory's own entries
	 * changed (something was made, removed or renamed in it), or it is
	 * what a host tool runs (an editor's settings, hooks) */
	bool look_all;
	bool tool;                      /* it, or one above, is a tool's settings or hooks */
};

/* The names read from a directory: each one's d_type, then the name. */
#define ENTRY_TYPE(e) ((unsigned char)(e)[0])
#define ENTRY_NAME(e) ((e) + 1)

static bool changed(const struct walker *w, const struct stat *st)
{
	const struct timespec *t = &st->st_ctim, *since = &w->s->since;
	return t->tv_sec > since->tv_sec || (t->tv_sec == since->tv_sec && t->tv_nsec >= since->tv_nsec);
}

/* The workspace's owner gets what the sweep makes. */
static void own(const struct walker *w, int dirfd, const char *name)
{
	if (geteuid() == 0 && (w->ws_st.st_uid != 0 || w->ws_st.st_gid != getegid()))
		(void)fchownat(dirfd, name, w->ws_st.st_uid, w->ws_st.st_gid, AT_SYMLINK_NOFOLLOW);
}

/* ---------------------------------------------------------------- quarantine */

/* WS/.agentbox-quarantine/RUN, made fresh (a .gitignore of "*" beside it, so
 * that git status does not list it). */
static int open_quarantine(struct walker *w)
{
	if (w->qfd >= 0 || w->qfd == -2)
		return w->qfd >= 0 ? 0 : -1;
	w->qfd = -2;
	if (mkdirat(w->wsfd, KIT_QUARANTINE_DIR, 0755) == 0)
		own(w, w->wsfd, KIT_QUARANTINE_DIR);
	else if (errno != EEXIST)
		return -1;
	_cleanup_close_ int root = openat(w->wsfd, KIT_QUARANTINE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return -1;
	_cleanup_close_ int gi = openat(root, ".gitignore", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (gi >= 0 && write_all(gi, "*\n", 2) == 0)
		own(w, root, ".gitignore");
	char name[sizeof w->run + 8];
	for (int i = 0;; i++) {
		snprintf(name, sizeof name, i ? "%s.%d" : "%s", w->run, i);
		if (mkdirat(root, name, 0755) == 0)
			break;
		if (errno != EEXIST || i == 99)
			return -1;
	}
	own(w, root, name);
	w->qfd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->qfd < 0 || fstat(w->qfd, &w->q_st) < 0) {
		w->qfd = -2;
		return -1;
	}
	w->report.qdir = arena_printf(&w->report.a, "%s/%s", KIT_QUARANTINE_DIR, name);
	return 0;
}

/* The top .gitmodules as it was at the start, back in its place. */
static bool restore_gitmodules(const struct walker *w)
{
	const struct kit_sweep *s = w->s;
	_cleanup_close_ int fd = openat(w->wsfd, ".gitmodules", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					s->gitmodules_st.st_mode & 0777);
	if (fd < 0 || write_all(fd, s->gitmodules, s->gitmodules_len) < 0)
		return false;
	(void)fchown(fd, s->gitmodules_st.st_uid, s->gitmodules_st.st_gid);
	return true;
}

/* Move dirfd/name (rel in the workspace) into the run's quarantine
 * directory as N-NAME; on another file system, beside itself as
 * NAME.agentbox-quarantined-RUN. */
static void quarantine(struct walker *w, int dirfd, const char *name, const char *rel, enum kit_guard_what what)
{
	char held[PATH_MAX + 64];
	int e = 0;
	if (open_quarantine(w) == 0) {
		char qname[NAME_MAX + 1];
		snprintf(qname, sizeof qname, "%u-%.200s", ++w->next, name);
		if (renameat2(dirfd, name, w->qfd, qname, RENAME_NOREPLACE) == 0 ||
		    (errno == EINVAL && renameat(dirfd, name, w->qfd, qname) == 0)) {
			snprintf(held, sizeof held, "%s/%s", w->report.qdir, qname);
			goto held;
		}
		e = errno;
	}
	if (e == 0 || e == EXDEV) {
		char aside[NAME_MAX + 1];
		snprintf(aside, sizeof aside, "%.120s.agentbox-quarantined-%.80s", name, w->run);
		if (renameat2(dirfd, name, dirfd, aside, RENAME_NOREPLACE) == 0) {
			const char *slash = strrchr(rel, '/');
			snprintf(held, sizeof held, "%.*s%s", slash ? (int)(slash - rel + 1) : 0, rel, aside);
			goto held;
		}
		e = errno;
	}
	kit_guard_add(&w->report, KIT_GUARD_STUCK, rel, strerror(e));
	return;
held:;
	struct kit_guard_item *it = kit_guard_add(&w->report, what, rel, held);
	if (streq(rel, ".gitmodules") && w->s->gitmodules)
		it->restored = restore_gitmodules(w);
}

/* ---------------------------------------------------------------- privileges */

static void strip_setid(struct walker *w, int dirfd, const char *name, const struct stat *st)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev ||
	    S_ISLNK(now.st_mode) || S_ISDIR(now.st_mode) || !(now.st_mode & 06000))
		return;
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (chmod(proc, now.st_mode & 01777) == 0)
		kit_guard_add(&w->report, KIT_GUARD_SETID, w->rel, NULL);
	else
		kit_guard_add(&w->report, KIT_GUARD_STUCK, w->rel, strerror(errno));
}

/* security.capability on an executable file, through the directory's fd
 * (lgetxattr: the name itself is not followed) */
static void drop_file_caps(struct walker *w, int dirfd, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name);
	if (lgetxattr(path, "security.capability", NULL, 0) <= 0)
		return;
	if (lremovexattr(path, "security.capability") == 0)
		kit_guard_add(&w->report, KIT_GUARD_FCAPS, w->rel, NULL);
	else
		kit_guard_add(&w->report, KIT_GUARD_STUCK, w->rel, strerror(errno));
}

/* Set-id bits, file capabilities, device nodes and FIFOs the box left on a
 * non-directory; true when the entry was removed. The whiteout node (0:0)
 * is kit run's own placeholder, which nothing can open. */
static bool privileges(struct walker *w, int dirfd, const char *name, const struct stat *st)
{
	bool dev = S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode);
	if ((dev && st->st_rdev != makedev(0, 0)) || S_ISFIFO(st->st_mode)) {
		if (unlinkat(dirfd, name, 0) == 0) {
			kit_guard_add(&w->report, dev ? KIT_GUARD_DEVICE : KIT_GUARD_FIFO, w->rel, NULL);
			return true;
		}
		kit_guard_add(&w->report, KIT_GUARD_STUCK, w->rel, strerror(errno));
		return false;
	}
	if (st->st_mode & 06000)
		strip_setid(w, dirfd, name, st);
	if (S_ISREG(st->st_mode) && (st->st_mode & 0111))
		drop_file_caps(w, dirfd, name);
	return false;
}

/* ---------------------------------------------------------------- git's references */

/* Has anything in the tree at dirfd/name changed (the entry itself first)? */
static bool tree_changed(const struct walker *w, int parent, const char *name, int depth)
{
	struct stat st;
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	if (changed(w, &st) || !S_ISDIR(st.st_mode) || depth > 16)
		return changed(w, &st) || depth > 16;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	for (struct dirent *de; (de = readdir(d));)
		if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && tree_changed(w, dirfd(d), de->d_name, depth + 1))
			return true;
	return false;
}

/* The scope at rel, from the top's marks on it and every directory above. */
static enum kit_guard_scope path_scope(const struct walker *w, const char *rel)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	enum kit_guard_scope s = KIT_GUARD_ALL;
	for (char *p = buf;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		s = kit_guard_scope_of(&w->top, buf, s);
		if (!c)
			return s;
		*p = c;
	}
}

/* What a git config names in the workspace (core.hooksPath, an include),
 * held back when the box changed it. */
static void held_back_reference(struct walker *w, const char *rel)
{
	if (!rel || path_scope(w, rel) != KIT_GUARD_ALL)
		return;
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	char *slash = strrchr(buf, '/');
	const char *name = slash ? slash + 1 : buf;
	_cleanup_close_ int dir = fcntl(w->wsfd, F_DUPFD_CLOEXEC, 3);
	if (slash) {
		*slash = 0;
		for (char *save = NULL, *c = strtok_r(buf, "/", &save); c && dir >= 0; c = strtok_r(NULL, "/", &save)) {
			int next = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(dir);
			dir = next;
		}
	}
	if (dir >= 0 && tree_changed(w, dir, name, 0))
		quarantine(w, dir, name, rel, KIT_GUARD_GIT);
}

/* The directory a git directory's commondir names (where git takes its
 * config and hooks from), relative to the workspace, or NULL. */
static char *common_dir(struct walker *w, const struct dir *d, const char *gd)
{
	_cleanup_close_ int fd = openat(d->fd, "commondir", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char text[PATH_MAX];
	ssize_t n = fd < 0 ? -1 : read_all(fd, text, sizeof text - 1);
	if (n <= 0)
		return NULL;
	text[n] = 0;
	text[strcspn(text, "\n")] = 0;
	return kit_guard_in_workspace(&w->a, w->s->ws, gd, text);
}

/* What a git directory sends git to: its commondir's config and hooks,
 * what its config includes, its core.hooksPath. */
static void config_references(struct walker *w, const struct dir *d)
{
	char *gd = arena_strndup(&w->a, w->rel, d->len);
	const char *common = common_dir(w, d, gd);
	if (common && !streq(common, gd)) {
		held_back_reference(w, arena_printf(&w->a, "%s/config", common));
		held_back_reference(w, arena_printf(&w->a, "%s/hooks", common));
	}
	struct kit_git_config_refs refs;
	kit_git_config_refs(d->fd, "config", &w->a, &refs);
	if (!refs.hooks_path && !refs.n_includes)
		return;
	char *wt = arena_strdup(&w->a, gd);
	char *slash = strrchr(wt, '/');
	if (d->dotgit)
		*(slash ? slash : wt) = 0;
	if (refs.hooks_path)
		held_back_reference(w, kit_guard_in_workspace(&w->a, w->s->ws, wt, refs.hooks_path));
	for (size_t i = 0; i < refs.n_includes; i++)
		held_back_reference(w, kit_guard_in_workspace(&w->a, w->s->ws, gd, refs.includes[i]));
}

/* ---------------------------------------------------------------- the walk */

/* What a host tool would run, at d/name (w->rel), which the box changed. */
static void hazards(struct walker *w, const struct dir *d, const char *name, const struct stat *st)
{
	if (d->gitdir && kit_guard_gitdir_member(name) != KIT_GUARD_NOT_RUN)
		quarantine(w, d->fd, name, w->rel, KIT_GUARD_GIT);
	else if (streq(name, ".git") && d->len && !S_ISDIR(st->st_mode))
		quarantine(w, d->fd, name, w->rel, KIT_GUARD_GITLINK);
	else if (kit_guard_tool_at(w->rel, name))
		quarantine(w, d->fd, name, w->rel, streq(name, ".gitmodules") ? KIT_GUARD_GITMODULES : KIT_GUARD_TOOL);
}

static bool walk_dir(struct walker *w, struct dir *d);

/* Is dirfd/name (on another device than its parent) another mount? Then it
 * is left alone: the box's bind showed it, but what lies there is the
 * host's (a bound /dev or /usr/bin would lose its device nodes or its
 * set-user-ID programs). A btrfs subvolume is the same mount. */
static bool another_mount(const struct walker *w, int dirfd, const char *name)
{
	struct statx sx;
	if (!w->mnt_id || statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return true;
	return sx.stx_mnt_id != w->mnt_id;
}

/* A directory too deep, or at a path too long, to be walked (shown as
 * `shown`): held back whole when the box changed it; else noted once. */
static void out_of_reach(struct walker *w, const struct dir *d, const char *name, const struct stat *st,
			 const char *shown)
{
	if (S_ISDIR(st->st_mode) && changed(w, st) && d->scope == KIT_GUARD_ALL) {
		quarantine(w, d->fd, name, shown, KIT_GUARD_DEEP);
	} else if (!w->out_of_reach_noted) {
		kit_guard_add(&w->report, KIT_GUARD_STUCK, shown, "too deep to be looked at below");
		w->out_of_reach_noted = true;
	}
}

/* Into the directory dirfd/name (st), as rel (w->rel, len long). */
static bool descend(struct walker *w, const struct dir *d, const char *name, const struct stat *st, size_t len,
		    enum kit_guard_scope scope)
{
	if (d->depth + 1 > MAX_DEPTH) {
		out_of_reach(w, d, name, st, w->rel);
		return false;
	}
	/* the run's own quarantine, in a .agentbox-quarantine the box made */
	if (w->qfd >= 0 && st->st_ino == w->q_st.st_ino && st->st_dev == w->q_st.st_dev)
		return false;
	if (st->st_dev != d->dev && another_mount(w, d->fd, name))
		return false;
	_cleanup_close_ int fd = openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
		return false;
	struct kit_guard_marks below = {0};
	if (d->marks->n)
		kit_guard_marks_below(d->marks, w->rel, &w->a, &below);
	bool tool = d->tool || kit_guard_tool_at(w->rel, name) ||
		    (d->gitdir && kit_guard_gitdir_member(name) != KIT_GUARD_NOT_RUN);
	struct dir sub = {.fd = fd, .len = len, .marks = &below, .scope = scope, .depth = d->depth + 1,
			  .dev = st->st_dev, .dotgit = streq(name, ".git"), .look_all = tool || changed(w, st), .tool = tool};
	return walk_dir(w, &sub);
}

/* Must the entry be judged by its inode? Not a file or symlink the box did
 * not add to an unchanged directory (made in place, its name would have
 * changed the directory; a mode set in place is what the seccomp guard
 * refuses), unless its name is one a host tool runs. */
static bool worth_a_look(const struct dir *d, unsigned char type, const char *name)
{
	if (d->look_all || d->gitdir || (type != DT_REG && type != DT_LNK))
		return true;
	return streq(name, ".git") || kit_guard_tool_at("", name);
}

/* One entry of d; true when the box changed it (a directory: anything in it). */
static bool visit(struct walker *w, const struct dir *d, const char *name)
{
	size_t len = d->len ? d->len + 1 + strlen(name) : strlen(name);
	struct stat st;
	if (len >= sizeof w->rel) {
		if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			out_of_reach(w, d, name, &st, arena_printf(&w->a, "%s/%.40s...", w->rel, name));
		return true;
	}
	snprintf(w->rel + d->len, sizeof w->rel - d->len, "%s%s", d->len ? "/" : "", name);
	w->entries++;
	bool ch = false;
	enum kit_guard_scope scope = kit_guard_scope_of(d->marks, w->rel, d->scope);
	if (scope != KIT_GUARD_NONE && fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		ch = changed(w, &st);
		bool gone = false;
		if (S_ISDIR(st.st_mode))
			ch |= descend(w, d, name, &st, len, scope);
		else if (ch)
			gone = privileges(w, d->fd, name, &st);
		w->rel[len] = 0;
		if (ch && !gone && scope == KIT_GUARD_ALL)
			hazards(w, d, name, &st);
	}
	w->rel[d->len] = 0;
	return ch;
}

struct names {
	char **v;
	size_t n, cap;
	bool head, objects, refs, commondir;
};

static void add_name(struct names *ns, const char *name, unsigned char type)
{
	if (streq(name, ".") || streq(name, ".."))
		return;
	ns->head |= streq(name, "HEAD");
	ns->objects |= streq(name, "objects");
	ns->refs |= streq(name, "refs");
	ns->commondir |= streq(name, "commondir");
	if (ns->n + 1 >= ns->cap)
		ns->v = xrealloc(ns->v, (ns->cap = ns->cap ? 2 * ns->cap : 16) * sizeof *ns->v);
	size_t len = strlen(name);
	char *e = xmalloc(len + 2);
	e[0] = (char)type;
	memcpy(e + 1, name, len + 1);
	ns->v[ns->n++] = e;
	ns->v[ns->n] = NULL;
}

/* The entries of d (ENTRY_TYPE, ENTRY_NAME; malloc'd, NULL-terminated;
 * read with getdents64 from d's own fd, which nothing has read yet),
 * whether d is a git directory noted. */
static char **read_names(struct walker *w, struct dir *d)
{
	struct names ns = {0};
	char *buf = w->dents;
	for (;;) {
		long n = syscall(SYS_getdents64, d->fd, buf, sizeof w->dents);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			add_name(&ns, de->d_name, de->d_type);
			off += de->d_reclen;
		}
	}
	if (!ns.v)
		return xcalloc(1, sizeof(char *));
	d->gitdir = kit_guard_is_gitdir(ns.head, ns.objects, ns.refs, ns.commondir);
	return ns.v;
}

static bool walk_dir(struct walker *w, struct dir *d)
{
	char **names = read_names(w, d);
	if (!names)
		return false;
	bool ch = false;
	for (char **p = names; *p; p++)
		if (worth_a_look(d, ENTRY_TYPE(*p), ENTRY_NAME(*p)))
			ch |= visit(w, d, ENTRY_NAME(*p));
	if (d->gitdir && d->scope == KIT_GUARD_ALL)
		config_references(w, d);
	for (char **p = names; *p; p++)
		free(*p);
	free(names);
	return ch;
}

/* ---------------------------------------------------------------- a killed run's start */

/* <kit run base>/.sweeps-UID, ours and no one else's, locked (flock) while
 * a record is read or removed. */
static int pending_dir(char *buf, size_t len)
{
	snprintf(buf, len, "%s/.sweeps-%u", kit_rundir_base(), (unsigned)geteuid());
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -1;
	int fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0077) || flock(fd, LOCK_EX) < 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* With the directory locked: the records of killed runs whose workspace is
 * gone (no run holds them, and their path leads elsewhere or nowhere). */
static void pending_prune(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *de; (de = readdir(d));) {
		unsigned long long dev, ino;
		if (de->d_name[0] == '.' || sscanf(de->d_name, "%llx-%llx", &dev, &ino) != 2)
			continue;
		_cleanup_close_ int rfd = openat(dfd, de->d_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		/* a write lock would conflict with any run's read lock */
		struct flock probe = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		char text[PATH_MAX + 64];
		ssize_t n = rfd < 0 ? -1 : pread(rfd, text, sizeof text - 1, 0);
		if (n <= 0 || fcntl(rfd, F_GETLK, &probe) < 0 || probe.l_type != F_UNLCK)
			continue;       /* a run holds it */
		text[n] = 0;
		char *path = strchr(text, '\n');
		struct stat st;
		if (path && *++path) {
			path[strcspn(path, "\n")] = 0;
			if (stat(path, &st) == 0 && st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino)
				continue;       /* the next run there sweeps from it */
		}
		(void)unlinkat(dfd, de->d_name, 0);
	}
}

/* The workspace's record ("SEC NSEC\nPATH\n"), read-locked (fcntl: this
 * process's, never a child's): its start, earlier than ours, is where this
 * run sweeps from; none, ours is written. */
static void pending_begin(struct kit_sweep *s, const struct stat *ws_st)
{
	char dir[PATH_MAX - 64];
	_cleanup_close_ int dfd = pending_dir(dir, sizeof dir);
	if (dfd < 0)
		return;
	pending_prune(dfd);
	snprintf(s->pending, sizeof s->pending, "%s/%llx-%llx", dir, (unsigned long long)ws_st->st_dev,
		 (unsigned long long)ws_st->st_ino);
	int fd = open(s->pending, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
	if (fd < 0 || fcntl(fd, F_SETLKW, &fl) < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char text[PATH_MAX + 64] = "";
	ssize_t n = pread(fd, text, sizeof text - 1, 0);
	long long sec;
	long nsec;
	if (n > 0 && sscanf(text, "%lld %ld", &sec, &nsec) == 2) {
		if (sec < s->since.tv_sec || (sec == s->since.tv_sec && nsec < s->since.tv_nsec)) {
			log_debug("kit run: a run on workspace %s did not end: sweeping from its start", s->ws);
			s->since = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = nsec};
		}
	} else {
		int len = snprintf(text, sizeof text, "%lld %ld\n%s\n", (long long)s->since.tv_sec, s->since.tv_nsec, s->ws);
		if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)len, 0) != len)
			log_debug("kit run: record the start in %s: %s", s->pending, strerror(errno));
	}
	s->pending_fd = fd;
}

/* Swept: the record goes when no other run on the workspace holds it. */
static void pending_end(struct kit_sweep *s)
{
	if (s->pending_fd < 0)
		return;
	char dir[PATH_MAX - 64];
	_cleanup_close_ int dfd = pending_dir(dir, sizeof dir);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (dfd >= 0 && fcntl(s->pending_fd, F_SETLK, &fl) == 0)
		(void)unlink(s->pending);
	close(s->pending_fd);
	s->pending_fd = -1;
}

/* ---------------------------------------------------------------- begin, end */

/* The workspace file system's own "now": the ctime it gives a new inode
 * (unnamed, O_TMPFILE; else a name made and removed at once). Its clock
 * and its granularity are what every later change there is stamped with. */
static int fs_now(int wsfd, unsigned n, struct timespec *ret)
{
	struct stat st;
	int fd = openat(wsfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		char name[64];
		snprintf(name, sizeof name, ".agentbox-start-%d-%u", (int)getpid(), n);
		fd = openat(wsfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			(void)unlinkat(wsfd, name, 0);
	}
	if (fd < 0)
		return -1;
	int r = fstat(fd, &st);
	close(fd);
	*ret = st.st_ctim;
	return r;
}

static bool after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* The run's start, in the workspace's time: the first stamp it gives after
 * one it gave now, so that what was changed before stamps earlier and all
 * the box changes stamps not earlier (waits one clock tick, ~4 ms; on a file
 * system that keeps whole seconds, gives up after 50 ms and takes now: a
 * change in that second before the run then counts as the box's). */
static void start_time(struct kit_sweep *s, int wsfd)
{
	struct timespec first, next;
	if (wsfd < 0 || fs_now(wsfd, 0, &first) < 0) {
		clock_gettime(CLOCK_REALTIME_COARSE, &s->since);
		return;
	}
	s->since = first;
	for (unsigned i = 1; i <= 50; i++) {
		if (fs_now(wsfd, i, &next) < 0)
			return;
		if (after(&next, &first)) {
			s->since = next;
			return;
		}
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
}

void kit_sweep_begin(struct kit_sweep *s, const struct kit *k, const char *ws, const struct kit_ws_plan *plan)
{
	memset(s, 0, sizeof *s);
	s->pending_fd = -1;
	struct statvfs sv;
	if (k->ws_guard == KIT_WS_GUARD_OFF || (statvfs(ws, &sv) == 0 && (sv.f_flag & ST_RDONLY)))
		return;
	snprintf(s->ws, sizeof s->ws, "%s", ws);
	s->k = k;
	s->plan = plan;
	_cleanup_close_ int wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	start_time(s, wsfd);
	struct stat ws_st;
	if (wsfd >= 0 && fstat(wsfd, &ws_st) == 0)
		pending_begin(s, &ws_st);
	/* the top .gitmodules, to be put back if the box changes it */
	_cleanup_close_ int fd = wsfd < 0 ? -1 : openat(wsfd, ".gitmodules", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &s->gitmodules_st) == 0 && S_ISREG(s->gitmodules_st.st_mode) &&
	    s->gitmodules_st.st_size <= GITMODULES_MAX) {
		s->gitmodules = xmalloc((size_t)s->gitmodules_st.st_size + 1);
		ssize_t r = read_all(fd, s->gitmodules, (size_t)s->gitmodules_st.st_size);
		if (r < 0) {
			free(s->gitmodules);
			s->gitmodules = NULL;
		} else {
			s->gitmodules_len = (size_t)r;
		}
	}
	s->on = true;
}

/* The list in the quarantine directory, the lines on stderr. */
static void report(struct walker *w)
{
	if (w->qfd >= 0) {
		_cleanup_free_ char *list = kit_guard_manifest(&w->report);
		_cleanup_close_ int fd = openat(w->qfd, "MANIFEST", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 || write_all(fd, list, strlen(list)) < 0)
			log_warn("kit run: write %s/%s/MANIFEST: %s", w->s->ws, w->report.qdir, strerror(errno));
		else
			own(w, w->qfd, "MANIFEST");
	}
	_cleanup_free_ char *text = kit_guard_summary(&w->report, w->s->ws, KIT_SWEEP_LINES);
	if (text)
		fputs(text, stderr);
}

void kit_sweep_end(struct kit_sweep *s, const char *run_id)
{
	if (!s->on)
		return;
	s->on = false;
	struct walker w = {.s = s, .qfd = -1};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	w.wsfd = open(s->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.wsfd < 0 || fstat(w.wsfd, &w.ws_st) < 0) {
		log_warn("kit run: workspace %s: %s; what the box left in it was not looked at", s->ws, strerror(errno));
	} else {
		time_t now = time(NULL);
		struct tm tm;
		char when[32] = "run";
		if (localtime_r(&now, &tm))
			strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
		snprintf(w.run, sizeof w.run, "%s-%.60s", when, run_id);
		kit_guard_marks_make(s->k, s->plan, &w.a, &w.top);
		struct statx sx;
		if (statx(w.wsfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
			w.mnt_id = sx.stx_mnt_id;
		struct dir top = {.fd = w.wsfd, .marks = &w.top, .scope = KIT_GUARD_ALL, .dev = w.ws_st.st_dev,
				  .look_all = changed(&w, &w.ws_st)};
		walk_dir(&w, &top);
		report(&w);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_debug("kit run: the workspace guard looked at %zu entries in %.1f ms", w.entries,
		  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (w.wsfd >= 0)
		close(w.wsfd);
	if (w.qfd >= 0)
		close(w.qfd);
	pending_end(s);
	kit_guard_report_free(&w.report);
	arena_free(&w.a);
	free(s->gitmodules);
	s->gitmodules = NULL;
}
