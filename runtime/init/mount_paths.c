/* The cwd, masked and read-only paths: see mount_paths.h. */
#include "mount_paths.h"
#include "mount_trees.h"
#include "procfs.h"
#include "rootpath.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

extern bool util_force_fallbacks;

int mounts_open_dev_null(struct ab_err *err)
{
	int fd = open("/dev/null", O_PATH | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return ab_error(err, errno, "open /dev/null, the source of the masked paths");
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
		close(fd);
		return ab_error(err, 0, "/dev/null is not the null device (c 1:3): the masked paths cannot be masked");
	}
	return fd;
}

int mounts_make_cwd(const char *rootfs, const char *cwd, struct ab_err *err)
{
	_cleanup_close_ int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ab_error(err, errno, "open rootfs %s", rootfs);
	_cleanup_close_ int fd = -1;
	struct ab_err e;
	if (open_in_root(rootfd, cwd, O_PATH, &fd, &e) == 0 || e.code != ENOENT)
		return 0;
	return create_in_root(rootfd, cwd, CREATE_DIR, &fd, err);
}

/* The path of a masked or read-only path, opened inside the root: 1, or 0
 * when there is none (missing, or not a directory on the way), < 0 on
 * another error. */
static int open_listed(int rootfd, const char *path, int *fd, struct ab_err *err)
{
	struct ab_err e;
	if (open_in_root(rootfd, path, O_PATH, fd, &e) == 0)
		return 1;
	if (e.code == ENOENT || e.code == ENOTDIR || e.code == ELOOP)
		return 0;
	*err = e;
	return -1;
}

/* Without the mount API (before 5.2, or AGENTBOX_FORCE_FALLBACKS): bind by
 * the fds' paths, which name the runtime's /proc while the root is still
 * below the runtime's own. */
static int bind_by_fd_paths(int src, int target, bool recursive, const char *path, struct ab_err *err)
{
	char sp[FD_PATH_MAX], tp[FD_PATH_MAX];
	fd_path(src, sp);
	fd_path(target, tp);
	if (mount(sp, tp, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL) < 0)
		return ab_error(err, errno, "bind over %s", path);
	return 0;
}

/* The root of the mount just made on PATH (by the fallback), reopened inside
 * the root: it must be another mount than the target's (where statx tells),
 * of FS_TYPE (0: any). */
static int reopen_mounted(int rootfd, const char *path, int target, unsigned long fs_type, int *ret,
			  struct ab_err *err)
{
	if (open_in_root(rootfd, path, O_PATH, ret, err) < 0)
		return -1;
	struct statfs sf;
	uint64_t before = fd_mount_id(target), after = fd_mount_id(*ret);
	if (fstatfs(*ret, &sf) < 0 || (before && before == after) ||
	    (fs_type && (unsigned long)sf.f_type != fs_type))
		return ab_error(err, EXDEV, "%s changed while it was mounted on: refused", path);
	return 0;
}

/* The first masked directory: a new empty read-only tmpfs on target; *mask
 * becomes a handle of its root, for the other masked directories. */
static int mask_first_dir(int rootfd, const char *path, int target, int *mask, struct ab_err *err)
{
	const unsigned long attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int fsfd = util_force_fallbacks ? -1 : (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fsfd >= 0) {
		int mnt = -1;
		if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "size", "0", 0) == 0 &&
		    syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "mode", "500", 0) == 0 &&
		    syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
			mnt = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, attrs);
		int e = errno;
		close(fsfd);
		if (mnt < 0)
			return ab_error(err, e, "mask %s: make its tmpfs", path);
		if (mount_tree_attach(mnt, target, path, err) < 0) {
			close(mnt);
			return -1;
		}
		*mask = mnt;
		return 0;
	}
	char tp[FD_PATH_MAX];
	fd_path(target, tp);
	if (mount("tmpfs", tp, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=500") < 0)
		return ab_error(err, errno, "mask %s", path);
	return reopen_mounted(rootfd, path, target, TMPFS_MAGIC, mask, err);
}

/* Masks path: a file gets the null device bound over it, a directory an
 * empty read-only tmpfs. All masked directories share one tmpfs (the first is
 * mounted, the others are binds of it): each tmpfs is a superblock the kernel
 * builds at mount and tears down when the container exits. *dir_mask holds a
 * handle of the first one's root, -1 until it is made. */
static int mask_path(int rootfd, const char *path, int devnull, int *dir_mask, struct ab_err *err)
{
	_cleanup_close_ int fd = -1;
	int r = open_listed(rootfd, path, &fd, err);
	if (r <= 0)
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ab_error(err, errno, "mask %s", path);
	if (S_ISDIR(st.st_mode) && *dir_mask < 0)
		return mask_first_dir(rootfd, path, fd, dir_mask, err);
	/* a bind keeps the source mount's ro, nosuid, nodev and noexec */
	int src = S_ISDIR(st.st_mode) ? *dir_mask : devnull;
	r = mount_tree_bind(src, fd, false, 0, path, err);
	return r != -ENOSYS ? r : bind_by_fd_paths(src, fd, false, path, err);
}

/* A read-only path: bound on itself with every mount below it, read-only. */
static int readonly_path(int rootfd, const char *path, struct ab_err *err)
{
	_cleanup_close_ int fd = -1;
	int r = open_listed(rootfd, path, &fd, err);
	if (r <= 0)
		return r;
	r = mount_tree_bind(fd, fd, true, MOUNT_ATTR_RDONLY, path, err);
	if (r != -ENOSYS)
		return r;
	_cleanup_close_ int bound = -1;
	if (bind_by_fd_paths(fd, fd, true, path, err) < 0 || reopen_mounted(rootfd, path, fd, 0, &bound, err) < 0)
		return -1;
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	if (!util_force_fallbacks &&
	    syscall(SYS_mount_setattr, bound, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0)
		return 0;
	char p[FD_PATH_MAX];
	fd_path(bound, p);
	struct statvfs sv;
	unsigned long keep = statvfs(p, &sv) < 0 ? 0
			     : (sv.f_flag & ST_NOSUID ? MS_NOSUID : 0) | (sv.f_flag & ST_NODEV ? MS_NODEV : 0) |
				       (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0);
	if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL) < 0)
		return ab_error(err, errno, "make %s read-only", path);
	return 0;
}

int mounts_mask_and_protect(const char *root, const struct init_ctx *ctx, struct ab_err *err)
{
	const struct oci_linux *l = &ctx->config->linux_;
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int dir_mask = -1;
	if (rootfd < 0)
		return ab_error(err, errno, "open rootfs %s", root);
	int devnull = ctx->devnull_fd;
	_cleanup_close_ int by_path = -1;
	/* AGENTBOX_TEST_PROC_BY_PATH (procfs.h): the container's /dev/null, unchecked */
	if (procfs_test_by_path && open_in_root(rootfd, "/dev/null", O_PATH, &by_path, err) < 0)
		return -1;
	if (by_path >= 0)
		devnull = by_path;
	for (size_t i = 0; i < l->n_masked_paths; i++)
		if (mask_path(rootfd, l->masked_paths[i], devnull, &dir_mask, err) < 0)
			return ab_wrap(err, "linux.maskedPaths[%zu]", i);
	for (size_t i = 0; i < l->n_readonly_paths; i++)
		if (readonly_path(rootfd, l->readonly_paths[i], err) < 0)
			return ab_wrap(err, "linux.readonlyPaths[%zu]", i);
	return 0;
}
