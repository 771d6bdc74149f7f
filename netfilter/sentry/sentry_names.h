/* What the sentry learnt about names (sentry_names.c): which addresses the
 * answers for each name held, bounded, the most recently seen kept. It names
 * a connection by its address in learn mode (sentry_learn.c), and tells a
 * live deny of a name which addresses to cut (sentry_reload.c). */
#ifndef AGENTBOX_SENTRY_NAMES_H
#define AGENTBOX_SENTRY_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.h"
#include "sentry_state.h"

#define NAME_ADDRS 1024   /* (name, address) pairs kept; the least recently seen goes */

/* An answer for name held addr (a name already lowercase, no final dot). */
void sentry_names_note(struct sentry *s, const char *name, int family, const uint8_t *addr);
/* The names whose answers held addr within the last max_age_ms, most
 * recent first, at most max into out; returns how many went there. */
size_t sentry_names_for(struct sentry *s, int family, const uint8_t *addr, uint64_t max_age_ms, const char **out,
			size_t max);
/* Did an answer for name hold addr within the last max_age_ms? */
bool sentry_names_held(struct sentry *s, const char *name, int family, const uint8_t *addr, uint64_t max_age_ms);
/* The addresses learnt for the names entry e (a name or a wildcard) matches:
 * each once, at most max into fam/addrs; returns how many there are. */
size_t sentry_names_addrs(struct sentry *s, const struct egress_entry *e, int *fam, uint8_t (*addrs)[16], size_t max);
void sentry_names_free(struct sentry *s);

#endif
