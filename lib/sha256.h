/* SHA-256 (FIPS 180-4), for content-addressed caches whose keys must not collide
 * even for inputs an attacker chooses. Nettle's, which uses the CPU's SHA
 * instructions where there are some (a cached seccomp program's check on every
 * create: ~20 blocks). */
#ifndef AGENTBOX_SHA256_H
#define AGENTBOX_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* nettle's struct sha256_ctx, kept opaque: its header renames sha256_init and
 * friends to its own */
struct sha256 {
	_Alignas(8) unsigned char ctx[128];
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[32]);
/* out: 65 bytes, lowercase hex */
void sha256_hex(const uint8_t digest[32], char out[65]);

#endif
