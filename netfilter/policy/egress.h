/* The egress policy model: allow, deny and internal entries, parsed,
 * printed, matched and compared. The ruleset that enforces it
 * (netfilter/ruleset/ruleset.h), the network namespace it lives in
 * (netfilter/ruleset/netns.h) and the DNS sentry (netfilter/sentry/sentry.h)
 * have headers of their own. See netfilter/README.md for the design. */
#ifndef AGENTBOX_EGRESS_H
#define AGENTBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* ---- policy model ---- */

enum egress_kind {
	EGRESS_NAME,     /* example.com: exactly that name */
	EGRESS_WILDCARD, /* *.example.com: one or more labels below it, not the apex */
	EGRESS_CIDR4,    /* 198.51.100.0/24, 198.51.100.7 (= /32) */
	EGRESS_CIDR6,    /* 2001:db8::/48, [2001:db8::1] (= /128) */
};

struct egress_entry {
	enum egress_kind kind;
	char *name;        /* NAME: lowercase, no final dot; WILDCARD: the suffix after "*." */
	uint8_t addr[16];  /* CIDR: network address (4 or 16 bytes used) */
	uint8_t prefix;    /* CIDR: prefix length */
	uint8_t proto;     /* 0 = any, IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;     /* 0 = any port */
	char *reason;      /* deny entries: why, in the kit's words (egress_reason.c); NULL: none */
};

struct egress_list {
	struct egress_entry *v;
	size_t n, cap;
};

struct egress_policy {
	struct egress_list allow, deny;
	/* Address ranges (CIDR entries only) that answers for allowed names may
	 * point into although they are special-purpose (private, loopback,
	 * link-local, ...) or the host's own: the sentry withholds such answers
	 * otherwise. Nothing in them is reachable without an allowed name. */
	struct egress_list internal;
	/* Learn mode (agentbox-egress(7), LEARN MODE): egress is open, through
	 * the same sentry, which records what is reached. Deny entries still
	 * refuse, answers pointing inside are still withheld, and connections
	 * to special-purpose ranges the policy does not open are still refused;
	 * a name no entry names is allowed (egress_policy_check_name,
	 * sni_name_verdict say so). */
	bool learn;
};

#define EGRESS_MAX_ENTRIES 4096

/* Parse a comma-separated list of entries and append them to the allow or deny
 * list; source names the origin in errors ("annotation agentbox.egress.allow").
 * All or nothing: on error p is unchanged. Empty or blank list = no entries. */
int egress_policy_add(struct egress_policy *p, const char *list, bool deny, const char *source,
		      struct ab_err *err);
/* The same for the internal list: CIDR entries without port or protocol. */
int egress_policy_add_internal(struct egress_policy *p, const char *list, const char *source, struct ab_err *err);
void egress_policy_free(struct egress_policy *p);
bool egress_policy_is_empty(const struct egress_policy *p);
/* Does any allow or deny entry name a domain (so the sentry has work to do)? */
bool egress_policy_has_domains(const struct egress_policy *p);
/* Does any allow entry name a domain, or is it learn mode (so the sentry may
 * forward a lookup and add its addresses: the work of its helpers)? */
bool egress_policy_allows_names(const struct egress_policy *p);
/* Canonical text: "allow=e1,e2;deny=e3[;internal=e4][;mode=learn]" with every
 * entry in canonical form (lowercase, normalized addresses, /32 and /128
 * dropped); the internal part only when there is one, the mode only in learn
 * mode. Caller frees. */
char *egress_policy_to_string(const struct egress_policy *p);
/* The policy that text (as egress_policy_to_string writes it) describes;
 * source names it in errors. */
int egress_policy_from_string(const char *text, const char *source, struct egress_policy *ret, struct ab_err *err);
/* One entry in canonical form into buf; returns buf. */
char *egress_entry_to_string(const struct egress_entry *e, char *buf, size_t len);

/* Reasons for deny entries (egress_reason.c), from TEXT: lines
 * "ENTRY=REASON", each ENTRY one of p's deny entries (any spelling of it).
 * All or nothing; source names the origin in errors. */
#define EGRESS_REASON_MAX 200
int egress_policy_set_reasons(struct egress_policy *p, const char *text, const char *source, struct ab_err *err);
/* The reason of a deny entry that refuses this: a name (its lookup, when addr
 * is NULL), or an address (family, addr; proto 0 and port -1 when unknown),
 * with the name that led there when known. NULL when none has one. */
const char *egress_deny_reason(const struct egress_policy *p, const char *name, int family, const uint8_t *addr,
			       uint8_t proto, int port);

/* Does a NAME or WILDCARD entry match the lowercase name (no final dot)? */
bool egress_entry_matches_name(const struct egress_entry *e, const char *name);

/* Room for any entry's canonical text: "*." + a 253-character name + ":65535/tcp"
 * is 265. (A shorter buffer cut ports and protocols off, and two entries that
 * differ only there compared equal.) */
#define EGRESS_ENTRY_TEXT 320

/* Is entry e inside what list allows? The same entry, a name the list's names
 * cover, or a CIDR inside one of its CIDRs, each with no narrower port or
 * protocol on the list's side (egress_compare.c). */
bool egress_entry_covered(const struct egress_list *list, const struct egress_entry *e);
/* Would a container with policy mine reach anything one with owner's cannot?
 * The first such entry goes into what, and *missing_deny says whether it is an
 * owner's deny entry that mine lacks. Conservative: false means narrower or
 * the same. */
bool egress_policy_wider(const struct egress_policy *mine, const struct egress_policy *owner, char *what,
			 size_t len, bool *missing_deny);

/* Is addr (4 or 16 bytes) in a special-purpose range (netfilter/policy/special.c)?
 * What kind ("loopback", "private", ...) or NULL. */
const char *egress_addr_special(int family, const uint8_t *addr);
/* The same, and the range itself as CIDR text in buf ("198.18.0.0/15"); an
 * IPv6 address that carries an IPv4 one gives that one's range. */
const char *egress_addr_special_range(int family, const uint8_t *addr, char *buf, size_t len);
/* The ranges egress_addr_special names (global false), or the globally
 * reachable exceptions inside them (global true), of family, as CIDR entries
 * with no port or protocol: IPv6 ones include the IPv4 ranges as IPv6
 * addresses carry them (IPv4-mapped, NAT64's 64:ff9b::/96, 6to4). At most
 * max into out; returns how many there are. */
size_t egress_special_ranges(int family, bool global, struct egress_entry *out, size_t max);
/* Does the policy open addr's range on purpose: an internal entry, or a CIDR
 * allow entry for every port and protocol, holds it? */
bool egress_addr_opened(const struct egress_policy *p, int family, const uint8_t *addr);

enum egress_name_verdict {
	EGRESS_NAME_NONE,  /* no allow entry names it: REFUSED */
	EGRESS_NAME_DENY,  /* a deny entry without port or protocol names it: REFUSED */
	EGRESS_NAME_ALLOW, /* resolve it; set elements follow the matching entries
			    * (learn mode: a name no entry names, too) */
};
enum egress_name_verdict egress_policy_check_name(const struct egress_policy *p, const char *name);

#endif
