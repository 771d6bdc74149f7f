/* The deny log (sentry_log.c): refused names, records by name, the packets
 * the ruleset logged, and the tick that writes repeats and the summary. */
#ifndef AGENTBOX_SENTRY_LOG_H
#define AGENTBOX_SENTRY_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "dns.h"
#include "sentry_state.h"

/* A name refused (proto "dns"): its first refusal is a record, the next ones
 * are counted. */
void sentry_log_name(struct sentry *s, const char *name, enum reason reason);
/* A record by name: a refused lookup, the SNI check's refusals, the
 * gateway's records. Its first one is written, the next ones counted. */
void sentry_log_named(struct sentry *s, const struct named_event *e);
/* An allowed name whose answer pointed inside, at addr. */
void sentry_log_pointed(struct sentry *s, const char *name, int family, const uint8_t *addr);
/* An answer for name held a: the name the records of that address carry
 * (the last one), and every name it had (sentry_names.h). */
void sentry_remember_name(struct sentry *s, const struct dns_addr *a, const char *name);
/* Read the log groups' sockets: first packets, repeats (a bounded amount). */
void sentry_handle_nflog(struct sentry *s);
void sentry_handle_nflog_repeats(struct sentry *s);
/* When the next tick is due (UINT64_MAX: nothing to write), and the tick:
 * repeats, records that waited for the rate, the summary. final: the last one. */
uint64_t sentry_log_next(const struct sentry *s);
void sentry_log_tick(struct sentry *s, bool final);

#endif
