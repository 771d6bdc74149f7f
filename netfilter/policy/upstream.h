/* The upstream resolvers the sentry asks: from the container's resolv.conf
 * (upstream.c). */
#ifndef AGENTBOX_UPSTREAM_H
#define AGENTBOX_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct egress_upstream {
	int family;        /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint32_t scope_id; /* IPv6 link-local zone */
	uint16_t port;     /* host order, 53 */
};
#define EGRESS_MAX_UPSTREAMS 3

/* What a resolv.conf says: its first nameserver lines (up to
 * EGRESS_MAX_UPSTREAMS, those glibc can parse), and, when an engine wrote it
 * for a resolver of its own, where that resolver forwards: Docker (25 and
 * later) notes its embedded resolver's servers as "# ExtServers: [A host(B)]";
 * the host(...) ones it asks from its own network namespace, the others from
 * the container's, and only those are listed in ext. */
struct egress_resolv {
	struct egress_upstream ns[EGRESS_MAX_UPSTREAMS];
	size_t n_ns;
	struct egress_upstream ext[EGRESS_MAX_UPSTREAMS];
	size_t n_ext;
	bool has_ext;      /* the note is there (its list may be empty) */
};

/* Parse the text of a resolv.conf (changed in place). Never fails: what it
 * cannot read is left out, as glibc does. */
void egress_resolv_conf_parse(char *text, struct egress_resolv *r);
/* Read and parse path; its text (NUL-terminated, the caller's to free) in
 * *ret_text unless ret_text is NULL. */
int egress_resolv_conf_read(const char *path, struct egress_resolv *r, char **ret_text, struct ab_err *err);
/* First nameserver lines (up to EGRESS_MAX_UPSTREAMS) of a resolv.conf; an
 * error when there is none. */
int egress_upstream_from_resolv_conf(const char *path, struct egress_upstream *ret,
				     size_t *ret_n, struct ab_err *err);
/* A loopback address (127.0.0.0/8, ::1). */
bool egress_upstream_is_loopback(const struct egress_upstream *u);

#endif
