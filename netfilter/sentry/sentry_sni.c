/* The SNI check in the sentry (sni_proxy.h): the proxy over the sentry's
 * listeners, its upstream sockets from the netadmin helper (in the box's
 * netns, carrying EGRESS_PROXY_MARK: the redirect skips them and the filter
 * judges them as it judges the box's own), and its refusals in the deny log.
 * A credential host's connections go to the gateway's hand-off socket, and
 * what the gateway has to say for the deny log comes back on it
 * (gateway_proto.h): the sentry writes every record, with one set of bounds
 * and one count of repeats. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "gateway_proto.h"
#include "sentry_helper.h"
#include "sentry_learn.h"
#include "sentry_log.h"
#include "sentry_names.h"
#include "sentry_sni.h"
#include "sentry_state.h"
#include "sni_proxy.h"

static int upstream_socket(void *ctx, int family)
{
	return sentry_helper_proxy_socket(ctx, family);
}

static void log_refusal(void *ctx, int family, const uint8_t *addr, int port, const char *name, const char *reason)
{
	struct named_event e = { .kind = NK_TLS, .family = family, .addr = addr, .port = port, .name = name,
				 .reason = reason };
	sentry_log_named(ctx, &e);
}

/* Learn mode records a TLS connection by the name it asked for, and by its
 * address too when no lookup of that name led there (a name over an IP:
 * the address must be allowed as well). The ruleset's record of the
 * check's own connection says no more (sentry_learn.c leaves it out). */
static void passed(void *ctx, int family, const uint8_t *addr, int port, const char *name)
{
	struct sentry *s = ctx;
	if (!sentry_learning(s))
		return;
	struct learn_conn c = { .name = name, .family = family, .addr = addr, .proto = IPPROTO_TCP, .port = port,
				.via = LV_TLS };
	if (name)
		sentry_learn_conn(s, &c);
	if (!name || !sentry_names_held(s, name, family, addr, (uint64_t)s->ttl_max * 1000)) {
		c.via = name ? LV_TLS_ADDR : LV_NONE;
		sentry_learn_conn(s, &c);
	}
}

int sentry_sni_start(struct sentry *s, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	struct sni_proxy_params prm = {
		.policy = s->p,
		.cred_hosts = sp->gateway_fd >= 0 ? sp->cred_hosts : NULL,
		.gateway_fd = sp->gateway_fd,
		.listen_fd = { s->sni_fd[0], s->sni_fd[1] },
		.upstream_socket = upstream_socket,
		.log = log_refusal,
		.passed = passed,
		.ctx = s,
	};
	return sni_proxy_new(&prm, &s->sni, err);
}

void sentry_sni_run(struct sentry *s)
{
	int ms = sni_proxy_run(s->sni);
	s->sni_next = ms < 0 ? UINT64_MAX : now_ms() + (uint64_t)ms;
}

void sentry_sni_stop(struct sentry *s)
{
	sni_proxy_free(s->sni);
	s->sni = NULL;
}

/* a string of the gateway's, ended within its field */
static const char *field(char *f, size_t len)
{
	f[len - 1] = 0;
	return f;
}

static void gateway_record(struct sentry *s, struct gw_record *r)
{
	if (r->magic != GW_RECORD_MAGIC || (r->event != GW_EVENT_USE && r->event != GW_EVENT_DENY) ||
	    (r->family != 0 && r->family != AF_INET && r->family != AF_INET6))
		return;
	s->dropped_records += r->dropped;
	struct named_event e = {
		.kind = r->event == GW_EVENT_USE ? NK_CREDENTIAL : NK_HTTPS,
		.family = r->family,
		.addr = r->addr,
		.port = r->port,
		.name = field(r->name, sizeof r->name),
	};
	if (r->event == GW_EVENT_USE)
		e.credential = field(r->credential, sizeof r->credential);
	else {
		e.reason = field(r->reason, sizeof r->reason);
		e.detail = field(r->detail, sizeof r->detail);
	}
	sentry_log_named(s, &e);
}

IDLE_TEXT bool sentry_gateway_polled(const struct sentry *s)
{
	return s->sp->gateway_fd >= 0 && !s->gateway_gone;
}

void sentry_gateway_read(struct sentry *s, unsigned max)
{
	/* a bounded number at a time: a gateway gone astray cannot hold the loop */
	for (unsigned i = 0; i < max; i++) {
		struct gw_record r;
		ssize_t n = recv(s->sp->gateway_fd, &r, sizeof r, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			/* gone: its hand-offs fail from now on, and the SNI check
			 * refuses a credential host's connections (fails closed) */
			s->gateway_gone = true;
			return;
		}
		if ((size_t)n == sizeof r)
			gateway_record(s, &r);
	}
}
