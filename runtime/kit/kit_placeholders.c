#include "kit_placeholders.h"
#include "kit_rundir.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define LIST_MAX (4u << 20)

/* <kit run base>/.placeholders-UID, ours and no one else's. */
static int registry_dir(char *buf, size_t len, struct ab_err *err)
{
	snprintf(buf, len, "%s/.placeholders-%u", kit_rundir_base(), (unsigned)geteuid());
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return ab_error(err, errno, "mkdir %s", buf);
	struct stat st;
	if (lstat(buf, &st) < 0)
		return ab_error(err, errno, "%s", buf);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0077))
		return ab_error(err, 0, "%s: not a private directory of ours", buf);
	return 0;
}

/* KEY.users is locked with fcntl (a read lock per box, a write lock to find
 * none): such a lock is the process's, and a child it forks (the sentry, the
 * network namespace pool's filler before its exec) holds a copy of the file
 * but not the lock. With flock, the lock of the open file, a child still
 * alive when its box ended made the box look in use: the placeholders stayed
 * until the next kit command. KEY.mutex, held only while no child is made,
 * keeps flock. */
static int take_lock(int fd, const char *suffix, int op)
{
	if (!streq(suffix, "users"))
		return flock(fd, op);
	struct flock fl = {.l_type = (op & LOCK_EX) ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET};
	int r = fcntl(fd, (op & LOCK_NB) ? F_SETLK : F_SETLKW, &fl);
	if (r < 0 && errno == EACCES)
		errno = EAGAIN;
	return r;
}

/* Open KEY.SUFFIX and lock it. The files go when their workspace is unused
 * (remove_if_unused): a lock won on a file unlinked meanwhile is tried again
 * on the one that replaced it. */
static int lock_file(const char *key, const char *suffix, int op)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s.%s", key, suffix);
	for (int tries = 0; tries < 100; tries++) {
		int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		int r;
		while ((r = take_lock(fd, suffix, op)) < 0 && errno == EINTR)
			;
		struct stat a, b;
		if (r == 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		int e = errno;
		close(fd);
		if (r < 0) {
			errno = e;
			return -1;
		}
	}
	errno = EAGAIN;
	return -1;
}

static void unlink_key(const char *key, const char *suffix)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s.%s", key, suffix);
	(void)unlink(path);
}

/* The directory holding rel below wsfd, reached without following a symlink;
 * *name points at rel's last component in buf. */
static int open_parent(int wsfd, const char *rel, char buf[PATH_MAX], const char **name)
{
	snprintf(buf, PATH_MAX, "%s", rel);
	int cur = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	char *p = buf;
	for (char *slash; cur >= 0 && (slash = strchr(p, '/'));) {
		*slash = 0;
		int next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		*slash = '/';
		close(cur);
		cur = next;
		errno = e;
		p = slash + 1;
	}
	*name = p;
	return cur;
}

/* What stands in for an absent entry, as its list records it:
 *   'C' a read-only entry: the whiteout device node (character 0:0). No
 *       driver has that number, so nothing can open it; git does not list
 *       it; it takes no disk block, so making and removing it costs no
 *       block allocation (and no trim: ext4 without a journal, mounted with
 *       discard, trims a removed directory's block at once, ~0.1-0.2 ms a
 *       directory on the VMs measured, 16 of them a run). Where the node
 *       cannot be made (a file system without device nodes), a directory.
 *       Not on overlayfs, where that node is a whiteout: the name would
 *       vanish;
 *   'D' an empty directory: a pinned parent, or a read-only entry on
 *       overlayfs;
 *   'F' a file with its text (inside .git). */
static char placeholder_kind(const struct kit_ws_entry *e, bool device_nodes)
{
	if (!e->dir)
		return 'F';
	return e->action == KIT_WS_READONLY && device_nodes ? 'C' : 'D';
}

static int make_node(int dir, const char *name)
{
	if (mknodat(dir, name, S_IFCHR, makedev(0, 0)) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
	return mkdirat(dir, name, 0755);
}

static int make_one(int wsfd, const struct stat *ws_st, const struct kit_ws_entry *e, char kind,
		    struct ab_err *err)
{
	char buf[PATH_MAX];
	const char *name = e->rel;
	_cleanup_close_ int parent = -1;
	if (strchr(e->rel, '/') && (parent = open_parent(wsfd, e->rel, buf, &name)) < 0)
		return ab_error(err, errno, "a placeholder for %s", e->rel);
	int dir = parent >= 0 ? parent : wsfd;
	if (kind != 'F') {
		if ((kind == 'C' ? make_node(dir, name) : mkdirat(dir, name, 0755)) < 0)
			return errno == EEXIST ? 0 : ab_error(err, errno, "a placeholder for %s", e->rel);
	} else {
		_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return errno == EEXIST ? 0 : ab_error(err, errno, "a placeholder for %s", e->rel);
		if (write_all(fd, e->content, strlen(e->content)) < 0)
			return ab_error(err, errno, "write the placeholder %s", e->rel);
	}
	/* the user's, should it ever be left behind */
	if (geteuid() == 0 && (ws_st->st_uid != 0 || ws_st->st_gid != getegid()))
		(void)fchownat(dir, name, ws_st->st_uid, ws_st->st_gid, AT_SYMLINK_NOFOLLOW);
	return 0;
}

int kit_placeholders_make(struct kit_placeholders *ph, const char *ws, const struct kit_ws_plan *plan,
			  struct ab_err *err)
{
	bool any = false;
	for (size_t i = 0; i < plan->n; i++)
		any |= plan->v[i].absent;
	if (!any)
		return 0;
	_cleanup_close_ int wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (wsfd < 0 || fstat(wsfd, &st) < 0)
		return ab_error(err, errno, "workspace %s", ws);
	struct statfs sf;
	bool device_nodes = fstatfs(wsfd, &sf) == 0 && sf.f_type != OVERLAYFS_SUPER_MAGIC;
	char dir[PATH_MAX];
	if (registry_dir(dir, sizeof dir, err) < 0)
		return ab_wrap(err, "workspace placeholders");
	if (snprintf(ph->key, sizeof ph->key, "%s/%llx-%llx", dir, (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino) >= (int)sizeof ph->key)
		return ab_error(err, ENAMETOOLONG, "%s", dir);
	_cleanup_close_ int mutex = lock_file(ph->key, "mutex", LOCK_EX);
	if (mutex < 0)
		return ab_error(err, errno, "lock %s.mutex", ph->key);
	ph->users_fd = lock_file(ph->key, "users", LOCK_SH);
	if (ph->users_fd < 0)
		return ab_error(err, errno, "lock %s.users", ph->key);

	/* what will be made, written before it is made (no fsync: the list lives
	 * in /run, which a power cut empties along with what it would save) */
	char list[PATH_MAX + 16];
	snprintf(list, sizeof list, "%s.list", ph->key);
	_cleanup_close_ int lfd = open(list, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0)
		return ab_error(err, errno, "open %s", list);
	size_t cap = strlen(ws) + 3, len = 0;
	for (size_t i = 0; i < plan->n; i++)
		if (plan->v[i].absent)
			cap += strlen(plan->v[i].rel) + (plan->v[i].dir ? 0 : strlen(plan->v[i].content) + 1) + 3;
	_cleanup_free_ char *rec = xmalloc(cap);
	len += (size_t)snprintf(rec + len, cap - len, "W%s", ws) + 1;
	for (size_t i = 0; i < plan->n; i++) {
		const struct kit_ws_entry *e = &plan->v[i];
		if (!e->absent)
			continue;
		len += (size_t)snprintf(rec + len, cap - len, "%c%s", placeholder_kind(e, device_nodes), e->rel) + 1;
		if (!e->dir)
			len += (size_t)snprintf(rec + len, cap - len, "%s", e->content) + 1;
	}
	if (write_all(lfd, rec, len) < 0)
		return ab_error(err, errno, "write %s", list);
	for (size_t i = 0; i < plan->n; i++)
		if (plan->v[i].absent &&
		    make_one(wsfd, &st, &plan->v[i], placeholder_kind(&plan->v[i], device_nodes), err) < 0)
			return ab_wrap(err, "workspace %s", ws);
	return 0;
}

struct record {
	const char *ws;
	char kind;              /* 'C', 'D' or 'F' (placeholder_kind) */
	const char *rel;
	const char *content;
};

/* The placeholder is still as made: remove it. wsfd: its workspace, opened
 * once for the list. */
static void remove_one(int wsfd, const struct record *r)
{
	char buf[PATH_MAX];
	const char *name = r->rel;
	_cleanup_close_ int parent = -1;
	if (strchr(r->rel, '/') && (parent = open_parent(wsfd, r->rel, buf, &name)) < 0)
		return;
	int dir = parent >= 0 ? parent : wsfd;
	struct stat st;
	if (r->kind == 'C' && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
	    st.st_rdev == makedev(0, 0)) {
		(void)unlinkat(dir, name, 0);
		return;
	}
	if (r->kind != 'F') {
		(void)unlinkat(dir, name, AT_REMOVEDIR);        /* not when something is in it */
		return;
	}
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	size_t len = strlen(r->content);
	char have[64];
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != len || len >= sizeof have ||
	    read_all(fd, have, len) != (ssize_t)len || memcmp(have, r->content, len) != 0)
		return;
	(void)unlinkat(dir, name, 0);
}

/* The workspace ws if it is still the one keyed dev:ino (moved away: -1, and
 * its placeholders are left rather than guessed at). */
static int open_workspace(const char *ws, dev_t dev, ino_t ino)
{
	int wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (wsfd >= 0 && (fstat(wsfd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)) {
		close(wsfd);
		wsfd = -1;
	}
	return wsfd;
}

/* With the mutex and the users lock held (no box uses the workspace any
 * more): remove what key's list names, the last made first, and the list. */
static void remove_listed(const char *key)
{
	unsigned long long dev, ino;
	const char *base = strrchr(key, '/');
	if (!base || sscanf(base + 1, "%llx-%llx", &dev, &ino) != 2)
		return;
	char list[PATH_MAX + 16];
	snprintf(list, sizeof list, "%s.list", key);
	_cleanup_free_ char *text = NULL;
	size_t len;
	struct ab_err e;
	if (read_file_at(AT_FDCWD, list, LIST_MAX, &text, &len, &e) < 0) {
		text = NULL;
		len = 0;
	}
	size_t n = 0, cap = 0;
	_cleanup_free_ struct record *v = NULL;
	const char *ws = NULL;
	for (size_t off = 0; off < len;) {
		char kind = text[off++];
		const char *s = text + off;
		size_t sl = strnlen(s, len - off);
		if (off + sl >= len)
			break;          /* cut short by a crash: what follows was never made */
		off += sl + 1;
		if (kind == 'W') {
			ws = s;
			continue;
		}
		const char *content = NULL;
		if (kind == 'F') {
			content = text + off;
			size_t cl = strnlen(content, len - off);
			if (off + cl >= len)
				break;
			off += cl + 1;
		} else if (kind != 'D' && kind != 'C') {
			break;
		}
		if (!ws)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[n++] = (struct record){ws, kind, s, content};
	}
	int wsfd = -1;
	const char *open_ws = NULL;
	while (n-- > 0) {
		if (!open_ws || !streq(open_ws, v[n].ws)) {
			if (wsfd >= 0)
				close(wsfd);
			open_ws = v[n].ws;
			wsfd = open_workspace(open_ws, (dev_t)dev, (ino_t)ino);
		}
		if (wsfd >= 0)
			remove_one(wsfd, &v[n]);
	}
	if (wsfd >= 0)
		close(wsfd);
	(void)unlink(list);
	/* unused: its lock files go too (the caller holds the mutex, unlinked last) */
	unlink_key(key, "users");
	unlink_key(key, "mutex");
}

/* With the mutex held: when no box uses the workspace any more, remove what
 * its list names. */
static void remove_if_unused(const char *key)
{
	_cleanup_close_ int users = lock_file(key, "users", LOCK_EX | LOCK_NB);
	if (users >= 0)
		remove_listed(key);
}

void kit_placeholders_release(struct kit_placeholders *ph)
{
	if (ph->users_fd < 0)
		return;
	int mutex = lock_file(ph->key, "mutex", LOCK_EX);
	close(ph->users_fd);
	ph->users_fd = -1;
	if (mutex < 0) {
		log_warn("kit run: lock %s.mutex: %s; placeholders left for the next kit command", ph->key, strerror(errno));
		return;
	}
	remove_if_unused(ph->key);
	close(mutex);
}

void kit_placeholders_sweep(void)
{
	char dir[PATH_MAX];
	struct ab_err e;
	struct stat st;
	snprintf(dir, sizeof dir, "%s/.placeholders-%u", kit_rundir_base(), (unsigned)geteuid());
	if (lstat(dir, &st) < 0 || registry_dir(dir, sizeof dir, &e) < 0)
		return;
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 7 || !streq(de->d_name + n - 6, ".users"))
			continue;
		char key[PATH_MAX];
		if (snprintf(key, sizeof key, "%s/%.*s", dir, (int)(n - 6), de->d_name) >= (int)sizeof key)
			continue;
		int mutex = lock_file(key, "mutex", LOCK_EX);
		if (mutex < 0)
			continue;
		remove_if_unused(key);
		close(mutex);
	}
}
