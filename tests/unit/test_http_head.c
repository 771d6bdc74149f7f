/* The box's HTTP proxy reads request heads strictly (http_head.h): the heads
 * real clients send (npm, pip, curl, git, Go), heads cut anywhere, and heads
 * that must be refused rather than guessed at; and what a plain HTTP request
 * becomes for its server. */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "http_head.h"
#include "tap.h"

static enum http_head_status parse(const char *s, struct http_head *h)
{
	return http_head_parse((const uint8_t *)s, strlen(s), h);
}

static void real_clients(void)
{
	struct http_head h;
	/* Debian's pip (urllib3 1.26): HTTP/1.0 and no field at all */
	const char *pip = "CONNECT registry.test:443 HTTP/1.0\r\n\r\n";
	ok(parse(pip, &h) == HTTP_HEAD_DONE && h.target == HTTP_TARGET_CONNECT && strcmp(h.host, "registry.test") == 0 &&
	   h.port == 443 && h.family == 0 && h.len == strlen(pip) && strcmp(h.version, "HTTP/1.0") == 0,
	   "pip's CONNECT without fields");
	/* npm: Host and Proxy-Connection */
	const char *npm = "CONNECT Registry.NPMJS.org.:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n"
			  "Proxy-Connection: keep-alive\r\n\r\n";
	ok(parse(npm, &h) == HTTP_HEAD_DONE && strcmp(h.host, "registry.npmjs.org") == 0 && h.len == strlen(npm),
	   "npm's CONNECT: the name lowercase, its final dot dropped");
	const char *v6 = "CONNECT [2001:db8:44::1]:8443 HTTP/1.1\r\nHost: [2001:db8:44::1]:8443\r\n\r\n";
	uint8_t want6[16];
	inet_pton(AF_INET6, "2001:db8:44::1", want6);
	ok(parse(v6, &h) == HTTP_HEAD_DONE && h.family == AF_INET6 && memcmp(h.addr, want6, 16) == 0 && h.port == 8443 &&
	   strcmp(h.host, "2001:db8:44::1") == 0, "an IPv6 literal in brackets");
	ok(parse("CONNECT 198.18.44.7:443 HTTP/1.1\r\n\r\n", &h) == HTTP_HEAD_DONE && h.family == AF_INET &&
	   h.addr[0] == 198 && h.addr[3] == 7, "an IPv4 literal");
	/* curl's plain request through the proxy, with a body */
	const char *post = "POST http://web.test:8080/up?x=1 HTTP/1.1\r\nHost: web.test:8080\r\nUser-Agent: curl/7.88.1\r\n"
			   "Accept: */*\r\nProxy-Connection: Keep-Alive\r\nContent-Length: 5\r\n\r\nhello";
	ok(parse(post, &h) == HTTP_HEAD_DONE && h.target == HTTP_TARGET_ABSOLUTE && h.port == 8080 && h.has_length &&
	   h.length == 5 && !h.chunked && h.len == strlen(post) - 5, "an absolute-form POST: its length, the head only");
	char out[HTTP_SERVER_HEAD_MAX];
	size_t n = http_head_for_server((const uint8_t *)post, &h, out, sizeof out);
	out[n] = 0;
	is_str(out, "POST /up?x=1 HTTP/1.1\r\nHost: web.test:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
		    "Content-Length: 5\r\nConnection: close\r\n\r\n", "what the server gets: origin form, one request");
	ok(parse("GET http://WEB.test HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &h) == HTTP_HEAD_DONE &&
	   h.chunked && h.port == 80 && h.path_len == 0, "chunked last: a chunked body; no path, port 80");
}

static void for_server(void)
{
	struct http_head h;
	char out[HTTP_SERVER_HEAD_MAX];
	/* the client's Host is replaced by the URL's: no other name behind an allowed one */
	const char *s = "GET http://web.test/x HTTP/1.1\r\nHost: registry.test\r\nConnection: keep-alive, X-Secret\r\n"
			"X-Secret: 1\r\nKeep-Alive: 5\r\nProxy-Authorization: Basic eDp5\r\nTE: trailers\r\n"
			"Upgrade: websocket\r\nhost: other.test\r\nAccept: */*\r\n\r\n";
	ok(parse(s, &h) == HTTP_HEAD_DONE, "a head full of hop-by-hop fields parses");
	size_t n = http_head_for_server((const uint8_t *)s, &h, out, sizeof out);
	out[n] = 0;
	is_str(out, "GET /x HTTP/1.1\r\nHost: web.test\r\nAccept: */*\r\nConnection: close\r\n\r\n",
	       "Host from the URL, hop-by-hop and Connection-named fields gone");
	ok(parse("GET http://[2001:db8:44::2]:81?q HTTP/1.0\r\n\r\n", &h) == HTTP_HEAD_DONE, "IPv6 absolute form");
	n = http_head_for_server((const uint8_t *)"GET http://[2001:db8:44::2]:81?q HTTP/1.0\r\n\r\n", &h, out, sizeof out);
	out[n] = 0;
	is_str(out, "GET /?q HTTP/1.0\r\nHost: [2001:db8:44::2]:81\r\nConnection: close\r\n\r\n",
	       "a query without a path gets one; the literal keeps its brackets");
	ok(http_head_for_server((const uint8_t *)s, &h, out, 20) == 0, "too small an output: 0, not a cut head");
}

static void refused(void)
{
	struct http_head h;
	static const char *const bad[] = {
		"CONNECT registry.test HTTP/1.1\r\n\r\n",              /* no port */
		"CONNECT registry.test:0 HTTP/1.1\r\n\r\n",
		"CONNECT registry.test:65536 HTTP/1.1\r\n\r\n",
		"CONNECT registry.test:443 HTTP/2.0\r\n\r\n",
		"CONNECT registry.test:443  HTTP/1.1\r\n\r\n",          /* two spaces */
		"CONNECT reg\x01stry.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT a..b:443 HTTP/1.1\r\n\r\n",
		"CONNECT web..:443 HTTP/1.1\r\n\r\n",                 /* an empty last label */
		"CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n\r\n",
		"CONNECT registry.test:443 HTTP/1.1\n\n",               /* bare LF */
		"CONNECT registry.test:443 HTTP/1.1\r\n folded\r\n\r\n", /* obs-fold */
		"CONNECT registry.test:443 HTTP/1.1\r\nX : y\r\n\r\n",
		"CONNECT registry.test:443 HTTP/1.1\r\nX: a\rb\r\n\r\n",
		"GET http://user@web.test/ HTTP/1.1\r\n\r\n",
		"GET http://web.test/#frag HTTP/1.1\r\n\r\n",
		"POST http://web.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST http://web.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"POST http://web.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"POST http://web.test/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
		"\x16\x03\x01\x02\x00\x01",                            /* a ClientHello sent to the proxy */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		ok(parse(bad[i], &h) == HTTP_HEAD_BAD, "refused: %.*s", (int)strcspn(bad[i], "\r\n"), bad[i]);
	ok(parse("GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n", &h) == HTTP_HEAD_DONE && h.target == HTTP_TARGET_NOT_PROXY,
	   "origin form: not for a forward proxy");
	ok(parse("GET https://web.test/ HTTP/1.1\r\n\r\n", &h) == HTTP_HEAD_DONE && h.target == HTTP_TARGET_NOT_PROXY,
	   "https:// in absolute form: not served (CONNECT is)");
	ok(parse("POST http://web.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", &h) ==
	   HTTP_HEAD_DONE && h.length == 5, "the same length twice is one length");
}

static void pieces(void)
{
	struct http_head h;
	const char *s = "CONNECT web.test:443 HTTP/1.1\r\nHost: web.test:443\r\nUser-Agent: x\r\n\r\n";
	size_t n = strlen(s), all = 1;
	for (size_t cut = 0; cut < n; cut++)
		all &= http_head_parse((const uint8_t *)s, cut, &h) == HTTP_HEAD_MORE;
	ok(all, "every cut of a head asks for more");
	/* bytes after the head (an eager ClientHello) are not the head's */
	char eager[128];
	snprintf(eager, sizeof eager, "%s\x16\x03\x01", s);
	ok(http_head_parse((const uint8_t *)eager, strlen(eager), &h) == HTTP_HEAD_DONE && h.len == n,
	   "a head followed by TLS bytes: the head's length");
	static uint8_t big[HTTP_HEAD_MAX];
	memset(big, 'a', sizeof big);
	memcpy(big, "CONNECT web.test:443 HTTP/1.1\r\nX: ", 35);
	ok(http_head_parse(big, sizeof big, &h) == HTTP_HEAD_TOO_BIG, "no end within %u bytes: too big", HTTP_HEAD_MAX);
	memset(big, 'a', sizeof big);
	memcpy(big, "GET http://a.test/", 18);
	ok(http_head_parse(big, sizeof big, &h) == HTTP_HEAD_TOO_BIG, "a request line of %u bytes: too big", HTTP_HEAD_MAX);
}

int main(void)
{
	real_clients();
	for_server();
	refused();
	pieces();
	return tap_done();
}
