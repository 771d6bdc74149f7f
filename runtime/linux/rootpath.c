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

/* Walk path one component at a time below rootfd, resolving symlinks against
 * rootfd ourselves and clamping ".." at the root; with create, missing
 * components are made where the walk has led (so through a dangling symlink,
 * where it points). */
static int walk_in_root(int rootfd, const char *path, int flags, enum walk_create create,
			bool no_symlinks, int *ret_fd, struct ab_err *err)
{
	char todo[PATH_MAX * 2];
	if (snprintf(todo, sizeof todo, "%s", path) >= (int)sizeof todo)
		return ab_error(err, ENAMETOOLONG, "open %s", path);
	struct stat root_st;
	if (fstat(rootfd, &root_st) < 0)
		return ab_error(err, errno, "stat root");
	int cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return ab_error(err, errno, "dup");
	int links = 0, made = 0;
	char *p = todo;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = strchrnul(p, '/');
		char comp[NAME_MAX + 1];
		size_t len = (size_t)(end - p);
		if (len > NAME_MAX) {
			close(cur);
			return ab_error(err, ENAMETOOLONG, "open %s", path);
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		if (streq(comp, ".")) {
			p = end;
			continue;
		}
		if (streq(comp, "..")) {
			struct stat st;
			if (fstat(cur, &st) == 0 && st.st_dev == root_st.st_dev && st.st_ino == root_st.st_ino) {
				p = end;
				continue;
			}
		}
		int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create != WALK_OPEN && !streq(comp, "..") && made < 4096) {
			const char *rest = end;
			while (*rest == '/')
				rest++;
			if (make_component(cur, comp, !*rest, create) < 0) {
				int e = errno;
				close(cur);
				return ab_error(err, e, "%s %s", !*rest && create == WALK_CREATE_FILE ? "create" : "mkdir",
						path);
			}
			made++;
			continue;       /* open it again: it may be a symlink made meanwhile */
		}
		if (fd < 0) {
			int e = errno;
			close(cur);
			return ab_error(err, e, "open %s", path);
		}
		p = end;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
			if (no_symlinks) {
				close(fd);
				close(cur);
				*end = 0;
				return ab_error(err, ELOOP, "%s is a symlink", todo);
			}
			char target[PATH_MAX];
			ssize_t n = readlinkat(fd, "", target, sizeof target - 1);
			close(fd);
			if (n < 0 || ++links > 40) {
				int e = n < 0 ? errno : ELOOP;
				close(cur);
				return ab_error(err, e, "open %s", path);
			}
			target[n] = 0;
			char rest[PATH_MAX * 2];
			if (snprintf(rest, sizeof rest, "%s/%s", target, p) >= (int)sizeof rest) {
				close(cur);
				return ab_error(err, ENAMETOOLONG, "open %s", path);
			}
			memcpy(todo, rest, sizeof todo);
			p = todo;
			if (target[0] == '/') {
				close(cur);
				cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
				if (cur < 0)
					return ab_error(err, errno, "dup");
			}
			continue;
		}
		close(cur);
		cur = fd;
	}
	if (!(flags & O_PATH)) {
		char fp[FD_PATH_MAX];
		fd_path(cur, fp);
		int fd = open(fp, flags | O_CLOEXEC);
		close(cur);
		if (fd < 0)
			return ab_error(err, errno, "open %s", path);
		cur = fd;
	}
	*ret_fd = cur;
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
