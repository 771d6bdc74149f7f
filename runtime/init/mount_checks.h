/* What the init checks where it makes a config mount (mount_checks.c), on
 * the handles it opened for it, after the earlier mounts exist: a check of
 * the config's text alone (floor_mounts.h) cannot see where a symlink of the
 * image or an earlier mount leads. */
#ifndef AGENTBOX_MOUNT_CHECKS_H
#define AGENTBOX_MOUNT_CHECKS_H

#include <stdbool.h>

#include "config.h"
#include "error.h"
#include "init_ctx.h"

/* The target the init opened for mount m: on a procfs only where runc lets
 * a mount cover /proc (oci_mount_proc_dest; at /proc itself a proc file
 * system or a bind of one, src: the bind's source handle, or -1). */
int mount_check_target(const struct oci_mount *m, bool bind, int src, int target, struct ab_err *err);

/* A bind's source, opened once (O_PATH, close-on-exec) for the bind to be
 * made from it: *ret_src, or -1 where the init cannot reach it and the tree
 * the runtime prepared (*tree) serves; with the source reachable *tree is
 * not used (-1). With ctx->refuse_kernel_fs_binds a procfs or sysfs, or
 * anything below the container's /proc or /sys, is refused: the container's
 * own /proc, mounted by an earlier mount, would be a second one, unmasked
 * and writable. *is_dir: the source is a directory. */
int mount_open_source(const struct init_ctx *ctx, const struct oci_mount *m, int *tree, int *ret_src,
		      bool *is_dir, struct ab_err *err);

#endif
