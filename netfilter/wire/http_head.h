/* The head of a request to the box's HTTP proxy (the sentry's, issue 35), as
 * it arrives from a program in the box: untrusted, read strictly. Only what
 * decides where the request may go (CONNECT's authority, an absolute-form
 * URL's host and port) and how long its body is; a request the parser cannot
 * frame exactly is refused rather than guessed at.
 *
 * The head may arrive in pieces: the parser is fed everything received so
 * far (from the first byte of the connection) and says when it has all of it.
 * Bytes after the head (a body, a TLS ClientHello) are not its business. */
#ifndef AGENTBOX_HTTP_HEAD_H
#define AGENTBOX_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns.h"

/* The longest head read (request line, header fields, empty line). */
#define HTTP_HEAD_MAX 8192
/* Room for what http_head_for_server makes of a head of HTTP_HEAD_MAX bytes */
#define HTTP_SERVER_HEAD_MAX (HTTP_HEAD_MAX + DNS_NAME_TEXT + 64)

enum http_head_status {
	HTTP_HEAD_DONE = 0,     /* a whole head: see the result */
	HTTP_HEAD_MORE = 1,     /* so far so good, its end has not come */
	HTTP_HEAD_BAD = -1,     /* not an HTTP/1.x request head, or one that cannot be framed */
	HTTP_HEAD_TOO_BIG = -2, /* no end within HTTP_HEAD_MAX bytes */
};

enum http_target {
	HTTP_TARGET_CONNECT,    /* CONNECT host:port: a tunnel */
	HTTP_TARGET_ABSOLUTE,   /* METHOD http://host[:port]/path: a plain HTTP request to pass on */
	HTTP_TARGET_NOT_PROXY,  /* origin form, https:// or another scheme: nothing a forward proxy serves */
};

struct http_head {
	size_t len;                 /* DONE: the head's bytes, its empty line included */
	enum http_target target;
	char method[24];
	char version[9];            /* "HTTP/1.0" or "HTTP/1.1" */
	/* CONNECT, ABSOLUTE: where to. host is a DNS name (lowercase, no final
	 * dot) or, with family set, an address literal (no brackets) in addr */
	char host[DNS_NAME_TEXT];
	int family;                 /* 0: a name; AF_INET, AF_INET6: a literal */
	uint8_t addr[16];
	uint16_t port;
	/* ABSOLUTE: the path and query in the head (length 0: "/") */
	size_t path_off, path_len;
	/* the body that follows the head: chunked, or has_length bytes (neither: none) */
	bool chunked;
	bool has_length;
	uint64_t length;
};

/* Parse what a client sent so far. Never reads outside buf[0..len). */
enum http_head_status http_head_parse(const uint8_t *buf, size_t len, struct http_head *ret);

/* The head the server gets for an HTTP_TARGET_ABSOLUTE request h parsed from head:
 * the request line in origin form, the URL's authority as the only Host
 * (RFC 9112 3.2.2: a proxy replaces the client's), the hop-by-hop fields
 * dropped (Connection and those it names, Keep-Alive, Proxy-*, TE, Upgrade)
 * and "Connection: close": one request per connection. Its length, or 0 when
 * out is too small. */
size_t http_head_for_server(const uint8_t *head, const struct http_head *h, char *out, size_t outlen);

#endif
