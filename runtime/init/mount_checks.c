/* Checks where a config mount is made: see mount_checks.h. */
#include "mount_checks.h"
#include "config_mounts.h"
#include "procfs.h"
#include "rootpath.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

static bool on_procfs(int fd)
{
	struct statfs sf;
	return fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

int mount_check_target(const struct oci_mount *m, bool bind, int src, int target, struct ab_err *err)
{
	struct statfs sf;
	if (procfs_test_by_path)
		return 0;
	if (fstatfs(target, &sf) < 0)
		return ab_error(err, errno, "mount %s: its target", m->destination);
	if (sf.f_type != PROC_SUPER_MAGIC)
		return 0;
	switch (oci_mount_proc_dest(m->destination)) {
	case PROC_DEST_OVERMOUNT:
		return 0;
	case PROC_DEST_ROOT:
		if (bind ? on_procfs(src) : (m->type && streq(m->type, "proc")))
			return 0;
		break;
	default:
		break;
	}
	return ab_error(err, 0, "destination %s is inside /proc (a procfs is on its way there): refused",
			m->destination);
}

/* Does path lie at or below dir/sub? */
static bool below(const char *path, const char *dir, const char *sub)
{
	size_t n = strlen(dir), k = strlen(sub);
	return strncmp(path, dir, n) == 0 && strncmp(path + n, sub, k) == 0 &&
	       (path[n + k] == '/' || path[n + k] == 0);
}

/* The floor's refusal of a procfs or sysfs bound somewhere it would be a
 * second one, unmasked. src: the source's handle; reachable: the init opened
 * it (a prepared tree was resolved before any mount of the container). */
static int check_kernel_fs(const struct init_ctx *ctx, const struct oci_mount *m, int src, bool reachable,
			   struct ab_err *err)
{
	struct statfs sf;
	if (fstatfs(src, &sf) < 0)
		return ab_error(err, errno, "bind mount source %s", m->source);
	const char *what = sf.f_type == PROC_SUPER_MAGIC ? "a procfs" : sf.f_type == SYSFS_MAGIC ? "a sysfs" : NULL;
	char path[PATH_MAX] = "";
	if (!what && reachable) {
		/* where it really is, in the init's view: below the rootfs's /proc
		 * or /sys lie the container's own kernel file systems (cgroups too) */
		char link[FD_PATH_MAX];
		fd_path(src, link);   /* before pivot_root: the runtime's /proc */
		ssize_t n = readlink(link, path, sizeof path - 1);
		path[n > 0 ? n : 0] = 0;
		if (n > 0 && (below(path, ctx->rootfs, "/proc") || below(path, ctx->rootfs, "/sys")))
			what = "below the container's /proc or /sys";
	}
	if (!what)
		return 0;
	return ab_error(err, 0, "floor: the bind of %s (%s) would show what the floor masks, unmasked: refused (floor.refuse_privileged)",
			m->source, what);
}

int mount_open_source(const struct init_ctx *ctx, const struct oci_mount *m, int *tree, int *ret_src,
		      bool *is_dir, struct ab_err *err)
{
	*ret_src = -1;
	int e = ENOENT;
	/* the source itself wherever this namespace reaches it: such a bind
	 * keeps the flags the kernel locks for a less privileged namespace */
	if (!m->idmap && m->source) {
		*ret_src = open(m->source, O_PATH | O_CLOEXEC);
		e = errno;
		if (*ret_src >= 0)
			*tree = -1;
	}
	int fd = *ret_src >= 0 ? *ret_src : *tree;
	struct stat st;
	if (fd < 0)
		return ab_error(err, e, "bind mount source %s", m->source ? m->source : "(none)");
	if (fstat(fd, &st) < 0)
		return ab_error(err, errno, "bind mount source %s", m->source);
	*is_dir = S_ISDIR(st.st_mode);
	if (ctx->refuse_kernel_fs_binds && check_kernel_fs(ctx, m, fd, *ret_src >= 0, err) < 0)
		return -1;
	return 0;
}
