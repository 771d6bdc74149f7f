/* procfs by handle: see procfs.h. */
#include "procfs.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

extern bool util_force_fallbacks;
#ifdef AGENTBOX_TEST_HOOKS
bool procfs_test_by_path;
#endif

/* The inode number of every procfs root (fs/proc/root.c). */
#define PROC_ROOT_INO 1

/* Is fd the root of a procfs? */
static int check_root(int fd, const char *how, struct ab_err *err)
{
	struct statfs sf;
	struct stat st;
	if (fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0)
		return ab_error(err, errno, "procfs (%s)", how);
	if (sf.f_type != PROC_SUPER_MAGIC)
		return ab_error(err, 0, "procfs (%s): not a procfs (file system 0x%lx)", how,
				(unsigned long)sf.f_type);
	if (st.st_ino != PROC_ROOT_INO || !S_ISDIR(st.st_mode))
		return ab_error(err, 0, "procfs (%s): not the root of a procfs", how);
	return 0;
}

/* A procfs of our own, of this process's pid namespace: -1 where the kernel
 * or this namespace does not allow one. */
static int new_procfs(void)
{
	int fsfd = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -1;
	int mnt = -1;
	if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
				   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	close(fsfd);
	return mnt;
}

int procfs_open_private(struct ab_err *err)
{
	int fd = -1;
	const char *how = "/proc";
	if (!util_force_fallbacks) {
		/* a detached copy of the /proc mount alone; where it has mounts
		 * below it that a user namespace may not split off (locked), a new
		 * procfs, else the copy with them (the walks below never cross
		 * into them) */
		fd = (int)syscall(SYS_open_tree, AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		how = "a clone of /proc";
		if (fd < 0) {
			fd = new_procfs();
			how = "a new procfs";
		}
		if (fd < 0) {
			fd = (int)syscall(SYS_open_tree, AT_FDCWD, "/proc",
					  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
			how = "a clone of /proc";
		}
	}
	if (fd < 0) {
		fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		how = "/proc";
	}
	if (fd < 0)
		return ab_error(err, errno, "open a procfs of the runtime's own (is /proc mounted?)");
	if (check_root(fd, how, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int procfs_open_own(struct ab_err *err)
{
	int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open /proc");
	if (check_root(fd, "/proc", err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int procfs_path_valid(const char *path)
{
	if (!path || !*path || path[0] == '/' || strlen(path) >= PATH_MAX)
		return -EINVAL;
	for (const char *p = path;;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* Is fd on procfs, on the mount (and device) of the walk's start? */
static bool same_procfs(int fd, uint64_t mnt, dev_t dev)
{
	struct statfs sf;
	struct stat st;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 || st.st_dev != dev)
		return false;
	return !mnt || fd_mount_id(fd) == mnt;
}

/* openat2 without it: one component at a time, none of them followed if it
 * is a symlink, each checked to be on the start's procfs mount. An fd, or
 * -errno. */
static int walk_nofollow(int dir, const char *path, int flags)
{
	struct stat st;
	if (fstat(dir, &st) < 0)
		return -errno;
	uint64_t mnt = fd_mount_id(dir);
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	int cur = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;
	for (char *comp = buf;;) {
		char *slash = strchr(comp, '/');
		if (slash)
			*slash = 0;
		/* a symlink on the way is no directory (ENOTDIR); at the end it is
		 * opened as itself (O_PATH) or refused (ELOOP) */
		int fd = slash ? openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			       : openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(cur);
		if (fd < 0)
			return -(e == ENOTDIR ? ELOOP : e);
		struct stat fst;
		if (fstat(fd, &fst) == 0 && S_ISLNK(fst.st_mode)) {
			close(fd);
			return -ELOOP;
		}
		if (!same_procfs(fd, mnt, st.st_dev)) {
			close(fd);
			return -EXDEV;
		}
		if (!slash)
			return fd;
		cur = fd;
		comp = slash + 1;
	}
}

/* An fd, or -errno. */
static int open_beneath(int dir, const char *path, int flags)
{
	if (!util_force_fallbacks) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
		};
		for (int tries = 0; tries < 16; tries++) {
			int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
			if (fd >= 0)
				return fd;
			if (errno != EAGAIN && errno != EINTR)
				break;
		}
		if (errno != ENOSYS && errno != E2BIG)
			return -errno;
	}
	return walk_nofollow(dir, path, flags);
}

int procfs_openat(int dir, const char *path, int flags, struct ab_err *err)
{
	if (procfs_test_by_path) {
		int fd = openat(dir, path, flags | O_CLOEXEC);
		return fd >= 0 ? fd : ab_error(err, errno, "open /proc/%s", path);
	}
	if (procfs_path_valid(path) < 0)
		return ab_error(err, EINVAL, "procfs: bad path \"%s\"", path ? path : "");
	int fd = open_beneath(dir, path, flags);
	if (fd == -ELOOP || fd == -EXDEV)
		return ab_error(err, -fd, "open /proc/%s: a symlink or another mount is on the way: refused", path);
	if (fd < 0)
		return ab_error(err, -fd, "open /proc/%s", path);
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC) {
		close(fd);
		return ab_error(err, EXDEV, "open /proc/%s: not on procfs: refused", path);
	}
	return fd;
}

/* "PID" (or "PID/task/TID"): where "self" (or "thread-self") points. */
static int read_self(int procfd, bool thread, char *buf, size_t len, struct ab_err *err)
{
	const char *link = thread ? "thread-self" : "self";
	ssize_t n = readlinkat(procfd, link, buf, len - 1);
	if (n <= 0)
		return ab_error(err, n < 0 ? errno : EINVAL, "procfs: read /proc/%s", link);
	buf[n] = 0;
	/* digits, and for a thread "/task/" and digits: nothing else is a name
	 * of ours */
	const char *p = buf;
	for (int part = 0; part < (thread ? 2 : 1); part++) {
		if (part == 1) {
			if (strncmp(p, "/task/", 6) != 0)
				return ab_error(err, EINVAL, "procfs: /proc/%s is \"%s\"", link, buf);
			p += 6;
		}
		if (*p < '1' || *p > '9')
			return ab_error(err, EINVAL, "procfs: /proc/%s is \"%s\"", link, buf);
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return ab_error(err, EINVAL, "procfs: /proc/%s is \"%s\"", link, buf);
	return 0;
}

int procfs_open_self(int procfd, bool thread, const char *path, int flags, struct ab_err *err)
{
	char self[64], full[PATH_MAX];
	if (procfs_test_by_path)
		snprintf(self, sizeof self, "%s", thread ? "thread-self" : "self");
	else if (read_self(procfd, thread, self, sizeof self, err) < 0)
		return -1;
	if (snprintf(full, sizeof full, "%s/%s", self, path) >= (int)sizeof full)
		return ab_error(err, ENAMETOOLONG, "procfs: %s", path);
	return procfs_openat(procfd, full, flags, err);
}

static int write_fd(int fd, const char *path, const char *data, size_t len, struct ab_err *err)
{
	ssize_t n;
	do
		n = write(fd, data, len);
	while (n < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	if (n < 0)
		return ab_error(err, e, "write '%.*s' to /proc/%s", (int)(len > 64 ? 64 : len), data, path);
	return 0;
}

int procfs_write(int dir, const char *path, const char *data, size_t len, struct ab_err *err)
{
	int fd = procfs_openat(dir, path, O_WRONLY, err);
	return fd < 0 ? -1 : write_fd(fd, path, data, len, err);
}

int procfs_write_self(int procfd, bool thread, const char *path, const char *data, size_t len,
		      struct ab_err *err)
{
	int fd = procfs_open_self(procfd, thread, path, O_WRONLY, err);
	if (fd < 0)
		return -1;
	char shown[PATH_MAX];
	snprintf(shown, sizeof shown, "%s/%s", thread ? "thread-self" : "self", path);
	return write_fd(fd, shown, data, len, err);
}

int procfs_reopen(int fd_dir, int fd, int flags, struct ab_err *err)
{
	char name[16];
	snprintf(name, sizeof name, "%d", fd);
	int nfd;
	do
		nfd = openat(fd_dir, name, flags | O_CLOEXEC);
	while (nfd < 0 && errno == EINTR);
	if (nfd < 0)
		return ab_error(err, errno, "reopen fd %d through procfs", fd);
	struct stat a, b;
	if (!procfs_test_by_path &&
	    (fstat(fd, &a) < 0 || fstat(nfd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
		close(nfd);
		return ab_error(err, EXDEV, "reopen fd %d through procfs: another file came back: refused", fd);
	}
	return nfd;
}
