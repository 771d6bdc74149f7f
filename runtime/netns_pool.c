#include "netns_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util.h"

/* Entries are ns-<16 hex digits>; anything else in the directory is left alone. */
#define ENTRY_PREFIX "ns-"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static bool is_netns(int fd)
{
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && (unsigned long)fs.f_type == NSFS_MAGIC &&
	       ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWNET;
}

/* The pool directory, only when it is root's alone: anyone else who could
 * write there could hand containers a namespace of their making. */
static int open_pool_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 077)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Calls FN for each entry name of the open directory DFD until it returns
 * non-zero (which is returned). */
static int each_entry(int dfd, int (*fn)(int dfd, const char *dir, const char *name, void *data),
		      const char *dir, void *data)
{
	char buf[2048];
	if (lseek(dfd, 0, SEEK_SET) < 0)
		return 0;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (n <= 0)
			return 0;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + off);
			off += de->d_reclen;
			if (strncmp(de->d_name, ENTRY_PREFIX, strlen(ENTRY_PREFIX)) != 0)
				continue;
			int r = fn(dfd, dir, de->d_name, data);
			if (r)
				return r;
		}
	}
}

/* Take the first pinned namespace: open it, unpin it, remove its file. A file
 * that holds no namespace here (its pin was made in another mount namespace,
 * or lost) is removed. Runs under the directory's lock. */
static int take_one(int dfd, const char *dir, const char *name, void *data)
{
	int *ret = data;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!is_netns(fd)) {
		close(fd);
		(void)unlinkat(dfd, name, 0);
		return 0;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	/* both must succeed, or another create could take the same namespace */
	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 || unlinkat(dfd, name, 0) < 0) {
		close(fd);
		return 0;
	}
	*ret = fd;
	return 1;
}

int netns_pool_take(const char *dir)
{
	int dfd = open_pool_dir(dir);
	if (dfd < 0)
		return -1;
	int fd = -1;
	if (flock(dfd, LOCK_EX) == 0)
		(void)each_entry(dfd, take_one, dir, &fd);
	close(dfd);
	return fd;
}

static int count_one(int dfd, const char *dir, const char *name, void *data)
{
	(void)dir;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		if (is_netns(fd))
			(*(unsigned *)data)++;
		close(fd);
	}
	return 0;
}

unsigned netns_pool_count(const char *dir)
{
	int dfd = open_pool_dir(dir);
	if (dfd < 0)
		return 0;
	unsigned n = 0;
	(void)each_entry(dfd, count_one, dir, &n);
	close(dfd);
	return n;
}

/* Pin the calling thread's network namespace as a new entry, under the lock,
 * so that a create never sees an entry half made. */
static int pin_current(int dfd, const char *dir)
{
	uint64_t rnd;
	if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return -1;
	char name[32], path[PATH_MAX];
	snprintf(name, sizeof name, ENTRY_PREFIX "%016llx", (unsigned long long)rnd);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (flock(dfd, LOCK_EX) < 0)
		return -1;
	int r = -1;
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		r = mount("/proc/thread-self/ns/net", path, NULL, MS_BIND, NULL);
		if (r < 0)
			(void)unlinkat(dfd, name, 0);
	}
	(void)flock(dfd, LOCK_UN);
	return r;
}

int netns_pool_fill(const char *dir, const char *size_arg)
{
	/* nothing of the caller's is open here (see refill_exec); 0-2 go to
	 * /dev/null so that nothing opened later takes their place */
	int null = open("/dev/null", O_RDWR);
	while (null >= 0 && null < 2)
		null = dup(null);
	char *end;
	unsigned long size = strtoul(size_arg, &end, 10);
	if (*end || size > NETNS_POOL_MAX_SIZE || geteuid() != 0)
		return 1;
	(void)setsid();
	(void)setpriority(PRIO_PROCESS, 0, 19);
	if (chdir("/") < 0)
		return 1;
	(void)mkdir(dir, 0700);
	int dfd = open_pool_dir(dir);
	if (dfd < 0)
		return 1;
	/* one filler at a time; the others would find nothing left to add */
	int lock = openat(dfd, "fill.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
		return 0;
	unsigned have = 0;
	(void)each_entry(dfd, count_one, dir, &have);
	for (; have < size; have++)
		if (unshare(CLONE_NEWNET) < 0 || pin_current(dfd, dir) < 0)
			return 1;
	return 0;
}

/* What the refiller execs; static, because the parent goes on (and returns
 * from the frame that called us) while the child still reads them. */
static char refill_prog[] = "/proc/self/exe";
static char refill_arg0[] = "agentbox";
static char refill_arg1[] = NETNS_POOL_FILL_COMMAND;
static char refill_size[16];
static char *refill_argv[] = {refill_arg0, refill_arg1, refill_size, NULL};
static char *refill_envp[] = {NULL};
static long refill_stack[1024];

/* The child of clone(CLONE_VM): it shares our memory until it execs, so it
 * makes raw system calls only, on its own stack, and touches nothing else. */
static int refill_exec(void *unused)
{
	(void)unused;
	(void)syscall(SYS_close_range, 0U, ~0U, 0);
	(void)syscall(SYS_execve, refill_prog, refill_argv, refill_envp);
	(void)syscall(SYS_exit, 127);
	return 0;
}

void netns_pool_refill(unsigned size)
{
	if (size == 0 || size > NETNS_POOL_MAX_SIZE || geteuid() != 0)
		return;
	snprintf(refill_size, sizeof refill_size, "%u", size);
	/* no copy of this process (a fork's page tables and the copy-on-write
	 * faults after it): the child borrows our memory for the moment until
	 * its execve; no exit signal, nobody waits for it */
	(void)clone(refill_exec, refill_stack + sizeof refill_stack / sizeof refill_stack[0], CLONE_VM, NULL);
}
