/* A strict reader of the TLS ClientHello (RFC 8446 4.1.2, RFC 5246 7.4.1.2)
 * for the server name (RFC 6066 3). Untrusted input: every length is checked
 * against what is left, and anything that does not look exactly like a
 * ClientHello is refused rather than guessed at. */
#include "tls_hello.h"

#include <string.h>

enum {
	REC_HANDSHAKE = 22,
	HS_CLIENT_HELLO = 1,
	EXT_SERVER_NAME = 0,
	EXT_ECH = 0xfe0d,         /* encrypted_client_hello (draft-ietf-tls-esni) */
	SNI_HOST_NAME = 0,
	REC_MAX = 16384,          /* a plaintext record's fragment (2^14) */
	REC_HEADER = 5,
};

/* a bounded reader over the handshake message */
struct rd {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static const uint8_t *take(struct rd *r, size_t n)
{
	if (r->bad || n > r->left) {
		r->bad = true;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static unsigned u8(struct rd *r)
{
	const uint8_t *p = take(r, 1);
	return p ? p[0] : 0;
}

static unsigned u16(struct rd *r)
{
	const uint8_t *p = take(r, 2);
	return p ? (unsigned)p[0] << 8 | p[1] : 0;
}

/* a sub-reader over the next n bytes (a length-prefixed vector) */
static struct rd sub(struct rd *r, size_t n)
{
	const uint8_t *p = take(r, n);
	return (struct rd){ .p = p, .left = p ? n : 0, .bad = !p };
}

static bool name_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/* RFC 6066: "HostName" is the ASCII DNS name, no trailing dot. Kept as text
 * (for the log) in any case; valid only when it is a DNS name. */
static void take_name(const uint8_t *p, size_t n, struct tls_hello *h)
{
	size_t o = 0;
	bool valid = n > 0 && n <= 253;
	size_t label = 0;
	for (size_t i = 0; i < n && o < TLS_SNI_MAX - 1; i++) {
		uint8_t c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (!name_char(c))
			valid = false;
		if (c == '.') {
			if (label == 0)
				valid = false;   /* empty label, or a leading/final dot */
			label = 0;
		} else if (++label > 63) {
			valid = false;
		}
		h->sni[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (label == 0)
		valid = false;
	h->sni[o] = 0;
	h->has_sni = true;
	h->sni_valid = valid;
}

static bool parse_server_name(struct rd ext, struct tls_hello *h)
{
	struct rd list = sub(&ext, u16(&ext));
	if (ext.bad || ext.left || list.left == 0)
		return false;
	bool seen = false;
	while (list.left && !list.bad) {
		unsigned type = u8(&list);
		size_t n = u16(&list);
		const uint8_t *name = take(&list, n);
		if (list.bad)
			return false;
		if (type != SNI_HOST_NAME)
			continue;   /* other name types are unknown and ignored (RFC 6066) */
		if (seen || n == 0)
			return false;   /* at most one host_name, never empty */
		seen = true;
		take_name(name, n, h);
	}
	return !list.bad;
}

static enum tls_hello_status parse_body(struct rd *m, struct tls_hello *h)
{
	h->legacy_version = (uint16_t)u16(m);
	take(m, 32);                                   /* random */
	size_t sid = u8(m);
	if (sid > 32)
		return TLS_HELLO_BAD;
	take(m, sid);
	size_t suites = u16(m);
	if (suites < 2 || suites % 2)
		return TLS_HELLO_BAD;
	take(m, suites);
	size_t comp = u8(m);
	if (comp < 1)
		return TLS_HELLO_BAD;
	take(m, comp);
	if (m->bad)
		return TLS_HELLO_BAD;
	if (m->left == 0)
		return TLS_HELLO_DONE;                 /* no extensions at all: no name */
	struct rd exts = sub(m, u16(m));
	if (m->bad || m->left)
		return TLS_HELLO_BAD;                  /* trailing bytes */
	unsigned seen_types = 0;
	uint16_t types[64];
	while (exts.left) {
		unsigned type = u16(&exts);
		struct rd ext = sub(&exts, u16(&exts));
		if (exts.bad)
			return TLS_HELLO_BAD;
		/* an extension type appears once (RFC 8446 4.2); remember a bounded number */
		for (unsigned i = 0; i < seen_types; i++)
			if (types[i] == type)
				return TLS_HELLO_BAD;
		if (seen_types == sizeof types / sizeof types[0])
			return TLS_HELLO_BAD;
		types[seen_types++] = (uint16_t)type;
		if (type == EXT_SERVER_NAME && !parse_server_name(ext, h))
			return TLS_HELLO_BAD;
		if (type == EXT_ECH)
			h->ech = true;
	}
	return TLS_HELLO_DONE;
}

enum tls_hello_status tls_hello_parse(const uint8_t *buf, size_t len, struct tls_hello *ret)
{
	memset(ret, 0, sizeof *ret);
	if (len == 0) {
		ret->need = REC_HEADER;
		return TLS_HELLO_MORE;
	}
	if (buf[0] != REC_HANDSHAKE)
		return TLS_HELLO_NOT_TLS;
	/* the handshake message, gathered from the fragments of its records */
	static uint8_t msg[TLS_HELLO_MAX_MSG + 4];
	size_t have = 0, off = 0, msg_len = 0;
	bool known_len = false;
	for (;;) {
		if (len - off < REC_HEADER) {
			ret->need = off + REC_HEADER;
			return TLS_HELLO_MORE;
		}
		const uint8_t *rh = buf + off;
		size_t rlen = (size_t)rh[3] << 8 | rh[4];
		if (rh[0] != REC_HANDSHAKE)
			return off == 0 ? TLS_HELLO_NOT_TLS : TLS_HELLO_BAD;
		if (rh[1] != 3 || rlen == 0 || rlen > REC_MAX)
			return off == 0 && rh[1] != 3 ? TLS_HELLO_NOT_TLS : TLS_HELLO_BAD;
		if (off + REC_HEADER + rlen > TLS_HELLO_MAX_BYTES)
			return TLS_HELLO_TOO_BIG;
		if (len - off - REC_HEADER < rlen) {
			ret->need = off + REC_HEADER + rlen;
			return TLS_HELLO_MORE;
		}
		/* a whole record: its fragment continues the message */
		size_t room = sizeof msg - have;
		size_t n = rlen < room ? rlen : room;
		memcpy(msg + have, rh + REC_HEADER, n);
		have += n;
		off += REC_HEADER + rlen;
		if (!known_len && have >= 4) {
			if (msg[0] != HS_CLIENT_HELLO)
				return TLS_HELLO_BAD;
			msg_len = (size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3];
			if (msg_len > TLS_HELLO_MAX_MSG)
				return TLS_HELLO_TOO_BIG;
			known_len = true;
		}
		if (known_len && have > 4 + msg_len)
			return TLS_HELLO_BAD;   /* anything after the hello in its records */
		if (known_len && have == 4 + msg_len)
			break;
		if (n < rlen)
			return TLS_HELLO_TOO_BIG;
	}
	ret->hello_bytes = off;
	struct rd m = { .p = msg + 4, .left = msg_len };
	enum tls_hello_status s = parse_body(&m, ret);
	if (s != TLS_HELLO_DONE) {
		ret->has_sni = ret->sni_valid = false;
		ret->sni[0] = 0;
	}
	return s;
}

const char *tls_hello_status_text(enum tls_hello_status s)
{
	switch (s) {
	case TLS_HELLO_DONE: return "ok";
	case TLS_HELLO_MORE: return "incomplete";
	case TLS_HELLO_NOT_TLS: return "not-tls";
	case TLS_HELLO_BAD: return "malformed";
	case TLS_HELLO_TOO_BIG: return "too-big";
	}
	return "?";
}
