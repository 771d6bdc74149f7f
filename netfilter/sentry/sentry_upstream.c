/* The sentry's upstream resolvers: where each is asked from, and one
 * exchange with it (a query out, its answer back), never blocking.
 *
 * Nothing the box does may change what the sentry believes. Each exchange
 * gets a fresh socket (a fresh source port) and a random DNS id, and takes an
 * answer only from the address and port it asked (connected sockets), with
 * that id; the question is matched by the caller. Where the socket lives:
 *  - an upstream the box reaches through a gateway is the same server from
 *    the runtime's own network namespace: asked from there (the net helper),
 *    where the box can neither see the socket nor send to it;
 *  - one on the box's own link (slirp4netns' 10.0.2.3) exists only there:
 *    asked from the box with a marked socket; the box cannot send from that
 *    address (the ruleset refuses every source that is not its own);
 *  - one at an address of the box itself (Docker's 127.0.0.11, any loopback
 *    resolver) the box could send from: asked over TCP only, whose sequence
 *    numbers a process of the box cannot learn or guess. */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sentry_helper.h"
#include "sentry_state.h"
#include "sentry_upstream.h"
#include "util.h"

size_t sentry_upstreams_init(struct sentry *s, struct egress_upstream *list)
{
	const struct egress_sentry_params *sp = s->sp;
	size_t n = 0;
	s->n_up = sp->n_upstream < EGRESS_MAX_UPSTREAMS ? sp->n_upstream : EGRESS_MAX_UPSTREAMS;
	for (size_t i = 0; i < s->n_up; i++) {
		struct upstream *u = &s->up[i];
		u->u = sp->upstream[i];
		u->side = egress_upstream_is_loopback(&u->u) ? UP_BOX_LOCAL : UP_UNKNOWN;
		u->net_index = -1;
		if (u->side == UP_UNKNOWN) {
			list[n] = u->u;
			u->net_index = (int)n++;
		}
	}
	s->n_fwd_up = sp->n_forward_upstream < EGRESS_MAX_UPSTREAMS ? sp->n_forward_upstream : EGRESS_MAX_UPSTREAMS;
	for (size_t i = 0; i < s->n_fwd_up; i++) {
		struct upstream *u = &s->fwd_up[i];
		u->u = sp->forward_upstream[i];
		u->net_index = -1;
		/* a loopback one is the box's own: never asked for a forward (it
		 * would come back here) */
		if (egress_upstream_is_loopback(&u->u)) {
			u->side = UP_BOX_LOCAL;
			continue;
		}
		/* the engine's are asked from where the engine asks them (side_of:
		 * through a gateway, from the runtime's netns); the runtime's own
		 * resolvers belong to its netns */
		u->side = sp->forward_engine ? UP_UNKNOWN : UP_HOST;
		list[n] = u->u;
		u->net_index = (int)n++;
	}
	return n;
}

/* Where the box's routes take dst: RTN_LOCAL for its own address, else the
 * route's type and whether it goes through a gateway. -errno when there is
 * no route. Asked in the box's netns (the sentry lives there); reading routes
 * needs no capability. */
static int route_of(const struct egress_upstream *u, bool *via_gateway)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req;
	memset(&req, 0, sizeof req);
	size_t alen = u->family == AF_INET ? 4 : 16;
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.rt.rtm_family = (unsigned char)u->family;
	req.rt.rtm_dst_len = (unsigned char)(alen * 8);
	struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(sizeof req.nh) + NLMSG_ALIGN(sizeof req.rt));
	a->rta_type = RTA_DST;
	a->rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(RTA_DATA(a), u->addr, alen);
	req.nh.nlmsg_len = (uint32_t)(NLMSG_ALIGN(sizeof req.nh) + NLMSG_ALIGN(sizeof req.rt) + RTA_ALIGN(a->rta_len));
	struct timeval tv = { 1, 0 };
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char buf[4096] __attribute__((aligned(4)));
	ssize_t n = -1;
	if (send(fd, &req, req.nh.nlmsg_len, 0) == (ssize_t)req.nh.nlmsg_len)
		n = recv(fd, buf, sizeof buf, 0);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (size_t)n))
		return -EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *ne = NLMSG_DATA(nh);
		return ne->error < 0 ? ne->error : -EPROTO;
	}
	if (nh->nlmsg_type != RTM_NEWROUTE || nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return -EPROTO;
	const struct rtmsg *rt = NLMSG_DATA(nh);
	int len = (int)RTM_PAYLOAD(nh);
	*via_gateway = false;
	for (const struct rtattr *at = RTM_RTA(rt); RTA_OK(at, len); at = RTA_NEXT(at, len))
		if (at->rta_type == RTA_GATEWAY || at->rta_type == RTA_VIA)
			*via_gateway = true;
	return rt->rtm_type;
}

/* Decided at the first query, not at start: kit run's slirp4netns gives the
 * box its network after the sentry started. */
static enum up_side side_of(struct sentry *s, struct upstream *u)
{
	if (u->side != UP_UNKNOWN)
		return u->side;
	bool gw = false;
	int type = u->u.scope_id ? -EINVAL : route_of(&u->u, &gw);
	if (type == RTN_LOCAL)
		u->side = UP_BOX_LOCAL;
	else if (u->u.scope_id || (type >= 0 && !gw))
		u->side = UP_BOX;     /* a link-local zone, or on the box's link */
	else
		u->side = UP_HOST;    /* through a gateway, or no route from the box at all */
	/* without the net helper (no name allowed: no forward at all) nothing
	 * would ask it; asked from the box all the same then */
	if (u->side == UP_HOST && s->net < 0)
		u->side = UP_BOX;
	return u->side;
}

static uint16_t random_id(void)
{
	uint16_t id;
	if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id) {
		/* never after boot; a fallback that is still not the client's */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		id = (uint16_t)(ts.tv_nsec ^ (ts.tv_nsec >> 16));
	}
	return id;
}

static socklen_t sockaddr_of(const struct egress_upstream *u, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (u->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(u->port);
		memcpy(&in->sin_addr, u->addr, 4);
		return sizeof *in;
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(u->port);
	in6->sin6_scope_id = u->scope_id;
	memcpy(&in6->sin6_addr, u->addr, 16);
	return sizeof *in6;
}

/* A fresh socket to u, connected or connecting, or -errno. */
static int open_socket(struct sentry *s, struct upstream *u, int type)
{
	if (side_of(s, u) == UP_HOST)
		return sentry_net_socket(s, (unsigned)u->net_index, type);
	int fd = sentry_helper_socket(s, u->u.family, type);
	if (fd < 0)
		return fd;
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(&u->u, &ss);
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static uint8_t *tcp_buf_take(struct sentry *s)
{
	for (size_t i = 0; i < MAX_TCP_UPSTREAM; i++)
		if (!s->tcp_buf_used[i]) {
			s->tcp_buf_used[i] = true;
			return s->tcp_bufs + i * TCP_BUF_SIZE;
		}
	return NULL;
}

static void tcp_buf_give(struct sentry *s, uint8_t *b)
{
	if (b)
		s->tcp_buf_used[(size_t)(b - s->tcp_bufs) / TCP_BUF_SIZE] = false;
}

int sentry_exchange_start(struct sentry *s, struct query *q)
{
	struct upstream *u = q->forwarded ? &s->fwd_up[q->up] : &s->up[q->up];
	enum up_side side = side_of(s, u);
	/* a forward to an address of the box itself would come back here */
	if (q->forwarded && side == UP_BOX_LOCAL)
		return -ELOOP;
	if (side == UP_BOX_LOCAL)
		q->tcp = true;
	q->fd = -1;
	q->tbuf = NULL;
	if (q->tcp && !(q->tbuf = tcp_buf_take(s)))
		return -EBUSY;
	int fd = open_socket(s, u, q->tcp ? SOCK_STREAM : SOCK_DGRAM);
	if (fd < 0) {
		tcp_buf_give(s, q->tbuf);
		q->tbuf = NULL;
		return fd;
	}
	q->fd = fd;
	q->up_id = random_id();
	if (!q->tcp) {
		uint8_t out[DNS_QUERY_MAX];
		memcpy(out, q->query, q->qlen);
		out[0] = (uint8_t)(q->up_id >> 8);
		out[1] = (uint8_t)q->up_id;
		if (send(fd, out, q->qlen, MSG_DONTWAIT) != (ssize_t)q->qlen) {
			int e = errno;
			sentry_exchange_end(s, q);
			return -e;
		}
		q->state = Q_UDP;
		return 0;
	}
	q->tbuf[0] = (uint8_t)(q->qlen >> 8);
	q->tbuf[1] = (uint8_t)q->qlen;
	memcpy(q->tbuf + 2, q->query, q->qlen);
	q->tbuf[2] = (uint8_t)(q->up_id >> 8);
	q->tbuf[3] = (uint8_t)q->up_id;
	q->tdone = 0;
	q->twant = 2u + q->qlen;
	q->state = Q_TCP_CONNECT;
	return 0;
}

short sentry_exchange_events(const struct query *q)
{
	return q->state == Q_TCP_CONNECT || q->state == Q_TCP_SEND ? POLLOUT : POLLIN;
}

void sentry_exchange_end(struct sentry *s, struct query *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	tcp_buf_give(s, q->tbuf);
	q->tbuf = NULL;
}

/* Is msg an answer with our id? */
static bool ours(const struct query *q, const uint8_t *msg, size_t len)
{
	return len >= DNS_HEADER_LEN && (msg[2] & 0x80) && (uint16_t)(msg[0] << 8 | msg[1]) == q->up_id;
}

static enum exchange done(struct query *q, uint8_t *msg, size_t len, uint8_t **ret, size_t *ret_len)
{
	/* the client's id back */
	msg[0] = q->query[0];
	msg[1] = q->query[1];
	*ret = msg;
	*ret_len = len;
	return EX_DONE;
}

enum exchange sentry_exchange_io(struct sentry *s, struct query *q, short revents, uint8_t **msg, size_t *len)
{
	if (q->state == Q_UDP) {
		ssize_t n = recv(q->fd, s->buf, BUF_SIZE, MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? EX_WAIT : EX_FAILED;
		/* not an answer to this query: keep waiting (the deadline still holds) */
		if (!ours(q, s->buf, (size_t)n))
			return EX_WAIT;
		return done(q, s->buf, (size_t)n, msg, len);
	}
	if (q->state == Q_TCP_CONNECT) {
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if ((revents & (POLLERR | POLLHUP)) || getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr)
			return EX_FAILED;
		q->state = Q_TCP_SEND;
	}
	if (q->state == Q_TCP_SEND) {
		ssize_t n = send(q->fd, q->tbuf + q->tdone, q->twant - q->tdone, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? EX_WAIT : EX_FAILED;
		q->tdone += (size_t)n;
		if (q->tdone < q->twant)
			return EX_WAIT;
		/* the answer replaces the query in the buffer: its length first */
		q->state = Q_TCP_READ;
		q->tdone = 0;
		q->twant = 2;
		return EX_WAIT;
	}
	ssize_t n = recv(q->fd, q->tbuf + q->tdone, q->twant - q->tdone, MSG_DONTWAIT);
	if (n == 0)
		return EX_FAILED;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? EX_WAIT : EX_FAILED;
	q->tdone += (size_t)n;
	if (q->tdone < q->twant)
		return EX_WAIT;
	if (q->twant == 2) {
		size_t alen = (size_t)q->tbuf[0] << 8 | q->tbuf[1];
		if (alen < DNS_HEADER_LEN)
			return EX_FAILED;
		q->twant = 2 + alen;
		return EX_WAIT;
	}
	if (!ours(q, q->tbuf + 2, q->twant - 2))
		return EX_FAILED;   /* one answer per connection: anything else is not it */
	return done(q, q->tbuf + 2, q->twant - 2, msg, len);
}
