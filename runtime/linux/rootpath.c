/* Paths inside the container's root. The kernel's openat2(RESOLVE_IN_ROOT)
 * does the resolving where it can; the walk below does it by hand, one
 * component at a time, for kernels without it and to create what is missing. */
#include "rootpath.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern bool util_force_fallbacks;

void fd_path(int fd, char buf[FD_PATH_MAX])
{
	snprintf(buf, FD_PATH_MAX, "/proc/self/fd/%d", fd);
}

enum walk_create { WALK_OPEN, WALK_CREATE_DIR, WALK_CREATE_FILE };

/* Make the missing component name in dir: a directory unless it is the last
 * one and a file is asked for. EEXIST is fine: something appeared, and the
 * caller opens it again (a symlink included, which it then follows). */
static int make_component(int dir, const char *name, bool last, enum walk_create create)
{
	if (!last || create == WALK_CREATE_DIR)
		return mkdirat(dir, name, 0755) < 0 && errno != EEXIST ? -1 : 0;
	int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno != EEXIST ? -1 : 0;
}

/* A walk in progress: what is left to resolve (todo, from p on), and the
 * directory it has reached (cur, an fd of ours). */
struct walk {
	int rootfd;
	const char *path;               /* as asked: for messages */
	struct stat root_st;
	char todo[PATH_MAX * 2];
	char *p;
	int cur;
	int links, made;
};

/* Is cur the root? ".." there stays there. */
static bool walk_at_root(const struct walk *w)
{
	struct stat st;
	return fstat(w->cur, &st) == 0 && st.st_dev == w->root_st.st_dev && st.st_ino == w->root_st.st_ino;
}

/* The missing component comp, made where the walk has led (end: what
 * follows it in todo). */
static int walk_make(struct walk *w, const char *comp, const char *end, enum walk_create create, struct ab_err *err)
{
	const char *rest = end;
	while (*rest == '/')
		rest++;
	if (make_component(w->cur, comp, !*rest, create) < 0) {
		int e = errno;
		close(w->cur);
		return ab_error(err, e, "%s %s", !*rest && create == WALK_CREATE_FILE ? "create" : "mkdir", w->path);
	}
	w->made++;
	return 0;
}

/* The component at fd (ours: closed here) is a symlink: its target goes in
 * front of what is left, from the root when it is absolute. */
static int walk_follow(struct walk *w, int fd, char *end, bool no_symlinks, struct ab_err *err)
{
	if (no_symlinks) {
		close(fd);
		close(w->cur);
		*end = 0;
		return ab_error(err, ELOOP, "%s is a symlink", w->todo);
	}
	char target[PATH_MAX];
	ssize_t n = readlinkat(fd, "", target, sizeof target - 1);
	close(fd);
	if (n < 0 || ++w->links > 40) {
		int e = n < 0 ? errno : ELOOP;
		close(w->cur);
		return ab_error(err, e, "open %s", w->path);
	}
	target[n] = 0;
	char rest[PATH_MAX * 2];
	if (snprintf(rest, sizeof rest, "%s/%s", target, w->p) >= (int)sizeof rest) {
		close(w->cur);
		return ab_error(err, ENAMETOOLONG, "open %s", w->path);
	}
	memcpy(w->todo, rest, sizeof w->todo);
	w->p = w->todo;
	if (target[0] == '/') {
		close(w->cur);
		w->cur = fcntl(w->rootfd, F_DUPFD_CLOEXEC, 3);
		if (w->cur < 0)
			return ab_error(err, errno, "dup");
	}
	return 0;
}

/* One component further: 1 while there is more, 0 at the end of the path,
 * < 0 on an error (cur closed). */
static int walk_step(struct walk *w, enum walk_create create, bool no_symlinks, struct ab_err *err)
{
	while (*w->p == '/')
		w->p++;
	if (!*w->p)
		return 0;
	char *end = strchrnul(w->p, '/');
	char comp[NAME_MAX + 1];
	size_t len = (size_t)(end - w->p);
	if (len > NAME_MAX) {
		close(w->cur);
		return ab_error(err, ENAMETOOLONG, "open %s", w->path);
	}
	memcpy(comp, w->p, len);
	comp[len] = 0;
	if (streq(comp, ".") || (streq(comp, "..") && walk_at_root(w))) {
		w->p = end;
		return 1;
	}
	int fd = openat(w->cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create != WALK_OPEN && !streq(comp, "..") && w->made < 4096) {
		/* open it again then: it may be a symlink made meanwhile */
		int r = walk_make(w, comp, end, create, err);
		return r < 0 ? r : 1;
	}
	if (fd < 0) {
		int e = errno;
		close(w->cur);
		return ab_error(err, e, "open %s", w->path);
	}
	w->p = end;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		int r = walk_follow(w, fd, end, no_symlinks, err);
		return r < 0 ? r : 1;
	}
	close(w->cur);
	w->cur = fd;
	return 1;
}

/* Walk path one component at a time below rootfd, resolving symlinks against
 * rootfd ourselves and clamping ".." at the root; with create, missing
 * components are made where the walk has led (so through a dangling symlink,
 * where it points). */
static int walk_in_root(int rootfd, const char *path, int flags, enum walk_create create,
			bool no_symlinks, int *ret_fd, struct ab_err *err)
{
	struct walk w;          /* not zeroed: todo is 8 KiB, filled just below */
	w.rootfd = rootfd;
	w.path = path;
	w.links = 0;
	w.made = 0;
	if (snprintf(w.todo, sizeof w.todo, "%s", path) >= (int)sizeof w.todo)
		return ab_error(err, ENAMETOOLONG, "open %s", path);
	if (fstat(rootfd, &w.root_st) < 0)
		return ab_error(err, errno, "stat root");
	w.cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (w.cur < 0)
		return ab_error(err, errno, "dup");
	w.p = w.todo;
	int r;
	while ((r = walk_step(&w, create, no_symlinks, err)) > 0)
		;
	if (r < 0)
		return r;
	if (!(flags & O_PATH)) {
		char fp[FD_PATH_MAX];
		fd_path(w.cur, fp);
		int fd = open(fp, flags | O_CLOEXEC);
		close(w.cur);
		if (fd < 0)
			return ab_error(err, errno, "open %s", path);
		w.cur = fd;
	}
	*ret_fd = w.cur;
	return 0;
}

/* openat2 confined to the root: an fd, or -errno (no message made for it). */
static int openat2_in_root(int rootfd, const char *path, int flags, bool no_symlinks)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
	};
	while (*path == '/')
		path++;
	int fd = (int)syscall(SYS_openat2, rootfd, *path ? path : ".", &how, sizeof how);
	return fd >= 0 ? fd : -errno;
}

int open_in_root(int rootfd, const char *path, int flags, int *ret_fd, struct ab_err *err)
{
	if (!util_force_fallbacks) {
		while (*path == '/')
			path++;
		int fd = openat2_in_root(rootfd, path, flags, false);
		if (fd >= 0) {
			*ret_fd = fd;
			return 0;
		}
		if (fd != -ENOSYS && fd != -EAGAIN && fd != -EXDEV)
			return ab_error(err, -fd, "open %s", path);
	}
	return walk_in_root(rootfd, path, flags, WALK_OPEN, false, ret_fd, err);
}

int create_in_root(int rootfd, const char *path, unsigned how, int *ret_fd, struct ab_err *err)
{
	/* Most targets exist: one openat2. Missing is the expected other case,
	 * for which no message is formatted (strerror and printf touch pages of
	 * libc that the init has not mapped yet). */
	bool no_symlinks = how & CREATE_NO_SYMLINKS;
	int fd = util_force_fallbacks ? -ENOSYS : openat2_in_root(rootfd, path, O_PATH, no_symlinks);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	return walk_in_root(rootfd, path, O_PATH, how & CREATE_DIR ? WALK_CREATE_DIR : WALK_CREATE_FILE,
			    no_symlinks, ret_fd, err);
}

int mounts_mkdir_in_root(const char *path, struct ab_err *err)
{
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ab_error(err, errno, "open /");
	_cleanup_close_ int fd = -1;
	return create_in_root(rootfd, path, CREATE_DIR, &fd, err);
}
