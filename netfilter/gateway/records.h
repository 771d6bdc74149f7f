/* What the deny log is to say about a connection (records.c): sent to the
 * sentry on its hand-off socket (gateway_proto.h), which writes the log;
 * never the secret. */
#ifndef AGENTBOX_GATEWAY_RECORDS_H
#define AGENTBOX_GATEWAY_RECORDS_H

#include <stddef.h>
#include <sys/socket.h>

#include "pair.h"

/* The sentry's socket: hand-offs in, records out */
void gw_records_to(int fd);
/* A credential's use on a connection to host (at dst, or NULL), or a refusal
 * (a word, and more for people). */
void gw_log_use(const char *host, const struct sockaddr_storage *dst, const char *credential);
void gw_log_deny(const char *host, const struct sockaddr_storage *dst, const char *reason, const char *detail);
/* The first use of credential cred (an index into gw_cfg->creds) on pair p:
 * once per connection and credential. */
void gw_pair_log_use(struct gw_pair *p, size_t cred);

#endif
