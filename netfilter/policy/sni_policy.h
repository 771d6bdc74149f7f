/* The SNI check's verdicts on a TCP connection: by the name its ClientHello
 * asks for, or by its address alone (netfilter/sentry/sni_proxy.h runs the
 * check). */
#ifndef AGENTBOX_SNI_POLICY_H
#define AGENTBOX_SNI_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "egress.h"

/* The verdict on a server name for a TCP connection to port: EGRESS_NAME_ALLOW
 * when a name or wildcard entry covers it on tcp/port and no deny entry does
 * (in learn mode: when no deny entry does), EGRESS_NAME_DENY when a deny entry
 * does, else EGRESS_NAME_NONE. */
enum egress_name_verdict sni_name_verdict(const struct egress_policy *p, const char *name, uint16_t port);
static inline bool sni_name_allowed(const struct egress_policy *p, const char *name, uint16_t port)
{
	return sni_name_verdict(p, name, port) == EGRESS_NAME_ALLOW;
}
/* ... and on a connection without a name, by CIDR entries only: DENY when a
 * deny entry covers the address on tcp/port, ALLOW when an allow entry does
 * (in learn mode: when none denies it and it is not in a special-purpose
 * range the policy does not open: the ranges learn mode's filter keeps
 * closed), else NONE */
enum egress_name_verdict sni_addr_verdict(const struct egress_policy *p, int family, const uint8_t *addr,
					  uint16_t port);
bool sni_addr_allowed(const struct egress_policy *p, int family, const uint8_t *addr, uint16_t port);
/* Can a header credential's host (a name, or a wildcard entry: some name
 * below it) be reached on TCP/443 at all? Its requests never happen if not. */
bool sni_cred_host_reachable(const struct egress_policy *p, const struct egress_entry *host);
/* Does the policy allow some TCP/443, or is it learn mode (so the proxy and its
 * redirect are needed)? */
bool sni_policy_needs_proxy(const struct egress_policy *p);

#endif
