/* Comparing egress policies: is an entry inside a list's reach, and would one
 * policy let a container reach something another does not? The runtime asks
 * these when an annotation may only narrow the admin's allowlist, and when a
 * container joins a network namespace another container's ruleset polices. */
#include <string.h>

#include "egress.h"
#include "util.h"

/* Same entry, or a name the list's names cover, or a CIDR inside one of its
 * CIDRs — each with no narrower port or protocol on the list's side. */
bool egress_entry_covered(const struct egress_list *list, const struct egress_entry *e)
{
	char a[EGRESS_ENTRY_TEXT], b[EGRESS_ENTRY_TEXT];
	egress_entry_to_string(e, a, sizeof a);
	for (size_t i = 0; i < list->n; i++) {
		const struct egress_entry *x = &list->v[i];
		if (streq(a, egress_entry_to_string(x, b, sizeof b)))
			return true;
		if ((x->port && x->port != e->port) || (x->proto && x->proto != e->proto))
			continue;
		if (e->kind == EGRESS_NAME && egress_entry_matches_name(x, e->name))
			return true;
		if (e->kind == EGRESS_WILDCARD && x->kind == EGRESS_WILDCARD) {
			size_t le = strlen(e->name), lx = strlen(x->name);
			if (le >= lx && streq(e->name + le - lx, x->name) && (le == lx || e->name[le - lx - 1] == '.'))
				return true;
		}
		bool v4 = e->kind == EGRESS_CIDR4 && x->kind == EGRESS_CIDR4;
		bool v6 = e->kind == EGRESS_CIDR6 && x->kind == EGRESS_CIDR6;
		if ((v4 || v6) && e->prefix >= x->prefix) {
			unsigned bits = x->prefix, full = bits / 8;
			bool same = memcmp(e->addr, x->addr, full) == 0;
			if (same && bits % 8) {
				uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
				same = (e->addr[full] & mask) == (x->addr[full] & mask);
			}
			if (same)
				return true;
		}
	}
	return false;
}

/* x is y or a name below it (label boundary). */
static bool name_within(const char *x, const char *y)
{
	size_t lx = strlen(x), ly = strlen(y);
	return lx >= ly && streq(x + lx - ly, y) && (lx == ly || x[lx - ly - 1] == '.');
}

/* Could deny entry d stop anything allow entry a lets through? A CIDR deny may
 * hold the addresses any name resolves to; a name's deny only covers the
 * addresses the sentry learnt for that name, so it never meets a CIDR allow
 * (an address reached without DNS is judged by the CIDR entries only). */
static bool entries_overlap(const struct egress_entry *d, const struct egress_entry *a)
{
	if ((d->port && a->port && d->port != a->port) || (d->proto && a->proto && d->proto != a->proto))
		return false;
	bool dn = d->kind == EGRESS_NAME || d->kind == EGRESS_WILDCARD;
	bool an = a->kind == EGRESS_NAME || a->kind == EGRESS_WILDCARD;
	if (dn && an) {
		if (a->kind == EGRESS_NAME)
			return egress_entry_matches_name(d, a->name);
		if (d->kind == EGRESS_NAME)
			return egress_entry_matches_name(a, d->name);
		return name_within(a->name, d->name) || name_within(d->name, a->name);
	}
	if (dn)
		return false;
	if (an)
		return true;
	if (d->kind != a->kind)
		return false;
	unsigned bits = d->prefix < a->prefix ? d->prefix : a->prefix, full = bits / 8;
	if (memcmp(d->addr, a->addr, full))
		return false;
	uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
	return bits % 8 == 0 || (d->addr[full] & mask) == (a->addr[full] & mask);
}

/* Would a container with policy mine reach anything one with owner's cannot?
 * The first such entry into what (and whether it is an owner's deny entry that
 * mine lacks). Conservative: "no" means narrower or the same. */
bool egress_policy_wider(const struct egress_policy *mine, const struct egress_policy *owner, char *what,
			 size_t len, bool *missing_deny)
{
	/* learn mode opens what no entry names */
	if (mine->learn && !owner->learn) {
		snprintf(what, len, "learn mode");
		*missing_deny = false;
		return true;
	}
	for (size_t i = 0; i < mine->allow.n; i++) {
		const struct egress_entry *e = &mine->allow.v[i];
		/* the owner learns: any name is open to it, addresses are not */
		if (owner->learn && (e->kind == EGRESS_NAME || e->kind == EGRESS_WILDCARD))
			continue;
		if (!egress_entry_covered(&owner->allow, e)) {
			egress_entry_to_string(e, what, len);
			*missing_deny = false;
			return true;
		}
	}
	/* answers into a range the owner withholds */
	for (size_t i = 0; i < mine->internal.n; i++) {
		const struct egress_entry *e = &mine->internal.v[i];
		if (!egress_entry_covered(&owner->internal, e) && !egress_entry_covered(&owner->allow, e)) {
			char text[EGRESS_ENTRY_TEXT];
			snprintf(what, len, "internal %s", egress_entry_to_string(e, text, sizeof text));
			*missing_deny = false;
			return true;
		}
	}
	for (size_t i = 0; i < owner->deny.n; i++) {
		const struct egress_entry *d = &owner->deny.v[i];
		if (egress_entry_covered(&mine->deny, d))
			continue;
		for (size_t k = 0; k < mine->allow.n; k++)
			if (entries_overlap(d, &mine->allow.v[k])) {
				egress_entry_to_string(d, what, len);
				*missing_deny = true;
				return true;
			}
	}
	return false;
}
