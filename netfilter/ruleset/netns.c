/* Work inside a container's network namespace without ever switching the
 * caller's: a child enters it, does the work, and exits.
 *
 * Why not setns there and back: an unprivileged (rootless) runtime holds its
 * capabilities over the container's network namespace only through the user
 * namespace that owns it. Going there means entering that user namespace, and
 * from there the runtime's own network namespace is out of reach (EPERM). A
 * way back that can fail is a way to go on in the wrong namespace; a child
 * that never comes back has none.
 *
 * The child is cheap: clone(CLONE_VM | CLONE_FILES | CLONE_VFORK) on a stack
 * of its own, the way posix_spawn starts a program. It shares our memory and
 * fd table, so the sockets it makes are ours at once and its results are
 * plain stores, and we sleep until it exits, so only one of us ever runs.
 * There is no page table to copy (a fork of the runtime costs ~1.5 ms of
 * faults here). Signals are blocked around it: a handler must not run on the
 * child's stack with our data. */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns.h"
#include "util.h"

int egress_netns_join(int netns_fd, struct ab_err *err)
{
	if (setns(netns_fd, CLONE_NEWNET) == 0)
		return 0;
	if (errno != EPERM)
		return ab_error(err, errno, "enter the container network namespace");
	/* Rootless: our capabilities over it live in the user namespace that owns
	 * it (we created that one: its owner holds every capability there). */
	int userns = ioctl(netns_fd, NS_GET_USERNS);
	if (userns < 0)
		return ab_error(err, EPERM, "enter the container network namespace (and find its user namespace: %s)",
				strerror(errno));
	struct stat mine, owner;
	int r = 0;
	if (fstat(userns, &owner) < 0 || stat("/proc/self/ns/user", &mine) < 0)
		r = ab_error(err, errno, "enter the container network namespace: compare user namespaces");
	else if (mine.st_dev == owner.st_dev && mine.st_ino == owner.st_ino)
		r = ab_error(err, EPERM, "enter the container network namespace");
	else if (setns(userns, CLONE_NEWUSER) < 0)
		r = ab_error(err, errno, "enter the user namespace that owns the container network namespace");
	else if (setns(netns_fd, CLONE_NEWNET) < 0)
		r = ab_error(err, errno, "enter the container network namespace from its user namespace");
	close(userns);
	return r;
}

struct netns_call {
	int netns_fd;
	int (*fn)(void *arg, struct ab_err *err);
	void *arg;
	struct ab_err *err;
	int ret;
};

/* The child's stack: static, since calls never overlap (single-threaded, and
 * never from inside a child). Pages it never touches cost nothing. */
static char child_stack[256 * 1024] __attribute__((aligned(16)));
static bool in_child;

static int netns_child(void *p)
{
	struct netns_call *c = p;
	in_child = true;
	if (c->netns_fd >= 0)
		c->ret = egress_netns_join(c->netns_fd, c->err);
	else if (unshare(CLONE_NEWNET) < 0)
		c->ret = ab_error(c->err, errno, "create a network namespace");
	else
		c->ret = 0;
	if (c->ret >= 0)
		c->ret = c->fn(c->arg, c->err);
	in_child = false;
	return 0;   /* glibc's clone ends the child with exit(2): no atexit, no stdio */
}

int egress_in_netns(int netns_fd, int (*fn)(void *arg, struct ab_err *err), void *arg, struct ab_err *err)
{
	if (in_child)
		return ab_error(err, EDEADLK, "egress: work in a network namespace from inside another");
	struct netns_call c = { .netns_fd = netns_fd, .fn = fn, .arg = arg, .err = err, .ret = -1 };
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	int saved = errno;
	pid_t pid = clone(netns_child, child_stack + sizeof child_stack,
			  CLONE_VM | CLONE_FILES | CLONE_VFORK | SIGCHLD, &c);
	int e = errno;
	if (pid > 0)
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		return ab_error(err, e, "egress: start a child for the network namespace");
	errno = saved;
	return c.ret;
}
