#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

ssize_t send_with_fds(int sock, const void *data, size_t len, const int *fds, size_t n_fds, int flags)
{
	if (n_fds > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
	union {
		char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (n_fds) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}
