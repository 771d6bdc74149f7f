/* Egress entries as they come from --egress-allow/--egress-deny, config.yaml
 * and the agentbox.egress.* annotations (egress_policy_add).
 *
 * Input: one flag byte, then up to two comma-separated lists separated by a
 * newline (flag bit 1: the second list is the internal one). Invariants: a
 * failed add leaves the policy unchanged; every entry's canonical text fits
 * the buffers the runtime prints it into and parses back to itself; the
 * policy's canonical text is a fixed point; an internal list holds ranges
 * only. */
#include <sys/socket.h>

#include "fuzz.h"

#include "egress.h"

/* The largest canonical entry: "*." + 253-char name + ":65535" + "/tcp". */
#define FZ_EGRESS_ENTRY_MAX 265

static void fz_egress_roundtrip(const struct egress_entry *e)
{
	char buf[1024];
	egress_entry_to_string(e, buf, sizeof buf);
	size_t n = strlen(buf);
	FUZZ_CHECK(n > 0 && n <= FZ_EGRESS_ENTRY_MAX, "canonical entry of %zu chars: %s", n, buf);
	struct egress_policy q = {0};
	struct ab_err err = {0};
	int r = egress_policy_add(&q, buf, false, "canonical", &err);
	FUZZ_CHECK(r == 0, "canonical entry \"%s\" does not parse: %s", buf, err.msg);
	FUZZ_CHECK(q.allow.n == 1, "canonical entry \"%s\" gives %zu entries", buf, q.allow.n);
	char again[1024];
	egress_entry_to_string(&q.allow.v[0], again, sizeof again);
	FUZZ_CHECK(strcmp(buf, again) == 0, "\"%s\" reads back as \"%s\"", buf, again);
	if (e->kind == EGRESS_NAME)
		FUZZ_CHECK(egress_entry_matches_name(e, e->name), "%s does not match its own name", buf);
	if (e->kind == EGRESS_WILDCARD)
		FUZZ_CHECK(!egress_entry_matches_name(e, e->name), "%s matches its apex", buf);
	egress_policy_free(&q);
}

static int fz_egress_add(struct egress_policy *p, const char *list, bool deny)
{
	struct ab_err err = {0};
	size_t na = p->allow.n, nd = p->deny.n;
	int r = egress_policy_add(p, list, deny, "annotation agentbox.egress.allow", &err);
	if (r < 0) {
		FUZZ_CHECK_ERR(&err);
		FUZZ_CHECK(p->allow.n == na && p->deny.n == nd, "a failed add changed the policy");
	}
	FUZZ_CHECK(p->allow.n + p->deny.n <= 2 * EGRESS_MAX_ENTRIES, "too many entries");
	return r;
}

FUZZ_TARGET(egress)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	char *text = fuzz_cstr(data + 1, size - 1);
	char *second = strchr(text, '\n');
	if (second)
		*second++ = 0;
	struct egress_policy p = {0};
	fz_egress_add(&p, text, flags & 1);
	if (second && (flags & 2)) {
		struct ab_err err = {0};
		if (egress_policy_add_internal(&p, second, "--egress-internal", &err) < 0)
			FUZZ_CHECK_ERR(&err);
		FUZZ_CHECK(p.internal.n <= EGRESS_MAX_ENTRIES, "too many internal entries");
		for (size_t i = 0; i < p.internal.n; i++) {
			const struct egress_entry *e = &p.internal.v[i];
			FUZZ_CHECK((e->kind == EGRESS_CIDR4 || e->kind == EGRESS_CIDR6) && !e->port && !e->proto,
				   "an internal entry that is not a bare range");
			(void)egress_addr_special(e->kind == EGRESS_CIDR4 ? AF_INET : AF_INET6, e->addr);
		}
	} else if (second)
		fz_egress_add(&p, second, !(flags & 1));

	for (size_t i = 0; i < p.allow.n; i++)
		fz_egress_roundtrip(&p.allow.v[i]);
	for (size_t i = 0; i < p.deny.n; i++)
		fz_egress_roundtrip(&p.deny.v[i]);

	/* the canonical policy text is a fixed point */
	char *s = egress_policy_to_string(&p);
	FUZZ_CHECK(strncmp(s, "allow=", 6) == 0 && strstr(s, ";deny="), "%s", s);
	struct egress_policy q = {0};
	struct ab_err err = {0};
	FUZZ_CHECK(egress_policy_from_string(s, "canonical", &q, &err) == 0, "%s: %s", s, err.msg);
	char *t = egress_policy_to_string(&q);
	FUZZ_CHECK(strcmp(s, t) == 0, "\"%s\" reads back as \"%s\"", s, t);
	FUZZ_CHECK(egress_policy_has_domains(&p) == egress_policy_has_domains(&q), "has_domains differs");

	/* name verdicts: a denied name never resolves */
	for (size_t i = 0; i < p.deny.n; i++) {
		const struct egress_entry *e = &p.deny.v[i];
		if (e->kind == EGRESS_NAME && !e->port && !e->proto)
			FUZZ_CHECK(egress_policy_check_name(&p, e->name) == EGRESS_NAME_DENY, "%s not denied", e->name);
	}
	for (size_t i = 0; i < p.allow.n; i++)
		if (p.allow.v[i].kind == EGRESS_NAME)
			(void)egress_policy_check_name(&p, p.allow.v[i].name);
	free(t);
	free(s);
	egress_policy_free(&q);
	egress_policy_free(&p);
	free(text);
	return 0;
}
