/* The durable deny log's files: appended whole lines, and a rotation that
 * needs nothing but the container's directory fd, so the sentry does it from
 * its empty root. Two writers (the sentry, and `egress allow/deny` for a policy
 * change) may race at a rotation: the loser's next lines land in the file just
 * rotated, which is still read; nothing is lost. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable_log.h"

int durable_log_open(struct durable_log *d, int dirfd, uint64_t max)
{
	d->dirfd = dirfd;
	d->max = max ? max : DURABLE_LOG_MAX_DEFAULT;
	d->size = 0;
	d->fd = dirfd < 0 ? -1 : openat(dirfd, DURABLE_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->fd < 0)
		return dirfd < 0 ? 0 : -errno;
	struct stat st;
	if (fstat(d->fd, &st) == 0)
		d->size = (uint64_t)st.st_size;
	return 0;
}

static void rotate(struct durable_log *d)
{
	/* rename, then begin anew: a reader between the two finds the old file
	 * complete and no current one, which reads as empty */
	if (renameat(d->dirfd, DURABLE_LOG, d->dirfd, DURABLE_LOG_OLD) < 0)
		return;   /* not now: the file grows on, by at most a line per try */
	int fd = openat(d->dirfd, DURABLE_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;   /* writes go on into the rotated file */
	close(d->fd);
	d->fd = fd;
	struct stat st;
	d->size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

void durable_log_append(struct durable_log *d, const char *line, size_t len)
{
	if (d->fd < 0)
		return;
	if (d->size > 0 && d->size + len > d->max)
		rotate(d);
	if (write(d->fd, line, len) == (ssize_t)len)
		d->size += len;
}

void durable_log_close(struct durable_log *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
