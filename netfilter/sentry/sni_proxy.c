/* The SNI check (sni_proxy.h). One epoll set, edge-triggered: each event
 * runs its flow's step until nothing moves. Bytes never pass through this
 * process's memory once a flow is allowed: splice(2) moves them from socket
 * to pipe to socket in the kernel. */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fdpass.h"
#include "gateway_proto.h"
#include "mem_release.h"
#include "sni_proxy.h"
#include "tls_hello.h"
#include "util.h"

#define PIPE_BYTES (64u * 1024)

enum flow_state { F_HELLO, F_CONNECTING, F_SPLICE };

struct flow {
	int c, u;                      /* the box's socket, the server's */
	int cu[2], uc[2];              /* pipes: box -> server, server -> box */
	size_t in_cu, in_uc;           /* bytes in them */
	bool c_eof, u_eof, c_shut, u_shut;
	uint64_t c_left;               /* bytes from the box still to pass on (UINT64_MAX: all) */
	enum flow_state st;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	uint64_t deadline;
	bool zombie;
	struct flow *prev, *next;
};

struct sni_proxy {
	struct sni_proxy_params prm;
	struct egress_list cred_hosts;   /* a copy: the caller's may live on a stack that goes */
	int ep;
	struct flow *flows, *zombies;
	size_t n_flows;
	uint8_t *peek;                 /* TLS_HELLO_MAX_BYTES, mapped when first needed */
	int listen_tag[2];             /* epoll data for the listeners: &listen_tag[i] */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool cred_host(const struct sni_proxy *p, const char *name)
{
	const struct egress_list *l = p->prm.cred_hosts;
	for (size_t i = 0; l && i < l->n; i++)
		if (egress_entry_matches_name(&l->v[i], name))
			return true;
	return false;
}

/* ---- flows ---- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void reset_fd(int fd)
{
	struct linger l = {1, 0};
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

static void flow_end(struct sni_proxy *p, struct flow *f, bool reset)
{
	if (f->zombie)
		return;
	if (reset) {
		reset_fd(f->c);
		reset_fd(f->u);
	}
	close_fd(&f->c);
	close_fd(&f->u);
	for (int i = 0; i < 2; i++) {
		close_fd(&f->cu[i]);
		close_fd(&f->uc[i]);
	}
	if (f->prev)
		f->prev->next = f->next;
	else
		p->flows = f->next;
	if (f->next)
		f->next->prev = f->prev;
	p->n_flows--;
	f->zombie = true;
	f->next = p->zombies;   /* freed after this batch of events */
	p->zombies = f;
}

/* the original destination's address (4 or 16 bytes) and port */
static const uint8_t *dst_addr(const struct flow *f, uint16_t *port)
{
	if (f->dst.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&f->dst;
		*port = ntohs(in->sin_port);
		return (const uint8_t *)&in->sin_addr;
	}
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&f->dst;
	*port = ntohs(in6->sin6_port);
	return (const uint8_t *)&in6->sin6_addr;
}

/* a refusal, logged with the name asked for */
static void refuse(struct sni_proxy *p, struct flow *f, const char *reason, const char *name)
{
	uint16_t port = 0;
	const uint8_t *addr = dst_addr(f, &port);
	if (p->prm.log)
		p->prm.log(p->prm.ctx, f->dst.ss_family, addr, port, name, reason);
	flow_end(p, f, true);
}

static int original_dst(int fd, int family, struct sockaddr_storage *ss, socklen_t *len)
{
	*len = sizeof *ss;
	if (family == AF_INET)
		return getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, ss, len);
	return getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, ss, len);
}

static void accept_all(struct sni_proxy *p, int lfd, int family)
{
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0)
			return;
		struct flow *f = calloc(1, sizeof *f);
		if (!f || p->n_flows >= SNI_PROXY_MAX_FLOWS) {
			reset_fd(c);
			close(c);
			free(f);
			if (p->prm.log)
				p->prm.log(p->prm.ctx, 0, NULL, -1, NULL, "too-many-connections");
			continue;
		}
		f->c = c;
		f->u = -1;
		f->c_left = UINT64_MAX;
		/* bytes go on as they come: with Nagle, a spliced small write waits
		 * for the peer's delayed ACK (40 ms a request, measured) */
		int one = 1;
		(void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		f->cu[0] = f->cu[1] = f->uc[0] = f->uc[1] = -1;
		f->next = p->flows;
		if (p->flows)
			p->flows->prev = f;
		p->flows = f;
		p->n_flows++;
		f->deadline = now_ms() + SNI_PROXY_HELLO_MS;
		/* only a redirected connection has an original destination; one made
		 * to the listener itself is closed */
		if (original_dst(c, family, &f->dst, &f->dst_len) < 0 || f->dst.ss_family != family) {
			flow_end(p, f, true);
			continue;
		}
		struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = f};
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, c, &ev) < 0)
			flow_end(p, f, true);
	}
}

static bool handoff(struct sni_proxy *p, struct flow *f, const char *sni)
{
	int u = p->prm.upstream_socket(p->prm.ctx, f->dst.ss_family);
	if (u < 0)
		return false;
	struct gw_handoff h = {.magic = GW_HANDOFF_MAGIC, .family = f->dst.ss_family};
	if (f->dst.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&f->dst;
		memcpy(h.addr, &in->sin_addr, 4);
		h.port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&f->dst;
		memcpy(h.addr, &in6->sin6_addr, 16);
		h.port = ntohs(in6->sin6_port);
	}
	snprintf(h.sni, sizeof h.sni, "%s", sni);
	int fds[2] = {f->c, u};
	ssize_t n = send_with_fds(p->prm.gateway_fd, &h, sizeof h, fds, 2, MSG_DONTWAIT);
	close(u);
	if (n != (ssize_t)sizeof h)
		return false;
	/* the gateway has the box's socket now; ours goes without a reset */
	(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, f->c, NULL);
	flow_end(p, f, false);
	return true;
}

static void start_upstream(struct sni_proxy *p, struct flow *f)
{
	f->u = p->prm.upstream_socket(p->prm.ctx, f->dst.ss_family);
	if (f->u < 0) {
		f->u = -1;
		refuse(p, f, "proxy-socket", NULL);
		return;
	}
	(void)fcntl(f->u, F_SETFL, O_NONBLOCK);
	(void)fcntl(f->u, F_SETFD, FD_CLOEXEC);
	int one = 1;
	(void)setsockopt(f->u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = f};
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, f->u, &ev) < 0 ||
	    (connect(f->u, (struct sockaddr *)&f->dst, f->dst_len) < 0 && errno != EINPROGRESS)) {
		flow_end(p, f, true);
		return;
	}
	f->st = F_CONNECTING;
	f->deadline = now_ms() + SNI_PROXY_CONNECT_MS;
}

static void splice_from_now(struct sni_proxy *p, struct flow *f);

/* The ClientHello, peeked: wait for all of it, then the verdict. */
static void step_hello(struct sni_proxy *p, struct flow *f)
{
	if (!p->peek) {
		p->peek = mmap(NULL, TLS_HELLO_MAX_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p->peek == MAP_FAILED) {
			p->peek = NULL;
			flow_end(p, f, true);
			return;
		}
	}
	ssize_t n = recv(f->c, p->peek, TLS_HELLO_MAX_BYTES, MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		flow_end(p, f, n < 0);
		return;
	}
	struct tls_hello h;
	enum tls_hello_status s = tls_hello_parse(p->peek, (size_t)n, &h);
	if (s == TLS_HELLO_MORE) {
		/* wake again only once that much is here (poll honours SO_RCVLOWAT) */
		int low = (int)h.need;
		(void)setsockopt(f->c, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof low);
		return;
	}
	int one = 1;
	(void)setsockopt(f->c, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
	if (s != TLS_HELLO_DONE) {
		refuse(p, f, s == TLS_HELLO_NOT_TLS ? "not-tls" : s == TLS_HELLO_TOO_BIG ? "hello-too-big" : "bad-hello", NULL);
		return;
	}
	uint16_t port;
	const uint8_t *addr = dst_addr(f, &port);
	uint8_t literal[16];
	bool is_literal = h.has_sni && (inet_pton(AF_INET, h.sni, literal) == 1 || inet_pton(AF_INET6, h.sni, literal) == 1);
	if (h.has_sni && !is_literal) {
		if (!h.sni_valid) {
			refuse(p, f, "bad-name", h.sni);
			return;
		}
		/* the words of the other refusals: no entry, or a deny entry */
		enum egress_name_verdict v = sni_name_verdict(p->prm.policy, h.sni, port);
		if (v != EGRESS_NAME_ALLOW) {
			refuse(p, f, v == EGRESS_NAME_DENY ? "denied" : "not-allowed", h.sni);
			return;
		}
		if (p->prm.passed)
			p->prm.passed(p->prm.ctx, f->dst.ss_family, addr, port, h.sni);
		if (cred_host(p, h.sni)) {
			if (p->prm.gateway_fd < 0 || !handoff(p, f, h.sni))
				refuse(p, f, "gateway-unavailable", h.sni);   /* fails closed */
			return;
		}
	} else if (!sni_addr_allowed(p->prm.policy, f->dst.ss_family, addr, port)) {
		/* no name (or an address for one): only an address a CIDR entry allows */
		refuse(p, f, "no-name", h.has_sni ? h.sni : NULL);
		return;
	} else if (p->prm.passed)
		p->prm.passed(p->prm.ctx, f->dst.ss_family, addr, port, NULL);
	if (f->u >= 0)
		splice_from_now(p, f);   /* adopted: connected already */
	else
		start_upstream(p, f);
}

/* one direction: src -> pipe -> dst, at most *left bytes from src
 * (UINT64_MAX: all); <0 error, else whether bytes moved */
static int move(int src, int pipe[2], int dst, size_t *in_pipe, bool *src_eof, bool *dst_shut, uint64_t *left)
{
	int moved = 0;
	for (;;) {
		bool any = false;
		size_t room = PIPE_BYTES - *in_pipe;
		if (*left < room)
			room = (size_t)*left;
		if (!*src_eof && room) {
			ssize_t n = splice(src, NULL, pipe[1], NULL, room, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				*in_pipe += (size_t)n;
				if (*left != UINT64_MAX)
					*left -= (uint64_t)n;
				any = true;
			} else if (n == 0) {
				*src_eof = true;
				any = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				return -1;
			}
		}
		if (*in_pipe) {
			ssize_t n = splice(pipe[0], NULL, dst, NULL, *in_pipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				*in_pipe -= (size_t)n;
				any = true;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				return -1;
			}
		}
		if (*src_eof && !*in_pipe && !*dst_shut) {
			(void)shutdown(dst, SHUT_WR);
			*dst_shut = true;
			any = true;
		}
		if (!any)
			return moved;
		moved = 1;
	}
}

/* What the box sends past its limit (a second request after a plain HTTP
 * one, http_proxy.c) is read and dropped: it must reach no server, and a
 * close with unread bytes would reset the answer it waits for. */
static int drain(int fd, bool *eof)
{
	char sink[4096];
	for (int i = 0; i < 64 && !*eof; i++) {
		ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
		if (n == 0)
			*eof = true;
		else if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
	return 0;
}

static void step_splice(struct sni_proxy *p, struct flow *f)
{
	int a = move(f->c, f->cu, f->u, &f->in_cu, &f->c_eof, &f->u_shut, &f->c_left);
	uint64_t all = UINT64_MAX;
	int b = move(f->u, f->uc, f->c, &f->in_uc, &f->u_eof, &f->c_shut, &all);
	bool capped = f->c_left == 0 && !f->in_cu;
	if (a >= 0 && capped)
		a = drain(f->c, &f->c_eof);
	if (a < 0 || b < 0) {
		flow_end(p, f, true);
		return;
	}
	/* a capped box's side is done once its bytes are sent: the server's
	 * answer, whole, ends the flow */
	if (f->c_shut && (f->u_shut || capped))
		flow_end(p, f, false);
}

/* pipes, and bytes flow from now on */
static void splice_from_now(struct sni_proxy *p, struct flow *f)
{
	if (pipe2(f->cu, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(f->uc, O_NONBLOCK | O_CLOEXEC) < 0) {
		flow_end(p, f, true);
		return;
	}
	f->st = F_SPLICE;
	step_splice(p, f);
}

static void step(struct sni_proxy *p, struct flow *f)
{
	if (f->st == F_HELLO) {
		step_hello(p, f);
		return;
	}
	if (f->st == F_CONNECTING) {
		int e = 0;
		socklen_t l = sizeof e;
		if (getsockopt(f->u, SOL_SOCKET, SO_ERROR, &e, &l) < 0 || (e && e != EINPROGRESS)) {
			flow_end(p, f, true);   /* the filter dropped it (logged there), or no server */
			return;
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		if (e == EINPROGRESS || getpeername(f->u, (struct sockaddr *)&ss, &sl) < 0)
			return;
		splice_from_now(p, f);
		return;
	}
	step_splice(p, f);
}

int sni_proxy_adopt(struct sni_proxy *p, const struct sni_proxy_adoptee *a)
{
	struct flow *f = p->n_flows < SNI_PROXY_MAX_FLOWS ? calloc(1, sizeof *f) : NULL;
	if (!f) {
		reset_fd(a->c);
		close(a->c);
		close(a->u);
		if (p->prm.log)
			p->prm.log(p->prm.ctx, 0, NULL, -1, NULL, "too-many-connections");
		return -1;
	}
	f->c = a->c;
	f->u = a->u;
	f->c_left = a->c_limit;
	f->cu[0] = f->cu[1] = f->uc[0] = f->uc[1] = -1;
	memcpy(&f->dst, &a->dst, a->dst_len);
	f->dst_len = a->dst_len;
	f->next = p->flows;
	if (p->flows)
		p->flows->prev = f;
	p->flows = f;
	p->n_flows++;
	f->deadline = now_ms() + SNI_PROXY_HELLO_MS;
	f->st = a->hello ? F_HELLO : F_SPLICE;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = f};
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, f->c, &ev) < 0 || epoll_ctl(p->ep, EPOLL_CTL_ADD, f->u, &ev) < 0 ||
	    (!a->hello && (pipe2(f->cu, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(f->uc, O_NONBLOCK | O_CLOEXEC) < 0))) {
		flow_end(p, f, true);
		return -1;
	}
	return 0;
}

int sni_proxy_run(struct sni_proxy *p)
{
	struct epoll_event evs[32];
	int n;
	while ((n = epoll_wait(p->ep, evs, 32, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			void *d = evs[i].data.ptr;
			if (d == &p->listen_tag[0] || d == &p->listen_tag[1]) {
				int k = d == &p->listen_tag[0] ? 0 : 1;
				accept_all(p, p->prm.listen_fd[k], k == 0 ? AF_INET : AF_INET6);
				continue;
			}
			struct flow *f = d;
			if (!f->zombie)
				step(p, f);
		}
		while (p->zombies) {
			struct flow *z = p->zombies;
			p->zombies = z->next;
			free(z);
		}
		if (n < 32)
			break;
	}
	uint64_t now = now_ms(), next = UINT64_MAX;
	for (struct flow *f = p->flows, *nx; f; f = nx) {
		nx = f->next;
		if (f->st == F_SPLICE)
			continue;
		if (f->deadline <= now) {
			if (f->st == F_HELLO)
				refuse(p, f, "hello-timeout", NULL);
			else
				flow_end(p, f, true);
			continue;
		}
		if (f->deadline < next)
			next = f->deadline;
	}
	while (p->zombies) {
		struct flow *z = p->zombies;
		p->zombies = z->next;
		free(z);
	}
	return next == UINT64_MAX ? -1 : (int)(next - now);
}

int sni_proxy_new(const struct sni_proxy_params *prm, struct sni_proxy **ret, struct ab_err *err)
{
	struct sni_proxy *p = calloc(1, sizeof *p);
	if (!p)
		return ab_error(err, ENOMEM, "SNI proxy");
	p->prm = *prm;
	/* The sentry gives back the runtime's stack it was forked with once idle;
	 * a list left there would read as empty, and credential hosts would go
	 * past the gateway. What the proxy decides by is its own. */
	const struct egress_list *ch = prm->cred_hosts;
	if (ch && ch->n) {
		p->cred_hosts.v = calloc(ch->n, sizeof *ch->v);
		for (size_t i = 0; p->cred_hosts.v && i < ch->n; i++) {
			p->cred_hosts.v[i] = ch->v[i];
			p->cred_hosts.v[i].name = ch->v[i].name ? strdup(ch->v[i].name) : NULL;
			p->cred_hosts.v[i].reason = NULL;
			if (!p->cred_hosts.v[i].name)
				goto nomem;
			p->cred_hosts.n = p->cred_hosts.cap = i + 1;
		}
		if (!p->cred_hosts.v)
			goto nomem;
	}
	p->prm.cred_hosts = &p->cred_hosts;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0) {
		int e = errno;
		sni_proxy_free(p);
		return ab_error(err, e, "SNI proxy: epoll");
	}
	for (int i = 0; i < 2; i++) {
		if (prm->listen_fd[i] < 0)
			continue;
		(void)fcntl(prm->listen_fd[i], F_SETFL, O_NONBLOCK);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->listen_tag[i]};
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, prm->listen_fd[i], &ev) < 0) {
			int e = errno;
			sni_proxy_free(p);
			return ab_error(err, e, "SNI proxy: epoll");
		}
	}
	*ret = p;
	return 0;
nomem:
	p->ep = -1;
	sni_proxy_free(p);
	return ab_error(err, ENOMEM, "SNI proxy");
}

IDLE_TEXT int sni_proxy_fd(const struct sni_proxy *p)
{
	return p->ep;
}

void sni_proxy_free(struct sni_proxy *p)
{
	if (!p)
		return;
	while (p->flows)
		flow_end(p, p->flows, true);
	while (p->zombies) {
		struct flow *z = p->zombies;
		p->zombies = z->next;
		free(z);
	}
	if (p->peek)
		munmap(p->peek, TLS_HELLO_MAX_BYTES);
	for (size_t i = 0; i < p->cred_hosts.n; i++)
		free(p->cred_hosts.v[i].name);
	free(p->cred_hosts.v);
	if (p->ep >= 0)
		close(p->ep);
	free(p);
}
