/* SHA-256 (FIPS 180-4), for content-addressed caches whose keys must not collide
 * even for inputs an attacker chooses. */
#ifndef AGENTBOX_SHA256_H
#define AGENTBOX_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;           /* bytes hashed so far */
	uint8_t buf[64];
	size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[32]);
/* out: 65 bytes, lowercase hex */
void sha256_hex(const uint8_t digest[32], char out[65]);

#endif
