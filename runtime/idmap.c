/* Id-mapped mounts (runtime-spec 1.2: a mount's uidMappings/gidMappings and
 * its "idmap"/"ridmap" options). The runtime, still in the host's mount and
 * user namespaces, clones the source into a detached tree (open_tree), gives
 * it a user namespace made from the mappings (mount_setattr with
 * MOUNT_ATTR_IDMAP), and hands the tree's fd to the init, which attaches it
 * at the destination (move_mount). A file owned by id N on disk shows as the
 * host id its mapping gives N ("containerID hostID size", as for the
 * container's user namespace). Without mappings of its own the mount takes
 * the container's. Where the kernel or the file system cannot do it the
 * mount is refused, never made without the mapping. */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idmap.h"
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
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	return write_file_at(AT_FDCWD, path, buf, off, err);
}

/* A user namespace with these maps, as an fd: a child made in it waits on a
 * pipe while its maps are written and its namespace opened, then exits. */
int idmap_userns(const struct oci_id_mapping *uids, size_t n_uids, const struct oci_id_mapping *gids,
		     size_t n_gids, struct ab_err *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		char c;
		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1);
		_exit(0);
	}
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
	if (m->source[0] == '/')
		snprintf(src, sizeof src, "%s", m->source);
	else
		snprintf(src, sizeof src, "%s/%s", bundle, m->source);
	_cleanup_close_ int userns = idmap_userns(uids, n_uids, gids, n_gids, err);
	if (userns < 0)
		return -1;
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->recursive_bind ? AT_RECURSIVE : 0);
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, src, flags);
	if (tree < 0)
		return ab_error(err, errno, "open_tree %s", src);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
	unsigned at = AT_EMPTY_PATH | (m->recursive_idmap ? AT_RECURSIVE : 0);
	if (syscall(SYS_mount_setattr, tree, "", at, &attr, sizeof attr) < 0) {
		int e = errno;
		close(tree);
		if (e == EINVAL || e == EPERM || e == ENOSYS)
			return ab_error(err, e, "%s cannot be id-mapped here (the kernel or its file system does not support it)", src);
		return ab_error(err, e, "id-map %s", src);
	}
	return tree;
}

int idmap_prepare(const struct oci_config *c, const char *bundle, int min_fd, int **ret_fds,
		  struct ab_err *err)
{
	*ret_fds = NULL;
	size_t n = 0;
	for (size_t i = 0; i < c->n_mounts; i++)
		n += c->mounts[i].idmap;
	if (!n)
		return 0;
	int *fds = xcalloc(c->n_mounts, sizeof *fds);
	for (size_t i = 0; i < c->n_mounts; i++)
		fds[i] = -1;
	for (size_t i = 0; i < c->n_mounts; i++) {
		if (!c->mounts[i].idmap)
			continue;
		int fd = idmapped_tree(c, &c->mounts[i], bundle, err);
		if (fd >= 0 && fd < min_fd) {
			int high = fcntl(fd, F_DUPFD_CLOEXEC, min_fd);
			close(fd);
			fd = high < 0 ? ab_error(err, errno, "dup fd") : high;
		}
		if (fd < 0) {
			idmap_close(c, fds);
			return ab_wrap(err, "mounts[%zu]", i);
		}
		fds[i] = fd;
	}
	*ret_fds = fds;
	return 0;
}

void idmap_close(const struct oci_config *c, int *fds)
{
	for (size_t i = 0; fds && i < c->n_mounts; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

int idmap_attach(int tree, int target, const char *dest, struct ab_err *err)
{
	if (syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return ab_error(err, errno, "attach the id-mapped mount at %s", dest);
	return 0;
}
