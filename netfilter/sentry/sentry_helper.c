/* The sentry's two helpers. The sentry parses untrusted DNS and keeps no
 * capability; what needs more is done by a helper on a fixed-size request
 * over a SOCK_SEQPACKET pair. Neither parses DNS.
 *
 * The netadmin helper lives in the box's network namespace and keeps only
 * CAP_NET_ADMIN: netlink checks it both against the socket's opener and
 * against the sending task, so a process that dropped it cannot add set
 * elements even on a socket it opened earlier. It adds one element to one
 * dynamic set, and makes sockets carrying the sentry's mark (SO_MARK needs the
 * capability) for an upstream the box itself must be asked from.
 *
 * The net helper stays in the runtime's network namespace and keeps nothing.
 * It hands out sockets connected to the upstream resolvers it was given at
 * start, and only to those (a sentry that went astray gets no other way out of
 * the runtime's namespace), and says whether an address is one of the host's
 * own. A socket made there is out of the box's reach: the box cannot see it,
 * hold its port, or send to it. */
#include <netinet/in.h> /* before the linux/ headers */
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter/nf_tables.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "egress_internal.h"
#include "fdpass.h"
#include "log.h"
#include "sentry_helper.h"
#include "sentry_mem.h"
#include "sentry_privs.h"
#include "sentry_state.h"
#include "util.h"

enum {
	HREQ_ADD = 1,      /* netadmin: add an element to a dynamic set */
	HREQ_SOCKET,       /* netadmin: a marked socket */
	HREQ_UPSTREAM,     /* net: a socket connected to upstream INDEX */
	HREQ_IS_LOCAL,     /* net: is KEY (an address of FAMILY) one of ours? */
	HREQ_PROXY_SOCKET, /* netadmin: a TCP socket carrying EGRESS_PROXY_MARK */
};

enum role { ROLE_NETADMIN, ROLE_NET };

struct hreq {
	uint32_t op;
	uint32_t set;        /* HREQ_ADD: index of a dynamic set */
	uint32_t timeout_ms;
	int32_t family;      /* HREQ_SOCKET, HREQ_IS_LOCAL */
	int32_t type;        /* HREQ_SOCKET, HREQ_UPSTREAM */
	uint32_t index;      /* HREQ_UPSTREAM */
	uint8_t key[24];     /* HREQ_ADD; HREQ_IS_LOCAL: the address */
};

struct hrep {
	int32_t status;      /* >= 0, or -errno */
};

/* What a helper was started with. */
struct helper {
	enum role role;
	int sock;
	/* netadmin */
	struct mnl_socket *nl;
	uint32_t ttl_min, ttl_max, set_elems_max;
	/* net */
	struct egress_upstream up[2 * EGRESS_MAX_UPSTREAMS];
	size_t n_up;
};

static bool key_valid(const struct hreq *q, const struct helper *h, struct eg_set *s)
{
	if (q->set >= EG_N_SETS)
		return false;
	eg_set_get(q->set, s);
	if (s->kind != EG_DYNAMIC)
		return false;
	if (q->timeout_ms < h->ttl_min * 1000ull || q->timeout_ms > h->ttl_max * 1000ull)
		return false;
	/* the key must look like one eg_key() builds: known protocol, zero padding */
	size_t alen = s->family == AF_INET ? 4 : 16;
	for (size_t i = s->key_len; i < sizeof q->key; i++)
		if (q->key[i])
			return false;
	if (s->shape >= EG_SHAPE_PROTO) {
		uint8_t proto = q->key[alen];
		if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP) || q->key[alen + 1] || q->key[alen + 2] ||
		    q->key[alen + 3])
			return false;
	}
	if (s->shape == EG_SHAPE_PORT && (q->key[alen + 6] || q->key[alen + 7]))
		return false;
	return true;
}

static bool hreq_valid(const struct hreq *q, const struct helper *h, struct eg_set *s)
{
	bool family = q->family == AF_INET || q->family == AF_INET6;
	bool type = q->type == SOCK_DGRAM || q->type == SOCK_STREAM;
	if (h->role == ROLE_NETADMIN) {
		if (q->op == HREQ_PROXY_SOCKET)
			return family && q->type == SOCK_STREAM;
		return q->op == HREQ_SOCKET ? family && type : q->op == HREQ_ADD && key_valid(q, h, s);
	}
	if (q->op == HREQ_UPSTREAM)
		return q->index < h->n_up && type;
	return q->op == HREQ_IS_LOCAL && family;
}

/* Add an element; if it exists, replace it in one batch so its timeout restarts
 * (older kernels ignore a new timeout on an existing element). */
static int helper_add(struct mnl_socket *nl, uint32_t *seq, const struct eg_set *s, const uint8_t *key,
		      uint32_t timeout_ms)
{
	struct eg_elem e = { .timeout_ms = timeout_ms };
	struct ab_err err;
	memcpy(e.key, key, s->key_len);
	for (int attempt = 0; attempt < 3; attempt++) {
		struct eg_batch b;
		eg_batch_init(&b, *seq);
		*seq += 16;
		eg_batch_elems(&b, s, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, &e, 1, "add element to set");
		int r = eg_batch_send(nl, &b, &err);
		eg_batch_free(&b);
		if (r != -EEXIST)
			return r;
		struct eg_elem d = e;
		d.timeout_ms = 0;
		eg_batch_init(&b, *seq);
		*seq += 16;
		eg_batch_elems(&b, s, NFT_MSG_DELSETELEM, 0, &d, 1, "delete element from set");
		eg_batch_elems(&b, s, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, &e, 1, "add element to set");
		r = eg_batch_send(nl, &b, &err);
		eg_batch_free(&b);
		if (r != -ENOENT)   /* ENOENT: it expired in between; add again */
			return r;
	}
	return -EAGAIN;
}

/* What the helper put in one dynamic set and when each element expires. The
 * sets carry no size (see put_set), so their bound is kept here, on the
 * privileged side: a sentry talked into asking for more gets -ENFILE. */
struct live_set {
	struct live_elem {
		uint8_t key[24];
		uint64_t expires_ms;
	} *v;
	size_t n, cap;
};

static size_t live_find(const struct live_set *ls, const uint8_t *key)
{
	size_t i = 0;
	while (i < ls->n && memcmp(ls->v[i].key, key, sizeof ls->v[i].key) != 0)
		i++;
	return i;
}

static void live_prune(struct live_set *ls, uint64_t now)
{
	size_t k = 0;
	for (size_t i = 0; i < ls->n; i++)
		if (ls->v[i].expires_ms > now)
			ls->v[k++] = ls->v[i];
	ls->n = k;
}

/* helper_add within the bound: a known element is refreshed whatever the
 * count, a new one needs a free place (expired ones are forgotten first). */
static int helper_add_bounded(struct mnl_socket *nl, uint32_t *seq, const struct eg_set *s, struct live_set *ls,
			      uint32_t max, const uint8_t *key, uint32_t timeout_ms)
{
	uint64_t now = now_ms();
	size_t i = live_find(ls, key);
	if (i == ls->n && ls->n >= max) {
		live_prune(ls, now);
		if (ls->n >= max)
			return -ENFILE;
		i = ls->n;
	}
	int r = helper_add(nl, seq, s, key, timeout_ms);
	if (r < 0)
		return r;
	if (i == ls->n) {
		if (ls->n == ls->cap) {
			size_t cap = ls->cap ? 2 * ls->cap : 16;
			struct live_elem *v = realloc(ls->v, cap * sizeof *v);
			if (!v)
				return -ENOMEM;   /* the element is in, but not counted: it expires all the same */
			ls->v = v;
			ls->cap = cap;
		}
		memcpy(ls->v[i].key, key, sizeof ls->v[i].key);
		ls->n++;
	}
	ls->v[i].expires_ms = now + timeout_ms;
	return 0;
}

static int marked_socket(int family, int type, uint32_t mark)
{
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static socklen_t sockaddr_of(int family, const uint8_t *addr, uint16_t port, uint32_t scope,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, addr, 4);
		return sizeof *in;
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	in6->sin6_scope_id = scope;
	memcpy(&in6->sin6_addr, addr, 16);
	return sizeof *in6;
}

/* A socket connected to one of the upstreams we were given; the kernel picks
 * a random source port (UDP: at random; TCP: by RFC 6056 hashing). */
static int upstream_socket(const struct egress_upstream *u, int type)
{
	int fd = socket(u->family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(u->family, u->addr, u->port, u->scope_id, &ss);
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Is the address one of this netns's own? Only a local address can be bound
 * without IP_FREEBIND. 1 or 0. */
static int is_local(int family, const uint8_t *addr)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(family, addr, 0, 0, &ss);
	int r = bind(fd, (struct sockaddr *)&ss, len) == 0 ? 1 : errno == EADDRNOTAVAIL ? 0 : -errno;
	close(fd);
	return r;
}

static void send_fd_reply(int sock, int32_t status, int fd)
{
	struct hrep rep = { .status = status };
	(void)send_with_fds(sock, &rep, sizeof rep, &fd, fd >= 0 ? 1 : 0, 0);
}

/* Answer one valid request. */
static void serve_one(struct helper *h, const struct hreq *q, const struct eg_set *set, struct live_set *live,
		      uint32_t *seq)
{
	int fd = -1, status;
	switch (q->op) {
	case HREQ_ADD:
		status = helper_add_bounded(h->nl, seq, set, &live[q->set], h->set_elems_max, q->key, q->timeout_ms);
		break;
	case HREQ_SOCKET:
		status = fd = marked_socket(q->family, q->type, EGRESS_SENTRY_MARK);
		break;
	case HREQ_PROXY_SOCKET:
		status = fd = marked_socket(q->family, SOCK_STREAM, EGRESS_PROXY_MARK);
		break;
	case HREQ_UPSTREAM:
		status = fd = upstream_socket(&h->up[q->index], q->type);
		break;
	default:
		status = is_local(q->family, q->key);
		break;
	}
	send_fd_reply(h->sock, fd >= 0 ? 0 : status, fd);
	if (fd >= 0)
		close(fd);
}

IDLE_TEXT static _Noreturn void helper_main(struct helper *h)
{
	struct live_set live[EG_N_SETS] = { 0 };
	struct ab_err err;
	/* die with the sentry; if it is already gone, go now */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() == 1)
		_exit(1);
	int keep_fds[3] = { h->nl ? mnl_socket_get_fd(h->nl) : -1, h->sock, log_fd() };
	(void)close_fds_from(3, keep_fds, 3);
	static const cap_value_t netadmin[] = { CAP_NET_ADMIN };
	bool admin = h->role == ROLE_NETADMIN;
	/* the net helper needs no file either; the netadmin one inherited the
	 * sentry's empty root already */
	if ((!admin && sentry_empty_root(&err) < 0) || sentry_drop_caps(netadmin, admin ? 1 : 0, &err) < 0) {
		log_error("egress sentry helper: %s", err.msg);
		_exit(1);
	}
	/* the first release waits for a quiet second like the later ones: a
	 * short-lived container never pays for it */
	uint32_t seq = (uint32_t)time(NULL) << 8;
	for (;;) {
		struct hreq q;
		/* after a burst of work: what it touched goes back once quiet, and
		 * the next request is waited for without libc's code */
		struct pollfd pfd = { .fd = h->sock, .events = POLLIN };
		if (idle_poll(&pfd, 1, IDLE_RELEASE_MS) == 0) {
			sentry_release_inherited();
			(void)idle_poll(&pfd, 1, -1);
		}
		ssize_t n = recv(h->sock, &q, sizeof q, 0);
		if (n == 0)
			_exit(0);   /* the sentry is gone */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		struct eg_set s;
		if ((size_t)n != sizeof q || !hreq_valid(&q, h, &s)) {
			send_fd_reply(h->sock, -EINVAL, -1);
			continue;
		}
		serve_one(h, &q, &s, live, &seq);
	}
}

/* ---- the sentry's side ---- */

static int call(int sock, const struct hreq *q, int *ret_fd)
{
	if (sock < 0)
		return -ENOTCONN;
	if (send(sock, q, sizeof *q, MSG_NOSIGNAL) != (ssize_t)sizeof *q)
		return -EPIPE;
	struct hrep rep;
	struct iovec iov = { &rep, sizeof rep };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof rep)
		return -EPIPE;
	int fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof fd);
	if (ret_fd)
		*ret_fd = fd;
	else if (fd >= 0)
		close(fd);
	return rep.status;
}

/* a socket the helper sent, or -errno */
static int call_fd(int sock, const struct hreq *q)
{
	int fd = -1;
	int r = call(sock, q, &fd);
	if (r < 0 || fd < 0) {
		if (fd >= 0)
			close(fd);
		return r < 0 ? r : -EPROTO;
	}
	return fd;
}

static int start(struct sentry *s, struct helper *h, int *ret_sock, pid_t *ret_pid, struct ab_err *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ab_error(err, errno, "socketpair");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return ab_error(err, e, "fork the sentry's %s helper", h->role == ROLE_NET ? "net" : "netadmin");
	}
	if (pid == 0) {
		close(sv[0]);
		h->sock = sv[1];
		/* A helper keeps none of the sentry's state: the pages of it the
		 * sentry had written before the fork (its tables' -1s, ~40 KiB)
		 * would stay resident in each helper for as long as the box runs.
		 * Unmapped at once in the child: nothing a helper does reads them. */
		sentry_state_free(s);   /* ret_sock and ret_pid point there: unused here */
		helper_main(h);
	}
	close(sv[1]);
	*ret_sock = sv[0];
	*ret_pid = pid;
	return 0;
}

int sentry_start_helper(struct sentry *s, struct mnl_socket *nl, struct ab_err *err)
{
	struct helper h = { .role = ROLE_NETADMIN, .nl = nl, .ttl_min = s->ttl_min, .ttl_max = s->ttl_max,
			    .set_elems_max = s->set_elems_max };
	return start(s, &h, &s->helper, &s->helper_pid, err);
}

int sentry_start_net_helper(struct sentry *s, const struct egress_upstream *list, size_t n, struct ab_err *err)
{
	struct helper h = { .role = ROLE_NET };
	if (n > ARRAY_SIZE(h.up))
		return ab_error(err, EINVAL, "the net helper: %zu upstreams", n);
	memcpy(h.up, list, n * sizeof *list);
	h.n_up = n;
	return start(s, &h, &s->net, &s->net_pid, err);
}

int sentry_helper_add(struct sentry *s, unsigned set, const uint8_t key[24], uint32_t timeout_ms)
{
	struct hreq q = { .op = HREQ_ADD, .set = set, .timeout_ms = timeout_ms };
	memcpy(q.key, key, 24);
	return call(s->helper, &q, NULL);
}

int sentry_helper_socket(struct sentry *s, int family, int type)
{
	struct hreq q = { .op = HREQ_SOCKET, .family = family, .type = type };
	return call_fd(s->helper, &q);
}

int sentry_helper_proxy_socket(struct sentry *s, int family)
{
	struct hreq q = { .op = HREQ_PROXY_SOCKET, .family = family, .type = SOCK_STREAM };
	return call_fd(s->helper, &q);
}

int sentry_net_socket(struct sentry *s, unsigned index, int type)
{
	struct hreq q = { .op = HREQ_UPSTREAM, .index = index, .type = type };
	return call_fd(s->net, &q);
}

int sentry_net_is_local(struct sentry *s, int family, const uint8_t *addr)
{
	struct hreq q = { .op = HREQ_IS_LOCAL, .family = family };
	memcpy(q.key, addr, family == AF_INET ? 4 : 16);
	return call(s->net, &q, NULL);
}
