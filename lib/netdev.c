#include "netdev.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int netdev_loopback_up(struct ab_err *err)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ab_error(err, errno, "bring up the loopback interface: socket");
	struct ifreq ifr = {0};
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	int r = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (r == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	int e = errno;
	close(fd);
	if (r < 0)
		return ab_error(err, e, "bring up the loopback interface");
	return 0;
}
