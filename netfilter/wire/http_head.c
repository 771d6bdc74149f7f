/* A strict reader of an HTTP/1.x request head sent to a forward proxy
 * (RFC 9112 3, 5, 6; RFC 9110 7.1, 9.3.6). Untrusted input: every line ends
 * in CRLF, every byte of a field is checked, a body whose length is in doubt
 * (Content-Length and Transfer-Encoding both, two lengths, a coding other
 * than chunked last) is refused, and nothing is read past len. */
#include "http_head.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* RFC 9110 5.6.2 */
static bool tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

static bool ieq(const uint8_t *a, size_t n, const char *b)
{
	if (strlen(b) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != (uint8_t)b[i])
			return false;
	return true;
}

/* The line at off (without its CRLF): its length into *n. 1: whole, 0: its
 * end has not come, -1: a bare LF. */
static int line_at(const uint8_t *buf, size_t len, size_t off, size_t *n)
{
	for (size_t i = off; i < len; i++)
		if (buf[i] == '\n') {
			if (i == off || buf[i - 1] != '\r')
				return -1;
			*n = i - 1 - off;
			return 1;
		}
	return 0;
}

/* 1..65535 from the digits of p[0..n) */
static bool parse_port(const uint8_t *p, size_t n, uint16_t *port)
{
	if (n == 0 || n > 5)
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* A DNS name: letters, digits, '-' and '_', labels of 1..63, at most 253 in
 * all, one final dot dropped; into out, lowercase. */
static bool parse_name(const uint8_t *p, size_t n, char out[DNS_NAME_TEXT])
{
	if (n && p[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return false;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = lower(p[i]);
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
			if (++label > 63)
				return false;
		} else
			return false;
		out[i] = (char)c;
	}
	out[n] = 0;
	return label > 0;   /* no empty last label ("a..") */
}

/* host[:port] or [v6][:port], no user info, into h (port: default when
 * absent; 0 default: the port is required) */
static bool parse_authority(const uint8_t *a, size_t n, uint16_t default_port, struct http_head *h)
{
	const uint8_t *host = a, *colon = NULL;
	size_t hlen;
	char text[64];
	if (n && a[0] == '[') {
		const uint8_t *close = memchr(a, ']', n);
		if (!close || (size_t)(close - a) - 1 >= sizeof text)
			return false;
		hlen = (size_t)(close - a) - 1;
		memcpy(text, a + 1, hlen);
		text[hlen] = 0;
		if (inet_pton(AF_INET6, text, h->addr) != 1)
			return false;
		h->family = AF_INET6;
		snprintf(h->host, sizeof h->host, "%s", text);
		if ((size_t)(close - a) + 1 < n) {
			if (close[1] != ':')
				return false;
			colon = close + 1;
		}
	} else {
		colon = memchr(a, ':', n);
		hlen = colon ? (size_t)(colon - a) : n;
		if (hlen < sizeof text) {
			memcpy(text, host, hlen);
			text[hlen] = 0;
		}
		if (hlen < sizeof text && inet_pton(AF_INET, text, h->addr) == 1) {
			h->family = AF_INET;
			snprintf(h->host, sizeof h->host, "%s", text);
		} else if (!parse_name(host, hlen, h->host))
			return false;
	}
	if (!colon) {
		h->port = default_port;
		return default_port != 0;
	}
	return parse_port(colon + 1, (size_t)(a + n - colon - 1), &h->port);
}

/* The request target, by kind (RFC 9112 3.2) */
static bool parse_target(const uint8_t *t, size_t n, struct http_head *h)
{
	if (strcmp(h->method, "CONNECT") == 0) {
		h->target = HTTP_TARGET_CONNECT;
		return parse_authority(t, n, 0, h);
	}
	static const char scheme[] = "http://";
	if (n < sizeof scheme - 1 || !ieq(t, sizeof scheme - 1, scheme)) {
		h->target = HTTP_TARGET_NOT_PROXY;   /* origin form, "*", https://, ftp:// */
		return true;
	}
	h->target = HTTP_TARGET_ABSOLUTE;
	const uint8_t *a = t + sizeof scheme - 1, *end = t + n, *p = a;
	while (p < end && *p != '/' && *p != '?')
		p++;
	if (memchr(a, '@', (size_t)(p - a)) || memchr(t, '#', n))
		return false;   /* user info (RFC 9110 4.2.4), a fragment */
	h->path_off = (size_t)(p - t);   /* made absolute by the caller */
	h->path_len = (size_t)(end - p);
	return parse_authority(a, (size_t)(p - a), 80, h);
}

/* METHOD SP target SP HTTP/1.x */
static bool parse_request_line(const uint8_t *l, size_t n, struct http_head *h)
{
	size_t m = 0;
	while (m < n && tchar(l[m]))
		m++;
	if (m == 0 || m >= sizeof h->method || m == n || l[m] != ' ')
		return false;
	memcpy(h->method, l, m);
	h->method[m] = 0;
	const uint8_t *t = l + m + 1;
	size_t rest = n - m - 1, tl = 0;
	while (tl < rest && t[tl] > 0x20 && t[tl] < 0x7f)
		tl++;
	if (tl == 0 || tl + 9 != rest || t[tl] != ' ')
		return false;
	const uint8_t *v = t + tl + 1;
	if (memcmp(v, "HTTP/1.", 7) != 0 || (v[7] != '0' && v[7] != '1'))
		return false;
	memcpy(h->version, v, 8);
	h->version[8] = 0;
	if (!parse_target(t, tl, h))
		return false;
	if (h->target == HTTP_TARGET_ABSOLUTE)
		h->path_off += (size_t)(t - l);
	return true;
}

/* The decimal length of a body (at most 18 digits) */
static bool parse_length(const uint8_t *v, size_t n, uint64_t *len)
{
	if (n == 0 || n > 18)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*len = x;
	return true;
}

/* Transfer-Encoding: its last coding must be chunked, or the body's end is
 * the server's guess (RFC 9112 6.3) */
static bool last_coding_chunked(const uint8_t *v, size_t n)
{
	size_t end = n;
	while (end && (v[end - 1] == ' ' || v[end - 1] == '\t'))
		end--;
	size_t start = end;
	while (start && v[start - 1] != ',' && v[start - 1] != ' ' && v[start - 1] != '\t')
		start--;
	return ieq(v + start, end - start, "chunked");
}

struct field {
	const uint8_t *name, *value;
	size_t nlen, vlen;
};

/* name ":" OWS value OWS, every byte checked (no obs-fold, no CTL but HTAB) */
static bool parse_field(const uint8_t *l, size_t n, struct field *f)
{
	size_t i = 0;
	while (i < n && tchar(l[i]))
		i++;
	if (i == 0 || i == n || l[i] != ':')
		return false;
	f->name = l;
	f->nlen = i;
	for (size_t k = i + 1; k < n; k++)
		if ((l[k] < 0x20 && l[k] != '\t') || l[k] == 0x7f)
			return false;
	size_t s = i + 1, e = n;
	while (s < e && (l[s] == ' ' || l[s] == '\t'))
		s++;
	while (e > s && (l[e - 1] == ' ' || l[e - 1] == '\t'))
		e--;
	f->value = l + s;
	f->vlen = e - s;
	return true;
}

/* The body's framing from one field; false: it is in doubt */
static bool framing(const struct field *f, bool *te_seen, struct http_head *h)
{
	if (ieq(f->name, f->nlen, "content-length")) {
		uint64_t v;
		if (!parse_length(f->value, f->vlen, &v) || (h->has_length && v != h->length))
			return false;
		h->has_length = true;
		h->length = v;
	} else if (ieq(f->name, f->nlen, "transfer-encoding")) {
		*te_seen = true;
		h->chunked = last_coding_chunked(f->value, f->vlen);
		if (!h->chunked)
			return false;
	}
	return true;
}

/* Before the request line is whole: could this still be one? */
static bool plausible_start(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == ' ')
			return i > 0;
		if (!tchar(buf[i]))
			return false;
	}
	return len < sizeof ((struct http_head *)0)->method;
}

enum http_head_status http_head_parse(const uint8_t *buf, size_t len, struct http_head *h)
{
	memset(h, 0, sizeof *h);
	size_t n, off = 0;
	int r = line_at(buf, len, 0, &n);
	if (r == 0)
		return !plausible_start(buf, len) ? HTTP_HEAD_BAD : len >= HTTP_HEAD_MAX ? HTTP_HEAD_TOO_BIG : HTTP_HEAD_MORE;
	if (r < 0 || n + 2 > HTTP_HEAD_MAX || !parse_request_line(buf, n, h))
		return HTTP_HEAD_BAD;
	off = n + 2;
	bool te_seen = false;
	for (;;) {
		r = line_at(buf, len, off, &n);
		if (r < 0)
			return HTTP_HEAD_BAD;
		if (r == 0)
			return len >= HTTP_HEAD_MAX ? HTTP_HEAD_TOO_BIG : HTTP_HEAD_MORE;
		if (off + n + 2 > HTTP_HEAD_MAX)
			return HTTP_HEAD_TOO_BIG;
		if (n == 0)
			break;
		struct field f;
		if (!parse_field(buf + off, n, &f) || !framing(&f, &te_seen, h))
			return HTTP_HEAD_BAD;
		off += n + 2;
	}
	h->len = off + 2;
	if (te_seen && h->has_length)
		return HTTP_HEAD_BAD;   /* the classic request smuggling */
	if (h->target == HTTP_TARGET_CONNECT)
		h->chunked = h->has_length = false, h->length = 0;
	return HTTP_HEAD_DONE;
}

/* ---- the head for the server ---- */

struct out {
	char *p;
	size_t len, cap;
	bool full;
};

static void put(struct out *o, const void *s, size_t n)
{
	if (o->full || o->len + n > o->cap) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* The fields of a parsed head, one at a time: the offset after the one at
 * off (filled into f), or 0 at the empty line. */
static size_t next_field(const uint8_t *head, size_t len, size_t off, struct field *f)
{
	size_t n;
	if (line_at(head, len, off, &n) != 1 || n == 0 || !parse_field(head + off, n, f))
		return 0;
	return off + n + 2;
}

/* Is the field name one that a Connection field of the head lists? */
static bool named_by_connection(const uint8_t *head, size_t len, size_t first, const struct field *f)
{
	struct field c;
	for (size_t off = first; (off = next_field(head, len, off, &c));) {
		if (!ieq(c.name, c.nlen, "connection"))
			continue;
		for (size_t i = 0; i < c.vlen;) {
			while (i < c.vlen && (c.value[i] == ',' || c.value[i] == ' ' || c.value[i] == '\t'))
				i++;
			size_t s = i;
			while (i < c.vlen && c.value[i] != ',' && c.value[i] != ' ' && c.value[i] != '\t')
				i++;
			if (i - s == f->nlen) {
				size_t k = 0;
				while (k < f->nlen && lower(c.value[s + k]) == lower(f->name[k]))
					k++;
				if (k == f->nlen)
					return true;
			}
		}
	}
	return false;
}

static bool hop_by_hop(const struct field *f)
{
	static const char *const names[] = { "host", "connection", "proxy-connection", "keep-alive",
					      "proxy-authorization", "proxy-authenticate", "te", "upgrade" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (ieq(f->name, f->nlen, names[i]))
			return true;
	return false;
}

size_t http_head_for_server(const uint8_t *head, const struct http_head *h, char *out, size_t outlen)
{
	if (h->target != HTTP_TARGET_ABSOLUTE)
		return 0;
	struct out o = { out, 0, outlen, false };
	puts_(&o, h->method);
	puts_(&o, " ");
	if (h->path_len == 0 || head[h->path_off] == '?')
		puts_(&o, "/");
	put(&o, head + h->path_off, h->path_len);
	puts_(&o, " ");
	puts_(&o, h->version);
	puts_(&o, "\r\nHost: ");
	char port[8] = "";
	if (h->port != 80)
		snprintf(port, sizeof port, ":%u", h->port);
	puts_(&o, h->family == AF_INET6 ? "[" : "");
	puts_(&o, h->host);
	puts_(&o, h->family == AF_INET6 ? "]" : "");
	puts_(&o, port);
	puts_(&o, "\r\n");
	size_t n, first;
	if (line_at(head, h->len, 0, &n) != 1)
		return 0;
	first = n + 2;
	struct field f;
	for (size_t off = first, next; (next = next_field(head, h->len, off, &f)); off = next) {
		if (hop_by_hop(&f) || named_by_connection(head, h->len, first, &f))
			continue;
		put(&o, head + off, next - off);
	}
	puts_(&o, "Connection: close\r\n\r\n");
	return o.full ? 0 : o.len;
}
