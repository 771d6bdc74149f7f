/* What the box reads about its refusals (sentry_refused.c). */
#ifndef AGENTBOX_SENTRY_REFUSED_H
#define AGENTBOX_SENTRY_REFUSED_H

#include <stddef.h>
#include <stdint.h>

#include "sentry_state.h"

/* The sentence that tells the agent why (a refused lookup's extended DNS
 * error, the refused file's "message"): code is the deny log's reason; name
 * and/or an address (family 0: none; proto 0, port -1: unknown); via: the
 * denied name a CNAME led to. */
void sentry_refusal_text(const struct sentry *s, const char *code, const char *name, const char *via, int family,
			 const uint8_t *addr, uint8_t proto, int port, char *buf, size_t len);
/* What the user runs to allow a refusal of kind (the deny log's "proto")
 * whose code is "not-allowed": "agentbox egress allow ID ENTRY", the entry
 * made of the name (and port), or of the address, port and protocol; in a
 * box without network, the --allow of its next run. */
void sentry_allow_hint(const struct sentry *s, const char *kind, const char *name, int family, const uint8_t *addr,
		       int port, char *buf, size_t len);
/* A first refusal into the refused file, if there is one: kind is the deny
 * log's "proto" ("dns", "tls", "tcp", ...). */
void sentry_refused_note(struct sentry *s, const char *kind, const char *code, const char *name, int family,
			 const uint8_t *addr, uint8_t proto, int port);

#endif
