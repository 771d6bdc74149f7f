/* What the gateway looks for in the responses of credential hosts (scan.c):
 * the credentials' secrets, as they are and as an echo would write them, so
 * that a server that gives a request back (TRACE, an echo endpoint, an error
 * that quotes the token, a redirect carrying it) does not hand the box the
 * secret the gateway keeps from it.
 *
 * A matcher (an Aho-Corasick automaton, built once, in locked memory) holds
 * the patterns: each secret, its base64 in the standard and URL-safe
 * alphabets at the three alignments a secret can have inside a longer
 * base64 text, its hex and percent-encoded forms (either case), and for a
 * "user:password" secret (Basic authentication) the password alone. A stream (struct gw_scan, one per response stream) reads
 * bytes through a decoder that undoes the escapes an echo would add
 * (percent-encoding, JSON's \/ \uXXXX \xXX, HTML's &#NN; &#xHH; &amp; ...,
 * and line breaks, as in wrapped base64), and masks every copy it finds
 * with '*' in place: the same length, so Content-Length and chunk sizes
 * stay true. It holds back only the bytes that could still become a copy
 * (a partial match), so what cannot be part of one goes on at once. */
#ifndef AGENTBOX_GATEWAY_SCAN_H
#define AGENTBOX_GATEWAY_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "gateway.h"

#define GW_SCAN_MASK '*'
/* A partial match this long (decoded bytes) is kept back when the stream
 * pauses: shorter ones go on and, should they become a copy, cut it. */
#define GW_SCAN_DRAIN_KEEP 4
/* A partial match this long left at the end of a message is masked too: a
 * server that cut the secret itself gives no more than a few bytes of it. */
#define GW_SCAN_TAIL_MASK 8
/* Encodings of a secret shorter than this, and derived patterns (a
 * password, a decoded form) shorter than this, are not looked for: they
 * would mask too much that is no secret. */
#define GW_SCAN_MIN_DERIVED 6

struct gw_matcher;

/* A new matcher; add the secrets, then build it (the patterns then move to
 * locked memory and the heap copies are wiped). */
struct gw_matcher *gw_matcher_new(void);
/* A secret (its index, for the log, in id): itself and its encodings; when
 * header_value is "Basic <base64 of user:password>", the password too. */
void gw_matcher_add_secret(struct gw_matcher *m, const uint8_t *secret, size_t len, const char *header_value,
			   unsigned id);
int gw_matcher_build(struct gw_matcher *m);   /* -1: out of memory */
void gw_matcher_free(struct gw_matcher *m);
size_t gw_matcher_patterns(const struct gw_matcher *m);

struct gw_canon_pos;

struct gw_scan {
	const struct gw_matcher *m;     /* NULL: nothing to look for, bytes pass */
	uint32_t state;                 /* in the automaton, over the decoded bytes */
	uint32_t raw_state;             /* ... over the bytes as they are (an escape may end in a copy's first byte) */
	uint64_t pos;                   /* stream offset of the next byte fed */
	uint64_t released;              /* ... of the first byte not yet passed on */
	uint8_t *held;                  /* bytes [released, pos), between calls */
	size_t held_cap;
	uint8_t *win;                   /* where byte `released` is now: held, or in the output */
	uint8_t tok[12];                /* an escape being read */
	uint8_t tok_len;
	uint64_t tok_start;
	struct gw_canon_pos *ring;      /* where the last decoded bytes came from */
	uint64_t n_canon;
	unsigned hits;                  /* copies masked */
	uint64_t hit_ids;               /* of which secrets (bit = id % 64) */
	bool cut;                       /* a copy began in bytes already passed on */
};

void gw_scan_init(struct gw_scan *s, const struct gw_matcher *m);
void gw_scan_free(struct gw_scan *s);
/* Bytes of the stream: what can go on is appended to out, masked. -1 when
 * out is full (GW_BUF_HARD) or a copy began in bytes already passed on
 * (s->cut): the stream must end. */
int gw_scan_feed(struct gw_scan *s, const uint8_t *data, size_t len, struct gw_buf *out);
/* Nothing more to read for now: pass on what only a short partial match
 * holds back, so a stream that pauses is not kept waiting. */
int gw_scan_drain(struct gw_scan *s, struct gw_buf *out);
/* The end of a message or a header block: everything goes on (a long
 * partial match masked), and the next bytes start afresh. */
int gw_scan_flush(struct gw_scan *s, struct gw_buf *out);
/* One piece scanned whole (a header block, a value): masked in place. */
unsigned gw_scan_whole(const struct gw_matcher *m, uint8_t *data, size_t len);
/* The matcher every pair uses: all the credentials' secrets, built once
 * the configuration is read (main.c); NULL before. */
extern const struct gw_matcher *gw_secrets;
int gw_secrets_build(const struct gw_config *cfg);

/* Bytes held back now */
static inline size_t gw_scan_held(const struct gw_scan *s) { return (size_t)(s->pos - s->released); }

#endif
