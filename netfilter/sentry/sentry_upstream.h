/* The upstream resolvers (sentry_upstream.c): where each is asked from, and
 * one exchange with it. */
#ifndef AGENTBOX_SENTRY_UPSTREAM_H
#define AGENTBOX_SENTRY_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "sentry_state.h"
#include "upstream.h"

/* The upstream tables from the parameters; the net helper's list into list
 * (room for 2 * EGRESS_MAX_UPSTREAMS), its length returned. */
size_t sentry_upstreams_init(struct sentry *s, struct egress_upstream *list);
/* Start q's exchange with its upstream (q->up, q->forwarded, q->tcp set):
 * a new socket, a random id. 0, or -errno (q unchanged but for q->fd = -1). */
int sentry_exchange_start(struct sentry *s, struct query *q);
enum exchange { EX_WAIT, EX_DONE, EX_FAILED };
/* Work on q's socket after poll said revents. EX_DONE: the answer, its id put
 * back to the client's, is at *msg (len bytes; valid until q is reused). */
enum exchange sentry_exchange_io(struct sentry *s, struct query *q, short revents, uint8_t **msg, size_t *len);
/* poll events q's socket waits for */
short sentry_exchange_events(const struct query *q);
/* Close q's socket and buffer. */
void sentry_exchange_end(struct sentry *s, struct query *q);

#endif
