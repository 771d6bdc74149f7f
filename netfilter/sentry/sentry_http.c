/* The box's HTTP proxy in the sentry (http_proxy.h): over the listeners the
 * runtime made before the program ran, its names looked up through the
 * sentry's own DNS listener, its sockets to servers from the netadmin helper
 * (EGRESS_PROXY_MARK: the TCP/443 redirect leaves them to the proxy's own
 * SNI check) or, without one, plain sockets of the box: the filter judges
 * them either way. Its connections go on as the SNI check's flows; its
 * refusals go to the deny log (proto "proxy") and the refused file, and come
 * back to the box in words, with what the user can do about them. In
 * learn mode, what it lets through is recorded. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "http_proxy.h"
#include "sentry_helper.h"
#include "sentry_http.h"
#include "sentry_learn.h"
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

static void refused(void *ctx, const struct http_refusal *r, char *phrase, size_t plen, char *hint, size_t hlen)
{
	struct sentry *s = ctx;
	struct named_event e = { .kind = NK_PROXY, .family = r->family, .addr = r->addr, .port = r->port,
				 .name = r->name, .reason = r->code };
	sentry_log_named(s, &e);
	sentry_refusal_text(s, r->code, r->name, NULL, r->family, r->addr, IPPROTO_TCP, r->port, phrase, plen);
	if (strcmp(r->code, "not-allowed") == 0) {
		char allow[DNS_NAME_TEXT + 128];
		sentry_allow_hint(s, "proxy", r->name, r->family, r->addr, r->port, allow, sizeof allow);
		snprintf(hint, hlen, "the user can allow it: %s (or network.allow in a kit)", allow);
	}
	else if (strcmp(r->code, "internal-address") == 0 && r->family) {
		char range[INET6_ADDRSTRLEN + 8] = "";
		if (!egress_addr_special_range(r->family, r->addr, range, sizeof range))
			snprintf(range, sizeof range, "ADDRESS/PREFIX");
		snprintf(hint, hlen, "the user can open its range: agentbox --egress-internal %s (or network.internal "
			 "in a kit)", range);
	}
	else if (strcmp(r->code, "loopback") == 0)
		snprintf(hint, hlen, "the box's own addresses are reached directly, not through the proxy (NO_PROXY)");
	else if (strcmp(r->code, "dns-bypass") == 0)
		snprintf(hint, hlen, "look names up through the box's resolver");
}

/* Learn mode records what the proxy let through without a ClientHello the
 * SNI check records (sentry_learn.h): the learn log group leaves out the
 * proxy's marked connections. A no-op when not learning. */
static void passed(void *ctx, const char *name, int family, const uint8_t *addr, uint16_t port)
{
	struct learn_conn c = { .name = name, .family = family, .addr = addr, .proto = IPPROTO_TCP, .port = port,
				.via = LV_PROXY };
	sentry_learn_conn(ctx, &c);
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
		.passed = passed,
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
