/* The sentry's sockets in the container's network namespace: its DNS
 * listeners, its nfnetlink_log socket, and the upstream resolvers in the
 * ruleset's sets (loopback ones guarded from everyone but the sentry). */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nf_tables.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "egress_internal.h"
#include "log.h"
#include "netdev.h"
#include "netns.h"
#include "nflog.h"
#include "sentry_sockets.h"
#include "sni_proxy.h"
#include "util.h"

static int bind_listener(int family, int type, uint16_t port, int *ret, struct ab_err *err)
{
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ab_error(err, errno, "DNS socket");
	int one = 1;
	if (type == SOCK_STREAM)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		in6->sin6_addr = in6addr_loopback;
		len = sizeof *in6;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 16) < 0)) {
		int e = errno;
		close(fd);
		return ab_error(err, e, "bind DNS %s socket on %s port %u", type == SOCK_STREAM ? "TCP" : "UDP",
				family == AF_INET ? "127.0.0.1" : "::1", port);
	}
	*ret = fd;
	return 0;
}

/* The listeners must be bound with lo up. On a down lo, bind(127.0.0.1) still
 * succeeds but leaves the socket without a source address (the kernel does not
 * see 127.0.0.1 as local yet), so replies leave from the address the route
 * picks (the client's own, 10.0.2.100 under slirp4netns): conntrack cannot
 * match them to the redirected query and the client drops them. And ::1 does
 * not exist at all until lo is up. The init brings lo up in a netns of its
 * own and engines in theirs; this covers a joined netns whose lo is down.
 * In the current netns: lo up, then the four listeners (udp/tcp[0] IPv4, [1] IPv6). */
int sentry_bind_listeners(uint16_t port, int udp[2], int tcp[2], struct ab_err *err)
{
	int r;
	if ((r = netdev_loopback_up(err)) < 0)
		return r;
	if ((r = bind_listener(AF_INET, SOCK_DGRAM, port, &udp[0], err)) < 0 ||
	    (r = bind_listener(AF_INET, SOCK_STREAM, port, &tcp[0], err)) < 0)
		return r;
	/* IPv6 may be disabled in the namespace; then there is no ::1 to serve */
	struct ab_err e6;
	if (bind_listener(AF_INET6, SOCK_DGRAM, port, &udp[1], &e6) < 0 ||
	    bind_listener(AF_INET6, SOCK_STREAM, port, &tcp[1], &e6) < 0) {
		log_debug("egress sentry: no IPv6 listener: %s", e6.msg);
		if (udp[1] >= 0)
			close(udp[1]);
		udp[1] = -1;
	}
	return 0;
}

int sentry_bind_sni(uint16_t port, int fd[2], struct ab_err *err)
{
	int r = bind_listener(AF_INET, SOCK_STREAM, port, &fd[0], err);
	if (r < 0)
		return r;
	struct ab_err e6;   /* no IPv6 in the namespace: nothing to redirect there */
	if (bind_listener(AF_INET6, SOCK_STREAM, port, &fd[1], &e6) < 0)
		fd[1] = -1;
	return 0;
}

int sentry_bind_http(uint16_t port, int fd[2], struct ab_err *err)
{
	int r = sentry_bind_sni(port, fd, err);
	/* npm opens a connection a package at once: a deeper queue than DNS's */
	for (int i = 0; r == 0 && i < 2; i++)
		if (fd[i] >= 0)
			(void)listen(fd[i], 128);
	return r;
}

void egress_sentry_sockets_close(struct egress_sentry_params *sp)
{
	for (int i = 0; i < 2; i++) {
		if (sp->sni_fd[i] >= 0) {
			close(sp->sni_fd[i]);
			sp->sni_fd[i] = -1;
		}
		if (sp->http_proxy && sp->http_fd[i] >= 0) {
			close(sp->http_fd[i]);
			sp->http_fd[i] = -1;
		}
	}
	for (int i = 0; i < 4; i++)
		if (sp->listen_fd[i] >= 0) {
			close(sp->listen_fd[i]);
			sp->listen_fd[i] = -1;
		}
	if (sp->nflog_fd >= 0) {
		close(sp->nflog_fd);
		sp->nflog_fd = -1;
	}
	if (sp->nflog_repeat_fd >= 0) {
		close(sp->nflog_repeat_fd);
		sp->nflog_repeat_fd = -1;
	}
	if (sp->nflog_learn_fd > 0) {
		close(sp->nflog_learn_fd);
		sp->nflog_learn_fd = -1;
	}
}

static bool any_guarded_upstream(const struct egress_sentry_params *sp);

struct sockets_ctx {
	bool dns;
	uint16_t port;
	struct egress_sentry_params *sp;
	int udp[2], tcp[2];
};

/* In the container's netns (a child of egress_in_netns) */
static int sockets_open_here(void *arg, struct ab_err *err)
{
	struct sockets_ctx *x = arg;
	struct egress_sentry_params *sp = x->sp;
	int r = x->dns ? sentry_bind_listeners(x->port, x->udp, x->tcp, err) : 0;
	if (r == 0)
		r = sentry_open_log_sockets(&sp->nflog_fd, &sp->nflog_repeat_fd, err);
	/* learn mode's log group: connections made before the sentry serves wait in it */
	if (r == 0 && sp->policy && sp->policy->learn)
		r = sentry_open_learn_socket(-1, &sp->nflog_learn_fd, err);
	/* the SNI check's listeners, before the program can connect anywhere */
	if (r == 0 && sp->policy && (sni_policy_needs_proxy(sp->policy) || sp->live))
		r = sentry_bind_sni(EGRESS_SNI_PORT, sp->sni_fd, err);
	/* and the HTTP proxy's, before the program can read HTTPS_PROXY */
	if (r == 0 && sp->http_proxy)
		r = sentry_bind_http(EGRESS_HTTP_PROXY_PORT, sp->http_fd, err);
	/* A loopback resolver (Docker's 127.0.0.11) is guarded before the program
	 * runs, not once the sentry (which may start later) gets to it. Other
	 * upstreams only open a way for the sentry's own sockets: it adds them
	 * when it starts, and a run whose sentry never starts makes one nftables
	 * commit fewer. */
	if (r == 0 && x->dns && any_guarded_upstream(sp)) {
		struct mnl_socket *nl;
		if ((r = eg_nl_open(-1, &nl, err)) == 0) {
			if ((r = sentry_add_upstreams(nl, sp, err)) < 0)
				ab_wrap(err, "add upstream resolvers");
			mnl_socket_close(nl);
		}
		sp->upstreams_added = r == 0;
	}
	return r;
}

int egress_sentry_sockets_open(int netns_fd, bool dns, uint16_t port, struct egress_sentry_params *sp,
			       struct ab_err *err)
{
	struct sockets_ctx x = { .dns = dns, .port = port, .sp = sp, .udp = {-1, -1}, .tcp = {-1, -1} };
	int r = egress_in_netns(netns_fd, sockets_open_here, &x, err);
	sp->listen_fd[0] = x.udp[0];
	sp->listen_fd[1] = x.tcp[0];
	sp->listen_fd[2] = x.udp[1];
	sp->listen_fd[3] = x.tcp[1];
	if (r < 0)
		egress_sentry_sockets_close(sp);
	return r;
}

static bool is_sentry_addr(const struct egress_upstream *u)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	return u->family == AF_INET ? memcmp(u->addr, "\x7f\0\0\x01", 4) == 0 : memcmp(u->addr, lo6, 16) == 0;
}

bool egress_upstream_is_sentry(const struct egress_upstream *u, uint16_t port)
{
	return is_sentry_addr(u) && u->port == port;
}

/* 127.0.0.1/::1 carry the sentry itself; guarding them would cut it off */
static bool guarded(const struct egress_upstream *u)
{
	bool loopback = u->family == AF_INET ? u->addr[0] == 127 : IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)u->addr);
	return loopback && !is_sentry_addr(u);
}

static bool any_guarded_upstream(const struct egress_sentry_params *sp)
{
	for (size_t i = 0; i < sp->n_upstream; i++)
		if (guarded(&sp->upstream[i]))
			return true;
	return false;
}

/* The upstream sets: where the sentry's marked sockets may go, and which
 * loopback resolvers nobody else may reach (Docker's 127.0.0.11). */
int sentry_open_log_sockets(int *first, int *repeat, struct ab_err *err)
{
	/* the first packets of destinations: few, each at once; the repeats: in
	 * batches, a buffer of 1 MiB, counted when it overflows */
	int r = nflog_open(EGRESS_NFLOG_GROUP, 0, 256 << 10, first, err);
	if (r == 0 && (r = nflog_open(EGRESS_NFLOG_REPEAT_GROUP, 64, 1 << 20, repeat, err)) < 0) {
		close(*first);
		*first = -1;
	}
	return r;
}

static void add_upstream(struct eg_batch *b, const struct egress_upstream *u)
{
	struct eg_set s;
	struct eg_elem e = {0};
	eg_set_get(eg_set_index(EG_UPSTREAM, false, u->family, EG_SHAPE_ANY), &s);
	eg_key(&s, u->addr, 0, 0, e.key);
	eg_batch_elems(b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE, &e, 1, "add upstream resolver to set");
	if (guarded(u)) {
		eg_set_get(eg_set_index(EG_GUARD, false, u->family, EG_SHAPE_ANY), &s);
		eg_batch_elems(b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE, &e, 1, "guard loopback resolver in set");
	}
}

int sentry_open_learn_socket(int given, int *ret, struct ab_err *err)
{
	if (given > 0) {
		*ret = given;
		return 0;
	}
	/* every new connection of a learning box, each at once (a batch would
	 * wait for a timer the box's end does not: its last ones lost), into a
	 * buffer of 1 MiB */
	return nflog_open(EGRESS_NFLOG_LEARN_GROUP, 0, 1 << 20, ret, err);
}

int sentry_add_upstreams(struct mnl_socket *nl, const struct egress_sentry_params *sp, struct ab_err *err)
{
	struct eg_batch b;
	eg_batch_init(&b, (uint32_t)time(NULL));
	for (size_t i = 0; i < sp->n_upstream; i++)
		add_upstream(&b, &sp->upstream[i]);
	/* the engine's forward resolvers are asked from the box when they are on
	 * its link, as the engine asks them (loopback ones never) */
	for (size_t i = 0; sp->forward_engine && i < sp->n_forward_upstream; i++)
		if (!egress_upstream_is_loopback(&sp->forward_upstream[i]))
			add_upstream(&b, &sp->forward_upstream[i]);
	int r = eg_batch_send(nl, &b, err);
	eg_batch_free(&b);
	return r;
}

