/* agentbox-gateway: the per-box process that puts header credentials into
 * HTTPS requests on their way out (issue 26, agentbox-egress(7)).
 *
 * It holds no capability and reaches nothing by itself. The sentry hands it
 * each connection the box opened to a credential's host, as two sockets (the
 * box's, its ClientHello unread; and an unconnected one carrying the proxy
 * mark, in the box's network namespace); the gateway connects the second to
 * the original destination, verifies the real server, terminates the box's
 * TLS with a certificate from the box's own CA, and relays HTTP/1.1 or
 * HTTP/2 (as the server chose by ALPN), replacing the credential's header
 * on requests to its hosts and masking any copy of a secret in what the
 * server answers (issue 34: the gateway never gives the secret back).
 *
 * Its files, from the top down (each with its header; calls go down only):
 *   main.c     start-up: configuration from the runtime, the CA, privileges, the loop
 *   relay.c    connection pairs: handshakes, TLS I/O, the event pump
 *   h1.c       HTTP/1.1 requests rewritten (http_parser), the exchange followed
 *   h1_resp.c  HTTP/1.1 responses read, rebuilt and scanned
 *   h2.c       HTTP/2 both ways (nghttp2), streams mapped one to one, responses scanned
 *   guard.c    what a request may ask of a credential host; readable responses
 *   scan.c     the secrets looked for in responses, and masked
 *   tls.c      CA and leaf certificates, the TLS contexts
 *   records.c  what the deny log is to say, sent to the sentry
 *   ctl.c      the runtime's records: the configuration, its secrets in locked memory
 *   buf.c      plaintext buffers, and the host check
 *   pair.h     a connection pair (types); gateway.h: the configuration (types) */
#ifndef AGENTBOX_GATEWAY_H
#define AGENTBOX_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "credential.h"

#define TLS_NAME_MAX 256

/* The configuration from the runtime (read by ctl.c): types only. */

struct gw_cred {
	char name[128];
	struct egress_entry hosts[CRED_HOSTS_MAX];
	size_t n_hosts;
	struct cred_header header;
	char *value;           /* the rendered header value: in locked memory */
	size_t value_len;
	char *secret;          /* the secret itself, looked for in responses: locked too */
	size_t secret_len;
};

struct gw_config {
	char container_id[256];
	struct gw_cred creds[CRED_MAX];
	size_t n_creds;
	char *upstream_ca_pem; /* extra trust for upstream servers, or NULL */
	size_t upstream_ca_len;
	bool unprotected;      /* a test build's reference: requests and responses unguarded */
};

#endif
