/* The sentry's sockets in the container's network namespace (sentry_sockets.c):
 * made early by the runtime (egress_sentry_sockets_open), or by the sentry
 * itself when it was given none. */
#ifndef AGENTBOX_SENTRY_SOCKETS_H
#define AGENTBOX_SENTRY_SOCKETS_H

#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "sentry_params.h"

/* 127.0.0.1 or ::1 at port: where a sentry listening on port would ask itself. */
bool egress_upstream_is_sentry(const struct egress_upstream *u, uint16_t port);

/* The sentry's sockets, made in the netns NETNS_FD for the caller to hand to
 * the sentry (sp->listen_fd, sp->nflog_fd, sp->nflog_repeat_fd, sp->sni_fd
 * when sp->policy allows some TCP/443, sp->http_fd with sp->http_proxy): with DNS, its listeners (UDP and TCP
 * on 127.0.0.1 and ::1, port PORT; loopback brought up first; udp4, tcp4,
 * udp6, tcp6, the IPv6 pair -1 when the netns has IPv6 disabled), and always
 * its sockets on the ruleset's two log groups. Made before the container's program
 * can run, they hold its first queries and log records until the sentry serves.
 * With DNS, the upstream resolvers of sp->upstream go into the ruleset's sets
 * too (loopback ones guarded from everyone but the sentry). */
int egress_sentry_sockets_open(int netns_fd, bool dns, uint16_t port, struct egress_sentry_params *sp,
			       struct ab_err *err);
void egress_sentry_sockets_close(struct egress_sentry_params *sp);

/* Its pieces, for a sentry that was handed no sockets too (sentry.c): */
/* In the current netns: lo up, then UDP and TCP listeners on 127.0.0.1 and ::1
 * (udp/tcp[0] IPv4, [1] IPv6, -1 when IPv6 is disabled). */
int sentry_bind_listeners(uint16_t port, int udp[2], int tcp[2], struct ab_err *err);
/* In the current netns: the sockets on the log groups (first packets, repeats). */
int sentry_open_log_sockets(int *first, int *repeat, struct ab_err *err);
/* In the current netns: the socket on learn mode's log group, or given
 * when it is one (> 0). */
int sentry_open_learn_socket(int given, int *ret, struct ab_err *err);
/* The upstream resolvers of sp into their sets (guarded ones into the guard sets too). */
int sentry_add_upstreams(struct mnl_socket *nl, const struct egress_sentry_params *sp, struct ab_err *err);
/* In the current netns: the SNI check's listeners on 127.0.0.1 and ::1 at
 * port (EGRESS_SNI_PORT; [1] -1 when IPv6 is disabled). */
int sentry_bind_sni(uint16_t port, int fd[2], struct ab_err *err);
/* In the current netns: the HTTP proxy's listeners on 127.0.0.1 and ::1 at
 * port (EGRESS_HTTP_PROXY_PORT; [1] -1 when IPv6 is disabled). */
int sentry_bind_http(uint16_t port, int fd[2], struct ab_err *err);

#endif
