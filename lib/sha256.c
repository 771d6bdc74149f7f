#include "sha256.h"

#include <nettle/sha2.h>

/* nettle's names for its functions, not ours */
#undef sha256_init
#undef sha256_update
#undef sha256_digest

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((struct sha256 *)0)->ctx), "struct sha256 too small");
_Static_assert(_Alignof(struct sha256_ctx) <= 8, "struct sha256 misaligned");

void sha256_init(struct sha256 *s)
{
	nettle_sha256_init((struct sha256_ctx *)s->ctx);
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	nettle_sha256_update((struct sha256_ctx *)s->ctx, len, data);
}

void sha256_final(struct sha256 *s, uint8_t out[32])
{
	nettle_sha256_digest((struct sha256_ctx *)s->ctx, SHA256_DIGEST_SIZE, out);
}

void sha256_hex(const uint8_t digest[32], char out[65])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[64] = 0;
}
