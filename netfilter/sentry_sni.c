/* The SNI check in the sentry (sni_proxy.h): the proxy over the sentry's
 * listeners, its upstream sockets from the netadmin helper (in the box's
 * netns, carrying EGRESS_PROXY_MARK: the redirect skips them and the filter
 * judges them as it judges the box's own), and its refusals in the deny log.
 * A credential host's connections go to the gateway's hand-off socket. */
#include <errno.h>
#include <stdint.h>

#include "sentry_internal.h"
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
