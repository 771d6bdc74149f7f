#include "egress_netns.h"
#include "config_linux.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int egress_netns_open(const struct agent_policy *p, const struct oci_config *c, pid_t pid, struct ab_err *err)
{
	if (p->netns_pooled) {
		/* the init may not have joined it yet: ours is the same namespace */
		int fd = fcntl(p->netns_fd, F_DUPFD_CLOEXEC, 3);
		return fd >= 0 ? fd : ab_error(err, errno, "egress: the network namespace from the pool");
	}
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	char buf[64];
	const char *path = buf;
	if (net && net->path)
		path = net->path;
	else
		snprintf(buf, sizeof buf, "/proc/%d/ns/net", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "egress: open the network namespace %s", path);
	struct stat a, b;
	if (fstat(fd, &a) < 0 || stat("/proc/self/ns/net", &b) < 0) {
		int e = errno;
		close(fd);
		return ab_error(err, e, "egress: stat the network namespace %s", path);
	}
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		close(fd);
		return ab_error(err, 0, "egress: the container's network namespace %s is the runtime's own: the firewall would police the host: refused", path);
	}
	return fd;
}
