/* What a request to a credential's host may ask of the server, and what a
 * response must be for the gateway to read it (guard.c): the rules h1.c and
 * h2.c share so that the server never gives the secret back unseen. */
#ifndef AGENTBOX_GATEWAY_GUARD_H
#define AGENTBOX_GATEWAY_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* The value the gateway asks for instead of the box's Accept-Encoding */
#define GW_ACCEPT_ENCODING "identity"

/* NULL when a request with this method (and a Max-Forwards header or not)
 * may go to a credential's host; else why not, for the box and the log.
 * TRACE and TRACK give the request back as the server got it, credential
 * and all; OPTIONS with Max-Forwards asks a proxy on the way to answer. */
const char *gw_guard_method(const char *method, size_t len, bool max_forwards);
/* A request header the gateway does not pass on: Accept-Encoding (it asks
 * for identity itself, so bodies come readable), TE other than "trailers"
 * (compressed transfer codings), Range and If-Range (a copy in pieces, one
 * per response), Sec-WebSocket-Extensions (compressed WebSocket frames). */
bool gw_guard_drops(const char *name, size_t len, const char *value, size_t vlen);
/* An Upgrade the gateway passes on: WebSocket only. Another protocol (h2c:
 * HTTP/2's headers go HPACK-coded) would carry the server's answer past the
 * response scan in a form it cannot read. */
bool gw_guard_upgrade_ok(const char *value, size_t len);
/* A Content-Encoding or Transfer-Encoding whose body the gateway can read:
 * none, or identity (and chunked, for Transfer-Encoding). */
bool gw_guard_coding_readable(const char *value, size_t len, bool transfer);

#endif
