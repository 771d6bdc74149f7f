/* Plaintext buffers of the relay and the host check: the part of the
 * gateway that needs no TLS (h1.c and h2.c write through it; the fuzz
 * target of h1.c links it alone). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "util.h"

/* ---- buffers ---- */

bool gw_buf_put(struct gw_buf *b, const void *data, size_t len)
{
	if (len == 0)
		return true;
	if (b->len + len > GW_BUF_HARD)
		return false;
	if (b->off + b->len + len > b->cap) {
		if (b->off) {
			memmove(b->b, b->b + b->off, b->len);
			b->off = 0;
		}
		if (b->len + len > b->cap) {
			size_t cap = b->cap ? b->cap : 16384;
			while (cap < b->len + len)
				cap *= 2;
			b->b = xrealloc(b->b, cap);
			b->cap = cap;
		}
	}
	memcpy(b->b + b->off + b->len, data, len);
	b->len += len;
	return true;
}

bool gw_buf_printf(struct gw_buf *b, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < sizeof tmp && gw_buf_put(b, tmp, (size_t)n);
}

void gw_buf_drop(struct gw_buf *b, size_t n)
{
	b->off += n;
	b->len -= n;
	if (b->len == 0)
		b->off = 0;
}

void gw_buf_free(struct gw_buf *b)
{
	if (b->b)
		explicit_bzero(b->b, b->cap);   /* it held requests with the credential */
	free(b->b);
	*b = (struct gw_buf){0};
}

bool gw_authority_ok(const char *host, const char *a, size_t len)
{
	/* host, or host:443; the name's case does not matter; a final dot is the same name */
	if (len > 4 && memcmp(a + len - 4, ":443", 4) == 0)
		len -= 4;
	if (len && a[len - 1] == '.')
		len--;
	return len == strlen(host) && strncasecmp(a, host, len) == 0;
}

