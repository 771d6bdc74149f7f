/* The SNI check in the sentry (sentry_sni.c), and the credential gateway's
 * records. */
#ifndef AGENTBOX_SENTRY_SNI_H
#define AGENTBOX_SENTRY_SNI_H

#include <stdbool.h>

#include "error.h"
#include "sentry_state.h"

/* The SNI proxy over the sentry's listeners s->sni_fd, after the netadmin
 * helper started (its upstream sockets come from there). */
int sentry_sni_start(struct sentry *s, struct ab_err *err);
/* Its work when its fd is readable or its time came (never blocks). */
void sentry_sni_run(struct sentry *s);
void sentry_sni_stop(struct sentry *s);
/* The credential gateway's records (a credential's use, its refusals) into
 * the deny log: what is there, at most max of them. Polled while it is there. */
bool sentry_gateway_polled(const struct sentry *s);
void sentry_gateway_read(struct sentry *s, unsigned max);

#endif
