/* Connection pairs inside the gateway (relay.c): handshakes, TLS I/O, and
 * the event pump that moves plaintext through h1.c or h2.c. */
#ifndef AGENTBOX_GATEWAY_RELAY_H
#define AGENTBOX_GATEWAY_RELAY_H

#include <stdint.h>

#include "gateway_proto.h"
#include "tls.h"

struct gw_pair;
/* The TLS contexts every pair uses; before the first pair. */
void gw_relay_init(struct gw_tls *t);
/* A new connection from the sentry: start both handshakes. */
int gw_relay_start(int epfd, const struct gw_handoff *h, int client_fd, int upstream_fd);
/* An event on one of a pair's fds (the epoll data) */
void gw_relay_event(struct gw_pair *p, uint32_t events);
/* Close idle or stuck pairs; returns the ms to the next deadline (-1 none) */
int gw_relay_tick(void);

#endif
