/* The user namespace of an id mapping, as an fd for MOUNT_ATTR_IDMAP: what
 * id-mapped mounts (mount_trees.c) and kit run's probe of a workspace
 * (kit_idmap.c) give the kernel. */
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
