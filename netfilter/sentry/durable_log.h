/* The durable deny log: a container's egress records kept where they outlive
 * its state (agentbox-egress(7), "The durable log"). One directory per
 * container, DURABLE_LOG and, once that reached its size, the one before it,
 * DURABLE_LOG_OLD. Whoever writes holds the directory open: the sentry (its
 * records) and `egress allow/deny` (policy changes). */
#ifndef AGENTBOX_DURABLE_LOG_H
#define AGENTBOX_DURABLE_LOG_H

#include <stddef.h>
#include <stdint.h>

#define DURABLE_LOG "egress.log"
#define DURABLE_LOG_OLD "egress.log.1"
#define DURABLE_LEARN "egress.learn"   /* learn mode's records (sentry_learn.h), begun afresh by each learning run */
#define DURABLE_LOG_MAX_DEFAULT (4u << 20)   /* per file: a container keeps at most twice this */

struct durable_log {
	int dirfd;       /* the container's directory; -1: no durable log */
	int fd;          /* DURABLE_LOG, appended */
	uint64_t size;   /* of fd's file, as far as we wrote it */
	uint64_t max;    /* rotate before a line would take it past this */
};

/* Open DURABLE_LOG in dirfd (kept, not owned: the caller closes it after
 * durable_log_close). A failure leaves d->fd -1: records go to the state's
 * log only. Returns 0 or -errno. */
int durable_log_open(struct durable_log *d, int dirfd, uint64_t max);
/* One whole line (with its newline), in one write. Past max, the file becomes
 * DURABLE_LOG_OLD (replacing the one before) and a new one is begun. */
void durable_log_append(struct durable_log *d, const char *line, size_t len);
void durable_log_close(struct durable_log *d);

#endif
