/* A request head as the box's HTTP proxy reads it (http_head.h): any byte
 * string, whole or cut anywhere, is parsed or refused within bounds; what a
 * whole head says does not depend on the bytes after it; a name is only ever
 * a lowercase DNS name; and the head a server gets for a plain request has
 * exactly one Host, the URL's, and asks to close after one request. */
#include "fuzz.h"

#include "http_head.h"

static void fz_name_check(const struct http_head *h)
{
	size_t n = strnlen(h->host, sizeof h->host);
	FUZZ_CHECK(n > 0 && n < sizeof h->host, "host of %zu bytes", n);
	if (h->family)
		return;
	FUZZ_CHECK(n <= 253 && h->host[0] != '.' && h->host[n - 1] != '.', "name \"%s\"", h->host);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK((h->host[i] >= 'a' && h->host[i] <= 'z') || (h->host[i] >= '0' && h->host[i] <= '9') ||
			   h->host[i] == '-' || h->host[i] == '_' || h->host[i] == '.', "byte %#x in a name", h->host[i]);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void fz_server_check(const uint8_t *data, const struct http_head *h)
{
	static char out[HTTP_SERVER_HEAD_MAX + 1];
	size_t n = http_head_for_server(data, h, out, sizeof out - 1);
	FUZZ_CHECK(n > 0, "a head of %zu bytes did not fit", h->len);
	out[n] = 0;
	FUZZ_CHECK(memchr(out, 0, n) == NULL, "a NUL in the server's head");
	FUZZ_CHECK(count(out, "\r\nHost: ") == 1, "Host fields: %zu", count(out, "\r\nHost: "));
	char want[DNS_NAME_TEXT + 16];
	snprintf(want, sizeof want, "\r\nHost: %s%s", h->family == 10 ? "[" : "", h->host);
	FUZZ_CHECK(strstr(out, want) != NULL, "the URL's host is not the Host");
	FUZZ_CHECK(n >= 21 && strcmp(out + n - 21, "Connection: close\r\n\r\n") == 0, "no close at the end");
	/* it is itself a whole, well-formed head (in origin form) */
	struct http_head h2;
	FUZZ_CHECK(http_head_parse((const uint8_t *)out, n, &h2) == HTTP_HEAD_DONE || n > HTTP_HEAD_MAX,
		   "the server's head does not parse");
}

FUZZ_TARGET(http_head)
{
	struct http_head h;
	enum http_head_status s = http_head_parse(data, size, &h);
	FUZZ_CHECK(s >= HTTP_HEAD_TOO_BIG && s <= HTTP_HEAD_MORE, "status %d", s);
	if (s != HTTP_HEAD_DONE)
		return 0;
	FUZZ_CHECK(h.len >= 4 && h.len <= size && h.len <= HTTP_HEAD_MAX && memcmp(data + h.len - 4, "\r\n\r\n", 4) == 0,
		   "head of %zu in %zu", h.len, size);
	struct http_head h2;
	FUZZ_CHECK(http_head_parse(data, h.len, &h2) == HTTP_HEAD_DONE && h2.len == h.len && h2.target == h.target &&
		   h2.port == h.port && strcmp(h2.host, h.host) == 0, "the head alone reads differently");
	size_t cut = data[0] % h.len;
	FUZZ_CHECK(http_head_parse(data, cut, &h2) != HTTP_HEAD_DONE, "a prefix of %zu is whole", cut);
	if (h.target == HTTP_TARGET_NOT_PROXY)
		return 0;
	fz_name_check(&h);
	FUZZ_CHECK(h.port > 0, "port 0");
	FUZZ_CHECK(!(h.chunked && h.has_length), "both a length and chunked");
	if (h.target == HTTP_TARGET_ABSOLUTE)
		fz_server_check(data, &h);
	return 0;
}
