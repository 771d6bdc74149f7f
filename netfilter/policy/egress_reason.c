/* Reasons on deny entries: words a kit (or an annotation) gives with an entry,
 * shown to the agent when that entry refuses something (the sentry's extended
 * DNS error, the box's refused file). They never change what is refused: the
 * policy's canonical text and every comparison leave them out. */
#include "egress.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>

#include "util.h"

/* Printable text, no control characters (UTF-8 passes as it is). */
static bool reason_text_ok(const char *r, size_t n)
{
	if (n == 0 || n > EGRESS_REASON_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)r[i];
		if (c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

static bool same_entry(const struct egress_entry *a, const struct egress_entry *b)
{
	char ta[EGRESS_ENTRY_TEXT], tb[EGRESS_ENTRY_TEXT];
	return strcmp(egress_entry_to_string(a, ta, sizeof ta), egress_entry_to_string(b, tb, sizeof tb)) == 0;
}

int egress_policy_set_reasons(struct egress_policy *p, const char *text, const char *source, struct ab_err *err)
{
	const char *line = text ? text : "";
	size_t no = 0;
	/* checked whole before anything is set: all or nothing */
	for (int pass = 0; pass < 2; pass++) {
		line = text ? text : "";
		no = 0;
		while (*line) {
			const char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			no++;
			const char *eq = memchr(line, '=', len);
			if (len == 0)
				goto next;
			if (!eq)
				return ab_error(err, 0, "%s: line %zu: expected ENTRY=REASON", source, no);
			char entry[EGRESS_ENTRY_TEXT];
			size_t elen = (size_t)(eq - line);
			if (elen == 0 || elen >= sizeof entry)
				return ab_error(err, 0, "%s: line %zu: expected ENTRY=REASON", source, no);
			memcpy(entry, line, elen);
			entry[elen] = 0;
			const char *reason = eq + 1;
			size_t rlen = len - elen - 1;
			if (!reason_text_ok(reason, rlen))
				return ab_error(err, 0, "%s: entry \"%s\": a reason is 1 to %d bytes of text without control characters",
						source, entry, EGRESS_REASON_MAX);
			struct egress_policy one = {0};
			if (egress_policy_add(&one, entry, true, source, err) < 0)
				return -1;
			struct egress_entry *d = NULL;
			for (size_t i = 0; i < p->deny.n && !d; i++)
				if (same_entry(&p->deny.v[i], &one.deny.v[0]))
					d = &p->deny.v[i];
			egress_policy_free(&one);
			if (!d)
				return ab_error(err, 0, "%s: entry \"%s\" is not a deny entry of the policy: a reason goes with a deny entry",
						source, entry);
			if (pass == 1) {
				free(d->reason);
				d->reason = xasprintf("%.*s", (int)rlen, reason);
			}
next:
			line += len + (nl ? 1 : 0);
		}
	}
	return 0;
}

static bool in_prefix(const struct egress_entry *e, int family, const uint8_t *addr)
{
	if (e->kind != (family == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6))
		return false;
	unsigned bits = e->prefix;
	if (memcmp(addr, e->addr, bits / 8) != 0)
		return false;
	uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
	return bits % 8 == 0 || (addr[bits / 8] & mask) == (e->addr[bits / 8] & mask);
}

const char *egress_deny_reason(const struct egress_policy *p, const char *name, int family, const uint8_t *addr,
			       uint8_t proto, int port)
{
	for (size_t i = 0; i < p->deny.n; i++) {
		const struct egress_entry *e = &p->deny.v[i];
		if (!e->reason)
			continue;
		bool by_port = (!e->proto || !proto || e->proto == proto) && (!e->port || port < 0 || e->port == port);
		if (name && (e->kind == EGRESS_NAME || e->kind == EGRESS_WILDCARD) && egress_entry_matches_name(e, name) &&
		    (addr ? by_port : !e->port && !e->proto))
			return e->reason;
		if (addr && by_port && in_prefix(e, family, addr))
			return e->reason;
	}
	return NULL;
}
