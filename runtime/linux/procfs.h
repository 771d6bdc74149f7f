/* procfs by handle (issue 34; the CVE-2025-52881 class). A container's
 * config and its processes decide what lies under the /proc a path names
 * inside it: a bind over /proc/sys/net, /proc/self/fd or a file of
 * /proc/self, or no procfs at all and an image's directory of symlinks. So
 * the runtime never writes a procfs file by such a path: it opens a procfs of
 * its own before the container's mounts exist, checks that it is one (and its
 * root), and reaches every file below it without following a symlink or
 * crossing a mount, checking that what it opened is on procfs. */
#ifndef AGENTBOX_PROCFS_H
#define AGENTBOX_PROCFS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* A procfs root nothing of a container can mount over: a detached clone of
 * the /proc this process sees (open_tree), else a new procfs (fsopen, of this
 * process's pid namespace), else /proc itself (kernels before 5.2, and
 * AGENTBOX_FORCE_FALLBACKS). Call it before any mount of the container exists
 * in this mount namespace (the init, before its mounts), or before entering
 * the container's mount namespace (exec). Checked: a procfs, at its root. An
 * O_PATH fd, close-on-exec. */
int procfs_open_private(struct ab_err *err);
/* /proc as this process sees it, checked the same: for the runtime's own
 * side, whose mount namespace no container reaches (id maps). */
int procfs_open_own(struct ab_err *err);

/* Open PATH below DIR (the root of a procfs handle or a directory opened
 * below it): relative, its components neither empty nor "." nor "..", never
 * through a symlink (the last component included) nor onto another mount;
 * the file opened is checked to be on procfs. openat2 with RESOLVE_BENEATH,
 * RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and RESOLVE_NO_XDEV, or where
 * the kernel lacks it (before 5.6) a walk with O_NOFOLLOW that checks each
 * component's file system and mount. The error names /proc/PATH. */
int procfs_openat(int dir, const char *path, int flags, struct ab_err *err);
/* The same below this process's own directory (thread: this thread's), which
 * procfs names by its pid in the handle's pid namespace: the "self" (or
 * "thread-self") link is read, never followed. */
int procfs_open_self(int procfd, bool thread, const char *path, int flags, struct ab_err *err);
/* Write DATA to PATH below DIR (procfs_openat), or below this process's or
 * thread's directory (procfs_open_self). */
int procfs_write(int dir, const char *path, const char *data, size_t len, struct ab_err *err);
int procfs_write_self(int procfd, bool thread, const char *path, const char *data, size_t len,
		      struct ab_err *err);

/* FD (one of ours) opened anew with FLAGS through FD_DIR, this process's
 * "fd" directory of a procfs handle (procfs_open_self(.., "fd", ..)): the
 * one link followed is that magic link; the file opened is checked to be
 * FD's. For an O_PATH fd that must become a real open (the exec fifo). */
int procfs_reopen(int fd_dir, int fd, int flags, struct ab_err *err);

/* Test builds only (AGENTBOX_TEST_PROC_BY_PATH=1, lib/test_hooks.h): the
 * runtime reaches procfs as it did before issue 34, by the container's own
 * paths: the init's handle is the container's /proc once in its root, links
 * are followed and nothing is checked, the masks bind the rootfs's
 * /dev/null, and no mount inside /proc is refused. tests/security shows each
 * attack working this way first. In any other build it is false. */
#ifdef AGENTBOX_TEST_HOOKS
extern bool procfs_test_by_path;
#else
#define procfs_test_by_path false
#endif

/* The name checks of procfs_openat, for the unit tests: 0, or -EINVAL. */
int procfs_path_valid(const char *path);

#endif
