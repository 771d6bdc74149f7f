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
 * on requests to its hosts.
 *
 *   main.c     start-up: configuration from the runtime, the CA, privileges, the loop
 *   ctl.c      the runtime <-> gateway records (also used by the runtime side)
 *   tls.c      CA and leaf certificates, the TLS contexts, non-blocking TLS I/O
 *   relay.c    one connection pair: handshakes, buffers, the event pump
 *   h1.c       HTTP/1.1 requests rewritten (http_parser), responses watched
 *   h2.c       HTTP/2 both ways (nghttp2), streams mapped one to one */
#ifndef AGENTBOX_GATEWAY_H
#define AGENTBOX_GATEWAY_H

#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "credential.h"
#include "error.h"
#include "gateway_proto.h"

#define TLS_NAME_MAX 256

/* ---- configuration (from the runtime, ctl.c) ---- */

struct gw_cred {
	char name[128];
	struct egress_entry hosts[CRED_HOSTS_MAX];
	size_t n_hosts;
	struct cred_header header;
	char *value;           /* the rendered header value: in locked memory */
	size_t value_len;
};

struct gw_config {
	char container_id[256];
	struct gw_cred creds[CRED_MAX];
	size_t n_creds;
	char *upstream_ca_pem; /* extra trust for upstream servers, or NULL */
	size_t upstream_ca_len;
};

/* Read the runtime's records from fd until GW_REC_END; secrets go straight
 * into locked memory (gw_secure_alloc) and are rendered there. */
int gw_config_read(int fd, struct gw_config *cfg, struct ab_err *err);
/* Memory that is never swapped or dumped, wiped when freed */
void *gw_secure_alloc(size_t len);

/* ---- TLS (tls.c) ---- */

struct gw_tls;
/* The box's CA (a new key, name-constrained to the credentials' hosts), the
 * leaf key, the context facing the box and the one facing servers. */
int gw_tls_init(const struct gw_config *cfg, struct gw_tls **ret, struct ab_err *err);
/* The CA certificate, PEM (static storage of t) */
const char *gw_tls_ca_pem(const struct gw_tls *t, size_t *len);
SSL *gw_tls_new_client_side(struct gw_tls *t);       /* we are the server */
SSL *gw_tls_new_upstream_side(struct gw_tls *t, const char *host, const unsigned char *alpn, size_t alpn_len);
/* The leaf for host into ssl (from the cache, or minted) */
int gw_tls_use_leaf(struct gw_tls *t, SSL *ssl, const char *host);
/* OpenSSL's error queue as one line (and cleared) */
const char *gw_tls_error(void);

/* ---- logging (main.c) ---- */

/* What the deny log is to say about a connection to host (at dst, or NULL):
 * a credential's use, or a refusal (a word, and more for people). Sent to the
 * sentry (gateway_proto.h), which writes the log; never the secret. */
void gw_log_use(const char *host, const struct sockaddr_storage *dst, const char *credential);
void gw_log_deny(const char *host, const struct sockaddr_storage *dst, const char *reason, const char *detail);
extern const struct gw_config *gw_cfg;

/* ---- relay (relay.c, h1.c, h2.c) ---- */

struct gw_pair;
/* A new connection from the sentry: start both handshakes. */
int gw_relay_start(struct gw_tls *t, int epfd, const struct gw_handoff *h, int client_fd, int upstream_fd);
/* An event on one of a pair's fds (the epoll data) */
void gw_relay_event(struct gw_pair *p, uint32_t events);
/* Close idle or stuck pairs; returns the ms to the next deadline (-1 none) */
int gw_relay_tick(void);

/* Credentials for host (lowercase): the indexes into gw_cfg->creds, count returned */
size_t gw_creds_for(const char *host, size_t idx[CRED_MAX]);

#endif
