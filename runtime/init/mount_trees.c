/* Mount sources opened by the runtime before clone, still in the host's mount
 * and user namespaces, and handed to the init as detached trees (open_tree)
 * that it attaches at the destination (move_mount).
 *
 * Id-mapped mounts (runtime-spec 1.2: a mount's uidMappings/gidMappings and
 * its "idmap"/"ridmap" options): the tree gets a user namespace made from the
 * mappings (mount_setattr with MOUNT_ATTR_IDMAP). A file owned by id N on disk
 * shows as the host id its mapping gives N ("containerID hostID size", as for
 * the container's user namespace). Without mappings of its own the mount
 * takes the container's. Where the kernel or the file system cannot do it the
 * mount is refused, never made without the mapping.
 *
 * Binds of a container with a user namespace of its own: the init, already in
 * that namespace, cannot enter a directory only the host's root may (0700
 * root's), so a bind of a source below one would fail; a plain clone of the
 * source made here serves it, as runc and crun do. The init binds the source
 * itself wherever it can, so those binds keep the flags the kernel locks for
 * a less privileged namespace. */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mount_trees.h"
#include "idmap.h"
#include "rootpath.h"
#include "log.h"
#include "util.h"

/* The source as the host sees it: relative ones are the bundle's. */
static void source_path(const struct oci_mount *m, const char *bundle, char *buf, size_t len)
{
	if (m->source[0] == '/')
		snprintf(buf, len, "%s", m->source);
	else
		snprintf(buf, len, "%s/%s", bundle, m->source);
}

static int idmapped_tree(const struct oci_config *c, const struct oci_mount *m, const char *bundle,
			 struct ab_err *err)
{
	const struct oci_id_mapping *uids = m->uid_mappings, *gids = m->gid_mappings;
	size_t n_uids = m->n_uid_mappings, n_gids = m->n_gid_mappings;
	if (!n_uids) {
		uids = c->linux_.uid_mappings, n_uids = c->linux_.n_uid_mappings;
		gids = c->linux_.gid_mappings, n_gids = c->linux_.n_gid_mappings;
	}
	if (!n_uids || !n_gids)
		return ab_error(err, 0, "an id-mapped mount needs uidMappings and gidMappings, its own or the container's user namespace's");
	if (!m->source)
		return ab_error(err, 0, "an id-mapped mount needs a source");
	char src[PATH_MAX];
	source_path(m, bundle, src, sizeof src);
	unsigned flags = (m->recursive_bind ? IDMAP_TREE_RECURSIVE_BIND : 0) |
			 (m->recursive_idmap ? IDMAP_TREE_RECURSIVE_IDMAP : 0);
	return idmap_tree(src, flags, uids, n_uids, gids, n_gids, err);
}

/* A plain clone of a bind's source, or -1 (logged at debug: the init tries
 * the source itself and reports what is wrong with it). */
static int plain_tree(const struct oci_mount *m, const char *bundle)
{
	if (!m->source)
		return -1;
	char src[PATH_MAX];
	source_path(m, bundle, src, sizeof src);
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->recursive_bind ? AT_RECURSIVE : 0);
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, src, flags);
	if (tree < 0)
		log_debug("open_tree %s: %s (the init binds it itself)", src, strerror(errno));
	return tree;
}

static bool wants_plain_tree(const struct oci_mount *m, bool new_userns)
{
	return new_userns && !m->idmap && (m->flags & MS_BIND);   /* the parser sets it for type bind */
}

int mount_trees_prepare(const struct oci_config *c, const char *bundle, bool new_userns, int min_fd,
			int **ret_fds, struct ab_err *err)
{
	*ret_fds = NULL;
	size_t n = 0;
	for (size_t i = 0; i < c->n_mounts; i++)
		n += c->mounts[i].idmap || wants_plain_tree(&c->mounts[i], new_userns);
	if (!n)
		return 0;
	int *fds = xcalloc(c->n_mounts, sizeof *fds);
	for (size_t i = 0; i < c->n_mounts; i++)
		fds[i] = -1;
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct oci_mount *m = &c->mounts[i];
		int fd = -1;
		if (m->idmap)
			fd = idmapped_tree(c, m, bundle, err);
		else if (wants_plain_tree(m, new_userns) && (fd = plain_tree(m, bundle)) < 0)
			continue;
		else if (!wants_plain_tree(m, new_userns))
			continue;
		if (fd >= 0 && fd < min_fd) {
			int high = fcntl(fd, F_DUPFD_CLOEXEC, min_fd);
			close(fd);
			fd = high < 0 ? ab_error(err, errno, "dup fd") : high;
		}
		if (fd < 0) {
			mount_trees_close(c, fds);
			return ab_wrap(err, "mounts[%zu]", i);
		}
		fds[i] = fd;
	}
	*ret_fds = fds;
	return 0;
}

void mount_trees_close(const struct oci_config *c, int *fds)
{
	for (size_t i = 0; fds && i < c->n_mounts; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

int mount_tree_attach(int tree, int target, const char *dest, struct ab_err *err)
{
	if (syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return ab_error(err, errno, "attach the prepared mount at %s", dest);
	return 0;
}

int mount_tree_read_only_file(int dirfd, const char *name, int min_fd, struct ab_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || fchmod(fd, 0644) < 0)
		return ab_error(err, errno, "create %s", name);
	int tree = (int)syscall(SYS_open_tree, dirfd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
	if (tree < 0)
		return ab_error(err, errno, "open_tree %s", name);
	/* read-only before anyone can see it */
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	};
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
		int e = errno;
		close(tree);
		return ab_error(err, e, "make %s read-only", name);
	}
	if (tree >= min_fd)
		return tree;
	int moved = fcntl(tree, F_DUPFD_CLOEXEC, min_fd);
	int e = errno;
	close(tree);
	return moved < 0 ? ab_error(err, e, "dup fd") : moved;
}

extern bool util_force_fallbacks;

/* The flags of a mount_attr set, for a legacy remount. */
static unsigned long remount_flags(uint64_t attr)
{
	return (attr & MOUNT_ATTR_RDONLY ? MS_RDONLY : 0) | (attr & MOUNT_ATTR_NOSUID ? MS_NOSUID : 0) |
	       (attr & MOUNT_ATTR_NODEV ? MS_NODEV : 0) | (attr & MOUNT_ATTR_NOEXEC ? MS_NOEXEC : 0);
}

/* The flags a remount must keep, the locked ones among them. */
static unsigned long kept_flags(const char *path)
{
	struct statvfs sv;
	if (statvfs(path, &sv) < 0)
		return 0;
	return (sv.f_flag & ST_NOSUID ? MS_NOSUID : 0) | (sv.f_flag & ST_NODEV ? MS_NODEV : 0) |
	       (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) | (sv.f_flag & ST_RDONLY ? MS_RDONLY : 0);
}

int mount_tree_bind(int src, int target, bool recursive, uint64_t attr_set, const char *what, struct ab_err *err)
{
	if (util_force_fallbacks)
		return -ENOSYS;
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
	_cleanup_close_ int tree = (int)syscall(SYS_open_tree, src, "", flags);
	if (tree < 0)
		return errno == ENOSYS ? -ENOSYS : ab_error(err, errno, "%s: clone its source", what);
	/* the attributes before anyone can see the mount */
	struct mount_attr attr = {.attr_set = attr_set};
	bool legacy = false;
	if (attr_set && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
				sizeof attr) < 0) {
		if (errno != ENOSYS)
			return ab_error(err, errno, "%s: set its flags", what);
		legacy = true;      /* before Linux 5.12: remounted once attached */
	}
	if (mount_tree_attach(tree, target, what, err) < 0)
		return -1;
	if (legacy) {
		char p[FD_PATH_MAX];
		fd_path(tree, p);
		if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | remount_flags(attr_set) | kept_flags(p), NULL) < 0)
			return ab_error(err, errno, "%s: set its flags", what);
	}
	return 0;
}
