/* File descriptors passed over a unix socket (SCM_RIGHTS). */
#ifndef AGENTBOX_FDPASS_H
#define AGENTBOX_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define FDPASS_MAX 2   /* fds in one message, at most */

/* One sendmsg of data (len bytes) carrying fds[0..n_fds) (none when n_fds
 * is 0), with flags and MSG_NOSIGNAL; again after EINTR. What sendmsg
 * returned (-1 and errno EINVAL for more than FDPASS_MAX fds). */
ssize_t send_with_fds(int sock, const void *data, size_t len, const int *fds, size_t n_fds, int flags);

#endif
