/* The DNS sentry: one small process per container, living in the container's
 * network namespace. It answers the container's DNS (nftables redirects every
 * port-53 packet to it), forwards only allowed names to the upstream resolver,
 * turns the A/AAAA records of each answer into timed set elements, and writes
 * the deny log (refused names, and the packets the ruleset logged). When the
 * policy allows some TCP/443 it also checks the server name of every such
 * connection (the SNI check, sentry_sni.c).
 *
 * The sentry, which parses the untrusted DNS traffic, keeps no capability at
 * all. Two helpers do what needs more (sentry_helper.c): one keeps only
 * CAP_NET_ADMIN in the box's netns (set elements, marked sockets), one stays
 * in the runtime's netns with nothing (sockets to the upstream resolvers that
 * the box cannot reach). A policy that allows no domain name never forwards
 * anything: no helper then.
 *
 * Its parts, each with its header; this file is on top, and calls go one way,
 * down (a part does its work and returns to the loop, never calls up):
 *   sentry.c          setup, the serving loop, egress_sentry_run
 *   sentry_sni.c      the SNI check (sni_proxy.c) in the sentry: its sockets, its log
 *   sentry_http.c     the box's HTTP proxy (http_proxy.c): refusals a client stops on
 *   sentry_dns.c      queries from the container, answers judged and relayed
 *   sentry_upstream.c where each upstream is asked from, the exchange with it
 *   sentry_reload.c   live policy changes
 *   sentry_log.c      the deny log and the packets the ruleset logged
 *   sentry_learn.c    learn mode's records of what the box reached
 *   sentry_names.c    which addresses the answers for each name held
 *   sentry_refused.c  what the box reads about its refusals: the text, its file
 *   sentry_helper.c   the privileged helpers, and the sentry's requests to them
 *   sentry_sockets.c  its listeners, log sockets and upstream sets, made in the netns
 *   sentry_privs.c    dropping capabilities, the empty root
 *   sentry_state.c    the state they share: bounds, tables, the clock
 *   sentry_mem.c      fresh pages; giving back what the runtime left behind */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress_internal.h"
#include "http_proxy.h"
#include "log.h"
#include "netns.h"
#include "nflog.h"
#include "sentry.h"
#include "sentry_dns.h"
#include "sentry_helper.h"
#include "sentry_http.h"
#include "sentry_learn.h"
#include "sentry_log.h"
#include "sentry_mem.h"
#include "sentry_names.h"
#include "sentry_privs.h"
#include "sentry_reload.h"
#include "sentry_sni.h"
#include "sentry_sockets.h"
#include "sentry_state.h"
#include "sentry_upstream.h"
#include "sni_proxy.h"
#include "util.h"

IDLE_TEXT static bool init_alive(struct sentry *s)
{
	if (s->pidfd >= 0) {
		struct pollfd p = { .fd = s->pidfd, .events = POLLIN };
		return poll(&p, 1, 0) == 0;
	}
	/* /proc/PID opened at start: a stale directory fd never names a reused pid */
	char stat[512];
	int fd = openat(s->procfd, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, stat, sizeof stat - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = 0;
	char *paren = strrchr(stat, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static int watch_init(struct sentry *s, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	if (sp->init_pidfd >= 0) {
		s->pidfd = sp->init_pidfd;
		return 0;
	}
	if (!sp->no_pidfd) {
		s->pidfd = (int)syscall(SYS_pidfd_open, sp->init_pid, 0);
		if (s->pidfd >= 0) {
			(void)fcntl(s->pidfd, F_SETFD, FD_CLOEXEC);
			return 0;
		}
		if (errno != ENOSYS)
			return ab_error(err, errno, "pidfd_open %d", (int)sp->init_pid);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", (int)sp->init_pid);
	s->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->procfd < 0)
		return ab_error(err, errno, "open %s", path);
	if (!init_alive(s))
		return ab_error(err, ESRCH, "container init %d", (int)sp->init_pid);
	return 0;
}

/* Set up in the runtime's netns, move into the box's, and finish there. With
 * need_netadmin, *nl is a netlink socket of the box's netns for the netadmin
 * helper; with need_net the net helper is forked before the move: it stays
 * behind. */
static int setup(struct sentry *s, bool need_netadmin, bool need_net, struct mnl_socket **nl, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	int r;
	if (sp->log_fd >= 0 || sp->log_path) {
		s->logfd = sp->log_fd >= 0 ? sp->log_fd
					   : open(sp->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->logfd < 0)
			return ab_error(err, errno, "open deny log %s", sp->log_path);
		struct stat st;
		if (fstat(s->logfd, &st) == 0)
			s->log_size = (uint64_t)st.st_size;
	}
	/* best effort: without it the records still reach the state's log */
	if (sp->durable && durable_log_open(&s->durable, sp->durable_dirfd, sp->durable_max_bytes) < 0)
		log_debug("egress sentry: the durable log: %s", strerror(errno));
	if ((r = watch_init(s, err)) < 0)
		return r;
	if (sp->dns) {
		/* none: every name refused, with the reason (a box without network) */
		if (sp->n_upstream > EGRESS_MAX_UPSTREAMS)
			return ab_error(err, 0, "too many upstream resolvers");
		for (size_t i = 0; i < sp->n_upstream; i++)
			if (egress_upstream_is_sentry(&sp->upstream[i], sp->port))
				return ab_error(err, 0, "the upstream resolver is the sentry's own address");
	}
	struct egress_upstream list[2 * EGRESS_MAX_UPSTREAMS];
	size_t n_list = sp->dns ? sentry_upstreams_init(s, list) : 0;
	bool add_upstreams = sp->dns && sp->n_upstream && !sp->upstreams_added;
	if (need_netadmin || add_upstreams)
		if ((r = eg_nl_open(sp->netns_fd, nl, err)) < 0)
			return r;
	if (need_net && n_list && (r = sentry_start_net_helper(s, list, n_list, err)) < 0)
		return r;
	if (sp->netns_fd >= 0) {
		if ((r = egress_netns_join(sp->netns_fd, err)) < 0)
			return r;
		close(sp->netns_fd);   /* our copy (forked): no way back to the runtime's netns */
	}
	if (sp->dns) {
		if (sp->listen_fd[0] >= 0) {
			s->udp[0] = sp->listen_fd[0];
			s->tcp[0] = sp->listen_fd[1];
			s->udp[1] = sp->listen_fd[2];
			s->tcp[1] = sp->listen_fd[3];
		} else if ((r = sentry_bind_listeners(sp->port, s->udp, s->tcp, err)) < 0)
			return r;
	}
	s->sni_fd[0] = sp->sni_fd[0];
	s->sni_fd[1] = sp->sni_fd[1];
	if (s->sni_fd[0] < 0 && s->sni_fd[1] < 0 && sni_policy_needs_proxy(s->p) &&
	    (r = sentry_bind_sni(EGRESS_SNI_PORT, s->sni_fd, err)) < 0)   /* the caller's (a test's) sentry did not */
		return r;
	if (sp->nflog_fd >= 0) {
		s->nflog = sp->nflog_fd;
		s->nflog_repeat = sp->nflog_repeat_fd;
	} else if ((r = sentry_open_log_sockets(&s->nflog, &s->nflog_repeat, err)) < 0)
		return r;
	if (sp->http_proxy) {   /* (http_fd means nothing without it) */
		s->http_fd[0] = sp->http_fd[0];
		s->http_fd[1] = sp->http_fd[1];
		if (s->http_fd[0] < 0 && s->http_fd[1] < 0 &&
		    (r = sentry_bind_http(EGRESS_HTTP_PROXY_PORT, s->http_fd, err)) < 0)
			return r;
	}
	if (s->p->learn && (r = sentry_open_learn_socket(sp->nflog_learn_fd, &s->nflog_learn, err)) < 0)
		return r;
	if (add_upstreams && (r = sentry_add_upstreams(*nl, sp, err)) < 0)
		return ab_wrap(err, "add upstream resolvers");
	return sentry_empty_root(err);
}

/* The container ended: what it was refused (or learnt) just before, and all
 * that is still to be written. */
static void last_words(struct sentry *s)
{
	sentry_handle_nflog(s);
	sentry_handle_nflog_repeats(s);
	sentry_handle_learn_nflog(s);
	if (sentry_gateway_polled(s))
		sentry_gateway_read(s, 4096);
	sentry_log_tick(s, true);
}

/* When the loop must wake up with no input: the first of the parts' deadlines */
IDLE_TEXT static uint64_t next_wakeup(const struct sentry *s, uint64_t now)
{
	/* with a pidfd nothing needs a periodic wake-up; /proc needs a look each second */
	uint64_t next = s->pidfd >= 0 ? UINT64_MAX : now + 1000;
	uint64_t due[] = { !s->released ? s->active_at + IDLE_RELEASE_MS : UINT64_MAX, sentry_log_next(s),
			   sentry_learn_next(s), s->sni_next, s->http_next };
	for (size_t i = 0; i < ARRAY_SIZE(due); i++)
		if (due[i] < next)
			next = due[i];
	return next;
}

IDLE_TEXT __attribute__((noinline)) static void serve(struct sentry *s)
{
	enum { P_INIT, P_NFLOG, P_REPEAT, P_UDP4, P_UDP6, P_TCP4, P_TCP6, P_SNI, P_HTTP, P_GATEWAY, P_RELOAD, P_LEARN,
	       P_FIXED };
	struct pollfd pf[P_FIXED + MAX_QUERIES + MAX_TCP_CLIENTS];
	for (;;) {
		uint64_t now = now_ms(), next = next_wakeup(s, now);
		pf[P_INIT] = (struct pollfd){ .fd = s->pidfd, .events = POLLIN };
		pf[P_NFLOG] = (struct pollfd){ .fd = s->nflog, .events = POLLIN };
		pf[P_REPEAT] = (struct pollfd){ .fd = s->nflog_repeat, .events = POLLIN };
		pf[P_UDP4] = (struct pollfd){ .fd = s->udp[0], .events = POLLIN };
		pf[P_UDP6] = (struct pollfd){ .fd = s->udp[1], .events = POLLIN };
		pf[P_TCP4] = (struct pollfd){ .fd = s->tcp[0], .events = POLLIN };
		pf[P_TCP6] = (struct pollfd){ .fd = s->tcp[1], .events = POLLIN };
		pf[P_SNI] = (struct pollfd){ .fd = s->sni ? sni_proxy_fd(s->sni) : -1, .events = POLLIN };
		pf[P_HTTP] = (struct pollfd){ .fd = s->http ? http_proxy_fd(s->http) : -1, .events = POLLIN };
		pf[P_GATEWAY] = (struct pollfd){ .fd = sentry_gateway_polled(s) ? s->sp->gateway_fd : -1,
						 .events = POLLIN };
		pf[P_RELOAD] = (struct pollfd){ .fd = s->reload_fd, .events = POLLIN };
		pf[P_LEARN] = (struct pollfd){ .fd = s->learn ? s->nflog_learn : -1, .events = POLLIN };
		for (size_t i = 0; i < MAX_QUERIES; i++) {
			struct query *q = &s->q[i];
			bool live = q->state != Q_FREE && q->fd >= 0;
			pf[P_FIXED + i] = (struct pollfd){ .fd = live ? q->fd : -1,
							   .events = live ? sentry_exchange_events(q) : 0 };
			if (live && q->deadline < next)
				next = q->deadline;
		}
		for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
			pf[P_FIXED + MAX_QUERIES + i] = (struct pollfd){ .fd = s->tc[i].fd, .events = POLLIN };
			if (s->tc[i].fd >= 0 && s->tc[i].deadline < next)
				next = s->tc[i].deadline;
		}
		int r = idle_poll(pf, ARRAY_SIZE(pf), next == UINT64_MAX ? -1 : next > now ? (int)(next - now) : 0);
		if (r < 0 && errno != EINTR)
			return;
		if (!init_alive(s)) {
			last_words(s);
			return;
		}
		if (r > 0) {
			s->active_at = now_ms();
			s->released = false;
			if (pf[P_NFLOG].revents)
				sentry_handle_nflog(s);
			if (pf[P_REPEAT].revents)
				sentry_handle_nflog_repeats(s);
			if (pf[P_GATEWAY].revents)
				sentry_gateway_read(s, 64);
			if (pf[P_RELOAD].revents)
				sentry_reload(s);
			if (pf[P_LEARN].revents)
				sentry_handle_learn_nflog(s);
			for (int i = 0; i < 2; i++) {
				if (pf[P_UDP4 + i].revents)
					sentry_udp_query(s, s->udp[i]);
				if (pf[P_TCP4 + i].revents)
					sentry_tcp_accept(s, s->tcp[i]);
			}
			for (size_t i = 0; i < MAX_QUERIES; i++)
				if (pf[P_FIXED + i].revents && s->q[i].state != Q_FREE && s->q[i].fd == pf[P_FIXED + i].fd)
					sentry_query_event(s, &s->q[i], pf[P_FIXED + i].revents);
			for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
				if (pf[P_FIXED + MAX_QUERIES + i].revents && s->tc[i].fd >= 0)
					sentry_tcp_client(s, &s->tc[i]);
		}
		now = now_ms();
		/* a request for the HTTP proxy, or a deadline; then its flows join the
		 * SNI check's (a connection, or a ClientHello or a connect too slow) */
		if (s->http && ((r > 0 && pf[P_HTTP].revents) || now >= s->http_next))
			sentry_http_run(s);
		if (s->sni && ((r > 0 && pf[P_SNI].revents) || now >= s->sni_next))
			sentry_sni_run(s);
		for (size_t i = 0; i < MAX_QUERIES; i++)
			if (s->q[i].state != Q_FREE && s->q[i].deadline <= now)
				sentry_query_timeout(s, &s->q[i]);
		sentry_log_tick(s, false);
		sentry_learn_tick(s, false);
		bool busy = false;
		for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
			if (s->tc[i].fd >= 0 && s->tc[i].deadline <= now)
				sentry_tclient_close(&s->tc[i]);
			busy |= s->tc[i].fd >= 0;
		}
		for (size_t i = 0; i < MAX_QUERIES; i++)
			busy |= s->q[i].state != Q_FREE;
		/* quiet after a burst: the library code and heap it touched go back (the
		 * next query faults in what it needs again, a few microseconds) */
		if (!s->released && !busy && now >= s->active_at + IDLE_RELEASE_MS) {
			sentry_release_inherited();
			s->released = true;
		}
	}
}

/* Every fd but 0-2, the log's and those sp hands over is closed. */
static void close_inherited_fds(const struct sentry *s)
{
	const struct egress_sentry_params *sp = s->sp;
	int keep[] = { sp->netns_fd, sp->init_pidfd, sp->ready_fd, log_fd(),
		       sp->listen_fd[0], sp->listen_fd[1], sp->listen_fd[2], sp->listen_fd[3], sp->nflog_fd, sp->nflog_repeat_fd,
		       sp->log_fd, sp->sni_fd[0], sp->sni_fd[1], sp->gateway_fd, sp->durable ? sp->durable_dirfd : -1,
		       sp->reloadable ? sp->policy_fd : -1, s->refusedfd, sp->http_proxy ? sp->http_fd[0] : -1,
		       sp->http_proxy ? sp->http_fd[1] : -1, sp->learn_fd > 0 ? sp->learn_fd : -1,
		       sp->learn_durable_fd > 0 ? sp->learn_durable_fd : -1, sp->nflog_learn_fd > 0 ? sp->nflog_learn_fd : -1 };
	(void)close_fds_from(3, keep, ARRAY_SIZE(keep));
}

/* The queries' buffers: fresh mappings, pages never touched cost nothing. */
static int map_query_buffers(struct sentry *s, struct ab_err *err)
{
	s->queries = sentry_zpages(MAX_QUERIES * DNS_QUERY_MAX);
	s->tcp_bufs = sentry_zpages(MAX_TCP_UPSTREAM * TCP_BUF_SIZE);
	if (!s->queries || !s->tcp_bufs)
		return ab_error(err, ENOMEM, "egress sentry: its query buffers");
	for (size_t i = 0; i < MAX_QUERIES; i++)
		s->q[i].query = s->queries + i * DNS_QUERY_MAX;
	return 0;
}

/* Set up, and the helpers the policy needs started. Without an allowed name
 * nothing is ever forwarded or added to a set: no helpers then (default
 * deny: forks and ~0.2 MiB each fewer per container). The SNI check's
 * upstream sockets carry a mark: only the netadmin helper can set it. */
static int setup_with_helpers(struct sentry *s, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	struct mnl_socket *nl = NULL;
	bool need_net = sp->dns && (egress_policy_allows_names(s->p) || sp->live);
	bool need_netadmin = need_net || sni_policy_needs_proxy(s->p) || sp->live;
	int r = setup(s, need_netadmin, need_net, &nl, err);
	if (r >= 0 && need_netadmin)
		r = sentry_start_helper(s, nl, err);
	if (nl)
		mnl_socket_close(nl);   /* the helper has it; we keep no way to change rules */
	return r;
}

/* The SNI check, and the HTTP proxy, whose connections become the SNI
 * check's flows: it runs for them even without listeners of its own. */
static int start_proxies(struct sentry *s, struct ab_err *err)
{
	bool http = s->http_fd[0] >= 0 || s->http_fd[1] >= 0;
	int r = 0;
	if (s->sni_fd[0] >= 0 || s->sni_fd[1] >= 0 || http)
		r = sentry_sni_start(s, err);
	if (r == 0 && http)
		r = sentry_http_start(s, err);
	return r;
}

/* Everything before serving: 1. the query buffers, 2. the parameters
 * checked, 3. set up with the helpers, 4. every capability dropped, 5. the
 * SNI check and the HTTP proxy, 6. live changes, 7. learn mode's records,
 * 8. the message buffer. */
static int prepare_to_serve(struct sentry *s, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	static const cap_value_t none[1];
	int r;
	if ((r = map_query_buffers(s, err)) < 0)
		return r;
	if (!s->p || s->ttl_min > s->ttl_max || (sp->dns && sp->port == 0))
		return ab_error(err, 0, "egress sentry: bad parameters");
	if ((r = setup_with_helpers(s, err)) < 0 || (r = sentry_drop_caps(none, 0, err)) < 0 ||
	    (r = start_proxies(s, err)) < 0 || (r = sentry_reload_start(s, err)) < 0 ||
	    (r = sentry_learn_start(s, err)) < 0) {
		(void)ab_wrap(err, "egress sentry");
		return r;
	}
	s->buf = sentry_zpages(BUF_SIZE);
	if (!s->buf)
		return ab_error(err, ENOMEM, "egress sentry: its message buffer");
	/* given back after the first quiet second (serve), not now: start-up
	 * is on the container's critical path, and a short-lived container
	 * never needs it */
	s->active_at = now_ms();
	s->released = false;
	return 0;
}

static void reap(int *sock, pid_t *pid)
{
	if (*sock >= 0)
		close(*sock);   /* EOF: the helper exits */
	*sock = -1;
	if (*pid > 0)
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	*pid = 0;
}

/* The end, served or not: the flows, the gateway and the helpers end, every
 * fd is closed and the state given back. */
static void wind_down(struct sentry *s)
{
	const struct egress_sentry_params *sp = s->sp;
	sentry_http_stop(s);
	sentry_sni_stop(s);   /* its flows end with the box */
	sentry_learn_stop(s);   /* its last counts written */
	sentry_names_free(s);
	for (int i = 0; i < 2; i++) {
		if (s->sni_fd[i] >= 0)
			close(s->sni_fd[i]);
		if (s->http_fd[i] >= 0)
			close(s->http_fd[i]);
	}
	if (sp->gateway_fd >= 0)
		close(sp->gateway_fd);   /* EOF: the gateway exits */
	reap(&s->helper, &s->helper_pid);
	reap(&s->net, &s->net_pid);
	for (size_t i = 0; i < MAX_QUERIES; i++)
		if (s->q[i].fd >= 0)
			close(s->q[i].fd);
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (s->tc[i].fd >= 0)
			close(s->tc[i].fd);
	int fds[] = { s->udp[0], s->udp[1], s->tcp[0], s->tcp[1], s->nflog, s->nflog_repeat, s->procfd, s->logfd,
		      s->reload_fd, sp->reloadable ? sp->policy_fd : -1 };
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	durable_log_close(&s->durable);
	if (sp->durable && sp->durable_dirfd >= 0)
		close(sp->durable_dirfd);
	if (s->pidfd >= 0 && s->pidfd != sp->init_pidfd)
		close(s->pidfd);
	sentry_state_free(s);
}

int egress_sentry_run(const struct egress_sentry_params *sp, struct ab_err *err)
{
	struct sentry *s = sentry_state_new(sp);
	if (!s)
		return ab_error(err, ENOMEM, "egress sentry: its state");
	sentry_mem_init(sp->release_more, sp->dead_stack_hi);
	signal(SIGPIPE, SIG_IGN);
	close_inherited_fds(s);
	int r = prepare_to_serve(s, err);
	if (r == 0) {
		if (sp->ready_fd >= 0) {
			(void)write(sp->ready_fd, "1", 1);
			close(sp->ready_fd);
		}
		serve(s);
	}
	wind_down(s);
	return r;
}
