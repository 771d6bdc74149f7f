/* The sentry's sockets in the container's network namespace (sentry_sockets.c):
 * made early by the runtime (egress_sentry_sockets_open), or by the sentry
 * itself when it was given none. */
#ifndef AGENTBOX_SENTRY_SOCKETS_H
#define AGENTBOX_SENTRY_SOCKETS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "sentry_params.h"

/* 127.0.0.1 or ::1 at port: where a sentry listening on port would ask itself. */
bool egress_upstream_is_sentry(const struct egress_upstream *u, uint16_t port);

/* The sentry's sockets, made in the netns NETNS_FD for the caller to hand to
 * the sentry (sp->listen_fd, sp->nflog_fd, sp->nflog_repeat_fd, and sp->sni_fd
 * when sp->policy allows some TCP/443): with DNS, its listeners (UDP and TCP
 * on 127.0.0.1 and ::1, port PORT; loopback brought up first; udp4, tcp4,
 * udp6, tcp6, the IPv6 pair -1 when the netns has IPv6 disabled), and always
 * its sockets on the ruleset's two log groups. Made before the container's program
 * can run, they hold its first queries and log records until the sentry serves.
 * With DNS, the upstream resolvers of sp->upstream go into the ruleset's sets
 * too (loopback ones guarded from everyone but the sentry). */
int egress_sentry_sockets_open(int netns_fd, bool dns, uint16_t port, struct egress_sentry_params *sp,
			       struct ab_err *err);
void egress_sentry_sockets_close(struct egress_sentry_params *sp);

#endif
