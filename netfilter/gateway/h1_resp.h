/* HTTP/1.1 responses on their way to the box (h1_resp.c): each head is read
 * (http_parser) and written anew, each body passed on as it comes, and all of
 * it scanned for the credentials' secrets (scan.h); chunked bodies are framed
 * anew around what the scan passes on. A body the gateway cannot read (a
 * Content-Encoding it did not ask for) becomes a 502 that says why. h1.c
 * drives it and keeps the exchange (which request each answers, upgrades). */
#ifndef AGENTBOX_GATEWAY_H1_RESP_H
#define AGENTBOX_GATEWAY_H1_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pair.h"

struct h1_resp;

struct h1_resp *h1_resp_new(struct gw_pair *p);
void h1_resp_free(struct h1_resp *r);
/* The server's bytes (at most len), as far as one message goes: what goes on
 * is in p->c.out. Returns the bytes read, -1 when the pair must end (a
 * server it cannot follow, or a copy of a secret it could no longer mask);
 * a refusal the box is told (the 502) closes the pair after it instead. */
ssize_t h1_resp_execute(struct h1_resp *r, const uint8_t *data, size_t len, bool head_request);
/* After h1_resp_execute: a message ended (its status in *status); the next
 * one starts afresh unless the connection became a tunnel. */
bool h1_resp_done(struct h1_resp *r, int *status);
void h1_resp_next(struct h1_resp *r);
/* After a 101: bytes both ways, still scanned */
int h1_resp_tunnel(struct h1_resp *r, const uint8_t *data, size_t len);
/* Nothing more to read now / the server closed: what is held goes on. */
int h1_resp_pause(struct h1_resp *r, bool tunnel);
int h1_resp_eof(struct h1_resp *r, bool tunnel);

#endif
