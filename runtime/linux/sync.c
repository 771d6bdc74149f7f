#include "sync.h"
#include "fdpass.h"
#include "util.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int sync_socketpair(int fds[2], struct ab_err *err)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
		return ab_error(err, errno, "socketpair");
	return 0;
}

int sync_send(int fd, enum sync_type type, int32_t code, const char *data, int pass_fd,
	      struct ab_err *err)
{
	/* not zeroed: only the header and the data's bytes are sent, and clearing
	 * 32 KiB touches eight pages, each a page fault in a freshly cloned
	 * process (copy-on-write, or new stack) */
	struct sync_msg msg;
	msg.type = type;
	msg.code = code;
	size_t len = offsetof(struct sync_msg, data);
	if (data) {
		size_t n = strnlen(data, sizeof msg.data - 1);
		memcpy(msg.data, data, n);
		msg.data[n] = 0;
		len += n + 1;
	}
	if (send_with_fds(fd, &msg, len, &pass_fd, pass_fd >= 0 ? 1 : 0, 0) < 0)
		return ab_error(err, errno, "sync: send message %u", type);
	return 0;
}

void sync_send_error(int fd, const struct ab_err *err)
{
	struct ab_err ignored;
	(void)sync_send(fd, SYNC_ERROR, err->code, err->msg, -1, &ignored);
}

int sync_recv(int fd, enum sync_type want, struct sync_msg *msg, int *ret_fd, struct ab_err *err)
{
	union {
		/* an fd, and the sender's credentials where SO_PASSCRED is on */
		char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = sizeof *msg};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	struct ucred cred = {0};
	if (ret_fd)
		*ret_fd = -1;
	ssize_t n;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ab_error(err, errno, "sync: receive");
	if (n == 0)
		return ab_error(err, 0, "sync: peer closed the channel unexpectedly");
	if ((size_t)n < offsetof(struct sync_msg, data))
		return ab_error(err, 0, "sync: short message");
	if ((size_t)n == offsetof(struct sync_msg, data))
		msg->data[0] = 0;
	msg->data[sizeof msg->data - 1] = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int got;
			memcpy(&got, CMSG_DATA(c), sizeof got);
			if (ret_fd)
				*ret_fd = got;
			else
				close(got);
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&cred, CMSG_DATA(c), sizeof cred);
		}
	}
	/* the kernel's word for who sent it, as a pid of our namespace */
	if (msg->type == SYNC_PID && want == SYNC_PID) {
		if (cred.pid <= 0)
			return ab_error(err, 0, "sync: a SYNC_PID message without the sender's credentials");
		msg->code = cred.pid;
	}
	if (msg->type == SYNC_ERROR && want != SYNC_ERROR) {
		err->code = msg->code;
		size_t n = strnlen(msg->data, sizeof err->msg - 1);
		memcpy(err->msg, msg->data, n);
		err->msg[n] = 0;
		return msg->code > 0 ? -msg->code : -1;
	}
	if (want && msg->type != (uint32_t)want)
		return ab_error(err, 0, "sync: expected message %u, got %u", want, msg->type);
	return 0;
}

int sync_send_raw_fd(int sock, const char *payload, int pass_fd, struct ab_err *err)
{
	/* the fd always: a bad one fails here (EBADF), as the caller asked */
	if (send_with_fds(sock, payload, strlen(payload), &pass_fd, 1, 0) < 0)
		return ab_error(err, errno, "send fd");
	return 0;
}
