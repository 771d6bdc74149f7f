/* floor — the least a container runtime must do to run a program, as a
 * yardstick for bench/run.sh: unshare six namespaces (mount, uts, ipc, net,
 * pid, cgroup), fork the new pid namespace's init, make the mounts private,
 * mount /proc in the rootfs, chroot into it and exec the program; the parent
 * waits for it. No cgroups, no pivot_root, no /dev, no seccomp, no state.
 *
 *   floor ROOTFS CMD [ARG...]        (static; exits with CMD's status)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: floor ROOTFS CMD [ARG...]\n");
		return 2;
	}
	if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWCGROUP) < 0)
		return fail("unshare");
	pid_t pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		char proc[4096];
		snprintf(proc, sizeof proc, "%s/proc", argv[1]);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(fail("make / private"));
		if (mount("proc", proc, "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL) < 0)
			_exit(fail("mount proc"));
		if (chroot(argv[1]) < 0 || chdir("/") < 0)
			_exit(fail("chroot"));
		execv(argv[2], argv + 2);
		_exit(fail("exec"));
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return fail("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
