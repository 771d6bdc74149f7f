/* `agentbox egress suggest` (egress_suggest.c): learn mode's records
 * (netfilter/sentry/sentry_learn.h has their format) turned into the
 * network.allow block that lets the same session run default-deny with
 * nothing refused. Pure: lines in, text out. */
#ifndef AGENTBOX_EGRESS_SUGGEST_H
#define AGENTBOX_EGRESS_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct egress_suggest;

struct egress_suggest *egress_suggest_new(void);
void egress_suggest_free(struct egress_suggest *g);
/* One line of a learn file, merged with the same thing's earlier lines
 * (counts added, first and last kept); false when it is not a record (a
 * line torn while the sentry writes). */
bool egress_suggest_add(struct egress_suggest *g, const char *line);

struct egress_suggest_summary {
	size_t records;          /* lines taken */
	size_t names;            /* entries by name (with a port, or looked up only) */
	size_t lookups_only;     /* of them: looked up, never connected to */
	size_t addresses;        /* entries by address: no name known */
	size_t inside;           /* answers that pointed inside (withheld) */
	size_t nxdomain;         /* names looked up that do not exist */
	uint64_t lost, unrecorded;   /* what the records say they missed */
	bool full;               /* the learn file reached its size limit */
};
void egress_suggest_summary(struct egress_suggest *g, struct egress_suggest_summary *ret);
/* The suggestion for container id: a YAML network.allow block ready to paste
 * into a kit, with comments (what was reached by address only, what
 * pointed inside, what was missed), or with json one JSON object. With
 * wildcards, three or more names below one parent under the same port are
 * folded into "*.parent" (never above a registrable domain:
 * egress_suffix_foldable). The caller frees. */
char *egress_suggest_text(struct egress_suggest *g, const char *id, bool wildcards, bool json);

#endif
