/* The sentry's privileged helper. Netlink checks CAP_NET_ADMIN both against
 * the socket's opener and against the sending task, so a process that dropped
 * its capabilities cannot add set elements even on a socket it opened earlier.
 * The sentry therefore forks this helper, which keeps only CAP_NET_ADMIN and
 * does two fixed-size things on request: add one element to one dynamic set,
 * and create one marked socket for an upstream query. It parses no DNS. */
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

#include "log.h"
#include "sentry_internal.h"
#include "util.h"

enum { HREQ_ADD = 1, HREQ_SOCKET = 2 };

struct hreq {
	uint32_t op;
	uint32_t set;        /* HREQ_ADD: index of a dynamic set */
	uint32_t timeout_ms;
	int32_t family;      /* HREQ_SOCKET */
	int32_t type;
	uint8_t key[24];
};

struct hrep {
	int32_t status;      /* 0 or -errno */
};

static bool hreq_valid(const struct hreq *q, uint32_t ttl_min, uint32_t ttl_max, struct eg_set *s)
{
	if (q->op == HREQ_SOCKET)
		return (q->family == AF_INET || q->family == AF_INET6) &&
		       (q->type == SOCK_DGRAM || q->type == SOCK_STREAM);
	if (q->op != HREQ_ADD || q->set >= EG_N_SETS)
		return false;
	eg_set_get(q->set, s);
	if (s->kind != EG_DYNAMIC)
		return false;
	if (q->timeout_ms < ttl_min * 1000ull || q->timeout_ms > ttl_max * 1000ull)
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

static int helper_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	uint32_t mark = EGRESS_SENTRY_MARK;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void send_fd_reply(int sock, int32_t status, int fd)
{
	struct hrep rep = { .status = status };
	struct iovec iov = { &rep, sizeof rep };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	(void)sendmsg(sock, &mh, MSG_NOSIGNAL);
}

static _Noreturn void helper_main(struct mnl_socket *nl, int sock, uint32_t ttl_min, uint32_t ttl_max,
				  uint32_t set_elems_max)
{
	struct live_set live[EG_N_SETS] = { 0 };
	struct ab_err err;
	static const cap_value_t keep[] = { CAP_NET_ADMIN };
	/* die with the sentry; if it is already gone, go now */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() == 1)
		_exit(1);
	int keep_fds[3] = { mnl_socket_get_fd(nl), sock, log_fd() };
	(void)close_fds_from(3, keep_fds, 3);
	if (sentry_drop_caps(keep, 1, &err) < 0) {
		log_error("egress sentry helper: %s", err.msg);
		_exit(1);
	}
	/* the first release waits for a quiet second like the later ones: a
	 * short-lived container never pays for it */
	bool released = false;
	uint32_t seq = (uint32_t)time(NULL) << 8;
	for (;;) {
		struct hreq q;
		if (!released) {
			/* after a burst of work: what it touched goes back once quiet */
			struct pollfd pfd = { .fd = sock, .events = POLLIN };
			if (poll(&pfd, 1, IDLE_RELEASE_MS) == 0) {
				sentry_release_inherited();
				released = true;
				continue;
			}
		}
		released = false;
		ssize_t n = recv(sock, &q, sizeof q, 0);
		if (n == 0)
			_exit(0);   /* the sentry is gone */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		struct eg_set s;
		if ((size_t)n != sizeof q || !hreq_valid(&q, ttl_min, ttl_max, &s)) {
			send_fd_reply(sock, -EINVAL, -1);
			continue;
		}
		if (q.op == HREQ_SOCKET) {
			int fd = helper_socket(q.family, q.type);
			send_fd_reply(sock, fd < 0 ? fd : 0, fd);
			if (fd >= 0)
				close(fd);
		} else
			send_fd_reply(sock,
				      helper_add_bounded(nl, &seq, &s, &live[q.set], set_elems_max, q.key, q.timeout_ms),
				      -1);
	}
}


/* ---- the sentry's side ---- */

static int helper_call(struct sentry *s, const struct hreq *q, int *ret_fd)
{
	if (send(s->helper, q, sizeof *q, MSG_NOSIGNAL) != (ssize_t)sizeof *q)
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
		n = recvmsg(s->helper, &mh, MSG_CMSG_CLOEXEC);
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

int sentry_upstream_socket(struct sentry *s, int type, const struct egress_upstream *up)
{
	struct hreq q = { .op = HREQ_SOCKET, .family = up->family, .type = type };
	int fd = -1;
	int r = helper_call(s, &q, &fd);
	if (r < 0 || fd < 0) {
		if (fd >= 0)
			close(fd);
		return r < 0 ? r : -EPROTO;
	}
	int fl = fcntl(fd, F_GETFL);
	(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (up->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(up->port);
		memcpy(&in->sin_addr, up->addr, 4);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(up->port);
		in6->sin6_scope_id = up->scope_id;
		memcpy(&in6->sin6_addr, up->addr, 16);
		len = sizeof *in6;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int sentry_start_helper(struct sentry *s, struct mnl_socket *nl, struct ab_err *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ab_error(err, errno, "socketpair");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return ab_error(err, e, "fork the sentry helper");
	}
	if (pid == 0) {
		close(sv[0]);
		helper_main(nl, sv[1], s->ttl_min, s->ttl_max, s->set_elems_max);
	}
	close(sv[1]);
	s->helper = sv[0];
	s->helper_pid = pid;
	return 0;
}

int sentry_helper_add(struct sentry *s, unsigned set, const uint8_t key[24], uint32_t timeout_ms)
{
	struct hreq q = { .op = HREQ_ADD, .set = set, .timeout_ms = timeout_ms };
	memcpy(q.key, key, 24);
	return helper_call(s, &q, NULL);
}
