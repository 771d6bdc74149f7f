/* Plaintext buffers of the relay, and the host check (buf.c): the part of
 * the gateway that needs no TLS. */
#ifndef AGENTBOX_GATEWAY_BUF_H
#define AGENTBOX_GATEWAY_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_BUF_SOFT (32u * 1024)    /* read only below this much buffered */
#define GW_BUF_HARD (160u * 1024)   /* a rebuilt header block may go up to here */

struct gw_buf {
	uint8_t *b;
	size_t off, len, cap;           /* data is b[off .. off+len) */
};

bool gw_buf_put(struct gw_buf *b, const void *data, size_t len);   /* false over GW_BUF_HARD */
bool gw_buf_printf(struct gw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gw_buf_drop(struct gw_buf *b, size_t n);
void gw_buf_free(struct gw_buf *b);   /* wiped: it held requests with the credential */
static inline size_t gw_buf_room(const struct gw_buf *b) { return b->len < GW_BUF_SOFT ? GW_BUF_SOFT - b->len : 0; }
static inline uint8_t *gw_buf_data(const struct gw_buf *b) { return b->b ? b->b + b->off : NULL; }

/* Is authority (a Host header or :authority, maybe with a port) host? */
bool gw_authority_ok(const char *host, const char *authority, size_t len);

#endif
