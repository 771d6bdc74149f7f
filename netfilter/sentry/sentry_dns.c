/* The sentry's DNS work: queries from the container judged by the policy,
 * allowed ones forwarded to an upstream resolver (sentry_upstream.c: UDP, TCP,
 * a truncated answer asked again over TCP, never blocking), answers matched
 * to their question, and every A/AAAA of an answer turned into set elements
 * before the client sees it. */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_internal.h"
#include "log.h"
#include "sentry_dns.h"
#include "sentry_helper.h"
#include "sentry_learn.h"
#include "sentry_log.h"
#include "sentry_refused.h"
#include "sentry_state.h"
#include "sentry_upstream.h"
#include "util.h"

/* ---- answers: set elements ---- */

struct elem_req {
	uint8_t set;
	uint8_t key[24];
	uint32_t timeout_s;
};

static void push_elem(struct elem_req *v, size_t *n, unsigned set, const uint8_t *key, uint32_t timeout_s)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].set == set && memcmp(v[i].key, key, 24) == 0) {
			if (timeout_s > v[i].timeout_s)
				v[i].timeout_s = timeout_s;
			return;
		}
	if (*n == MAX_ANSWER_ELEMS)
		return;   /* more is not needed by anyone; those connections fail closed */
	v[*n].set = (uint8_t)set;
	memcpy(v[*n].key, key, 24);
	v[*n].timeout_s = timeout_s;
	(*n)++;
}

static void entry_elems(const struct egress_entry *e, bool deny, const struct dns_addr *a, uint32_t t,
			struct elem_req *v, size_t *n)
{
	struct eg_set s;
	uint8_t key[24], protos[2];
	unsigned idx = eg_set_index(EG_DYNAMIC, deny, a->family, eg_entry_shape(e));
	eg_set_get(idx, &s);
	size_t np = eg_entry_protos(e, protos);
	if (np == 0) {
		eg_key(&s, a->addr, 0, 0, key);
		push_elem(v, n, idx, key, t);
	}
	for (size_t i = 0; i < np; i++) {
		eg_key(&s, a->addr, protos[i], e->port, key);
		push_elem(v, n, idx, key, t);
	}
}

static int add_elem(struct sentry *s, const struct elem_req *r)
{
	uint64_t now = now_ms(), want = now + (uint64_t)r->timeout_s * 1000;
	struct cached_elem *slot = NULL, *oldest = &s->cache[0];
	for (size_t i = 0; i < ELEM_CACHE; i++) {
		struct cached_elem *c = &s->cache[i];
		if (c->expires && c->set == r->set && memcmp(c->key, r->key, 24) == 0) {
			slot = c;
			break;
		}
		if (c->expires < oldest->expires)
			oldest = c;
	}
	/* still fresh enough: no netlink round trip, and never shorten a timeout */
	if (slot && slot->expires + 1000 >= want)
		return 0;
	int ret = sentry_helper_add(s, r->set, r->key, r->timeout_s * 1000);
	if (ret < 0)
		return ret;
	if (!slot)
		slot = oldest;
	slot->set = r->set;
	memcpy(slot->key, r->key, 24);
	slot->expires = want;
	return 0;
}

/* The same CNAME chain and the same addresses, in the same order. */
static bool same_answer(const struct dns_answer *a, const struct dns_answer *b)
{
	if (a->n_chain != b->n_chain || a->n_addrs != b->n_addrs || strcmp(a->q.name, b->q.name))
		return false;
	for (size_t i = 0; i < a->n_chain; i++)
		if (strcmp(a->chain[i], b->chain[i]))
			return false;
	for (size_t i = 0; i < a->n_addrs; i++)
		if (a->addrs[i].family != b->addrs[i].family || memcmp(a->addrs[i].addr, b->addrs[i].addr, 16))
			return false;
	return true;
}

/* A policy refusal as the client gets it: NXDOMAIN, which every resolver
 * takes as final (glibc, musl: EAI_NONAME; c-ares: ENOTFOUND; Go: "no such
 * host"), where REFUSED reads as "try another server" and ends, after the
 * retries, as a temporary failure (EAI_AGAIN) that clients retry for
 * minutes. The extended error says why (agentbox-egress(7)). */
struct refusal {
	int rcode;
	uint16_t ede;           /* RFC 8914 INFO-CODE */
	char text[400];         /* EXTRA-TEXT */
};

static void refuse_name(const struct sentry *s, struct refusal *rf, const char *code, const char *name,
			const char *via, int family, const uint8_t *addr)
{
	rf->rcode = DNS_RCODE_NXDOMAIN;
	/* Blocked: an entry or a rule of the policy blocks it; Prohibited: the
	 * box is not authorised to ask for names off its allowlist */
	rf->ede = strcmp(code, "not-allowed") == 0 ? DNS_EDE_PROHIBITED : DNS_EDE_BLOCKED;
	sentry_refusal_text(s, code, name, via, family, addr, 0, -1, rf->text, sizeof rf->text);
}

/* Apply an upstream answer to the sets. Returns an rcode to send instead of the
 * answer (SERVFAIL; NXDOMAIN with *rf filled in for a policy refusal), or -1
 * to relay the answer. */
static int apply_answer(struct sentry *s, uint8_t *msg, size_t len, const char *qname, uint16_t qtype,
			uint16_t qclass, struct refusal *rf)
{
	/* an allocation that fails is a lookup that fails: closed, never open */
	struct dns_answer *a = malloc(sizeof *a);
	if (!a)
		return DNS_RCODE_SERVFAIL;
	int ret = -1;
	int r = dns_parse_answer(msg, len, a);
	if (r < 0 || strcmp(a->q.name, qname) || a->q.type != qtype || a->q.class != qclass) {
		ret = DNS_RCODE_SERVFAIL;
		goto out;
	}
	sentry_learn_lookup(s, qname, DNS_RCODE(a->hdr.flags));
	if (DNS_RCODE(a->hdr.flags) != DNS_RCODE_NOERROR)
		goto out;
	/* deny wins along the whole CNAME chain */
	for (size_t i = 1; i < a->n_chain; i++)
		if (egress_policy_check_name(s->p, a->chain[i]) == EGRESS_NAME_DENY) {
			sentry_log_name(s, a->chain[i], R_DENIED);
			refuse_name(s, rf, "denied", qname, a->chain[i], 0, NULL);
			ret = DNS_RCODE_NXDOMAIN;
			goto out;
		}

	/* An allowed name that points inside (loopback, link-local, private, ...)
	 * opens nothing unless the policy opens that range: the whole answer is
	 * withheld, and the log says which name pointed where. */
	for (size_t k = 0; k < a->n_addrs; k++) {
		const struct dns_addr *ad = &a->addrs[k];
		if (egress_addr_opened(s->p, ad->family, ad->addr))
			continue;
		/* the host's own addresses: only the net helper, in the runtime's
		 * netns, knows them (it runs wherever a name may be forwarded) */
		if (egress_addr_special(ad->family, ad->addr) || sentry_net_is_local(s, ad->family, ad->addr) == 1) {
			sentry_log_pointed(s, qname, ad->family, ad->addr);
			sentry_learn_inside(s, qname, ad->family, ad->addr);
			if (ret < 0)
				refuse_name(s, rf, "internal-address", qname, NULL, ad->family, ad->addr);
			ret = DNS_RCODE_NXDOMAIN;
		}
	}
	if (ret >= 0)
		goto out;

	struct elem_req *v = malloc(MAX_ANSWER_ELEMS * sizeof *v);
	if (!v) {
		ret = DNS_RCODE_SERVFAIL;
		goto out;
	}
	size_t n = 0;
	for (size_t k = 0; k < a->n_addrs; k++) {
		const struct dns_addr *ad = &a->addrs[k];
		uint32_t t = ad->ttl < s->ttl_min ? s->ttl_min : ad->ttl > s->ttl_max ? s->ttl_max : ad->ttl;
		for (size_t i = 0; i < s->p->allow.n; i++)
			if (egress_entry_matches_name(&s->p->allow.v[i], qname))
				entry_elems(&s->p->allow.v[i], false, ad, t, v, &n);
		for (size_t i = 0; i < s->p->deny.n; i++) {
			const struct egress_entry *e = &s->p->deny.v[i];
			for (size_t c = 0; c < a->n_chain; c++)
				if (egress_entry_matches_name(e, a->chain[c])) {
					entry_elems(e, true, ad, t, v, &n);
					break;
				}
		}
		sentry_remember_name(s, ad, qname);
	}
	/* deny elements first: an allow element must never be live without its deny */
	for (int pass = 0; pass < 2 && ret < 0; pass++)
		for (size_t i = 0; i < n; i++) {
			struct eg_set set;
			eg_set_get(v[i].set, &set);
			if (set.deny != (pass == 0))
				continue;
			r = add_elem(s, &v[i]);
			if (r < 0) {
				if (r == -ENFILE)
					log_warn("egress sentry: set %s is full (%u live elements): answered SERVFAIL until some expire",
						 set.name, s->set_elems_max);
				else
					log_warn("egress sentry: add element to %s: %s", set.name, strerror(-r));
				ret = DNS_RCODE_SERVFAIL;
				break;
			}
		}
	free(v);
	/* no client may cache an address longer than its set element lives; and
	 * the client gets what was judged: an answer whose names were spelt with
	 * the TTL bytes just changed reads differently now, and is refused */
	if (ret < 0) {
		struct dns_answer *b = malloc(sizeof *b);
		if (!b || dns_clamp_ttls(msg, len, s->ttl_max) < 0 || dns_parse_answer(msg, len, b) < 0 ||
		    !same_answer(a, b))
			ret = DNS_RCODE_SERVFAIL;
		free(b);
	}
out:
	free(a);
	return ret;
}

/* ---- queries ---- */

/* room for any reply the sentry makes itself: a query's question, an OPT */
#define REPLY_MAX (DNS_QUERY_MAX + DNS_REFUSAL_MAX)

enum verdict { V_DROP, V_REPLY, V_FORWARD };

/* Decide on a query; for V_REPLY the response is in out/outlen. */
static enum verdict classify(struct sentry *s, const uint8_t *q, size_t qlen, struct dns_question *qq,
			     uint8_t *out, size_t *outlen)
{
	struct dns_header h;
	if (dns_parse_header(q, qlen, &h) < 0 || (h.flags & DNS_FLAG_QR))
		return V_DROP;
	int rcode = -1;
	struct refusal rf = { .ede = 0 };
	const struct dns_question *with_q = NULL;
	if (qlen > DNS_QUERY_MAX)
		rcode = DNS_RCODE_FORMERR;
	else if (DNS_OPCODE(h.flags) != 0)
		rcode = DNS_RCODE_NOTIMP;
	else {
		int r = dns_parse_question(q, qlen, &h, qq);
		if (r == -EINVAL) {
			with_q = qq;
			sentry_log_name(s, qq->name, R_NOT_ALLOWED);
			refuse_name(s, &rf, "not-allowed", qq->name, NULL, 0, NULL);
			rcode = rf.rcode;
		} else if (r < 0)
			rcode = DNS_RCODE_FORMERR;
		else {
			with_q = qq;
			enum egress_name_verdict v = qq->class == DNS_CLASS_IN ? egress_policy_check_name(s->p, qq->name)
									      : EGRESS_NAME_NONE;
			if (v != EGRESS_NAME_ALLOW) {
				const char *code = v == EGRESS_NAME_DENY ? "denied" : "not-allowed";
				sentry_log_name(s, qq->name, v == EGRESS_NAME_DENY ? R_DENIED : R_NOT_ALLOWED);
				refuse_name(s, &rf, code, qq->name, NULL, 0, NULL);
				/* CHAOS and the like: no such thing here, rather than "no such name" */
				if (qq->class != DNS_CLASS_IN)
					rf.rcode = DNS_RCODE_REFUSED;
				rcode = rf.rcode;
			}
		}
	}
	if (rcode < 0)
		return V_FORWARD;
	if (rf.ede)
		*outlen = dns_build_refusal(q, qlen, with_q, rcode, rf.ede, rf.text, out, REPLY_MAX);
	else
		*outlen = dns_build_error(q, qlen, with_q, rcode, out, REPLY_MAX);
	return *outlen ? V_REPLY : V_DROP;
}

static int poll_one(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			return 0;
	}
}

static int write_full(int fd, const uint8_t *buf, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			int r = poll_one(fd, POLLOUT, deadline);
			if (r < 0)
				return r;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void udp_reply(int lfd, const struct sockaddr_storage *to, socklen_t tolen, const uint8_t *msg, size_t len)
{
	(void)sendto(lfd, msg, len, MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
}

void sentry_tclient_close(struct tclient *c)
{
	close(c->fd);
	c->fd = -1;
}

static void tcp_send(struct tclient *c, const uint8_t *msg, size_t len)
{
	uint8_t hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };
	uint64_t deadline = now_ms() + 2000;
	if (write_full(c->fd, hdr, 2, deadline) < 0 || write_full(c->fd, msg, len, deadline) < 0)
		sentry_tclient_close(c);
}

/* The answer (or an error) to q's client, and q is free again. */
static void query_reply(struct sentry *s, struct query *q, const uint8_t *msg, size_t len)
{
	if (q->tc) {
		if (q->tc->fd >= 0 && q->tc->gen == q->tc_gen)
			tcp_send(q->tc, msg, len);
	} else if (len <= q->client_udp)
		udp_reply(q->lfd, &q->client, q->clen, msg, len);
	else {
		/* too big for the client's UDP: the question with TC set, and it asks
		 * again over TCP */
		uint8_t out[REPLY_MAX];
		size_t olen = dns_build_error(q->query, q->qlen, &q->qq, DNS_RCODE_NOERROR, out, sizeof out);
		if (olen) {
			out[2] |= DNS_FLAG_TC >> 8;
			udp_reply(q->lfd, &q->client, q->clen, out, olen);
		}
	}
	sentry_exchange_end(s, q);
	q->state = Q_FREE;
}

static void query_refuse(struct sentry *s, struct query *q, int rcode, const struct refusal *rf)
{
	uint8_t out[REPLY_MAX];
	size_t olen = rf ? dns_build_refusal(q->query, q->qlen, &q->qq, rcode, rf->ede, rf->text, out, sizeof out)
			 : dns_build_error(q->query, q->qlen, &q->qq, rcode, out, sizeof out);
	if (olen)
		query_reply(s, q, out, olen);
	else {
		sentry_exchange_end(s, q);
		q->state = Q_FREE;
	}
}

static void query_fail(struct sentry *s, struct query *q, int rcode)
{
	query_refuse(s, q, rcode, NULL);
}

/* Docker's embedded resolver (a guarded loopback upstream) forwards what it
 * does not serve itself to outside resolvers, from the box's netns: that
 * forward comes back here like any query of the box. Asked of the same
 * resolver again, it would loop. A question that is on its way to a loopback
 * upstream right now is a forward: it goes to the resolvers that resolver
 * forwards to (sp->forward_upstream), and never to a loopback one: no loop.
 * Whoever asks it, it is an allowed name either way. */
static bool asked_of_loopback(const struct sentry *s, const struct dns_question *qq)
{
	for (size_t i = 0; i < MAX_QUERIES; i++) {
		const struct query *o = &s->q[i];
		if (o->state != Q_FREE && !o->forwarded && s->up[o->up].side == UP_BOX_LOCAL &&
		    o->qq.type == qq->type && o->qq.class == qq->class && strcmp(o->qq.name, qq->name) == 0)
			return true;
	}
	return false;
}

/* The forward resolver a forward was addressed to, or -1: the server the
 * engine's resolver chose, where the box's own retries and a box that sent
 * the same question elsewhere name none of them. Only ever one of the list
 * (sp->forward_upstream): a box that could name the server would choose
 * what its allowed names resolve to. */
static int forward_pin(const struct sentry *s, const struct egress_upstream *dst)
{
	if (!dst || !dst->family)
		return -1;
	for (size_t i = 0; i < s->n_fwd_up; i++) {
		const struct egress_upstream *u = &s->fwd_up[i].u;
		if (u->family == dst->family && u->port == dst->port &&
		    memcmp(u->addr, dst->addr, u->family == AF_INET ? 4 : 16) == 0)
			return (int)i;
	}
	return -1;
}

/* Start q with the upstream after the last one tried (a pinned forward: with
 * that one only, the engine's resolver tries its next itself); SERVFAIL when
 * none can be asked. */
static void query_start(struct sentry *s, struct query *q)
{
	if (q->forwarded && q->pinned >= 0) {
		q->up = (size_t)q->pinned;
		if (sentry_exchange_start(s, q) == 0)
			q->deadline = now_ms() + UPSTREAM_TIMEOUT_MS;
		else
			query_fail(s, q, DNS_RCODE_SERVFAIL);
		return;
	}
	size_t n = q->forwarded ? s->n_fwd_up : s->n_up;
	size_t *cur = q->forwarded ? &s->fwd_cur : &s->up_cur;
	for (size_t tries = 0; tries < n; tries++) {
		q->up = *cur % n;
		int r = sentry_exchange_start(s, q);
		if (r == 0) {
			q->deadline = now_ms() + UPSTREAM_TIMEOUT_MS;
			return;
		}
		if (r == -EBUSY)
			break;   /* every TCP buffer in use: not this upstream's fault */
		(*cur)++;    /* this one cannot be asked: the next one, now and next time */
	}
	query_fail(s, q, DNS_RCODE_SERVFAIL);
}

/* A forwarded query for an allowed name: into a free slot, and on its way. */
static void query_new(struct sentry *s, const uint8_t *msg, size_t len, const struct dns_question *qq,
		      struct tclient *tc, int lfd, const struct sockaddr_storage *from, socklen_t flen)
{
	struct query *q = NULL;
	for (size_t i = 0; i < MAX_QUERIES && !q; i++)
		if (s->q[i].state == Q_FREE)
			q = &s->q[i];
	if (!q) {
		/* all busy: the client tries again */
		uint8_t out[REPLY_MAX];
		size_t olen = dns_build_error(msg, len, qq, DNS_RCODE_SERVFAIL, out, sizeof out);
		if (olen && tc)
			tcp_send(tc, out, olen);
		else if (olen)
			udp_reply(lfd, from, flen, out, olen);
		return;
	}
	uint8_t *buf = q->query;
	memset(q, 0, sizeof *q);
	q->query = buf;
	q->fd = -1;
	memcpy(q->query, msg, len);
	q->qlen = (uint16_t)len;
	q->qq = *qq;
	if (tc) {
		q->tc = tc;
		q->tc_gen = tc->gen;
		q->client_udp = 65535;
	} else {
		q->lfd = lfd;
		q->client = *from;
		q->clen = flen;
		q->client_udp = dns_query_udp_size(msg, len);
	}
	q->forwarded = asked_of_loopback(s, qq);
	/* over UDP the original destination takes a conntrack lookup: Docker's
	 * resolver, asked over TCP only, forwards over TCP */
	q->pinned = q->forwarded ? forward_pin(s, tc ? &tc->dst : NULL) : -1;
	q->state = Q_UDP;   /* taken; query_start sets the real state */
	query_start(s, q);
}

/* q's upstream failed it: the next one next time (a pinned forward's
 * choice was the engine's, and moves nothing) */
static void next_upstream(struct sentry *s, const struct query *q)
{
	if (!q->forwarded)
		s->up_cur++;
	else if (q->pinned < 0)
		s->fwd_cur++;
}

void sentry_query_event(struct sentry *s, struct query *q, short revents)
{
	uint8_t *msg;
	size_t len;
	enum exchange ex = sentry_exchange_io(s, q, revents, &msg, &len);
	if (ex == EX_WAIT)
		return;
	if (ex == EX_FAILED) {
		/* this nameserver is not there (refused, reset): the next one next time */
		next_upstream(s, q);
		query_fail(s, q, DNS_RCODE_SERVFAIL);
		return;
	}
	if (!q->tcp && (msg[2] & (DNS_FLAG_TC >> 8))) {
		/* learn the full answer over TCP, so that every address gets its element */
		sentry_exchange_end(s, q);
		q->tcp = true;
		int r = sentry_exchange_start(s, q);
		if (r < 0)
			query_fail(s, q, DNS_RCODE_SERVFAIL);
		else
			q->deadline = now_ms() + UPSTREAM_TIMEOUT_MS;
		return;
	}
	struct refusal rf = { .ede = 0 };
	int rc = apply_answer(s, msg, len, q->qq.name, q->qq.type, q->qq.class, &rf);
	if (rc >= 0)
		query_refuse(s, q, rc, rf.ede ? &rf : NULL);
	else
		query_reply(s, q, msg, len);
}

void sentry_query_timeout(struct sentry *s, struct query *q)
{
	next_upstream(s, q);
	query_fail(s, q, DNS_RCODE_SERVFAIL);
}

void sentry_udp_query(struct sentry *s, int lfd)
{
	struct sockaddr_storage from;
	socklen_t flen = sizeof from;
	ssize_t n = recvfrom(lfd, s->buf, BUF_SIZE, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
	if (n <= 0)
		return;
	struct dns_question qq;
	uint8_t out[REPLY_MAX];
	size_t olen = 0;
	enum verdict v = classify(s, s->buf, (size_t)n, &qq, out, &olen);
	if (v == V_REPLY)
		udp_reply(lfd, &from, flen, out, olen);
	else if (v == V_FORWARD)
		query_new(s, s->buf, (size_t)n, &qq, NULL, lfd, &from, flen);
}

/* Where a connection redirected to the sentry was going (conntrack's
 * original destination): for a forward of the engine's resolver, the server
 * it chose. Family 0 when there is none to know. */
static void original_dst(const struct sentry *s, int fd, int lfd, struct egress_upstream *dst)
{
	memset(dst, 0, sizeof *dst);
	if (s->n_fwd_up == 0)
		return;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	bool v4 = lfd == s->tcp[0];
	if (getsockopt(fd, v4 ? SOL_IP : SOL_IPV6, v4 ? SO_ORIGINAL_DST : IP6T_SO_ORIGINAL_DST, &ss, &len) < 0)
		return;
	if (v4 && ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		memcpy(dst->addr, &in->sin_addr, 4);
		dst->port = ntohs(in->sin_port);
	} else if (!v4 && ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		memcpy(dst->addr, &in6->sin6_addr, 16);
		dst->port = ntohs(in6->sin6_port);
	} else
		return;
	dst->family = ss.ss_family;
}

void sentry_tcp_accept(struct sentry *s, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (s->tc[i].fd < 0) {
			s->tc[i].fd = fd;
			s->tc[i].gen++;
			s->tc[i].have = 0;
			s->tc[i].deadline = now_ms() + TCP_CLIENT_IDLE_MS;
			original_dst(s, fd, lfd, &s->tc[i].dst);
			return;
		}
	close(fd);   /* full: the client retries */
}

void sentry_tcp_client(struct sentry *s, struct tclient *c)
{
	ssize_t n = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		sentry_tclient_close(c);
		return;
	}
	if (n < 0)
		return;
	c->have += (size_t)n;
	/* pipelined queries are each on their way; answers go back as they come */
	while (c->fd >= 0 && c->have >= 2) {
		size_t qlen = (size_t)c->buf[0] << 8 | c->buf[1];
		if (qlen > DNS_QUERY_MAX || qlen < DNS_HEADER_LEN) {
			sentry_tclient_close(c);
			return;
		}
		if (c->have < 2 + qlen)
			return;
		const uint8_t *q = c->buf + 2;
		struct dns_question qq;
		uint8_t out[REPLY_MAX];
		size_t olen = 0;
		enum verdict v = classify(s, q, qlen, &qq, out, &olen);
		if (v == V_REPLY)
			tcp_send(c, out, olen);
		else if (v == V_FORWARD)
			query_new(s, q, qlen, &qq, c, -1, NULL, 0);
		if (c->fd < 0)
			return;
		memmove(c->buf, c->buf + 2 + qlen, c->have - 2 - qlen);
		c->have -= 2 + qlen;
		c->deadline = now_ms() + TCP_CLIENT_IDLE_MS;
	}
	if (c->have == sizeof c->buf)
		sentry_tclient_close(c);
}
