/* The SNI check, in the sentry: every TCP/443 connection the box opens to an
 * allowed destination is redirected (nftables, in its network namespace) to
 * this proxy, which reads the ClientHello without taking it off the socket,
 * judges the server name it asks for against the policy, and then either
 * refuses the connection (logged with the name), hands it to the credential
 * gateway (a name with a header credential), or connects to the original
 * destination itself and splices the two sockets together in the kernel.
 * The upstream socket carries EGRESS_PROXY_MARK so the redirect skips it;
 * the filter judges it like any other packet of the box. */
#ifndef AGENTBOX_SNI_PROXY_H
#define AGENTBOX_SNI_PROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress.h"
#include "error.h"
#include "sni_policy.h"

#define SNI_PROXY_MAX_FLOWS 256
#define SNI_PROXY_HELLO_MS 10000    /* a ClientHello must be whole within this */
#define SNI_PROXY_CONNECT_MS 15000

struct sni_proxy_params {
	const struct egress_policy *policy;
	const struct egress_list *cred_hosts;   /* names whose flows go to the gateway; NULL none */
	int gateway_fd;                         /* seqpacket to the gateway (gateway_proto.h), -1 none */
	int listen_fd[2];                       /* the redirect's target on 127.0.0.1 and ::1 (-1: none) */
	/* an unconnected TCP socket of family carrying EGRESS_PROXY_MARK, or -errno */
	int (*upstream_socket)(void *ctx, int family);
	/* a refusal for the deny log (proto "tls"): the original destination
	 * (family 0: none), the name asked for (NULL: none; off the wire,
	 * printable ASCII, unescaped) and why (a static word: "not-allowed",
	 * "denied", "no-name", ...) */
	void (*log)(void *ctx, int family, const uint8_t *addr, int port, const char *name, const char *reason);
	/* a connection let through: by its server name, or (name NULL) by its
	 * address; NULL: none to call */
	void (*passed)(void *ctx, int family, const uint8_t *addr, int port, const char *name);
	void *ctx;
};

struct sni_proxy;
int sni_proxy_new(const struct sni_proxy_params *prm, struct sni_proxy **ret, struct ab_err *err);
/* A connection the box's HTTP proxy judged and connected on (http_proxy.h),
 * handed over with both its sockets: c the box's, u the server's (connected,
 * carrying EGRESS_PROXY_MARK), dst where u goes. With hello, the TLS
 * ClientHello that comes first is judged as a redirected connection's is
 * (its name for dst's port; a credential host's flow goes to the gateway)
 * before a byte passes; without, bytes flow at once. At most c_limit bytes
 * go from c to u (UINT64_MAX: all); what the box sends after them is read and
 * dropped. 0, or -1 when the flows are full (both closed, logged). */
struct sni_proxy_adoptee {
	int c, u;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	bool hello;
	uint64_t c_limit;
};
int sni_proxy_adopt(struct sni_proxy *p, const struct sni_proxy_adoptee *a);
/* The fd to poll for POLLIN: something to do for sni_proxy_run */
int sni_proxy_fd(const struct sni_proxy *p);
/* Do what is ready (never blocks); returns the ms until the next deadline, -1 none */
int sni_proxy_run(struct sni_proxy *p);
void sni_proxy_free(struct sni_proxy *p);

#endif
