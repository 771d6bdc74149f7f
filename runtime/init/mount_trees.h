/* Mount sources the runtime opens before clone, in the host's namespaces,
 * as detached trees the init attaches (mount_trees.c, attached by mounts.c). */
#ifndef AGENTBOX_MOUNT_TREES_H
#define AGENTBOX_MOUNT_TREES_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "error.h"

/* For each mount of c: an id-mapped tree of its source when it is id-mapped;
 * with new_userns, for every other bind, a plain clone of its source, which
 * the init uses only where it cannot reach the source itself (a directory
 * only the host's root may enter). Each tree is an fd >= min_fd, close-on-exec;
 * *ret_fds has one entry a mount, -1 for the others, or is NULL when there
 * is none. An id-mapped tree that cannot be made is an error; a plain one
 * is only left out (the init then names the problem with the source). */
int mount_trees_prepare(const struct oci_config *c, const char *bundle, bool new_userns, int min_fd,
			int **ret_fds, struct ab_err *err);
void mount_trees_close(const struct oci_config *c, int *fds);
/* NAME in dirfd, made empty (0644) if missing, as a detached read-only
 * (nosuid, nodev, noexec) mount of its own: an fd >= min_fd, close-on-exec. */
int mount_tree_read_only_file(int dirfd, const char *name, int min_fd, struct ab_err *err);
/* Attach the tree on target (an O_PATH fd of the mount point). */
int mount_tree_attach(int tree, int target, const char *dest, struct ab_err *err);

/* A copy of the mount at SRC (an fd of what it shows; with recursive, of the
 * mounts below it too) with ATTR_SET (MOUNT_ATTR_*) set on it before anyone
 * can see it, attached on TARGET: all by handle (open_tree, mount_setattr,
 * move_mount), no path resolved. -ENOSYS, err untouched, where the kernel
 * has no open_tree (before 5.2) or AGENTBOX_FORCE_FALLBACKS: the caller then
 * binds by the fds' paths in the runtime's /proc. WHAT names it in errors. */
int mount_tree_bind(int src, int target, bool recursive, uint64_t attr_set, const char *what, struct ab_err *err);

#endif
