/* The container's file system view, built in the child before pivot_root:
 * every mount target is resolved inside the rootfs (never through a symlink out
 * of it) and mounted through its O_PATH fd. */
#ifndef AGENTBOX_MOUNTS_H
#define AGENTBOX_MOUNTS_H

#include <stdbool.h>

#include "init_ctx.h"
#include "error.h"
/* open_in_root and mounts_mkdir_in_root, which users of mounts call too */
#include "rootpath.h"

/* Propagation of /, bind the rootfs on itself, every config mount, devices and
 * the /dev symlinks. console_slave_path: bind over /dev/console when set. */
int mounts_setup(const struct init_ctx *ctx, struct ab_err *err);
/* Bind the pty slave (path on the host view) over ROOTFS/dev/console. */
int mounts_bind_console(const char *rootfs, const char *slave_path, struct ab_err *err);
/* pivot_root into rootfs (or MS_MOVE + chroot with no_pivot) and drop the old root. */
int mounts_enter_rootfs(const char *rootfs, bool no_pivot, struct ab_err *err);
/* After pivot: the read-only tmpfs mounts, the read-only root, root
 * propagation. (Masked and read-only paths come before: mount_paths.h.) */
int mounts_finalize(const struct oci_config *c, struct ab_err *err);

#endif
