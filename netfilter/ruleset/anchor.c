/* The hook anchor: one otherwise empty network namespace, pinned by a bind mount,
 * holding the same ruleset a container gets.
 *
 * Why: netfilter calls its hooks behind static keys, one per family and hook
 * point, shared by every network namespace. While no namespace has a hook of a
 * kind, its key is off, and the first registration patches kernel text (with
 * IPIs to every CPU) — and the last unregistration patches it back. On a host
 * where nothing else uses netfilter, every container's create and teardown
 * would pay that: measured 2.5 ms of a 3 ms ruleset batch on a 2-vCPU VM, and
 * 0.6 ms with the keys kept on. Hosts running Docker or Kubernetes keep most of
 * them on anyway (their iptables rules); the anchor keeps all the ones agentbox
 * uses on, for the price of one idle namespace with no interfaces up. */
#include "netns.h"
#include "ruleset.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static bool pinned(const char *pin)
{
	struct statfs fs;
	return statfs(pin, &fs) == 0 && fs.f_type == NSFS_MAGIC;
}

static int open_own_netns(void *arg, struct ab_err *err)
{
	int *fd = arg;
	*fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? ab_error(err, errno, "open its network namespace") : 0;
}

/* A new netns with the ruleset in it, as an fd; the caller stays where it was. */
static int anchor_netns(struct ab_err *err)
{
	int ns = -1;
	if (egress_in_netns(-1, open_own_netns, &ns, err) < 0)
		return -1;
	struct egress_policy none = {0};
	if (egress_install(ns, &none, "hook-anchor", EGRESS_SENTRY_PORT, err) < 0) {
		close(ns);
		return -1;
	}
	return ns;
}

int egress_hook_anchor_ensure(const char *pin, struct ab_err *err)
{
	if (pinned(pin))
		return 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", pin);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return ab_error(err, EINVAL, "hook anchor: %s is not a path in a directory", pin);
	*slash = 0;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return ab_error(err, errno, "hook anchor: mkdir %s", dir);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ab_error(err, errno, "hook anchor: open %s", dir);
	/* one creator at a time; the others find it pinned */
	if (flock(dfd, LOCK_EX) < 0)
		return ab_error(err, errno, "hook anchor: lock %s", dir);
	if (pinned(pin))
		return 0;
	int fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0400);
	if (fd < 0)
		return ab_error(err, errno, "hook anchor: create %s", pin);
	close(fd);
	_cleanup_close_ int ns = anchor_netns(err);
	if (ns < 0)
		return ab_wrap(err, "hook anchor");
	char src[64];
	snprintf(src, sizeof src, "/proc/self/fd/%d", ns);
	if (mount(src, pin, NULL, MS_BIND, NULL) < 0) {
		ab_error(err, errno, "hook anchor: bind its network namespace to %s", pin);
		(void)unlinkat(dfd, slash + 1, 0);
		return -1;
	}
	log_debug("hook anchor pinned at %s", pin);
	return 0;
}
