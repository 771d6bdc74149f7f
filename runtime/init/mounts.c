#include "mounts.h"
#include "mount_checks.h"
#include "mount_trees.h"
#include "rootpath.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

extern bool util_force_fallbacks;

/* Flags a bind remount must keep when the source mount has them locked. */
static unsigned long locked_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;
	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
	if (sv.f_flag & ST_RDONLY) f |= MS_RDONLY;
	return f;
}

#define PROPAGATION_FLAGS (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE)
#define REMOUNT_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | \
		       MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME | MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME)

static int apply_rec_attrs(int fd, const struct oci_mount *m, struct ab_err *err)
{
	if (!m->rec_attr_set && !m->rec_attr_clr)
		return 0;
	struct mount_attr attr = {.attr_set = m->rec_attr_set, .attr_clr = m->rec_attr_clr};
	/* atime modes are a field, not flags: clearing needs the whole mask */
	if (attr.attr_set & MOUNT_ATTR__ATIME)
		attr.attr_clr |= MOUNT_ATTR__ATIME;
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
		return ab_error(err, errno, "set recursive attributes on %s", m->destination);
	return 0;
}

/* Copy the tree at src into dst (for tmpcopyup): files, dirs, symlinks, modes, owners. */
static int copy_tree(int src, int dst, struct ab_err *err)
{
	int dup_src = fcntl(src, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup_src >= 0 ? fdopendir(dup_src) : NULL;
	if (!d) {
		if (dup_src >= 0)
			close(dup_src);
		return ab_error(err, errno, "tmpcopyup: read directory");
	}
	struct dirent *de;
	int r = 0;
	while ((de = readdir(d)) && r == 0) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(src, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dst, de->d_name, st.st_mode & 07777) < 0 && errno != EEXIST) {
				r = ab_error(err, errno, "tmpcopyup: mkdir %s", de->d_name);
				break;
			}
			int s2 = openat(src, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int d2 = openat(dst, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s2 >= 0 && d2 >= 0)
				r = copy_tree(s2, d2, err);
			if (s2 >= 0) close(s2);
			if (d2 >= 0) close(d2);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(src, de->d_name, target, sizeof target - 1);
			if (n >= 0) {
				target[n] = 0;
				(void)symlinkat(target, dst, de->d_name);
			}
		} else if (S_ISREG(st.st_mode)) {
			int in = openat(src, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			int out = openat(dst, de->d_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
			if (in >= 0 && out >= 0) {
				char buf[65536];
				ssize_t n;
				while ((n = read(in, buf, sizeof buf)) > 0)
					if (write_all(out, buf, (size_t)n) < 0)
						break;
			}
			if (in >= 0) close(in);
			if (out >= 0) close(out);
		} else {
			(void)mknodat(dst, de->d_name, st.st_mode, st.st_rdev);
		}
		(void)fchownat(dst, de->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
	}
	closedir(d);
	return r;
}

/* After mounting on a target, its old fd still names what lies beneath: reopen. */
static int reopen_target(int rootfd, const char *dest, int *fd, char p[FD_PATH_MAX], struct ab_err *err)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	if (open_in_root(rootfd, dest, O_PATH, fd, err) < 0)
		return -1;
	/* what the path leads to now must be the root of a mount (where statx
	 * tells, 5.8): a path swapped meanwhile in a directory another container
	 * shares is refused, not remounted (binds go by handle: bind_by_handle) */
	struct statx stx;
	if (statx(*fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &stx) == 0 &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return ab_error(err, EXDEV, "%s changed while it was mounted on: refused", dest);
	fd_path(*fd, p);
	return 0;
}

/* One bind per v1 hierarchy (and the hybrid cgroup2 one) the container has a
 * cgroup in, into DIR, the cgroup tmpfs, which is the working directory. */
static int mount_cgroup_v1_hierarchies(int dir, const struct init_ctx *ctx, const char *dest,
				       unsigned long flags, struct ab_err *err)
{
	_cleanup_closedir_ DIR *d = opendir("/sys/fs/cgroup");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		unsigned char type = de->d_type;
		struct stat st;
		if (type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		if (de->d_name[0] == '.' || (type != DT_DIR && type != DT_LNK))
			continue;
		char src[PATH_MAX + 64];
		if (type == DT_LNK) {     /* cpu -> cpu,cpuacct */
			char t[PATH_MAX];
			ssize_t n = readlinkat(dirfd(d), de->d_name, t, sizeof t - 1);
			if (n > 0) {
				t[n] = 0;
				(void)symlinkat(t, dir, de->d_name);
			}
			continue;
		}
		snprintf(src, sizeof src, "/sys/fs/cgroup/%s%s", de->d_name, ctx->cgroup_path);
		if (mkdirat(dir, de->d_name, 0755) < 0 && errno != EEXIST)
			return ab_error(err, errno, "mkdir %s/%s", dest, de->d_name);
		if (mount(src, de->d_name, NULL, MS_BIND | MS_REC, NULL) < 0) {
			/* a hierarchy the container has no cgroup in is left out */
			if (errno == ENOENT) {
				(void)unlinkat(dir, de->d_name, AT_REMOVEDIR);
				continue;
			}
			return ab_error(err, errno, "bind cgroup %s", src);
		}
		if (mount(NULL, de->d_name, NULL, MS_REMOUNT | MS_BIND | flags | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return ab_error(err, errno, "remount cgroup %s", src);
	}
	return 0;
}

/* The cgroup mount: a tmpfs with one bind per hierarchy (v1/hybrid), or the v2
 * tree, each showing only the container's own cgroup. */
static int mount_cgroup(int rootfd, const struct init_ctx *ctx, const struct oci_mount *m,
			struct ab_err *err)
{
	_cleanup_close_ int target = -1;
	char p[FD_PATH_MAX], src[PATH_MAX + 64];
	if (create_in_root(rootfd, m->destination, CREATE_DIR, &target, err) < 0)
		return ab_wrap(err, "mount cgroup at %s", m->destination);
	fd_path(target, p);
	unsigned long ro = m->flags & MS_RDONLY;
	unsigned long flags = (m->flags & ~(MS_BIND | MS_REC)) & ~PROPAGATION_FLAGS;
	if (ctx->cgroup_mode == CGROUP_MODE_V2) {
		/* the cgroup2 mount: /sys/fs/cgroup/unified on a hybrid host */
		if (cgroup_v2_path(ctx->cgroup_path, src, sizeof src) < 0)
			return ab_error(err, ENOENT, "bind cgroup %s at %s: no cgroup2 mount", ctx->cgroup_path, m->destination);
		if (mount(src, p, NULL, MS_BIND | MS_REC, NULL) < 0)
			return ab_error(err, errno, "bind cgroup %s at %s", src, m->destination);
		if (reopen_target(rootfd, m->destination, &target, p, err) < 0)
			return -1;
		if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | flags | locked_flags(src), NULL) < 0)
			return ab_error(err, errno, "remount cgroup at %s", m->destination);
		return 0;
	}
	if (mount("tmpfs", p, "tmpfs", (flags & ~MS_RDONLY) | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") < 0)
		return ab_error(err, errno, "mount tmpfs for cgroup at %s", m->destination);
	if (reopen_target(rootfd, m->destination, &target, p, err) < 0)
		return -1;
	if (ctx->cgroup_mode != CGROUP_MODE_DISABLED) {
		/* The tmpfs is new and ours, in a mount namespace nothing else has
		 * entered: names under it are resolved plainly, relative to it as the
		 * working directory (no /proc/self/fd walk per mount), and the
		 * bundle, which relative mount sources need, is the cwd again after. */
		_cleanup_close_ int back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (back < 0 || fchdir(target) < 0)
			return ab_error(err, errno, "enter the cgroup tmpfs at %s", m->destination);
		int r = mount_cgroup_v1_hierarchies(target, ctx, m->destination, flags, err);
		if (fchdir(back) < 0 && r == 0)
			r = ab_error(err, errno, "back to the bundle directory");
		if (r < 0)
			return -1;
	}
	if (ro && mount(NULL, p, NULL, MS_REMOUNT | flags | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") < 0)
		return ab_error(err, errno, "remount cgroup tmpfs at %s read-only", m->destination);
	return 0;
}

/* A read-only tmpfs that later mounts or the device nodes go into (/dev) is
 * mounted writable and made read-only in mounts_finalize, once their mount
 * points are made in it, as runc does for /dev. (A tmpfs starts empty; the
 * kernel's file systems have their directories already and take no mkdir.) */
static bool read_only_later(const struct oci_config *c, size_t idx)
{
	const struct oci_mount *m = &c->mounts[idx];
	if (!(m->flags & MS_RDONLY) || (m->flags & MS_BIND) || !m->type || !streq(m->type, "tmpfs"))
		return false;
	if (streq(m->destination, "/dev"))
		return true;
	size_t len = strlen(m->destination);
	for (size_t j = idx + 1; j < c->n_mounts; j++) {
		const char *d = c->mounts[j].destination;
		if (len == 1 || (strncmp(d, m->destination, len) == 0 && d[len] == '/'))
			return true;
	}
	return false;
}

/* Does a tmpfs's data set its root's mode? */
static bool tmpfs_has_mode(const char *data)
{
	for (const char *p = data; p && *p;) {
		if (strncmp(p, "mode=", 5) == 0)
			return true;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return false;
}

/* The bind (or the tree) on the target, then its own flags in a remount. */
static int mount_bind(int rootfd, const struct oci_mount *m, int tree, int src, unsigned long flags, int *target,
		      char p[FD_PATH_MAX], struct ab_err *err)
{
	char sp[FD_PATH_MAX];
	if (tree >= 0) {
		if (mount_tree_attach(tree, *target, m->destination, err) < 0)
			return -1;
	} else if (fd_path(src, sp), mount(sp, p, NULL, MS_BIND | (m->recursive_bind ? MS_REC : 0), NULL) < 0)
		return ab_error(err, errno, "bind mount %s on %s", m->source, m->destination);
	if (flags & REMOUNT_FLAGS) {
		if (reopen_target(rootfd, m->destination, target, p, err) < 0)
			return -1;
		/* the bind's own flags, which it has from its source (also
		 * where the source itself is out of this namespace's reach) */
		unsigned long keep = locked_flags(p);
		if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | (flags & REMOUNT_FLAGS) | (keep & ~MS_RDONLY), NULL) < 0)
			return ab_error(err, errno, "remount %s with its options", m->destination);
	}
	return 0;
}

/* The attributes a bind remount with FLAGS (REMOUNT_FLAGS) sets, as
 * mount_setattr takes them: what it names is set, read-only is cleared
 * where it is not named (the remount would clear it), the atime mode is
 * replaced where one is named. The bind keeps its source's other flags. */
static struct mount_attr remount_attr(unsigned long flags)
{
	struct mount_attr a = {0};
	a.attr_set |= (flags & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0) | (flags & MS_NOSUID ? MOUNT_ATTR_NOSUID : 0) |
		      (flags & MS_NODEV ? MOUNT_ATTR_NODEV : 0) | (flags & MS_NOEXEC ? MOUNT_ATTR_NOEXEC : 0) |
		      (flags & MS_NODIRATIME ? MOUNT_ATTR_NODIRATIME : 0);
	a.attr_clr |= flags & MS_RDONLY ? 0 : MOUNT_ATTR_RDONLY;
	uint64_t atime = flags & MS_NOATIME ? MOUNT_ATTR_NOATIME : flags & MS_STRICTATIME ? MOUNT_ATTR_STRICTATIME
		       : flags & MS_RELATIME ? MOUNT_ATTR_RELATIME : (uint64_t)-1;
	if (atime != (uint64_t)-1) {
		a.attr_set |= atime;
		a.attr_clr |= MOUNT_ATTR__ATIME;
	}
	return a;
}

/* The bind by handle: a copy of the source (or the tree the runtime
 * prepared), its own flags set before anyone can see it, attached on the
 * target; *mnt: a handle of the new mount, for what follows (no path is
 * resolved again after the mount). -ENOSYS, err untouched, where the kernel
 * lacks the mount API (mount_setattr: 5.12) or AGENTBOX_FORCE_FALLBACKS:
 * mount_bind does it by the fds' paths then. */
static int bind_by_handle(const struct oci_mount *m, int tree, int src, unsigned long flags, int target, int *mnt,
			  struct ab_err *err)
{
	if (util_force_fallbacks)
		return -ENOSYS;
	_cleanup_close_ int fd = tree >= 0 ? fcntl(tree, F_DUPFD_CLOEXEC, 3)
				: (int)syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
									(m->recursive_bind ? AT_RECURSIVE : 0));
	if (fd < 0)
		return errno == ENOSYS ? -ENOSYS : ab_error(err, errno, "bind mount %s on %s", m->source, m->destination);
	if (flags & REMOUNT_FLAGS) {
		struct mount_attr a = remount_attr(flags);
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
			return errno == ENOSYS ? -ENOSYS
					       : ab_error(err, errno, "remount %s with its options", m->destination);
	}
	if (mount_tree_attach(fd, target, m->destination, err) < 0)
		return -1;
	*mnt = TAKE_FD(fd);
	return 0;
}

/* Propagation and recursive attributes, on the new mount's handle. */
static int set_propagation_on(int mnt, const struct oci_mount *m, struct ab_err *err)
{
	struct mount_attr a = {.propagation = m->propagation & ~MS_REC};
	if (m->propagation && syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH | (m->propagation & MS_REC ? AT_RECURSIVE : 0),
				      &a, sizeof a) < 0)
		return ab_error(err, errno, "set propagation of %s", m->destination);
	return apply_rec_attrs(mnt, m, err);
}

/* No private netns in a userns: fall back to the host's /sys, read-only
 * with every mount the host has below it (tracefs, cgroups, bpf ...): a
 * plain remount would reach /sys alone. mount's result; -2 when the target
 * could not be reopened (err says why). */
static int mount_host_sys(int rootfd, const struct oci_mount *m, int *target, char p[FD_PATH_MAX],
			  struct ab_err *err)
{
	int r = mount("/sys", p, NULL, MS_BIND | MS_REC, NULL);
	if (r == 0) {
		if (reopen_target(rootfd, m->destination, target, p, err) < 0)
			return -2;
		struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						    MOUNT_ATTR_NOEXEC};
		r = (int)syscall(SYS_mount_setattr, *target, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof ro);
		if (r < 0 && errno == ENOSYS)   /* before Linux 5.12: /sys itself at least */
			r = mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
				  NULL);
	}
	return r;
}

/* A file system of its type (tmpfs, proc, sysfs, mqueue, ...) on the target. */
static int mount_fs(int rootfd, const struct oci_mount *m, const char *type, unsigned long flags, int *target,
		    char p[FD_PATH_MAX], struct ab_err *err)
{
	const char *src = m->source ? m->source : type;
	const char *data = m->data;
	char with_mode[4096];
	if (streq(type, "tmpfs") && !tmpfs_has_mode(data)) {
		/* as runc and crun: a tmpfs without mode= keeps the mode of
		 * the directory it covers (the kernel would make it 1777) */
		struct stat st;
		if (fstat(*target, &st) == 0 && S_ISDIR(st.st_mode) &&
		    snprintf(with_mode, sizeof with_mode, "%s%smode=%o", data ? data : "", data ? "," : "",
			     (unsigned)(st.st_mode & 07777)) < (int)sizeof with_mode)
			data = with_mode;
	}
	int r = mount(src, p, type, flags, data);
	if (r < 0 && streq(type, "sysfs") && (errno == EPERM || errno == EBUSY)) {
		r = mount_host_sys(rootfd, m, target, p, err);
		if (r == -2)
			return -1;
	}
	if (r < 0 && streq(type, "mqueue") && errno == EPERM) {
		r = mount("/dev/mqueue", p, NULL, MS_BIND | MS_REC, NULL);
	}
	if (r < 0)
		return ab_error(err, errno, "mount %s (type %s, options \"%s\") on %s", src, type,
				data ? data : "", m->destination);
	return 0;
}

/* tmpcopyup: what lay under the new tmpfs, copied into it. */
static int copy_up(int rootfd, const struct oci_mount *m, int under, struct ab_err *err)
{
	_cleanup_close_ int top = -1;
	if (open_in_root(rootfd, m->destination, O_RDONLY | O_DIRECTORY, &top, err) < 0)
		return -1;
	if (copy_tree(under, top, err) < 0)
		return ab_wrap(err, "mount %s", m->destination);
	return 0;
}

/* Propagation and recursive attributes, on the mount as it is now. */
static int set_propagation_and_attrs(int rootfd, const struct oci_mount *m, int *target, char p[FD_PATH_MAX],
				     struct ab_err *err)
{
	if (reopen_target(rootfd, m->destination, target, p, err) < 0)
		return -1;
	if (m->propagation && mount(NULL, p, NULL, m->propagation, NULL) < 0)
		return ab_error(err, errno, "set propagation of %s", m->destination);
	if (apply_rec_attrs(*target, m, err) < 0)
		return -1;
	return 0;
}

/* Mount config.json's mounts[idx] inside the root: its target made or
 * opened in the root, the bind or file system, tmpcopyup, propagation. */
static int do_mount(int rootfd, const struct init_ctx *ctx, size_t idx, const struct oci_mount *m,
		    struct ab_err *err)
{
	const char *type = m->type ? m->type : "";
	bool bind = (m->flags & MS_BIND) || streq(type, "bind");
	if (streq(type, "cgroup") || streq(type, "cgroup2"))
		return mount_cgroup(rootfd, ctx, m, err);

	bool is_dir = true;
	int tree = ctx->mount_trees ? ctx->mount_trees[idx] : -1;
	/* a bind's source: opened once, checked, bound from that handle */
	_cleanup_close_ int src = -1;
	if (bind && mount_open_source(ctx, m, &tree, &src, &is_dir, err) < 0)
		return -1;
	/* procfs and sysfs only on a real directory, as runc: a symlink there
	 * in an image could only be a trick (the masked paths would miss) */
	bool kernel_fs = streq(type, "proc") || streq(type, "sysfs");
	_cleanup_close_ int target = -1;
	if (create_in_root(rootfd, m->destination, (is_dir ? CREATE_DIR : 0) | (kernel_fs ? CREATE_NO_SYMLINKS : 0),
			   &target, err) < 0) {
		if (kernel_fs && err->code == ELOOP)
			return ab_wrap(err, "%s must be mounted on ordinary directory", type);
		return ab_wrap(err, "mount %s", m->destination);
	}
	/* where it really leads, now that the earlier mounts exist */
	if (mount_check_target(m, bind, src >= 0 ? src : tree, target, err) < 0)
		return -1;
	char p[FD_PATH_MAX];
	fd_path(target, p);
	unsigned long flags = m->flags & ~PROPAGATION_FLAGS;
	if (read_only_later(ctx->config, idx))
		flags &= ~MS_RDONLY;

	_cleanup_close_ int under = -1;
	if (m->tmpcopyup)
		under = openat(target, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	_cleanup_close_ int mnt = -1;
	int r = bind ? bind_by_handle(m, tree, src, flags, target, &mnt, err) : -ENOSYS;
	if (r == -ENOSYS)
		r = bind ? mount_bind(rootfd, m, tree, src, flags, &target, p, err)
			 : mount_fs(rootfd, m, type, flags, &target, p, err);
	if (r < 0)
		return -1;
	if (m->tmpcopyup && under >= 0 && copy_up(rootfd, m, under, err) < 0)
		return -1;
	if (!(m->propagation || m->rec_attr_set || m->rec_attr_clr))
		return 0;
	return mnt >= 0 ? set_propagation_on(mnt, m, err) : set_propagation_and_attrs(rootfd, m, &target, p, err);
}

struct default_dev {
	const char *path;
	unsigned major, minor;
};
static const struct default_dev default_devices[] = {
	{"/dev/null", 1, 3}, {"/dev/zero", 1, 5}, {"/dev/full", 1, 7},
	{"/dev/random", 1, 8}, {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0},
};

/* The directory the last device went into, kept open for the next: the
 * default devices all go into /dev. */
struct dev_parent {
	char path[PATH_MAX];
	int fd;
};

/* No mknod in a user namespace: bind the host's node at the same path onto
 * an empty file, as runc does, once it is the very device asked for (opened
 * once, checked, bound from that handle), nosuid and noexec as crun binds
 * it: a node is for reading and writing, never a program's. */
static int bind_host_device(int parent, const char *name, const char *path, mode_t kind, unsigned major,
			    unsigned minor, struct ab_err *err)
{
	_cleanup_close_ int src = open(path, O_PATH | O_CLOEXEC);
	struct stat st;
	if (src < 0 || fstat(src, &st) < 0)
		return ab_error(err, errno, "device %s: no mknod in a user namespace, and the host has no %s to bind", path, path);
	if ((st.st_mode & S_IFMT) != kind || major(st.st_rdev) != major || minor(st.st_rdev) != minor)
		return ab_error(err, 0, "device %s: no mknod in a user namespace, and the host's %s is not %c %u:%u to bind",
				path, path, kind == S_IFBLK ? 'b' : 'c', major, minor);
	int fd = openat(parent, name, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno != EEXIST)
		return ab_error(err, errno, "device %s: create its mount point", path);
	if (fd >= 0)
		close(fd);
	/* the mount point by handle, in the directory made without symlinks */
	_cleanup_close_ int target = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (target < 0 || fstat(target, &st) < 0)
		return ab_error(err, errno, "device %s: open its mount point", path);
	if (!S_ISREG(st.st_mode) && (st.st_mode & S_IFMT) != kind)
		return ab_error(err, 0, "device %s: its mount point is neither a file nor such a node: refused", path);
	int r = mount_tree_bind(src, target, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, path, err);
	if (r != -ENOSYS)
		return r;
	char sp[FD_PATH_MAX], p[FD_PATH_MAX];
	fd_path(src, sp);
	fd_path(target, p);
	if (mount(sp, p, NULL, MS_BIND, NULL) < 0)
		return ab_error(err, errno, "bind device %s", path);
	/* the bind is on the mount point now: the name leads to it */
	_cleanup_close_ int bound = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (bound < 0)
		return ab_error(err, errno, "device %s: reopen", path);
	fd_path(bound, p);
	if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NOEXEC | locked_flags(p), NULL) < 0)
		return ab_error(err, errno, "device %s: make it nosuid, noexec", path);
	return 0;
}

static int make_device(int rootfd, struct dev_parent *dp, const char *path, char type, unsigned major,
		       unsigned minor, mode_t perm, uid_t uid, gid_t gid, bool bind, struct ab_err *err)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	char *slash = strrchr(buf, '/');
	*slash = 0;
	const char *name = slash + 1;
	const char *dir = buf[0] ? buf : "/";
	if (dp->fd < 0 || !streq(dp->path, dir)) {
		if (dp->fd >= 0)
			close(dp->fd);
		dp->fd = -1;
		/* a node is made only in a real directory, never where an
		 * image's symlink points */
		if (create_in_root(rootfd, dir, CREATE_DIR | CREATE_NO_SYMLINKS, &dp->fd, err) < 0)
			return ab_wrap(err, "device %s", path);
		snprintf(dp->path, sizeof dp->path, "%s", dir);
	}
	int parent = dp->fd;
	mode_t kind = type == 'b' ? S_IFBLK : type == 'p' ? S_IFIFO : S_IFCHR;
	if (!bind || kind == S_IFIFO) {
		/* the caller cleared the umask: the mode is exact, no chmod after */
		int r = mknodat(parent, name, kind | (perm & 07777), makedev(major, minor));
		if (r < 0 && errno == EEXIST && unlinkat(parent, name, 0) == 0)
			r = mknodat(parent, name, kind | (perm & 07777), makedev(major, minor));
		if (r == 0) {
			if (fchownat(parent, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
				return ab_error(err, errno, "chown %s", path);
			return 0;
		}
		/* EPERM: a user namespace we joined, or a runtime in one (rootless) */
		if (errno != EPERM || kind == S_IFIFO)
			return ab_error(err, errno, "mknod %s", path);
	}
	return bind_host_device(parent, name, path, kind, major, minor, err);
}

static int setup_devices(int rootfd, const struct init_ctx *ctx, struct ab_err *err)
{
	const struct oci_linux *l = &ctx->config->linux_;
	struct dev_parent dp = {.fd = -1};
	mode_t old_umask = umask(0);
	int r = 0;
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(default_devices); i++) {
		const struct default_dev *d = &default_devices[i];
		bool overridden = false;
		for (size_t j = 0; j < l->n_devices; j++)
			if (streq(l->devices[j].path, d->path))
				overridden = true;
		if (!overridden)
			r = make_device(rootfd, &dp, d->path, 'c', d->major, d->minor, 0666, 0, 0,
					ctx->new_userns || ctx->nodev_mounts, err);
	}
	for (size_t i = 0; r == 0 && i < l->n_devices; i++) {
		const struct oci_device *d = &l->devices[i];
		mode_t mode = d->has_file_mode ? d->file_mode : 0666;
		r = make_device(rootfd, &dp, d->path, d->type, (unsigned)d->major, (unsigned)d->minor, mode,
				d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0,
				ctx->new_userns || ctx->nodev_mounts, err);
	}
	umask(old_umask);
	if (dp.fd >= 0)
		close(dp.fd);
	if (r < 0)
		return -1;
	static const char *const links[][2] = {
		{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
		{"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
		{"/proc/kcore", "/dev/core"},
	};
	_cleanup_close_ int dev = -1;
	if (open_in_root(rootfd, "/dev", O_PATH | O_DIRECTORY, &dev, err) < 0)
		return ab_wrap(err, "open /dev in the rootfs");
	for (size_t i = 0; i < ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][0], dev, links[i][1] + 5) < 0 && errno != EEXIST)
			return ab_error(err, errno, "symlink %s", links[i][1]);
	/* /dev/ptmx must be the container's devpts instance */
	struct stat st;
	if (fstatat(dev, "pts/ptmx", &st, 0) == 0) {
		(void)unlinkat(dev, "ptmx", 0);
		if (symlinkat("pts/ptmx", dev, "ptmx") < 0)
			return ab_error(err, errno, "symlink /dev/ptmx");
	}
	return 0;
}

/* Without a device cgroup nothing but the mount a node sits on stands between
 * the container and a device node it makes (CAP_MKNOD) or finds (in its image,
 * in a bound directory): so every mount of the container is nodev but its
 * devpts instances, and setup_devices binds the allowed nodes from the host
 * (each bind keeps its source's flags). */
static int nodev_everywhere(int rootfd, const struct oci_config *c, struct ab_err *err)
{
	struct mount_attr nodev = {.attr_set = MOUNT_ATTR_NODEV};
	if (syscall(SYS_mount_setattr, rootfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &nodev, sizeof nodev) < 0)
		return ab_error(err, errno, "no device cgroup: make the container's mounts nodev");
	struct mount_attr dev = {.attr_clr = MOUNT_ATTR_NODEV};
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct oci_mount *m = &c->mounts[i];
		if (!m->type || !streq(m->type, "devpts"))
			continue;
		_cleanup_close_ int fd = -1;
		if (open_in_root(rootfd, m->destination, O_PATH | O_DIRECTORY, &fd, err) < 0)
			return ab_wrap(err, "mounts[%zu]", i);
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &dev, sizeof dev) < 0)
			return ab_error(err, errno, "mounts[%zu]: devpts at %s: clear nodev", i, m->destination);
	}
	return 0;
}

/* The refused file (a read-only tree the runtime made), after the config's
 * mounts: a tmpfs on /run comes first. Best effort: a root file system
 * where its place cannot be made (read-only at its source, a file in the
 * way) goes without it, and the container runs as it would have. */
static void mount_refused_file(int rootfd, int tree)
{
	struct ab_err e;
	_cleanup_close_ int target = -1;
	if (create_in_root(rootfd, REFUSED_FILE_BOX, 0, &target, &e) < 0)
		return;
	(void)mount_tree_attach(tree, target, REFUSED_FILE_BOX, &e);
}

int mounts_setup(const struct init_ctx *ctx, struct ab_err *err)
{
	const struct oci_config *c = ctx->config;
	/* Nothing we mount may propagate back to the host. */
	unsigned long prop = c->linux_.rootfs_propagation_flags ? c->linux_.rootfs_propagation_flags
								 : (MS_SLAVE | MS_REC);
	if (prop & (MS_SHARED | MS_UNBINDABLE))
		prop = MS_SLAVE | MS_REC;   /* made so after pivot_root: the rootfs is bound first */
	if (mount(NULL, "/", NULL, prop, NULL) < 0)
		return ab_error(err, errno, "make / %s", (prop & MS_PRIVATE) ? "private" : "slave");
	if (mount(ctx->rootfs, ctx->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return ab_error(err, errno, "bind rootfs %s", ctx->rootfs);
	/* the parent of the rootfs must not be shared, or pivot_root fails */
	_cleanup_close_ int rootfd = open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ab_error(err, errno, "open rootfs %s", ctx->rootfs);
	for (size_t i = 0; i < c->n_mounts; i++) {
		if (do_mount(rootfd, ctx, i, &c->mounts[i], err) < 0)
			return ab_wrap(err, "mounts[%zu]", i);
	}
	if (ctx->refused_fd >= 0)
		mount_refused_file(rootfd, ctx->refused_fd);
	if (ctx->nodev_mounts && nodev_everywhere(rootfd, c, err) < 0)
		return -1;
	if (setup_devices(rootfd, ctx, err) < 0)
		return -1;
	return 0;
}

int mounts_bind_console(const char *rootfs, const char *slave_path, struct ab_err *err)
{
	_cleanup_close_ int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int target = -1;
	if (rootfd < 0)
		return ab_error(err, errno, "open rootfs");
	if (create_in_root(rootfd, "/dev/console", CREATE_NO_SYMLINKS, &target, err) < 0)
		return ab_wrap(err, "create /dev/console");
	char p[FD_PATH_MAX];
	fd_path(target, p);
	if (mount(slave_path, p, NULL, MS_BIND, NULL) < 0)
		return ab_error(err, errno, "bind %s on /dev/console", slave_path);
	return 0;
}

/* mountinfo's octal escapes (\040 for a space) undone, in place. */
static void unescape_mountinfo(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
		    p[3] <= '7') {
			*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = 0;
}

/* Without pivot_root the host's mounts stay in the container's mount
 * namespace, out of the chroot's reach but still "fully visible" to the
 * kernel: a procfs or sysfs whole of it lets a nested user namespace mount a
 * fresh one, unmasked. As runc does, each such mount outside the rootfs is
 * detached (or, where that is refused, covered with a tmpfs) first. */
static int hide_host_kernel_fs(const char *rootfs, struct ab_err *err)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return ab_error(err, errno, "--no-pivot: read /proc/self/mountinfo");
	size_t rlen = strlen(rootfs);
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *sep = strstr(line, " - ");
		char fstype[32] = "";
		if (!sep || sscanf(sep + 3, "%31s", fstype) != 1 || (!streq(fstype, "proc") && !streq(fstype, "sysfs")))
			continue;
		*sep = 0;
		char *save = NULL, *field[5];
		size_t n = 0;
		for (char *t = strtok_r(line, " ", &save); t && n < 5; t = n < 5 ? strtok_r(NULL, " ", &save) : NULL)
			field[n++] = t;
		if (n < 5 || !streq(field[3], "/"))
			continue;
		char *mp = field[4];
		unescape_mountinfo(mp);
		if (strncmp(mp, rootfs, rlen) == 0 && (mp[rlen] == '/' || mp[rlen] == 0))
			continue;
		if (mount(NULL, mp, NULL, MS_SLAVE | MS_REC, NULL) < 0 && errno != EINVAL && errno != ENOENT)
			return ab_error(err, errno, "--no-pivot: make %s slave", mp);
		if (umount2(mp, MNT_DETACH) == 0 || errno == ENOENT)
			continue;
		if ((errno != EINVAL && errno != EPERM) || mount("tmpfs", mp, "tmpfs", MS_RDONLY, "size=0") < 0)
			return ab_error(err, errno, "--no-pivot: hide the host's %s at %s", fstype, mp);
	}
	return 0;
}

int mounts_enter_rootfs(const char *rootfs, bool no_pivot, struct ab_err *err)
{
	if (chdir(rootfs) < 0)
		return ab_error(err, errno, "chdir %s", rootfs);
	if (no_pivot) {
		if (hide_host_kernel_fs(rootfs, err) < 0)
			return -1;
		if (mount(rootfs, "/", NULL, MS_MOVE, NULL) < 0)
			return ab_error(err, errno, "move %s to /", rootfs);
		if (chroot(".") < 0)
			return ab_error(err, errno, "chroot %s", rootfs);
	} else {
		if (syscall(SYS_pivot_root, ".", ".") < 0)
			return ab_error(err, errno, "pivot_root %s", rootfs);
		/* the old root is stacked on "."; detach it without touching the host */
		if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
			return ab_error(err, errno, "make old root slave");
		if (umount2(".", MNT_DETACH) < 0)
			return ab_error(err, errno, "detach old root");
	}
	if (chdir("/") < 0)
		return ab_error(err, errno, "chdir /");
	return 0;
}

/* The read-only file systems read_only_later left writable. */
static int read_only_now(const struct oci_config *c, struct ab_err *err)
{
	_cleanup_close_ int rootfd = -1;
	for (size_t i = 0; i < c->n_mounts; i++) {
		if (!read_only_later(c, i))
			continue;
		if (rootfd < 0 && (rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return ab_error(err, errno, "open /");
		_cleanup_close_ int fd = -1;
		if (open_in_root(rootfd, c->mounts[i].destination, O_PATH, &fd, err) < 0)
			return ab_wrap(err, "mounts[%zu]: make it read-only", i);
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
			return ab_error(err, errno, "mounts[%zu]: make %s read-only", i, c->mounts[i].destination);
	}
	return 0;
}

int mounts_finalize(const struct oci_config *c, struct ab_err *err)
{
	const struct oci_linux *l = &c->linux_;
	if (read_only_now(c, err) < 0)
		return -1;
	if (c->root_readonly) {
		if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | (locked_flags("/") & ~MS_RDONLY), NULL) < 0)
			return ab_error(err, errno, "remount root read-only");
	}
	unsigned long late = l->rootfs_propagation_flags & (MS_SHARED | MS_UNBINDABLE);
	if (late && mount(NULL, "/", NULL, late | MS_REC, NULL) < 0)
		return ab_error(err, errno, "linux.rootfsPropagation: make the root %s",
				late & MS_SHARED ? "shared" : "unbindable");
	return 0;
}
