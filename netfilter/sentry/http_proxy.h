/* The box's HTTP proxy, in the sentry (issue 35): what the usual proxy
 * variables (HTTPS_PROXY, http_proxy, ...) name inside a box, so that a
 * client that honours them hears a refusal as an HTTP status it stops on at
 * once (403, with the reason in its status line and body), instead of a DNS
 * or TCP error it retries for minutes (npm: 70 s a package).
 *
 * It grants nothing the policy does not: a CONNECT host:port, or a plain
 * request for an absolute http:// URL, is judged by the policy first (name
 * and port, or an address literal by the CIDR entries); an allowed name is
 * looked up through the sentry's own DNS, exactly as the box's lookups are
 * (its answers open the addresses; an answer that points inside is refused
 * there, and the proxy passes the words on); the connection to the server is
 * a socket of the box's network namespace the filter judges like any other;
 * and once connected, the flow goes to the SNI check (sni_proxy.h), which
 * judges a TLS server name on port 443 as for a redirected connection. What
 * the policy decided is never a 5xx: clients retry those.
 *
 * In learn mode the same verdicts say yes to all but what a deny entry, an
 * answer pointing inside or an address literal in a range learn mode keeps
 * closed refuses (sni_policy.h), as learn mode's filter does; what it lets
 * through is told to the caller (passed) to be recorded, since the learn
 * log group leaves out the proxy's own marked connections. */
#ifndef AGENTBOX_HTTP_PROXY_H
#define AGENTBOX_HTTP_PROXY_H

#include <stdint.h>

#include "egress.h"
#include "error.h"
#include "sni_proxy.h"

#define HTTP_PROXY_MAX_CONNS 64     /* heads being read, names looked up, connects under way */
#define HTTP_PROXY_HEAD_MS 10000    /* a request head must be whole within this */
#define HTTP_PROXY_RESOLVE_MS 9000  /* the sentry answers SERVFAIL after 4 s an upstream */
#define HTTP_PROXY_CONNECT_MS 15000
#define HTTP_PROXY_LINGER_MS 2000   /* after an answer: what the client still sends, dropped */

/* A refusal the policy decided. */
struct http_refusal {
	const char *code;        /* the deny log's reason: "not-allowed", "denied", "dns-bypass", "loopback" */
	const char *name;        /* NULL: an address literal */
	int family;              /* the literal's (0: none) */
	const uint8_t *addr;
	uint16_t port;
};

struct http_proxy_params {
	const struct egress_policy *policy;
	int listen_fd[2];                 /* on 127.0.0.1 and ::1 (-1: none) */
	uint16_t dns_port;                /* the sentry's DNS on 127.0.0.1; 0: none */
	struct sni_proxy *flows;          /* where a connection goes once connected */
	/* an unconnected TCP socket of family for the server, or -errno */
	int (*upstream_socket)(void *ctx, int family);
	/* a refusal r: logged by the caller, who writes the sentence that says
	 * why (phrase) and what the user can do about it (hint, "" for nothing) */
	void (*refused)(void *ctx, const struct http_refusal *r, char *phrase, size_t plen, char *hint, size_t hlen);
	/* a connection let through without a TLS ClientHello to judge (a tunnel
	 * to a port but 443, a plain request): the host asked for (NULL: an
	 * address literal) and where it went; a tunnel to 443 is the SNI
	 * check's to tell (its `passed`). NULL: none to call */
	void (*passed)(void *ctx, const char *name, int family, const uint8_t *addr, uint16_t port);
	void *ctx;
};

struct http_proxy;
int http_proxy_new(const struct http_proxy_params *prm, struct http_proxy **ret, struct ab_err *err);
/* The fd to poll for POLLIN: something to do for http_proxy_run */
int http_proxy_fd(const struct http_proxy *p);
/* Do what is ready (never blocks); returns the ms until the next deadline, -1 none */
int http_proxy_run(struct http_proxy *p);
void http_proxy_free(struct http_proxy *p);

#endif
