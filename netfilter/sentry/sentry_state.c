/* The sentry's state: made once per sentry, in pages of its own (untouched
 * pages cost nothing), and given back whole. */
#include <sys/mman.h>

#include "sentry_mem.h"
#include "sentry_state.h"

struct sentry *sentry_state_new(const struct egress_sentry_params *sp)
{
	struct sentry *s = sentry_zpages(sizeof *s);
	if (!s)
		return NULL;
	s->sp = sp;
	s->p = sp->policy;
	s->ttl_min = sp->ttl_min ? sp->ttl_min : EGRESS_TTL_MIN;
	s->ttl_max = sp->ttl_max ? sp->ttl_max : EGRESS_TTL_MAX;
	s->set_elems_max = sp->set_elems_max ? sp->set_elems_max : EGRESS_SET_ELEMS_MAX;
	s->log_max = sp->log_max_bytes ? sp->log_max_bytes : LOG_MAX_DEFAULT;
	s->tokens = LOG_BURST;
	s->tokens_at = now_ms();
	s->udp[0] = s->udp[1] = s->tcp[0] = s->tcp[1] = -1;
	s->sni_fd[0] = s->sni_fd[1] = -1;
	s->sni_next = UINT64_MAX;
	s->http_fd[0] = s->http_fd[1] = -1;
	s->http_next = UINT64_MAX;
	s->nflog = s->nflog_repeat = s->pidfd = s->procfd = s->helper = s->net = s->logfd = -1;
	s->durable.fd = s->durable.dirfd = -1;
	s->policy_fd = s->reload_fd = s->nflog_learn = -1;
	s->refusedfd = sp->refused_fd > 0 ? sp->refused_fd : -1;
	for (size_t i = 0; i < MAX_QUERIES; i++)
		s->q[i].fd = -1;
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		s->tc[i].fd = -1;
	return s;
}

void sentry_state_free(struct sentry *s)
{
	if (s->queries)
		(void)munmap(s->queries, MAX_QUERIES * DNS_QUERY_MAX);
	if (s->tcp_bufs)
		(void)munmap(s->tcp_bufs, MAX_TCP_UPSTREAM * TCP_BUF_SIZE);
	if (s->buf)
		(void)munmap(s->buf, BUF_SIZE);
	(void)munmap(s, sizeof *s);
}
