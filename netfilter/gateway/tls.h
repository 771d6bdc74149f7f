/* The gateway's TLS (tls.c): the box's CA and leaf certificates, the context
 * facing the box and the one facing the real servers. */
#ifndef AGENTBOX_GATEWAY_TLS_H
#define AGENTBOX_GATEWAY_TLS_H

#include <openssl/ssl.h>
#include <stddef.h>

#include "error.h"
#include "gateway.h"

struct gw_tls;
/* The box's CA (a new key, name-constrained to the credentials' hosts), the
 * leaf key, the context facing the box and the one facing servers. */
int gw_tls_init(const struct gw_config *cfg, struct gw_tls **ret, struct ab_err *err);
/* What the context facing the box asks about each connection (relay.c): its
 * ClientHello, and which ALPN protocol to answer with. Before the first one. */
void gw_tls_box_callbacks(struct gw_tls *t, SSL_client_hello_cb_fn hello, SSL_CTX_alpn_select_cb_func alpn);
/* The CA certificate, PEM (static storage of t) */
const char *gw_tls_ca_pem(const struct gw_tls *t, size_t *len);
SSL *gw_tls_new_client_side(struct gw_tls *t);       /* we are the server */
SSL *gw_tls_new_upstream_side(struct gw_tls *t, const char *host, const unsigned char *alpn, size_t alpn_len);
/* The leaf for host into ssl (from the cache, or minted) */
int gw_tls_use_leaf(struct gw_tls *t, SSL *ssl, const char *host);
/* OpenSSL's error queue as one line (and cleared) */
const char *gw_tls_error(void);

#endif
