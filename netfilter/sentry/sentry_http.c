/* The box's HTTP proxy in the sentry (http_proxy.h): over the listeners the
 * runtime made before the program ran, its names looked up through the
 * sentry's own DNS listener, its sockets to servers from the netadmin helper
 * (EGRESS_PROXY_MARK: the TCP/443 redirect leaves them to the proxy's own
 * SNI check) or, without one, plain sockets of the box: the filter judges
 * them either way. Its connections go on as the SNI check's flows; its
 * refusals go to the deny log (proto "proxy") and the refused file, and come
 * back to the box in words, with what the user can do about them. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "http_proxy.h"
#include "sentry_helper.h"
#include "sentry_http.h"
#include "sentry_log.h"
#include "sentry_refused.h"
#include "sentry_state.h"

static int upstream_socket(void *ctx, int family)
{
	struct sentry *s = ctx;
	if (s->helper >= 0)
		return sentry_helper_proxy_socket(s, family);
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/* How the user allows it: the entry that would, on the running box; a box
 * without network (no resolver to ask) only from its next run on */
static void allow_hint(const struct sentry *s, const struct http_refusal *r, char *hint, size_t len)
{
	char host[INET6_ADDRSTRLEN + 2] = "";
	if (!r->name && r->family == AF_INET6) {
		host[0] = '[';
		inet_ntop(AF_INET6, r->addr, host + 1, sizeof host - 2);
		strcat(host, "]");
	} else if (!r->name)
		inet_ntop(AF_INET, r->addr, host, sizeof host);
	const char *entry = r->name ? r->name : host;
	if (!s->sp->dns || !s->sp->n_upstream)
		snprintf(hint, len, "this box has no network: the user can allow it for the next run with --allow %s:%u "
			 "(or network.allow in the kit)", entry, r->port);
	else
		snprintf(hint, len, "the user can allow it: agentbox egress allow %s %s:%u (or --allow, network.allow in a kit)",
			 s->sp->container_id ? s->sp->container_id : "ID", entry, r->port);
}

static void refused(void *ctx, const struct http_refusal *r, char *phrase, size_t plen, char *hint, size_t hlen)
{
	struct sentry *s = ctx;
	struct named_event e = { .kind = NK_PROXY, .family = r->family, .addr = r->addr, .port = r->port,
				 .name = r->name, .reason = r->code };
	sentry_log_named(s, &e);
	sentry_refusal_text(s, r->code, r->name, NULL, r->family, r->addr, IPPROTO_TCP, r->port, phrase, plen);
	if (strcmp(r->code, "not-allowed") == 0)
		allow_hint(s, r, hint, hlen);
	else if (strcmp(r->code, "loopback") == 0)
		snprintf(hint, hlen, "the box's own addresses are reached directly, not through the proxy (NO_PROXY)");
	else if (strcmp(r->code, "dns-bypass") == 0)
		snprintf(hint, hlen, "look names up through the box's resolver");
}

int sentry_http_start(struct sentry *s, struct ab_err *err)
{
	struct http_proxy_params prm = {
		.policy = s->p,
		.listen_fd = { s->http_fd[0], s->http_fd[1] },
		.dns_port = s->sp->dns ? s->sp->port : 0,
		.flows = s->sni,
		.upstream_socket = upstream_socket,
		.refused = refused,
		.ctx = s,
	};
	return http_proxy_new(&prm, &s->http, err);
}

void sentry_http_run(struct sentry *s)
{
	int ms = http_proxy_run(s->http);
	s->http_next = ms < 0 ? UINT64_MAX : now_ms() + (uint64_t)ms;
}

void sentry_http_stop(struct sentry *s)
{
	http_proxy_free(s->http);
	s->http = NULL;
}
