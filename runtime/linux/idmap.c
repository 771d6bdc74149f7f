/* The user namespace of an id mapping, as an fd for MOUNT_ATTR_IDMAP, and the
 * id-mapped tree made with it: what id-mapped mounts (mount_trees.c) and kit
 * run's probe of a workspace (kit_idmap.c) give the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idmap.h"
#include "procfs.h"
#include "raw_syscall.h"
#include "util.h"

static int write_map(pid_t pid, const char *file, const struct oci_id_mapping *m, size_t n,
		     struct ab_err *err)
{
	char buf[4096];
	size_t off = 0;
	for (size_t i = 0; i < n && off < sizeof buf - 40; i++)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%u %u %u\n", m[i].container_id,
					m[i].host_id, m[i].size);
	char path[64];
	snprintf(path, sizeof path, "%d/%s", (int)pid, file);
	/* through a procfs handle, like every write into procfs (procfs.h) */
	_cleanup_close_ int procfd = procfs_open_own(err);
	return procfd < 0 ? -1 : procfs_write(procfd, path, buf, off, err);
}

/* The child: in the new user namespace, it waits for the pipe to close (its
 * maps written, its namespace opened) and exits. Under CLONE_VM, raw system
 * calls only (raw_syscall.h). */
struct userns_child {
	int rfd, wfd;
};

static int userns_child(void *arg)
{
	const struct userns_child *c = arg;
	char byte;
	(void)raw_syscall3(SYS_close, c->wfd, 0, 0);
	(void)raw_syscall3(SYS_read, c->rfd, (long)&byte, 1);
	(void)raw_syscall3(SYS_exit, 0, 0, 0);
	return 0;
}

/* Where raw system calls are known, the child borrows our memory (no copy of
 * our page tables, no copy-on-write faults after: ~2 ms of a kit run here);
 * elsewhere it gets a copy of it, as with fork. */
static pid_t clone_userns_child(struct userns_child *c)
{
#if RAW_SYSCALL
	static long stack[1024];
	return clone(userns_child, stack + sizeof stack / sizeof stack[0], CLONE_VM | CLONE_NEWUSER | SIGCHLD, c);
#else
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(userns_child(c));
	return pid;
#endif
}

/* A user namespace with these maps, as an fd: a child made in it waits on a
 * pipe while its maps are written and its namespace opened, then exits. */
int idmap_userns(const struct oci_id_mapping *uids, size_t n_uids, const struct oci_id_mapping *gids,
		     size_t n_gids, struct ab_err *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	struct userns_child child = {pipefd[0], pipefd[1]};
	pid_t pid = clone_userns_child(&child);
	close(pipefd[0]);
	if (pid < 0) {
		close(pipefd[1]);
		return ab_error(err, errno, "make a user namespace for the mapping");
	}
	int fd = -1;
	char path[64];
	if (write_map(pid, "uid_map", uids, n_uids, err) == 0 &&
	    write_map(pid, "gid_map", gids, n_gids, err) == 0) {
		snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			ab_error(err, errno, "open %s", path);
	}
	close(pipefd[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return fd;
}

/* The tree kit run's probe made, kept for the mount that asks for the same. */
static struct {
	int fd;
	char *src;
	unsigned flags;
	struct oci_id_mapping *maps;    /* the uid maps, then the gid maps */
	size_t n_uids, n_gids;
} kept = {.fd = -1};

static bool kept_is(const char *src, unsigned flags, const struct oci_id_mapping *uids, size_t n_uids,
		    const struct oci_id_mapping *gids, size_t n_gids)
{
	return kept.fd >= 0 && streq(kept.src, src) && kept.flags == flags && kept.n_uids == n_uids &&
	       kept.n_gids == n_gids && memcmp(kept.maps, uids, n_uids * sizeof *uids) == 0 &&
	       memcmp(kept.maps + n_uids, gids, n_gids * sizeof *gids) == 0;
}

static int make_tree(const char *src, unsigned flags, const struct oci_id_mapping *uids, size_t n_uids,
		     const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err)
{
	_cleanup_close_ int userns = idmap_userns(uids, n_uids, gids, n_gids, err);
	if (userns < 0)
		return -1;
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, src,
				OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (flags & IDMAP_TREE_RECURSIVE_BIND ? AT_RECURSIVE : 0));
	if (tree < 0)
		return ab_error(err, errno, "open_tree %s", src);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
	unsigned at = AT_EMPTY_PATH | (flags & IDMAP_TREE_RECURSIVE_IDMAP ? AT_RECURSIVE : 0);
	if (syscall(SYS_mount_setattr, tree, "", at, &attr, sizeof attr) < 0) {
		int e = errno;
		close(tree);
		if (e == EINVAL || e == EPERM || e == ENOSYS)
			return ab_error(err, e, "%s cannot be id-mapped here (the kernel or its file system does not support it)", src);
		return ab_error(err, e, "id-map %s", src);
	}
	return tree;
}

int idmap_tree(const char *src, unsigned flags, const struct oci_id_mapping *uids, size_t n_uids,
	       const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err)
{
	if (kept_is(src, flags, uids, n_uids, gids, n_gids)) {
		int tree = kept.fd;
		kept.fd = -1;
		free(kept.src);
		free(kept.maps);
		kept.src = NULL;
		kept.maps = NULL;
		return tree;
	}
	return make_tree(src, flags, uids, n_uids, gids, n_gids, err);
}

int idmap_tree_prepare(const char *src, unsigned flags, const struct oci_id_mapping *uids, size_t n_uids,
		       const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err)
{
	int tree = make_tree(src, flags, uids, n_uids, gids, n_gids, err);
	if (tree < 0)
		return -1;
	if (kept.fd >= 0)
		close(kept.fd);
	free(kept.src);
	free(kept.maps);
	kept.fd = tree;
	kept.src = xstrdup(src);
	kept.flags = flags;
	kept.maps = xmalloc((n_uids + n_gids) * sizeof *kept.maps);
	memcpy(kept.maps, uids, n_uids * sizeof *uids);
	memcpy(kept.maps + n_uids, gids, n_gids * sizeof *gids);
	kept.n_uids = n_uids;
	kept.n_gids = n_gids;
	return 0;
}
