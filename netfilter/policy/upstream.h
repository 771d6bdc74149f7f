/* The upstream resolvers the sentry asks: from the container's resolv.conf
 * (upstream.c). */
#ifndef AGENTBOX_UPSTREAM_H
#define AGENTBOX_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct egress_upstream {
	int family;        /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint32_t scope_id; /* IPv6 link-local zone */
	uint16_t port;     /* host order, 53 */
};
#define EGRESS_MAX_UPSTREAMS 3

/* First nameserver lines (up to EGRESS_MAX_UPSTREAMS) of a resolv.conf. */
int egress_upstream_from_resolv_conf(const char *path, struct egress_upstream *ret,
				     size_t *ret_n, struct ab_err *err);

#endif
