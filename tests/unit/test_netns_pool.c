/* netns_pool: filling, taking and what is refused, in a pool directory of the
 * test's own (needs root: it makes network namespaces and bind mounts). */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns_pool.h"
#include "tap.h"

static char dir[64];

/* netns_pool_fill moves its caller into new namespaces: run it in a child */
static int fill(const char *size)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(netns_pool_fill(dir, size));
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static ino_t ns_ino(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

static void cleanup(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "for f in %s/ns-*; do umount \"$f\" 2>/dev/null; done; rm -rf %s", dir, dir);
	if (system(cmd) != 0)
		printf("# cleanup of %s failed\n", dir);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # skip needs root (network namespaces, bind mounts)\n");
		return 0;
	}
	snprintf(dir, sizeof dir, "/run/agentbox-test-netns-pool-%d", (int)getpid());

	ok(netns_pool_take(dir) == -1, "no pool directory: nothing to take");
	ok(netns_pool_count(dir) == 0, "and nothing counted");

	ok(fill("2") == 0, "fill 2");
	struct stat st;
	ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700 && st.st_uid == 0, "the pool directory is root's, mode 0700");
	ok(netns_pool_count(dir) == 2, "2 namespaces pinned (%u)", netns_pool_count(dir));
	ok(fill("2") == 0 && netns_pool_count(dir) == 2, "filling a full pool adds none");

	char self[64];
	snprintf(self, sizeof self, "/proc/self/ns/net");
	int me = open(self, O_RDONLY | O_CLOEXEC);
	int a = netns_pool_take(dir);
	ok(a >= 0 && ioctl(a, NS_GET_NSTYPE) == CLONE_NEWNET, "take: a network namespace");
	ok(a >= 0 && ns_ino(a) != ns_ino(me), "not ours");
	ok(netns_pool_count(dir) == 1, "one left in the pool");
	int b = netns_pool_take(dir);
	ok(b >= 0 && ns_ino(b) != ns_ino(a), "the second take: another namespace");
	ok(netns_pool_take(dir) == -1 && netns_pool_count(dir) == 0, "then the pool is empty");
	/* no entry file is left for the taken ones */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "[ -z \"$(ls %s | grep '^ns-')\" ]", dir);
	ok(system(cmd) == 0, "their files are gone");

	/* a taken namespace is pristine: only lo, and it is down */
	pid_t pid = fork();
	if (pid == 0) {
		if (setns(a, CLONE_NEWNET) < 0)
			_exit(2);
		_exit(system("[ \"$(ip -o link show | wc -l)\" = 1 ] && "
			     "ip -o link show lo | grep -q 'state DOWN'") == 0 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a pooled namespace has lo only, down");
	close(a);
	close(b);

	/* a file that pins nothing (a pin made in another mount namespace, or
	 * lost) is not taken, and goes */
	char stale[128];
	snprintf(stale, sizeof stale, "%s/ns-00000000deadbeef", dir);
	int fd = open(stale, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
	ok(netns_pool_take(dir) == -1, "a stale entry is not taken");
	ok(access(stale, F_OK) < 0 && errno == ENOENT, "and removed");

	/* a directory others could write to is not trusted */
	ok(fill("1") == 0 && netns_pool_count(dir) == 1, "refilled with one");
	chmod(dir, 0755);
	ok(netns_pool_take(dir) == -1, "mode 0755: nothing is taken");
	ok(netns_pool_count(dir) == 0, "nor counted");
	chmod(dir, 0700);
	ok(netns_pool_count(dir) == 1, "mode 0700 again: the entry counts");

	ok(fill("17") == 1, "fill refuses a size above %d", NETNS_POOL_MAX_SIZE);
	ok(fill("x") == 1, "and a size that is not a number");

	close(me);
	cleanup();
	return tap_done();
}
