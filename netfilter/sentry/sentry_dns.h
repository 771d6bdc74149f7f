/* The container's DNS (sentry_dns.c): queries over UDP and TCP, judged,
 * forwarded and answered. Each returns to the loop. */
#ifndef AGENTBOX_SENTRY_DNS_H
#define AGENTBOX_SENTRY_DNS_H

#include "sentry_state.h"

void sentry_udp_query(struct sentry *s, int lfd);
void sentry_query_event(struct sentry *s, struct query *q, short revents);
void sentry_query_timeout(struct sentry *s, struct query *q);
void sentry_tcp_accept(struct sentry *s, int lfd);
void sentry_tcp_client(struct sentry *s, struct tclient *c);
void sentry_tclient_close(struct tclient *c);

#endif
