/* The sentry's DNS parser: good answers with CNAME chains and compression,
 * and malformed messages (truncations, pointer loops, oversize counts) that
 * must come back as errors, never as crashes or reads out of bounds. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "dns.h"
#include "tap.h"
#include "util.h"

/* ---- a small message builder ---- */

struct msg {
	uint8_t b[8192];
	size_t n;
};

static void u8(struct msg *m, uint8_t v) { m->b[m->n++] = v; }
static void u16(struct msg *m, uint16_t v) { u8(m, (uint8_t)(v >> 8)); u8(m, (uint8_t)v); }
static void u32(struct msg *m, uint32_t v) { u16(m, (uint16_t)(v >> 16)); u16(m, (uint16_t)v); }

static void header(struct msg *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar)
{
	m->n = 0;
	u16(m, id); u16(m, flags); u16(m, qd); u16(m, an); u16(m, ns); u16(m, ar);
}

/* dotted name, uncompressed; returns its offset */
static size_t name(struct msg *m, const char *s)
{
	size_t at = m->n;
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		u8(m, (uint8_t)l);
		memcpy(m->b + m->n, s, l);
		m->n += l;
		s += l + (dot ? 1 : 0);
	}
	u8(m, 0);
	return at;
}

static void ptr(struct msg *m, size_t to) { u16(m, (uint16_t)(0xc000 | to)); }

static void question(struct msg *m, const char *qname, uint16_t type)
{
	name(m, qname);
	u16(m, type);
	u16(m, DNS_CLASS_IN);
}

static void rr_head(struct msg *m, uint16_t type, uint32_t ttl, uint16_t rdlen)
{
	u16(m, type); u16(m, DNS_CLASS_IN); u32(m, ttl); u16(m, rdlen);
}

/* an A (AF_INET) or AAAA record for the address in text */
static void rr_addr(struct msg *m, int family, const char *addr, uint32_t ttl)
{
	uint8_t a[16];
	uint16_t len = family == AF_INET ? 4 : 16;
	inet_pton(family, addr, a);
	rr_head(m, family == AF_INET ? DNS_TYPE_A : DNS_TYPE_AAAA, ttl, len);
	memcpy(m->b + m->n, a, len);
	m->n += len;
}

static void rr_a(struct msg *m, const char *addr, uint32_t ttl) { rr_addr(m, AF_INET, addr, ttl); }
static void rr_aaaa(struct msg *m, const char *addr, uint32_t ttl) { rr_addr(m, AF_INET6, addr, ttl); }

/* CNAME with an uncompressed target */
static size_t rr_cname(struct msg *m, const char *target, uint32_t ttl)
{
	size_t len_at = m->n + 8;
	rr_head(m, DNS_TYPE_CNAME, ttl, 0);
	size_t start = m->n, at = name(m, target);
	uint16_t l = (uint16_t)(m->n - start);
	m->b[len_at] = (uint8_t)(l >> 8);
	m->b[len_at + 1] = (uint8_t)l;
	return at;
}

static const char *addr_str(const struct dns_addr *a)
{
	static char buf[INET6_ADDRSTRLEN];
	return inet_ntop(a->family, a->addr, buf, sizeof buf);
}

static struct dns_answer ans;

/* www.example.com CNAME cdn.example.net CNAME edge.cdn.test, two A, one AAAA,
 * plus a stray A for an unrelated name; names compressed where they repeat. */
static void build_chain(struct msg *m, bool reverse)
{
	header(m, 0x1234, DNS_FLAG_QR | DNS_FLAG_RD | DNS_FLAG_RA, 1, 6, 0, 0);
	question(m, "WWW.Example.com", DNS_TYPE_A);
	size_t cdn, edge;
	if (!reverse) {
		ptr(m, 12);
		cdn = rr_cname(m, "cdn.example.net", 300);
		ptr(m, cdn);
		edge = rr_cname(m, "edge.cdn.test", 60);
	} else {
		/* the second link first: owner and target spelled out */
		cdn = name(m, "cdn.example.net");
		edge = rr_cname(m, "edge.cdn.test", 60);
		ptr(m, 12);
		size_t len_at = m->n + 8;
		rr_head(m, DNS_TYPE_CNAME, 300, 2);
		ptr(m, cdn);
		(void)len_at;
	}
	ptr(m, edge);
	rr_a(m, "198.51.100.1", 30);
	ptr(m, edge);
	rr_a(m, "198.51.100.2", 0x80000001u);
	ptr(m, edge);
	rr_aaaa(m, "2001:db8::5", 7200);
	name(m, "stray.test");
	rr_a(m, "203.0.113.9", 30);
}

static void good_answers(void)
{
	struct msg m;
	for (int reverse = 0; reverse < 2; reverse++) {
		build_chain(&m, reverse);
		ok(dns_parse_answer(m.b, m.n, &ans) == 0, "chain answer parses (%s order)", reverse ? "reverse" : "natural");
		is_str(ans.q.name, "www.example.com", "qname lowercased");
		ok(ans.n_chain == 3, "chain of 3 (got %zu)", ans.n_chain);
		is_str(ans.chain[1], "cdn.example.net", "first CNAME");
		is_str(ans.chain[2], "edge.cdn.test", "second CNAME");
		ok(ans.n_addrs == 3, "3 addresses, the stray one ignored (got %zu)", ans.n_addrs);
		is_str(addr_str(&ans.addrs[0]), "198.51.100.1", "first A");
		ok(ans.addrs[1].ttl == 0, "TTL with the top bit set is 0");
		ok(ans.addrs[2].family == AF_INET6 && ans.addrs[2].ttl == 7200, "AAAA with its TTL");
		ok(!ans.chain_cut && !ans.addrs_cut, "nothing cut");
	}

	build_chain(&m, false);
	ok(dns_clamp_ttls(m.b, m.n, 3600) == 0, "clamp TTLs");
	ok(dns_parse_answer(m.b, m.n, &ans) == 0 && ans.addrs[2].ttl == 3600 && ans.addrs[0].ttl == 30,
	   "7200 lowered to 3600, 30 kept");

	/* CNAME loop a -> b -> a */
	header(&m, 1, DNS_FLAG_QR, 1, 2, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ptr(&m, 12);
	size_t b = rr_cname(&m, "b.test", 10);
	ptr(&m, b);
	rr_head(&m, DNS_TYPE_CNAME, 10, 2);
	ptr(&m, 12);
	ok(dns_parse_answer(m.b, m.n, &ans) == 0 && ans.n_chain == 2 && ans.chain_cut, "CNAME loop stops, flagged");

	/* a chain longer than DNS_MAX_CHAIN */
	header(&m, 1, DNS_FLAG_QR, 1, 20, 0, 0);
	question(&m, "c0.test", DNS_TYPE_A);
	size_t prev = 12;
	for (int i = 1; i <= 20; i++) {
		char t[32];
		snprintf(t, sizeof t, "c%d.test", i);
		ptr(&m, prev);
		prev = rr_cname(&m, t, 10);
	}
	ok(dns_parse_answer(m.b, m.n, &ans) == 0 && ans.n_chain == DNS_MAX_CHAIN && ans.chain_cut, "long chain cut at %d",
	   DNS_MAX_CHAIN);

	/* more A records than DNS_MAX_ADDRS */
	header(&m, 1, DNS_FLAG_QR, 1, 70, 0, 0);
	question(&m, "many.test", DNS_TYPE_A);
	for (int i = 0; i < 70; i++) {
		char a[32];
		snprintf(a, sizeof a, "198.51.100.%d", i);
		ptr(&m, 12);
		rr_a(&m, a, 10);
	}
	ok(dns_parse_answer(m.b, m.n, &ans) == 0 && ans.n_addrs == DNS_MAX_ADDRS && ans.addrs_cut, "addresses capped");

	/* NXDOMAIN with nothing in it */
	header(&m, 7, DNS_FLAG_QR | DNS_RCODE_NXDOMAIN, 1, 0, 0, 0);
	question(&m, "nx.test", DNS_TYPE_AAAA);
	ok(dns_parse_answer(m.b, m.n, &ans) == 0 && DNS_RCODE(ans.hdr.flags) == DNS_RCODE_NXDOMAIN && ans.n_addrs == 0,
	   "NXDOMAIN");
}

static void bad_messages(void)
{
	struct msg m = {0};
	char nm[DNS_NAME_TEXT];
	size_t off;

	ok(dns_parse_answer(m.b, 11, &ans) == -EBADMSG, "short header");

	build_chain(&m, false);
	size_t full = m.n;
	int crashes = 0;
	for (size_t n = 0; n < full; n++)
		if (dns_parse_answer(m.b, n, &ans) != -EBADMSG)
			crashes++;
	ok(crashes == 0, "every truncation of a good answer is -EBADMSG");

	/* pointer to itself */
	header(&m, 1, DNS_FLAG_QR, 1, 1, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	size_t self = m.n;
	ptr(&m, self);
	rr_a(&m, "198.51.100.1", 1);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "pointer to itself");

	/* forward pointer */
	header(&m, 1, DNS_FLAG_QR, 1, 1, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ptr(&m, m.n + 2);
	rr_a(&m, "198.51.100.1", 1);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "forward pointer");

	/* two pointers at each other: the second points forward */
	header(&m, 1, 0, 1, 0, 0, 0);
	m.n = 12;
	u8(&m, 1); u8(&m, 'a'); ptr(&m, 17);   /* 12: "a" -> 17 */
	u8(&m, 0);                              /* 16 */
	ptr(&m, 12);                            /* 17: -> 12 */
	off = 12;
	ok(dns_parse_name(m.b, m.n, &off, nm) == -EBADMSG, "pointer cycle");

	/* pointer past the end */
	header(&m, 1, 0, 1, 0, 0, 0);
	u16(&m, 0xc000 | 0x3fff);
	off = 12;
	ok(dns_parse_name(m.b, m.n, &off, nm) == -EBADMSG, "pointer beyond the message");

	/* half a pointer */
	header(&m, 1, 0, 1, 0, 0, 0);
	u8(&m, 0xc0);
	off = 12;
	ok(dns_parse_name(m.b, m.n, &off, nm) == -EBADMSG, "truncated pointer");

	/* extended label type */
	header(&m, 1, 0, 1, 0, 0, 0);
	u8(&m, 0x41);
	u8(&m, 0);
	off = 12;
	ok(dns_parse_name(m.b, m.n, &off, nm) == -EBADMSG, "0x40 label type");

	/* name over 255 bytes on the wire */
	header(&m, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 5; i++) {
		u8(&m, 63);
		memset(m.b + m.n, 'a', 63);
		m.n += 63;
	}
	u8(&m, 0);
	off = 12;
	ok(dns_parse_name(m.b, m.n, &off, nm) == -EBADMSG, "320-byte name");

	/* long name built from many pointers into one long label run: still <= 255 */
	header(&m, 1, 0, 1, 0, 0, 0);
	size_t at[8];
	at[0] = m.n;
	u8(&m, 63);
	memset(m.b + m.n, 'b', 63);
	m.n += 63;
	u8(&m, 0);
	for (int i = 1; i < 8; i++) {
		at[i] = m.n;
		u8(&m, 63);
		memset(m.b + m.n, 'b', 63);
		m.n += 63;
		ptr(&m, at[i - 1]);
	}
	off = at[7];
	ok(dns_parse_name(m.b, m.n, &off, nm) == -EBADMSG, "compressed name over 255 bytes");

	/* oversize counts */
	header(&m, 1, DNS_FLAG_QR, 1, 65535, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ptr(&m, 12);
	rr_a(&m, "198.51.100.1", 1);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "ancount 65535 with one record");
	header(&m, 1, DNS_FLAG_QR, 2, 0, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	question(&m, "b.test", DNS_TYPE_A);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "two questions");
	header(&m, 1, DNS_FLAG_QR, 0, 0, 0, 0);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "no question");

	/* rdlen beyond the end, and an A record of the wrong size */
	header(&m, 1, DNS_FLAG_QR, 1, 1, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ptr(&m, 12);
	rr_head(&m, DNS_TYPE_A, 1, 400);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "rdlen past the end");
	header(&m, 1, DNS_FLAG_QR, 1, 1, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ptr(&m, 12);
	rr_head(&m, DNS_TYPE_A, 1, 5);
	u32(&m, 0);
	u8(&m, 0);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "5-byte A record");

	/* a CNAME whose target does not fill its rdata */
	header(&m, 1, DNS_FLAG_QR, 1, 1, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ptr(&m, 12);
	rr_head(&m, DNS_TYPE_CNAME, 1, 4);
	ptr(&m, 12);
	u16(&m, 0);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "CNAME rdata with trailing bytes");

	/* a query (QR clear) is not an answer */
	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, "a.test", DNS_TYPE_A);
	ok(dns_parse_answer(m.b, m.n, &ans) == -EBADMSG, "QR clear");

	/* odd bytes in a name: refused, but the question is still located */
	struct dns_header h;
	struct dns_question q;
	header(&m, 1, 0, 1, 0, 0, 0);
	u8(&m, 3); u8(&m, 'a'); u8(&m, '.'); u8(&m, 'b');
	u8(&m, 4); memcpy(m.b + m.n, "test", 4); m.n += 4;
	u8(&m, 0);
	u16(&m, DNS_TYPE_A);
	u16(&m, DNS_CLASS_IN);
	ok(dns_parse_question(m.b, m.n, &h, &q) == -EINVAL && q.end == m.n, "dot inside a label: -EINVAL, end known");
	header(&m, 1, 0, 1, 0, 0, 0);
	u8(&m, 2); u8(&m, 'a'); u8(&m, 0);
	u8(&m, 0);
	u16(&m, DNS_TYPE_A);
	u16(&m, DNS_CLASS_IN);
	ok(dns_parse_question(m.b, m.n, &h, &q) == -EINVAL, "NUL inside a label");

	/* random corruption of a good answer must never crash (run under ASan) */
	uint32_t seed = 12345;
	int errors = 0;
	for (int i = 0; i < 20000; i++) {
		build_chain(&m, i & 1);
		for (int k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245 + 12345;
			m.b[(seed >> 8) % m.n] ^= (uint8_t)(seed >> 16);
		}
		if (dns_parse_answer(m.b, m.n, &ans) < 0)
			errors++;
		(void)dns_clamp_ttls(m.b, m.n, 60);
		(void)dns_query_udp_size(m.b, m.n);
	}
	ok(errors > 0, "random corruption: %d of 20000 rejected, none crashed", errors);
}

static void queries_and_replies(void)
{
	uint8_t q[512], out[600];
	size_t qlen = dns_build_query(0xbeef, "Allowed.Test", DNS_TYPE_AAAA, q, sizeof q);
	struct dns_header h;
	struct dns_question qq;
	ok(qlen > 0 && dns_parse_question(q, qlen, &h, &qq) == 0, "built query parses");
	ok(h.id == 0xbeef && (h.flags & DNS_FLAG_RD) && qq.type == DNS_TYPE_AAAA, "id, RD, type");
	is_str(qq.name, "allowed.test", "name lowercased");
	ok(dns_query_udp_size(q, qlen) == 512, "no OPT: 512");

	/* add an OPT record advertising 4096 */
	struct msg m;
	memcpy(m.b, q, qlen);
	m.n = qlen;
	m.b[11] = 1;   /* arcount */
	u8(&m, 0);
	u16(&m, DNS_TYPE_OPT);
	u16(&m, 4096);
	u32(&m, 0);
	u16(&m, 0);
	ok(dns_query_udp_size(m.b, m.n) == 4096, "OPT: 4096");

	size_t olen = dns_build_error(q, qlen, &qq, DNS_RCODE_REFUSED, out, sizeof out);
	struct dns_header rh;
	struct dns_question rq;
	ok(olen == qlen && dns_parse_question(out, olen, &rh, &rq) == 0, "REFUSED reply parses");
	ok(rh.id == 0xbeef && (rh.flags & DNS_FLAG_QR) && (rh.flags & DNS_FLAG_RD) && DNS_RCODE(rh.flags) == DNS_RCODE_REFUSED &&
		   rh.ancount == 0,
	   "REFUSED: id, QR, RD, rcode, no answers");
	ok(dns_parse_answer(out, olen, &ans) == 0 && ans.n_addrs == 0, "REFUSED reply as an answer");
	olen = dns_build_error(q, qlen, NULL, DNS_RCODE_FORMERR, out, sizeof out);
	ok(olen == DNS_HEADER_LEN && out[5] == 0, "FORMERR without the question");

	/* a refusal: NXDOMAIN, and an extended DNS error only for an EDNS query */
	ok(!dns_query_has_opt(q, qlen) && dns_query_has_opt(m.b, m.n), "OPT seen only where it is");
	olen = dns_build_refusal(q, qlen, &qq, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, "why", out, sizeof out);
	ok(olen == qlen && out[11] == 0 && DNS_RCODE(out[3]) == DNS_RCODE_NXDOMAIN, "no EDNS: no OPT (RFC 6891)");
	struct dns_question mq;
	ok(dns_parse_question(m.b, m.n, &rh, &mq) == 0, "the EDNS query parses");
	olen = dns_build_refusal(m.b, m.n, &mq, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, "pypi.org is denied: use the mirror",
				 out, sizeof out);
	size_t at = qlen;   /* the OPT follows the question */
	ok(olen == qlen + 11 + 6 + 34 && out[11] == 1 && out[7] == 0 && out[9] == 0, "EDNS: one OPT, no answer or authority");
	ok(out[at] == 0 && out[at + 1] == 0 && out[at + 2] == DNS_TYPE_OPT && out[at + 3] == 0x04 && out[at + 4] == 0xd0,
	   "OPT: root, type 41, UDP size 1232");
	ok(out[at + 9] == 0 && out[at + 10] == 40 && out[at + 11] == 0 && out[at + 12] == DNS_OPT_EDE && out[at + 13] == 0 &&
		   out[at + 14] == 36 && out[at + 15] == 0 && out[at + 16] == DNS_EDE_BLOCKED,
	   "EDE option 15: INFO-CODE 15");
	ok(memcmp(out + at + 17, "pypi.org is denied: use the mirror", 34) == 0, "EXTRA-TEXT");
	ok(dns_parse_answer(out, olen, &ans) == 0 && ans.n_addrs == 0, "the refusal parses as an answer, no address");
	/* what the box's HTTP proxy reads of it */
	uint16_t code = 0;
	char text[64];
	ok(dns_answer_ede(out, olen, &code, text, sizeof text) == 0 && code == DNS_EDE_BLOCKED &&
	   strcmp(text, "pypi.org is denied: use the mirror") == 0, "the extended error read back");
	ok(dns_answer_ede(out, olen, &code, text, 9) == 0 && strcmp(text, "pypi.org") == 0, "... cut to the room given");
	uint8_t plain[512];
	size_t pn = dns_build_refusal(q, qlen, &qq, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, "why", plain, sizeof plain);
	ok(dns_answer_ede(plain, pn, &code, text, sizeof text) == -ENOENT, "no OPT: no extended error");
	ok(dns_answer_ede(out, qlen, &code, text, sizeof text) == -EBADMSG, "an OPT announced, not there: malformed");
	uint8_t eq[DNS_HEADER_LEN + 64];
	size_t eqn = dns_build_query_edns(7, "pypi.org", DNS_TYPE_AAAA, 4096, eq, sizeof eq);
	ok(eqn && dns_query_has_opt(eq, eqn) && dns_query_udp_size(eq, eqn) == 4096, "an EDNS query: OPT, its UDP size");
	/* a long text is cut to fit 512 bytes, never in the middle of a character */
	char longtext[700];
	memset(longtext, 'x', sizeof longtext - 1);
	longtext[sizeof longtext - 1] = 0;
	size_t cut = 512 - qlen - 17;
	memcpy(longtext + cut - 1, "\xc3\xa9", 2);   /* an e-acute across the cut */
	olen = dns_build_refusal(m.b, m.n, &mq, DNS_RCODE_NXDOMAIN, DNS_EDE_PROHIBITED, longtext, out, sizeof out);
	ok(olen == 511 && out[qlen + 16] == DNS_EDE_PROHIBITED && (uint8_t)out[olen - 1] == 'x', "cut to 512, before the character");
	ok(dns_build_query(1, "a..b", DNS_TYPE_A, q, sizeof q) == 0, "empty label refused by the builder");
}

int main(void)
{
	good_answers();
	bad_messages();
	queries_and_replies();
	return tap_done();
}
