/* Addresses that point inside: IANA's special-purpose address registries
 * (IPv4: RFC 6890 and its updates; IPv6: the same for IPv6), the entries
 * that are not globally reachable, plus multicast and the reserved blocks.
 * An allowed name whose answer holds one of them (DNS rebinding: a public
 * name pointing at the box's loopback, the cloud metadata service, the LAN)
 * is withheld unless the policy opens that range on purpose.
 *
 * Kept although the registry marks them globally reachable: none. Left out
 * because the registry does (anycast services an allowed name may rightly
 * use): 192.0.0.9/32 (PCP), 192.0.0.10/32 (TURN), 192.31.196.0/24 and
 * 192.175.48.0/24 (AS112), 192.52.193.0/24 (AMT), 2001:1::1/128,
 * 2001:1::2/128, 2001:3::/32, 2001:4:112::/48, 2001:20::/28. Addresses that
 * embed an IPv4 one (IPv4-mapped, NAT64's 64:ff9b::/96, 6to4) are judged by
 * the IPv4 address they carry. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "egress.h"

struct range {
	uint8_t addr[16];
	uint8_t prefix;
	const char *what;
};

#define V4(a, b, c, d) { a, b, c, d }

static const struct range v4[] = {
	{ V4(0, 0, 0, 0), 8, "this network" },
	{ V4(10, 0, 0, 0), 8, "private" },
	{ V4(100, 64, 0, 0), 10, "shared address space (CGNAT)" },
	{ V4(127, 0, 0, 0), 8, "loopback" },
	{ V4(169, 254, 0, 0), 16, "link-local (cloud metadata)" },
	{ V4(172, 16, 0, 0), 12, "private" },
	{ V4(192, 0, 0, 0), 24, "IETF protocol assignments" },
	{ V4(192, 0, 2, 0), 24, "documentation" },
	{ V4(192, 88, 99, 0), 24, "6to4 relay anycast (deprecated)" },
	{ V4(192, 168, 0, 0), 16, "private" },
	{ V4(198, 18, 0, 0), 15, "benchmarking" },
	{ V4(198, 51, 100, 0), 24, "documentation" },
	{ V4(203, 0, 113, 0), 24, "documentation" },
	{ V4(224, 0, 0, 0), 4, "multicast" },
	{ V4(240, 0, 0, 0), 4, "reserved" },
};

/* anycast services inside the blocks above that the registry calls global */
static const struct range v4_global[] = {
	{ V4(192, 0, 0, 9), 32, NULL },
	{ V4(192, 0, 0, 10), 32, NULL },
};

#define V6(...) { __VA_ARGS__ }

static const struct range v6[] = {
	{ V6(0), 128, "unspecified" },
	{ V6([15] = 1), 128, "loopback" },
	{ V6(0x00, 0x64, 0xff, 0x9b, 0x00, 0x01), 48, "local-use IPv4/IPv6 translation" },
	{ V6(0x01, 0x00), 64, "discard-only" },
	{ V6(0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01), 64, "dummy prefix" },
	{ V6(0x20, 0x01), 23, "IETF protocol assignments" },
	{ V6(0x20, 0x01, 0x0d, 0xb8), 32, "documentation" },
	{ V6(0x3f, 0xff), 20, "documentation" },
	{ V6(0x5f, 0x00), 16, "segment routing (SRv6) SIDs" },
	{ V6(0xfc), 7, "unique local" },
	{ V6(0xfe, 0x80), 10, "link-local" },
	{ V6(0xfe, 0xc0), 10, "site-local (deprecated)" },
	{ V6(0xff), 8, "multicast" },
};

static const struct range v6_global[] = {
	{ V6(0x20, 0x01, 0x00, 0x01, [15] = 1), 128, NULL },
	{ V6(0x20, 0x01, 0x00, 0x01, [15] = 2), 128, NULL },
	{ V6(0x20, 0x01, 0x00, 0x03), 32, NULL },
	{ V6(0x20, 0x01, 0x00, 0x04, 0x01, 0x12), 48, NULL },
	{ V6(0x20, 0x01, 0x00, 0x20), 28, NULL },
};

static bool in_prefix(const uint8_t *addr, const uint8_t *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;
	if (memcmp(addr, net, full) != 0)
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (addr[full] & mask) == (net[full] & mask);
}

static const struct range *find_range(const struct range *v, size_t n, const struct range *global, size_t n_global,
				      const uint8_t *addr)
{
	for (size_t i = 0; i < n_global; i++)
		if (in_prefix(addr, global[i].addr, global[i].prefix))
			return NULL;
	for (size_t i = 0; i < n; i++)
		if (in_prefix(addr, v[i].addr, v[i].prefix))
			return &v[i];
	return NULL;
}

static const char *find(const struct range *v, size_t n, const struct range *global, size_t n_global,
			const uint8_t *addr)
{
	const struct range *r = find_range(v, n, global, n_global, addr);
	return r ? r->what : NULL;
}

/* The IPv4 address an IPv6 one carries (IPv4-mapped, NAT64 well-known prefix,
 * 6to4), or NULL. */
static const uint8_t *embedded_v4(const uint8_t *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return a + 12;
	if (a[0] == 0x20 && a[1] == 0x02)
		return a + 2;
	return NULL;
}

const char *egress_addr_special(int family, const uint8_t *addr)
{
	if (family == AF_INET)
		return find(v4, sizeof v4 / sizeof v4[0], v4_global, sizeof v4_global / sizeof v4_global[0], addr);
	const uint8_t *v4addr = embedded_v4(addr);
	if (v4addr) {
		return egress_addr_special(AF_INET, v4addr);
	}
	return find(v6, sizeof v6 / sizeof v6[0], v6_global, sizeof v6_global / sizeof v6_global[0], addr);
}

const char *egress_addr_special_range(int family, const uint8_t *addr, char *buf, size_t len)
{
	const uint8_t *v4addr = family == AF_INET6 ? embedded_v4(addr) : NULL;
	if (v4addr)
		return egress_addr_special_range(AF_INET, v4addr, buf, len);
	const struct range *r = family == AF_INET
		? find_range(v4, sizeof v4 / sizeof v4[0], v4_global, sizeof v4_global / sizeof v4_global[0], addr)
		: find_range(v6, sizeof v6 / sizeof v6[0], v6_global, sizeof v6_global / sizeof v6_global[0], addr);
	char text[INET6_ADDRSTRLEN];
	if (!r || !inet_ntop(family, r->addr, text, sizeof text))
		return NULL;
	snprintf(buf, len, "%s/%u", text, r->prefix);
	return r->what;
}

/* An entry of l for a range holding addr, on every port and protocol (an
 * allow entry for one port opens less than a name's answer may). */
static bool list_covers(const struct egress_list *l, int family, const uint8_t *addr)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct egress_entry *e = &l->v[i];
		if (e->port || e->proto)
			continue;
		if ((e->kind == EGRESS_CIDR4 && family == AF_INET) || (e->kind == EGRESS_CIDR6 && family == AF_INET6))
			if (in_prefix(addr, e->addr, e->prefix))
				return true;
	}
	return false;
}

bool egress_addr_opened(const struct egress_policy *p, int family, const uint8_t *addr)
{
	return list_covers(&p->internal, family, addr) || list_covers(&p->allow, family, addr);
}

/* Into out (room for max, counted whether or not they fit): the ranges
 * of rs, each as a CIDR entry of family, shifted by shift bits behind the
 * bytes of prefix_bytes (an IPv4 range carried in an IPv6 prefix). */
static size_t put_ranges(const struct range *rs, size_t n, int family, const uint8_t *prefix_bytes, unsigned shift,
			 struct egress_entry *out, size_t max, size_t at)
{
	for (size_t i = 0; i < n; i++, at++) {
		if (at >= max)
			continue;
		struct egress_entry *e = &out[at];
		memset(e, 0, sizeof *e);
		e->kind = family == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6;
		if (prefix_bytes)
			memcpy(e->addr, prefix_bytes, shift / 8);
		memcpy(e->addr + shift / 8, rs[i].addr, family == AF_INET || prefix_bytes ? 4 : 16);
		e->prefix = (uint8_t)(shift + rs[i].prefix);
	}
	return at;
}

size_t egress_special_ranges(int family, bool global, struct egress_entry *out, size_t max)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t sixtofour[2] = { 0x20, 0x02 };
	const struct range *r4 = global ? v4_global : v4, *r6 = global ? v6_global : v6;
	size_t n4 = global ? sizeof v4_global / sizeof v4_global[0] : sizeof v4 / sizeof v4[0];
	size_t n6 = global ? sizeof v6_global / sizeof v6_global[0] : sizeof v6 / sizeof v6[0];
	if (family == AF_INET)
		return put_ranges(r4, n4, AF_INET, NULL, 0, out, max, 0);
	size_t n = put_ranges(r6, n6, AF_INET6, NULL, 0, out, max, 0);
	/* IPv6 addresses that carry an IPv4 one are judged by it (embedded_v4) */
	n = put_ranges(r4, n4, AF_INET6, mapped, 96, out, max, n);
	n = put_ranges(r4, n4, AF_INET6, nat64, 96, out, max, n);
	return put_ranges(r4, n4, AF_INET6, sixtofour, 16, out, max, n);
}
