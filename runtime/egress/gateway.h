/* Starting a box's credential gateway (netfilter/gateway/gateway.h) from the runtime:
 * find the executable beside ours, hand it the credentials over a socketpair
 * (never a file, never its argv or environment), and take back the box's CA
 * certificate. */
#ifndef AGENTBOX_RUNTIME_GATEWAY_H
#define AGENTBOX_RUNTIME_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "egress.h"
#include "error.h"

struct gateway_cred {
	const char *name;
	const char *const *hosts;
	size_t n_hosts;
	const char *header;       /* "Authorization: Bearer {}" */
	const char *secret;
	size_t secret_len;
};

struct gateway_spec {
	const char *container_id;
	const struct gateway_cred *creds;
	size_t n_creds;
	const char *upstream_ca;  /* a host PEM file, or NULL */
};

struct gateway_child {
	pid_t pid;
	int handoff_fd;           /* the sentry's end of the hand-off socket */
	char *ca_pem;             /* the box's CA certificate (malloc'd) */
	size_t ca_pem_len;
	struct egress_list hosts; /* every credential's hosts, for the sentry */
};

/* Where agentbox-gateway is: $AGENTBOX_GATEWAY, beside this binary, on PATH,
 * or in the install's sbin. */
int gateway_find(char *buf, size_t len, struct ab_err *err);
/* Start it and wait for its CA (or why it could not start). On error nothing
 * is left running. */
int gateway_spawn(const struct gateway_spec *spec, struct gateway_child *ret, struct ab_err *err);
/* Stop it (SIGKILL) and forget it */
void gateway_child_free(struct gateway_child *g, bool kill_it);

#endif
