/* DNS message parsing for the sentry (see dns.h for the rules it enforces). */
#include "dns.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

int dns_parse_header(const uint8_t *msg, size_t len, struct dns_header *h)
{
	if (len < DNS_HEADER_LEN)
		return -EBADMSG;
	h->id = get16(msg);
	h->flags = get16(msg + 2);
	h->qdcount = get16(msg + 4);
	h->ancount = get16(msg + 6);
	h->nscount = get16(msg + 8);
	h->arcount = get16(msg + 10);
	return 0;
}

static bool label_byte_ok(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_' || c == '*';
}

int dns_parse_name(const uint8_t *msg, size_t len, size_t *off, char out[DNS_NAME_TEXT])
{
	size_t pos = *off, end = 0, text = 0, wire = 0;
	/* what a pointer reaches must lie wholly before it (a prior occurrence
	 * of the name), not run on into what follows: bytes past the first
	 * pointer are out of bounds from then on */
	size_t limit = len;
	bool jumped = false;
	unsigned jumps = 0;
	bool bad = false;

	for (;;) {
		if (pos >= limit)
			return -EBADMSG;
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			if (pos + 1 >= limit)
				return -EBADMSG;
			size_t target = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			/* Only backwards: a pointer can never reach itself, so no loops.
			 * Never into the header: no name lives there, and what it would
			 * spell changes when a reply rewrites the header around the
			 * question it echoes. */
			if (target >= pos || target < DNS_HEADER_LEN || ++jumps > DNS_MAX_JUMPS)
				return -EBADMSG;
			if (!jumped) {
				end = pos + 2;
				limit = pos;
			}
			jumped = true;
			pos = target;
			continue;
		}
		if (l & 0xc0)   /* 0x40/0x80: extended label types, never used */
			return -EBADMSG;
		wire += (size_t)l + 1;
		if (wire > 255)
			return -EBADMSG;
		if (l == 0) {
			pos++;
			break;
		}
		if (pos + 1 + l > limit)
			return -EBADMSG;
		if (text)
			out[text++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = msg[pos + 1 + i];
			if (!label_byte_ok(c))
				bad = true;
			out[text++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
		pos += 1 + (size_t)l;
	}
	/* wire <= 255 keeps text <= 253 (+NUL) */
	out[text] = 0;
	*off = jumped ? end : pos;
	return bad ? -EINVAL : 0;
}

int dns_parse_question(const uint8_t *msg, size_t len, struct dns_header *hdr, struct dns_question *q)
{
	int r = dns_parse_header(msg, len, hdr);
	if (r < 0)
		return r;
	if (hdr->qdcount != 1)
		return -EBADMSG;
	size_t off = DNS_HEADER_LEN;
	r = dns_parse_name(msg, len, &off, q->name);
	/* an odd but well-formed name: still fill in the rest, for a REFUSED reply */
	if (r < 0 && r != -EINVAL)
		return r;
	if (off + 4 > len)
		return -EBADMSG;
	q->type = get16(msg + off);
	q->class = get16(msg + off + 2);
	q->end = off + 4;
	return r;
}

int dns_parse_rr(const uint8_t *msg, size_t len, size_t *off, struct dns_rr *rr)
{
	size_t pos = *off;
	int r = dns_parse_name(msg, len, &pos, rr->name);
	if (r < 0)
		return r;
	if (pos + 10 > len)
		return -EBADMSG;
	rr->type = get16(msg + pos);
	rr->class = get16(msg + pos + 2);
	rr->ttl_off = pos + 4;
	rr->ttl = get32(msg + pos + 4);
	rr->rdlen = get16(msg + pos + 8);
	rr->rdata_off = pos + 10;
	if (rr->rdata_off + rr->rdlen > len)
		return -EBADMSG;
	rr->end = rr->rdata_off + rr->rdlen;
	*off = rr->end;
	return 0;
}

static bool in_chain(const struct dns_answer *a, const char *name)
{
	for (size_t i = 0; i < a->n_chain; i++)
		if (strcmp(a->chain[i], name) == 0)
			return true;
	return false;
}

int dns_parse_answer(const uint8_t *msg, size_t len, struct dns_answer *a)
{
	struct dns_rr rr;
	int r = dns_parse_question(msg, len, &a->hdr, &a->q);
	if (r < 0)
		return r;
	if (!(a->hdr.flags & DNS_FLAG_QR))
		return -EBADMSG;
	size_t first = a->q.end;
	a->n_chain = 1;
	a->chain_cut = false;
	a->n_addrs = 0;
	a->addrs_cut = false;
	strcpy(a->chain[0], a->q.name);

	/* Validate the whole answer section once, so later passes cannot fail. */
	size_t off = first;
	for (unsigned i = 0; i < a->hdr.ancount; i++) {
		r = dns_parse_rr(msg, len, &off, &rr);
		if (r < 0)
			return r;
	}

	/* Follow CNAMEs from the qname; records may come in any order, so rescan
	 * after each link. Bounded by DNS_MAX_CHAIN rescans. */
	for (;;) {
		const char *tail = a->chain[a->n_chain - 1];
		bool linked = false;
		off = first;
		for (unsigned i = 0; i < a->hdr.ancount && !linked; i++) {
			(void)dns_parse_rr(msg, len, &off, &rr);
			if (rr.type != DNS_TYPE_CNAME || rr.class != DNS_CLASS_IN || strcmp(rr.name, tail))
				continue;
			char target[DNS_NAME_TEXT];
			size_t t = rr.rdata_off;
			r = dns_parse_name(msg, len, &t, target);
			if (r < 0)
				return r;
			if (t != rr.end)
				return -EBADMSG;
			if (in_chain(a, target) || a->n_chain == DNS_MAX_CHAIN) {
				a->chain_cut = true;
				break;
			}
			strcpy(a->chain[a->n_chain++], target);
			linked = true;
		}
		if (!linked)
			break;
	}

	off = first;
	for (unsigned i = 0; i < a->hdr.ancount; i++) {
		(void)dns_parse_rr(msg, len, &off, &rr);
		if (rr.class != DNS_CLASS_IN || !in_chain(a, rr.name))
			continue;
		int fam;
		if (rr.type == DNS_TYPE_A && rr.rdlen == 4)
			fam = AF_INET;
		else if (rr.type == DNS_TYPE_AAAA && rr.rdlen == 16)
			fam = AF_INET6;
		else if (rr.type == DNS_TYPE_A || rr.type == DNS_TYPE_AAAA)
			return -EBADMSG;
		else
			continue;
		if (a->n_addrs == DNS_MAX_ADDRS) {
			a->addrs_cut = true;
			continue;
		}
		struct dns_addr *d = &a->addrs[a->n_addrs++];
		d->family = fam;
		memset(d->addr, 0, sizeof d->addr);
		memcpy(d->addr, msg + rr.rdata_off, rr.rdlen);
		/* RFC 2181: a TTL with the top bit set means zero */
		d->ttl = rr.ttl & 0x80000000u ? 0 : rr.ttl;
	}
	return 0;
}

/* Past the name at *off as stored there (a pointer ends it), without
 * following pointers: where a record ends does not depend on earlier bytes. */
static void skip_name(const uint8_t *msg, size_t len, size_t *off)
{
	size_t pos = *off;
	while (pos < len) {
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			pos += 2;
			break;
		}
		pos += 1 + (size_t)l;
		if (l == 0)
			break;
	}
	*off = pos;
}

int dns_clamp_ttls(uint8_t *msg, size_t len, uint32_t max)
{
	struct dns_header h;
	struct dns_question q;
	struct dns_rr rr;
	int r = dns_parse_question(msg, len, &h, &q);
	if (r < 0)
		return r;
	/* every record checked before a byte changes: all clamped, or none */
	size_t off = q.end;
	for (unsigned i = 0; i < h.ancount; i++) {
		r = dns_parse_rr(msg, len, &off, &rr);
		if (r < 0)
			return r;
	}
	/* a name may be spelt (through a pointer) with bytes of an earlier TTL,
	 * so the walk that writes does not read names */
	off = q.end;
	for (unsigned i = 0; i < h.ancount; i++) {
		skip_name(msg, len, &off);
		uint32_t ttl = get32(msg + off + 4);
		if (ttl > max)
			put32(msg + off + 4, max);
		off += 10 + get16(msg + off + 8);
	}
	return 0;
}

/* The class (the UDP payload size) of the query's OPT record, or -1 without one. */
static int query_opt_class(const uint8_t *msg, size_t len)
{
	struct dns_header h;
	struct dns_question q;
	struct dns_rr rr;
	int r = dns_parse_question(msg, len, &h, &q);
	if (r < 0 && r != -EINVAL)   /* an odd name is still a whole question */
		return -1;
	size_t off = q.end;
	unsigned n = (unsigned)h.ancount + h.nscount + h.arcount;
	for (unsigned i = 0; i < n; i++) {
		if (dns_parse_rr(msg, len, &off, &rr) < 0)
			return -1;
		if (i >= (unsigned)h.ancount + h.nscount && rr.type == DNS_TYPE_OPT && rr.name[0] == 0)
			return rr.class;
	}
	return -1;
}

size_t dns_query_udp_size(const uint8_t *msg, size_t len)
{
	int c = query_opt_class(msg, len);
	return c < 512 ? 512 : (size_t)c;
}

bool dns_query_has_opt(const uint8_t *msg, size_t len)
{
	return query_opt_class(msg, len) >= 0;
}

size_t dns_build_error(const uint8_t *query, size_t qlen, const struct dns_question *q, int rcode,
		       uint8_t *out, size_t outlen)
{
	size_t qbytes = q ? q->end - DNS_HEADER_LEN : 0;
	if (qlen < DNS_HEADER_LEN || outlen < DNS_HEADER_LEN + qbytes || (q && q->end > qlen))
		return 0;
	uint16_t qflags = get16(query + 2);
	/* QR, the query's opcode and RD, RA, and the rcode */
	uint16_t flags = DNS_FLAG_QR | (qflags & 0x7800) | (qflags & DNS_FLAG_RD) | DNS_FLAG_RA |
			 (uint16_t)(rcode & 0xf);
	memcpy(out, query, 2);
	put16(out + 2, flags);
	put16(out + 4, q ? 1 : 0);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	if (q)
		memcpy(out + DNS_HEADER_LEN, query + DNS_HEADER_LEN, qbytes);
	return DNS_HEADER_LEN + qbytes;
}

size_t dns_build_query(uint16_t id, const char *name, uint16_t type, uint8_t *out, size_t outlen)
{
	size_t n = strlen(name);
	if (outlen < DNS_HEADER_LEN + n + 2 + 4 || n > 253)
		return 0;
	memset(out, 0, DNS_HEADER_LEN);
	put16(out, id);
	put16(out + 2, DNS_FLAG_RD);
	put16(out + 4, 1);
	size_t o = DNS_HEADER_LEN;
	const char *label = name;
	while (*label) {
		const char *dot = strchr(label, '.');
		size_t l = dot ? (size_t)(dot - label) : strlen(label);
		if (l == 0 || l > 63)
			return 0;
		out[o++] = (uint8_t)l;
		memcpy(out + o, label, l);
		o += l;
		label += l + (dot ? 1 : 0);
	}
	out[o++] = 0;
	put16(out + o, type);
	put16(out + o + 2, DNS_CLASS_IN);
	return o + 4;
}

size_t dns_build_refusal(const uint8_t *query, size_t qlen, const struct dns_question *q, int rcode,
			 uint16_t info_code, const char *text, uint8_t *out, size_t outlen)
{
	size_t n = dns_build_error(query, qlen, q, rcode, out, outlen);
	if (!n || !dns_query_has_opt(query, qlen))
		return n;
	/* RFC 6891: OPT (root name, type, our UDP size, TTL 0: no extended
	 * rcode, version 0, no flags) carrying one RFC 8914 option */
	size_t room = (outlen < DNS_REFUSAL_MAX ? outlen : DNS_REFUSAL_MAX);
	if (n + 11 + 6 > room)
		return n;
	size_t tlen = text ? strlen(text) : 0;
	if (tlen > room - n - 11 - 6) {
		tlen = room - n - 11 - 6;
		/* never half a UTF-8 character */
		while (tlen && ((uint8_t)text[tlen] & 0xc0) == 0x80)
			tlen--;
	}
	uint8_t *o = out + n;
	o[0] = 0;
	put16(o + 1, DNS_TYPE_OPT);
	put16(o + 3, DNS_EDNS_UDP_SIZE);
	put32(o + 5, 0);
	put16(o + 9, (uint16_t)(6 + tlen));
	put16(o + 11, DNS_OPT_EDE);
	put16(o + 13, (uint16_t)(2 + tlen));
	put16(o + 15, info_code);
	if (tlen)
		memcpy(o + 17, text, tlen);
	put16(out + 10, 1);
	return n + 17 + tlen;
}

size_t dns_build_query_edns(uint16_t id, const char *name, uint16_t type, uint16_t udp_size, uint8_t *out,
			    size_t outlen)
{
	size_t n = dns_build_query(id, name, type, out, outlen);
	if (!n || n + 11 > outlen)
		return 0;
	uint8_t *o = out + n;
	o[0] = 0;
	put16(o + 1, DNS_TYPE_OPT);
	put16(o + 3, udp_size);
	put32(o + 5, 0);
	put16(o + 9, 0);
	put16(out + 10, 1);
	return n + 11;
}

/* the first extended error among the options of an OPT record's rdata */
static int opt_ede(const uint8_t *rd, size_t rdlen, uint16_t *code, char *text, size_t tlen)
{
	for (size_t o = 0; o + 4 <= rdlen;) {
		uint16_t opt = get16(rd + o), olen = get16(rd + o + 2);
		if (o + 4 + olen > rdlen)
			return -EBADMSG;
		if (opt == DNS_OPT_EDE && olen >= 2) {
			*code = get16(rd + o + 4);
			size_t n = olen - 2u < tlen - 1 ? olen - 2u : tlen - 1;
			memcpy(text, rd + o + 6, n);
			text[n] = 0;
			return 0;
		}
		o += 4u + olen;
	}
	return -ENOENT;
}

int dns_answer_ede(const uint8_t *msg, size_t len, uint16_t *code, char *text, size_t tlen)
{
	struct dns_header h;
	if (tlen == 0 || dns_parse_header(msg, len, &h) < 0)
		return -EBADMSG;
	size_t off = DNS_HEADER_LEN;
	char name[DNS_NAME_TEXT];
	for (unsigned i = 0; i < h.qdcount; i++) {
		int r = dns_parse_name(msg, len, &off, name);
		if (r < 0 && r != -EINVAL)
			return r;
		if (off + 4 > len)
			return -EBADMSG;
		off += 4;
	}
	unsigned rrs = (unsigned)h.ancount + h.nscount + h.arcount;
	for (unsigned i = 0; i < rrs; i++) {
		struct dns_rr rr;
		int r = dns_parse_rr(msg, len, &off, &rr);
		if (r < 0)
			return r;
		if (i >= (unsigned)h.ancount + h.nscount && rr.type == DNS_TYPE_OPT)
			return opt_ede(msg + rr.rdata_off, rr.rdlen, code, text, tlen);
	}
	return -ENOENT;
}
