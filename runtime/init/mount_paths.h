/* The paths config.json names inside the root once its mounts exist
 * (mount_paths.c): the process's cwd, made where missing, and the masked and
 * read-only paths. Each is resolved inside the root (rootpath.h) while the
 * root is still below the runtime's own, and every mount goes by handle: a
 * file is masked with the null device the init opened and checked before
 * the container's mounts existed (never a /dev/null another container could
 * have swapped: CVE-2025-31133), no "/proc/self/fd/N" of the container's
 * /proc is ever resolved. */
#ifndef AGENTBOX_MOUNT_PATHS_H
#define AGENTBOX_MOUNT_PATHS_H

#include "error.h"
#include "init_ctx.h"

/* The runtime's /dev/null, checked to be the null device (c 1:3): an O_PATH
 * fd, close-on-exec, the source of every file mask. */
int mounts_open_dev_null(struct ab_err *err);
/* Make process.cwd (and its parents, root's 0755) in ROOTFS where it is
 * missing, as runc does; one that exists, or that cannot be looked at, is
 * left to the process (process_enter_cwd). */
int mounts_make_cwd(const char *rootfs, const char *cwd, struct ab_err *err);
/* linux.maskedPaths (a file: the null device bound over it; a directory: an
 * empty read-only tmpfs, one for all of them) and linux.readonlyPaths (bound
 * on themselves, read-only with every mount below), in ROOT: ctx->rootfs,
 * before pivot_root ("/" after it only for AGENTBOX_TEST_PROC_BY_PATH). */
int mounts_mask_and_protect(const char *root, const struct init_ctx *ctx, struct ab_err *err);

#endif
