/* DNS messages as the sentry reads them: a query from the container (header,
 * question, the REFUSED/FORMERR reply built from it, the EDNS size) and an
 * answer from the upstream (CNAME chain, addresses, TTL clamping), both from
 * the same bytes. */
#include "fuzz.h"

#include <errno.h>
#include <sys/socket.h>

#include "dns.h"

#define FZ_DNS_QUERY_MAX 1024   /* the sentry's DNS_QUERY_MAX */

static void fz_dns_check_name(const char *name)
{
	size_t n = strnlen(name, DNS_NAME_TEXT);
	FUZZ_CHECK(n < DNS_NAME_TEXT, "name not terminated");
	FUZZ_CHECK(n <= 253, "name of %zu chars", n);
}

static void fz_dns_query_side(const uint8_t *data, size_t size)
{
	struct dns_header h;
	struct dns_question q;
	if (dns_parse_header(data, size, &h) < 0) {
		FUZZ_CHECK(size < DNS_HEADER_LEN, "header refused");
		return;
	}
	int r = dns_parse_question(data, size, &h, &q);
	const struct dns_question *with_q = NULL;
	if (r == 0 || r == -EINVAL) {
		fz_dns_check_name(q.name);
		FUZZ_CHECK(q.end > DNS_HEADER_LEN && q.end <= size, "question end %zu of %zu", q.end, size);
		with_q = &q;
	} else {
		FUZZ_CHECK(r == -EBADMSG, "question: %d", r);
	}
	/* the sentry's reply buffer */
	uint8_t out[FZ_DNS_QUERY_MAX + 16];
	size_t n = dns_build_error(data, size, size <= FZ_DNS_QUERY_MAX ? with_q : NULL,
				   DNS_RCODE_REFUSED, out, sizeof out);
	FUZZ_CHECK(n >= DNS_HEADER_LEN && n <= sizeof out, "reply of %zu bytes", n);
	struct dns_header rh;
	FUZZ_CHECK(dns_parse_header(out, n, &rh) == 0, "reply header");
	FUZZ_CHECK((rh.flags & DNS_FLAG_QR) && rh.id == h.id && DNS_RCODE(rh.flags) == DNS_RCODE_REFUSED,
		   "reply flags %#x", rh.flags);
	if (with_q && size <= FZ_DNS_QUERY_MAX) {
		struct dns_question rq;
		int rr = dns_parse_question(out, n, &rh, &rq);
		FUZZ_CHECK(rr == r && strcmp(rq.name, q.name) == 0 && rq.type == q.type, "reply question");
	}
	/* the refusal: never an answer record, within 512 bytes when it has OPT */
	size_t rn = dns_build_refusal(data, size, size <= FZ_DNS_QUERY_MAX ? with_q : NULL, DNS_RCODE_NXDOMAIN,
				      DNS_EDE_BLOCKED, "agentbox egress policy: denied", out, sizeof out);
	FUZZ_CHECK(rn >= DNS_HEADER_LEN && rn <= sizeof out, "refusal of %zu bytes", rn);
	FUZZ_CHECK(dns_parse_header(out, rn, &rh) == 0 && rh.ancount == 0 && rh.nscount == 0 && rh.arcount <= 1 &&
		   DNS_RCODE(rh.flags) == DNS_RCODE_NXDOMAIN, "refusal header");
	FUZZ_CHECK(rh.arcount == 0 || rn <= DNS_REFUSAL_MAX, "refusal with OPT of %zu bytes", rn);
	uint16_t code;
	char text[64];
	FUZZ_CHECK(dns_answer_ede(out, rn, &code, text, sizeof text) == (rh.arcount ? 0 : -ENOENT) &&
		   (!rh.arcount || (code == DNS_EDE_BLOCKED && strcmp(text, "agentbox egress policy: denied") == 0)),
		   "the refusal's extended error read back");
	(void)dns_answer_ede(data, size, &code, text, sizeof text);   /* any message: within bounds */
	size_t udp = dns_query_udp_size(data, size);
	FUZZ_CHECK(udp >= 512 && udp <= 65535, "udp size %zu", udp);

	/* a name the sentry accepted builds back into the same question */
	if (r == 0) {
		uint8_t qb[DNS_HEADER_LEN + 256 + 4];
		size_t qn = dns_build_query(h.id, q.name, q.type, qb, sizeof qb);
		FUZZ_CHECK(qn > 0, "\"%s\" did not rebuild", q.name);
		struct dns_header h2;
		struct dns_question q2;
		FUZZ_CHECK(dns_parse_question(qb, qn, &h2, &q2) == 0, "rebuilt query");
		FUZZ_CHECK(strcmp(q2.name, q.name) == 0 && q2.type == q.type && q2.end == qn,
			   "rebuilt \"%s\" as \"%s\"", q.name, q2.name);
	}
}

static void fz_dns_answer_side(const uint8_t *data, size_t size)
{
	struct dns_answer *a = malloc(sizeof *a);
	if (!a)
		abort();
	int r = dns_parse_answer(data, size, a);
	if (r == 0) {
		FUZZ_CHECK(a->n_chain >= 1 && a->n_chain <= DNS_MAX_CHAIN, "chain of %zu", a->n_chain);
		FUZZ_CHECK(a->n_addrs <= DNS_MAX_ADDRS, "%zu addresses", a->n_addrs);
		for (size_t i = 0; i < a->n_chain; i++)
			fz_dns_check_name(a->chain[i]);
		for (size_t i = 0; i < a->n_addrs; i++)
			FUZZ_CHECK(a->addrs[i].family == AF_INET || a->addrs[i].family == AF_INET6, "family");
		/* clamping works on every answer that parses; when the answer still
		 * reads the same afterwards (the sentry refuses one that does not:
		 * names spelt with TTL bytes), no address outlives the clamp */
		uint8_t *copy = malloc(size ? size : 1);
		if (!copy)
			abort();
		memcpy(copy, data, size);
		FUZZ_CHECK(dns_clamp_ttls(copy, size, 3600) == 0, "clamp failed on a parsed answer");
		struct dns_answer *b = malloc(sizeof *b);
		if (!b)
			abort();
		if (dns_parse_answer(copy, size, b) == 0 && b->n_addrs == a->n_addrs && b->n_chain == a->n_chain)
			for (size_t i = 0; i < b->n_addrs; i++)
				FUZZ_CHECK(b->addrs[i].ttl <= 3600, "ttl %u after clamp", b->addrs[i].ttl);
		free(b);
		free(copy);
	} else {
		FUZZ_CHECK(r == -EBADMSG || r == -EINVAL, "answer: %d", r);
	}
	free(a);
	/* every record the sentry may walk */
	struct dns_header h;
	struct dns_question q;
	if (dns_parse_question(data, size, &h, &q) == 0) {
		size_t off = q.end;
		unsigned n = (unsigned)h.ancount + h.nscount + h.arcount;
		for (unsigned i = 0; i < n; i++) {
			struct dns_rr rr;
			size_t before = off;
			if (dns_parse_rr(data, size, &off, &rr) < 0)
				break;
			FUZZ_CHECK(off > before && off <= size, "record at %zu ends at %zu", before, off);
			fz_dns_check_name(rr.name);
		}
	}
}

FUZZ_TARGET(dns)
{
	fz_dns_query_side(data, size);
	fz_dns_answer_side(data, size);
	return 0;
}
