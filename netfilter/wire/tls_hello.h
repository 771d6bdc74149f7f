/* The TLS ClientHello as the sentry reads it from a container's connection:
 * only what decides where the flow may go (the server name, RFC 6066) and
 * whether the client hid it (encrypted ClientHello). No cryptography, no
 * certificate: the bytes are checked and walked, never trusted.
 *
 * The hello may arrive in several TCP segments and span several TLS records;
 * the parser is fed everything received so far (from the first byte of the
 * connection) and says how many bytes it needs before it can decide. */
#ifndef AGENTBOX_TLS_HELLO_H
#define AGENTBOX_TLS_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest ClientHello handshake message accepted (a real one with a
 * post-quantum key share is ~2 KiB); longer ones are refused, not buffered. */
#define TLS_HELLO_MAX_MSG (32u * 1024)
/* ... and the most bytes (records with their headers) read to get it */
#define TLS_HELLO_MAX_BYTES (TLS_HELLO_MAX_MSG + 64u * 5)

/* A DNS name's text: 253 characters and the NUL */
#define TLS_SNI_MAX 254

enum tls_hello_status {
	TLS_HELLO_DONE = 0,     /* a whole ClientHello: see the result */
	TLS_HELLO_MORE = 1,     /* incomplete so far: need at least ->need bytes */
	TLS_HELLO_NOT_TLS = -1, /* the first record is no TLS handshake (plain text, SSLv2) */
	TLS_HELLO_BAD = -2,     /* a TLS handshake, but malformed or not a ClientHello */
	TLS_HELLO_TOO_BIG = -3, /* longer than TLS_HELLO_MAX_MSG */
};

struct tls_hello {
	size_t need;             /* TLS_HELLO_MORE: total bytes to wait for (a lower bound) */
	bool has_sni;            /* a host_name was sent */
	bool sni_valid;          /* ... and it is a DNS name: sni holds it, lowercase, no final dot */
	char sni[TLS_SNI_MAX];   /* the host_name (lowercased; printable ASCII, else '?') */
	bool ech;                /* encrypted_client_hello: sni is the outer, public name */
	uint16_t legacy_version; /* client_version of the hello */
	size_t hello_bytes;      /* DONE: bytes of the records that carried it */
};

/* Parse what a client sent so far. Never reads outside buf[0..len). */
enum tls_hello_status tls_hello_parse(const uint8_t *buf, size_t len, struct tls_hello *ret);

/* A short word for a status, for logs ("not-tls", "malformed", ...). */
const char *tls_hello_status_text(enum tls_hello_status s);

#endif
