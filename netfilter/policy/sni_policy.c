/* The policy's verdicts for a TCP connection the SNI check holds
 * (sni_policy.h): pure functions of the policy, used by the sentry's SNI
 * proxy and by the ruleset, which redirects TCP/443 only when they can say
 * yes to something. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "sni_policy.h"

static bool covers(const struct egress_entry *e, uint16_t port)
{
	return (e->proto == 0 || e->proto == IPPROTO_TCP) && (e->port == 0 || e->port == port);
}

enum egress_name_verdict sni_name_verdict(const struct egress_policy *p, const char *name, uint16_t port)
{
	for (size_t i = 0; i < p->deny.n; i++) {
		const struct egress_entry *e = &p->deny.v[i];
		if ((e->kind == EGRESS_NAME || e->kind == EGRESS_WILDCARD) && covers(e, port) &&
		    egress_entry_matches_name(e, name))
			return EGRESS_NAME_DENY;
	}
	for (size_t i = 0; i < p->allow.n; i++) {
		const struct egress_entry *e = &p->allow.v[i];
		if ((e->kind == EGRESS_NAME || e->kind == EGRESS_WILDCARD) && covers(e, port) &&
		    egress_entry_matches_name(e, name))
			return EGRESS_NAME_ALLOW;
	}
	/* learn mode: open, but for what a deny entry refuses */
	return p->learn ? EGRESS_NAME_ALLOW : EGRESS_NAME_NONE;
}

static bool in_cidr(const struct egress_entry *e, int family, const uint8_t *addr)
{
	if (e->kind != (family == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6))
		return false;
	unsigned bits = e->prefix;
	for (unsigned i = 0; i < bits / 8; i++)
		if (addr[i] != e->addr[i])
			return false;
	if (bits % 8) {
		uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
		if ((addr[bits / 8] & mask) != (e->addr[bits / 8] & mask))
			return false;
	}
	return true;
}

enum egress_name_verdict sni_addr_verdict(const struct egress_policy *p, int family, const uint8_t *addr,
					  uint16_t port)
{
	for (size_t i = 0; i < p->deny.n; i++)
		if (covers(&p->deny.v[i], port) && in_cidr(&p->deny.v[i], family, addr))
			return EGRESS_NAME_DENY;
	for (size_t i = 0; i < p->allow.n; i++)
		if (covers(&p->allow.v[i], port) && in_cidr(&p->allow.v[i], family, addr))
			return EGRESS_NAME_ALLOW;
	/* learn mode: open but for a deny entry, and for the special-purpose
	 * ranges (loopback, private, link-local, ...) the policy does not open,
	 * which learn mode's filter keeps closed (ruleset_learn.c) */
	if (p->learn && !(egress_addr_special(family, addr) && !egress_addr_opened(p, family, addr)))
		return EGRESS_NAME_ALLOW;
	return EGRESS_NAME_NONE;
}

bool sni_addr_allowed(const struct egress_policy *p, int family, const uint8_t *addr, uint16_t port)
{
	return sni_addr_verdict(p, family, addr, port) == EGRESS_NAME_ALLOW;
}

bool sni_policy_needs_proxy(const struct egress_policy *p)
{
	if (p->learn)
		return true;   /* every TLS connection's name is recorded */
	for (size_t i = 0; i < p->allow.n; i++)
		if (covers(&p->allow.v[i], 443))
			return true;
	return false;
}

/* does name end in "." + suffix */
static bool below(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n > k && name[n - k - 1] == '.' && strcmp(name + n - k, suffix) == 0;
}

bool sni_cred_host_reachable(const struct egress_policy *p, const struct egress_entry *host)
{
	if (host->kind == EGRESS_NAME)
		return sni_name_allowed(p, host->name, 443);
	if (host->kind != EGRESS_WILDCARD)
		return false;
	/* learn mode: any name below it that no deny entry takes back */
	char probe[600];
	snprintf(probe, sizeof probe, "agentbox-probe.%s", host->name);
	if (p->learn && sni_name_allowed(p, probe, 443))
		return true;
	/* *.d: some name below d that an allow entry names, tried against the
	 * deny entries too */
	for (size_t i = 0; i < p->allow.n; i++) {
		const struct egress_entry *e = &p->allow.v[i];
		if (!covers(e, 443) || (e->kind != EGRESS_NAME && e->kind != EGRESS_WILDCARD))
			continue;
		if (e->kind == EGRESS_NAME && below(e->name, host->name))
			snprintf(probe, sizeof probe, "%s", e->name);
		else if (e->kind == EGRESS_WILDCARD && (strcmp(e->name, host->name) == 0 || below(host->name, e->name)))
			snprintf(probe, sizeof probe, "agentbox-probe.%s", host->name);
		else if (e->kind == EGRESS_WILDCARD && below(e->name, host->name))
			snprintf(probe, sizeof probe, "agentbox-probe.%s", e->name);
		else
			continue;
		if (sni_name_allowed(p, probe, 443))
			return true;
	}
	return false;
}
