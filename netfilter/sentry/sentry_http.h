/* The box's HTTP proxy in the sentry (sentry_http.c, http_proxy.h). */
#ifndef AGENTBOX_SENTRY_HTTP_H
#define AGENTBOX_SENTRY_HTTP_H

#include "error.h"
#include "sentry_state.h"

/* The proxy over the sentry's listeners s->http_fd, after the SNI check
 * started (its flows go there). */
int sentry_http_start(struct sentry *s, struct ab_err *err);
/* Its work when its fd is readable or its time came (never blocks). */
void sentry_http_run(struct sentry *s);
void sentry_http_stop(struct sentry *s);

#endif
