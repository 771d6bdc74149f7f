/* Paths inside the container's root (rootpath.c): opened and created without
 * ever leaving the tree at rootfd, through a symlink (followed as if the root
 * were "/") or "..", or a /proc magic link. */
#ifndef AGENTBOX_ROOTPATH_H
#define AGENTBOX_ROOTPATH_H

#include <stdbool.h>

#include "error.h"

#define FD_PATH_MAX 64
/* "/proc/self/fd/N": the path of an fd for calls that take no fd. */
void fd_path(int fd, char buf[FD_PATH_MAX]);

/* Open path inside the tree rooted at rootfd without ever leaving it (openat2
 * RESOLVE_IN_ROOT, or a careful walk when the kernel lacks it). */
int open_in_root(int rootfd, const char *path, int flags, int *ret_fd, struct ab_err *err);

/* Open path inside the root as O_PATH, making what is missing on the way:
 * directories (0755) and the last component, a directory with CREATE_DIR,
 * else an empty file (0644). A symlink on the way is followed inside the
 * root, also one whose target does not exist yet: the target is made, as
 * runc and crun do ("/etc/x -> ../foo/bar" makes /foo/bar). With
 * CREATE_NO_SYMLINKS a symlink on the way is an error (ELOOP, "... is a
 * symlink"): for what must sit on a real directory (procfs, sysfs, device
 * nodes), where an image's symlink could only be a trick. */
enum { CREATE_DIR = 1, CREATE_NO_SYMLINKS = 2 };
int create_in_root(int rootfd, const char *path, unsigned how, int *ret_fd, struct ab_err *err);

/* Make the directory path (and its parents, 0755) inside the current root. */
int mounts_mkdir_in_root(const char *path, struct ab_err *err);

#endif
