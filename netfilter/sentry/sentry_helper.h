/* The sentry's two helpers (sentry_helper.c), forked by the sentry. The
 * netadmin one lives in the box's netns and keeps CAP_NET_ADMIN: set
 * elements, marked sockets. The net one stays in the runtime's netns and
 * keeps nothing: sockets to the upstream resolvers it was given, and whether
 * an address is the host's. */
#ifndef AGENTBOX_SENTRY_HELPER_H
#define AGENTBOX_SENTRY_HELPER_H

#include <libmnl/libmnl.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "sentry_state.h"
#include "upstream.h"

int sentry_start_helper(struct sentry *s, struct mnl_socket *nl, struct ab_err *err);
int sentry_start_net_helper(struct sentry *s, const struct egress_upstream *list, size_t n, struct ab_err *err);
/* Add (or refresh) one element of dynamic set SET: 0 or -errno (-ENFILE: full). */
int sentry_helper_add(struct sentry *s, unsigned set, const uint8_t key[24], uint32_t timeout_ms);
/* A socket of the box's netns carrying the sentry's mark (not connected), or -errno. */
int sentry_helper_socket(struct sentry *s, int family, int type);
/* A TCP socket of the box's netns carrying EGRESS_PROXY_MARK (not connected):
 * the SNI check's and the gateway's way to an original destination, judged
 * by the filter like the box's own. -errno on failure. */
int sentry_helper_proxy_socket(struct sentry *s, int family);
/* A socket of the runtime's netns connected (TCP: connecting) to the net
 * helper's upstream INDEX, or -errno. */
int sentry_net_socket(struct sentry *s, unsigned index, int type);
/* Is addr one of the host's own (the runtime's netns)? 1, 0, or -errno. */
int sentry_net_is_local(struct sentry *s, int family, const uint8_t *addr);

#endif
