/* A small, strict DNS message parser for the sentry. It reads untrusted input
 * (the container's queries and the upstream's answers): every read is bounds
 * checked, compression pointers must point backwards, and every loop is
 * bounded. Errors are negative errno values (-EBADMSG for a malformed
 * message, -EINVAL for a name the sentry refuses to handle). */
#ifndef AGENTBOX_DNS_H
#define AGENTBOX_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN 12
#define DNS_NAME_TEXT 256   /* text form of a name: at most 253 chars + NUL */
#define DNS_MAX_CHAIN 16    /* qname + CNAME targets followed */
#define DNS_MAX_ADDRS 64    /* A/AAAA records taken from one answer */
#define DNS_MAX_JUMPS 64    /* compression pointers followed in one name */

enum {
	DNS_TYPE_A = 1,
	DNS_TYPE_CNAME = 5,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_OPT = 41,
	DNS_CLASS_IN = 1,
};

enum {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

/* RFC 8914 extended DNS errors, the sentry's UDP payload size in its OPT */
#define DNS_OPT_EDE 15
#define DNS_EDE_BLOCKED 15
#define DNS_EDE_PROHIBITED 18
#define DNS_EDNS_UDP_SIZE 1232
#define DNS_REFUSAL_MAX 512

#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
#define DNS_RCODE(flags) ((flags) & 0xf)

struct dns_header {
	uint16_t id, flags, qdcount, ancount, nscount, arcount;
};

struct dns_question {
	char name[DNS_NAME_TEXT]; /* lowercase, no final dot, "" for the root */
	uint16_t type, class;
	size_t end;               /* offset just past the question */
};

struct dns_rr {
	char name[DNS_NAME_TEXT];
	uint16_t type, class, rdlen;
	uint32_t ttl;
	size_t ttl_off, rdata_off, end;
};

struct dns_addr {
	int family;               /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint32_t ttl;
};

struct dns_answer {
	struct dns_header hdr;
	struct dns_question q;
	char chain[DNS_MAX_CHAIN][DNS_NAME_TEXT]; /* chain[0] = qname, then CNAME targets */
	size_t n_chain;
	bool chain_cut;           /* longer than DNS_MAX_CHAIN, or looping */
	struct dns_addr addrs[DNS_MAX_ADDRS];
	size_t n_addrs;
	bool addrs_cut;           /* more than DNS_MAX_ADDRS records */
};

int dns_parse_header(const uint8_t *msg, size_t len, struct dns_header *ret);
/* Name at *off into out (lowercased; bytes outside [A-Za-z0-9_*-] are refused
 * with -EINVAL); *off moves past the name as stored at that position. */
int dns_parse_name(const uint8_t *msg, size_t len, size_t *off, char out[DNS_NAME_TEXT]);
/* Header plus exactly one question (qdcount must be 1). -EINVAL: well formed,
 * but the name has bytes the sentry refuses; q is filled in all the same. */
int dns_parse_question(const uint8_t *msg, size_t len, struct dns_header *hdr, struct dns_question *q);
/* One resource record at *off. */
int dns_parse_rr(const uint8_t *msg, size_t len, size_t *off, struct dns_rr *rr);
/* A response: header, question, the CNAME chain from the qname through the
 * answer section, and every A/AAAA owned by a name of that chain. */
int dns_parse_answer(const uint8_t *msg, size_t len, struct dns_answer *ret);
/* Lower every answer-section TTL above max to max (in place): all of them, or
 * (on a malformed message) none. A name spelt through a pointer into an
 * earlier TTL reads differently afterwards: parse again to be sure. */
int dns_clamp_ttls(uint8_t *msg, size_t len, uint32_t max);
/* The EDNS UDP payload size the query advertises (512 without OPT). */
size_t dns_query_udp_size(const uint8_t *msg, size_t len);
/* Does the query carry EDNS (an OPT record in its additional section)? */
bool dns_query_has_opt(const uint8_t *msg, size_t len);
/* A response to query with the given rcode and no records; the question is
 * copied when q is not NULL. Returns the length, or 0 if out is too small. */
size_t dns_build_error(const uint8_t *query, size_t qlen, const struct dns_question *q, int rcode,
		       uint8_t *out, size_t outlen);
/* A refusal: dns_build_error's response and, when the query carried EDNS, an
 * OPT record with one RFC 8914 extended DNS error: info_code and text (UTF-8,
 * cut at a character so the whole response stays within DNS_REFUSAL_MAX
 * bytes, which any client takes over UDP). Never an answer record. Returns
 * the length, or 0 if out is too small for the response without OPT. */
size_t dns_build_refusal(const uint8_t *query, size_t qlen, const struct dns_question *q, int rcode,
			 uint16_t info_code, const char *text, uint8_t *out, size_t outlen);
/* Build a one-question query (tests and the driver). Returns the length or 0. */
size_t dns_build_query(uint16_t id, const char *name, uint16_t type, uint8_t *out, size_t outlen);
/* ... with an OPT record advertising udp_size (EDNS: a refusal then says why,
 * RFC 8914): the box's HTTP proxy asks the sentry so. */
size_t dns_build_query_edns(uint16_t id, const char *name, uint16_t type, uint16_t udp_size, uint8_t *out,
			    size_t outlen);
/* A response's first RFC 8914 extended error (in its OPT record): INFO-CODE
 * and EXTRA-TEXT (cut to tlen - 1 bytes, NUL-terminated, as sent: not
 * checked). 0, -ENOENT when there is none, -EBADMSG when malformed. */
int dns_answer_ede(const uint8_t *msg, size_t len, uint16_t *code, char *text, size_t tlen);

#endif
