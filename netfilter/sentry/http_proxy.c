/* The box's HTTP proxy (http_proxy.h). One epoll set, edge-triggered: each
 * event runs its connection's step until nothing moves. A connection stays
 * here only until it is answered or its server is connected; then it goes
 * to the SNI check's flows (sni_proxy_adopt), which splice it in the kernel:
 * the same hops as a redirected connection, so allowed traffic is no slower.
 *
 *   C_HEAD     the request head, peeked until whole (HTTP_HEAD_MAX), judged
 *   C_RESOLVE  an allowed name: A and AAAA asked of the sentry's own DNS
 *   C_CONNECT  its addresses tried in turn, from a socket the filter judges
 *   C_LINGER   answered (an error, a refusal): what the client still sends
 *              is read and dropped until it closes, so the answer is not
 *              lost to a reset */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dns.h"
#include "http_head.h"
#include "http_proxy.h"
#include "mem_release.h"
#include "sni_policy.h"

#define MAX_ADDRS 16
#define WORDS_MAX 512            /* a refusal's sentence, a hint */
#define ANSWER_MAX 4096          /* the DNS answers the proxy takes (advertised in its OPT) */
#define REFUSAL_PREFIX "agentbox egress policy: "

enum conn_state { C_HEAD, C_RESOLVE, C_CONNECT, C_LINGER };

struct peer {
	int family;
	uint8_t addr[16];
};

struct conn {
	int c, u, dns;              /* the box's socket, the server's, the lookup's */
	enum conn_state st;
	uint64_t deadline;
	struct http_head h;
	char *server_head;          /* HTTP_TARGET_ABSOLUTE: what the server gets */
	size_t server_head_len;
	uint16_t qid[2];            /* A, AAAA */
	bool asking[2];
	bool lookup_failed;         /* SERVFAIL, no such name, a truncated answer */
	char dns_refusal[WORDS_MAX];   /* the sentry's words on a refused answer */
	struct peer addrs[MAX_ADDRS];
	size_t n_addrs, tried;
	int conn_errno;             /* the last connect's failure */
	bool denied_addr;           /* an address a deny entry covers was skipped */
	bool zombie;
	struct conn *prev, *next;
};

struct http_proxy {
	struct http_proxy_params prm;
	int ep;
	struct conn *conns, *zombies;
	size_t n_conns;
	uint8_t *peek;              /* HTTP_HEAD_MAX, mapped while there are connections */
	int listen_tag[2];          /* epoll data for the listeners */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- connections ---- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void conn_end(struct http_proxy *p, struct conn *k)
{
	if (k->zombie)
		return;
	close_fd(&k->c);
	close_fd(&k->u);
	close_fd(&k->dns);
	free(k->server_head);
	k->server_head = NULL;
	if (k->prev)
		k->prev->next = k->next;
	else
		p->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	p->n_conns--;
	k->zombie = true;
	k->next = p->zombies;   /* freed after this batch of events */
	p->zombies = k;
}

static int watch(struct http_proxy *p, struct conn *k, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = k };
	return epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev);
}

static bool map_peek(struct http_proxy *p)
{
	if (p->peek)
		return true;
	void *m = mmap(NULL, HTTP_HEAD_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p->peek = m == MAP_FAILED ? NULL : m;
	return p->peek != NULL;
}

/* ---- answers ---- */

static const char *status_text(int status)
{
	switch (status) {
	case 200: return "Connection established";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	default: return "Gateway Timeout";
	}
}

/* s with every control byte (CR, LF: a status line must stay one line) as '?' */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static size_t json_text(char *out, size_t max, const char *s)
{
	size_t o = 0;
	for (; *s && o + 2 < max; s++) {
		if (*s == '"' || *s == '\\')
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = 0;
	return o;
}

static void linger(struct http_proxy *p, struct conn *k);

/* The answer to the box, then linger: status and its words in the status
 * line (the one part every client shows), the same and the hint in a JSON
 * body's "error" (npm prints it), and for a refusal the header
 * X-Agentbox-Refused: HOST:PORT REASON (curl -v, GIT_CURL_VERBOSE). */
static void answer(struct http_proxy *p, struct conn *k, int status, char *phrase, const char *hint,
		   const char *refused)
{
	one_line(phrase);
	char words[2 * WORDS_MAX + 8], body[4 * WORDS_MAX + 32], tag[DNS_NAME_TEXT + 64] = "";
	snprintf(words, sizeof words, "%s%s%s", phrase, hint && *hint ? "; " : "", hint ? hint : "");
	one_line(words);
	size_t bl = (size_t)snprintf(body, sizeof body, "{\"error\":\"");
	bl += json_text(body + bl, sizeof body - bl - 3, words);
	bl += (size_t)snprintf(body + bl, sizeof body - bl, "\"}\n");
	if (refused)
		snprintf(tag, sizeof tag, "X-Agentbox-Refused: %s%s%s:%u %s\r\n", k->h.family == AF_INET6 ? "[" : "",
			 k->h.host, k->h.family == AF_INET6 ? "]" : "", k->h.port, refused);
	char msg[sizeof body + sizeof words + sizeof tag + 256];
	int n = snprintf(msg, sizeof msg,
			 "HTTP/1.1 %d %s (%s)\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s",
			 status, status_text(status), phrase, tag, bl, body);
	if (n > 0)
		(void)send(k->c, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)shutdown(k->c, SHUT_WR);
	close_fd(&k->u);
	close_fd(&k->dns);
	k->st = C_LINGER;
	k->deadline = now_ms() + HTTP_PROXY_LINGER_MS;
	linger(p, k);
}

/* A refusal the policy decided: the caller logs it and words it. */
static void refuse(struct http_proxy *p, struct conn *k, const char *code, int family, const uint8_t *addr)
{
	struct http_refusal r = { .code = code, .name = k->h.family ? NULL : k->h.host, .family = family,
				  .addr = addr, .port = k->h.port };
	char phrase[WORDS_MAX], hint[WORDS_MAX];
	phrase[0] = hint[0] = 0;
	p->prm.refused(p->prm.ctx, &r, phrase, sizeof phrase, hint, sizeof hint);
	answer(p, k, 403, phrase, hint, code);
}

/* What is not the policy's doing, in words (status 4xx for the client's
 * mistakes, 5xx for outages: clients retry those, rightly) */
static void fail(struct http_proxy *p, struct conn *k, int status, const char *fmt, const char *arg)
{
	char phrase[WORDS_MAX] = "agentbox egress proxy: ";
	size_t o = strlen(phrase);
	snprintf(phrase + o, sizeof phrase - o, fmt, arg);
	answer(p, k, status, phrase, NULL, NULL);
}

static void linger(struct http_proxy *p, struct conn *k)
{
	for (int i = 0; i < 64; i++) {
		char sink[2048];
		ssize_t n = recv(k->c, sink, sizeof sink, MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		break;
	}
	conn_end(p, k);
}

/* ---- connecting ---- */

static void add_peer(struct conn *k, int family, const uint8_t *addr)
{
	size_t len = family == AF_INET ? 4 : 16;
	for (size_t i = 0; i < k->n_addrs; i++)
		if (k->addrs[i].family == family && memcmp(k->addrs[i].addr, addr, len) == 0)
			return;
	if (k->n_addrs == MAX_ADDRS)
		return;
	k->addrs[k->n_addrs].family = family;
	memcpy(k->addrs[k->n_addrs].addr, addr, len);
	k->n_addrs++;
}

static socklen_t peer_sockaddr(const struct peer *pe, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (pe->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, pe->addr, 4);
		return sizeof *in;
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	memcpy(&in6->sin6_addr, pe->addr, 16);
	return sizeof *in6;
}

/* The next address not tried, connecting; none left: the answer says why. */
static void connect_next(struct http_proxy *p, struct conn *k)
{
	while (k->tried < k->n_addrs) {
		const struct peer *pe = &k->addrs[k->tried++];
		/* an allowed name whose answer holds an address a deny entry covers:
		 * the filter would reset it; said here, as the policy's */
		if (sni_addr_verdict(p->prm.policy, pe->family, pe->addr, k->h.port) == EGRESS_NAME_DENY) {
			k->denied_addr = true;
			continue;
		}
		int u = p->prm.upstream_socket(p->prm.ctx, pe->family);
		if (u < 0) {
			k->conn_errno = -u;
			continue;
		}
		(void)fcntl(u, F_SETFL, O_NONBLOCK);
		(void)fcntl(u, F_SETFD, FD_CLOEXEC);
		int one = 1;
		(void)setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct sockaddr_storage ss;
		socklen_t sl = peer_sockaddr(pe, k->h.port, &ss);
		if ((connect(u, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) || watch(p, k, u) < 0) {
			k->conn_errno = errno;
			close(u);
			continue;
		}
		k->u = u;
		k->st = C_CONNECT;
		k->deadline = now_ms() + HTTP_PROXY_CONNECT_MS;
		return;
	}
	const struct peer *last = k->tried ? &k->addrs[k->tried - 1] : NULL;
	if (k->denied_addr && !k->conn_errno && last)
		refuse(p, k, "denied", last->family, last->addr);
	else if (k->conn_errno == ETIMEDOUT)
		fail(p, k, 504, "no answer from %s in time", k->h.host);
	else {
		char why[DNS_NAME_TEXT + 128];
		snprintf(why, sizeof why, "%s port %u: %s", k->h.host, k->h.port,
			 k->conn_errno ? strerror(k->conn_errno) : "no address");
		fail(p, k, 502, "could not connect to %s", why);
	}
}

/* The head off the box's socket (it was only peeked): the server must never
 * see it, nor the box's next bytes miss it. */
static bool consume_head(struct http_proxy *p, struct conn *k)
{
	for (size_t left = k->h.len; left;) {
		ssize_t n = recv(k->c, p->peek, left < HTTP_HEAD_MAX ? left : HTTP_HEAD_MAX, MSG_DONTWAIT);
		if (n <= 0)
			return false;
		left -= (size_t)n;
	}
	return true;
}

static bool send_all(int fd, const void *b, size_t n)
{
	return send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n;
}

/* Connected: the tunnel's 200 (or the request to the server), and both
 * sockets to the SNI check's flows. */
static void hand_over(struct http_proxy *p, struct conn *k)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	bool tunnel = k->h.target == HTTP_TARGET_CONNECT;
	struct sni_proxy_adoptee a = {
		.c = k->c,
		.u = k->u,
		/* the redirect sends TCP/443 to the SNI check: a tunnel there gets it too */
		.hello = tunnel && k->h.port == 443,
		.c_limit = tunnel || k->h.chunked ? UINT64_MAX : k->h.has_length ? k->h.length : 0,
	};
	a.dst_len = peer_sockaddr(&k->addrs[k->tried - 1], k->h.port, &a.dst);
	if (!map_peek(p) || !consume_head(p, k) ||
	    !(tunnel ? send_all(k->c, established, sizeof established - 1)
		     : send_all(k->u, k->server_head, k->server_head_len))) {
		conn_end(p, k);
		return;
	}
	(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, k->c, NULL);
	(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, k->u, NULL);
	k->c = k->u = -1;   /* the flow's now */
	if (sni_proxy_adopt(p->prm.flows, &a) == 0 && !a.hello && p->prm.passed) {
		const struct peer *pe = &k->addrs[k->tried - 1];
		p->prm.passed(p->prm.ctx, k->h.family ? NULL : k->h.host, pe->family, pe->addr, k->h.port);
	}
	conn_end(p, k);
}

static void check_connect(struct http_proxy *p, struct conn *k)
{
	int e = 0;
	socklen_t l = sizeof e;
	if (getsockopt(k->u, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	if (e) {
		k->conn_errno = e;
		close_fd(&k->u);
		connect_next(p, k);
		return;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (getpeername(k->u, (struct sockaddr *)&ss, &sl) == 0)
		hand_over(p, k);
}

/* ---- the name, asked of the sentry ---- */

static bool send_query(struct conn *k, int i, uint16_t type)
{
	uint8_t q[DNS_HEADER_LEN + DNS_NAME_TEXT + 32];
	size_t n = dns_build_query_edns(k->qid[i], k->h.host, type, ANSWER_MAX, q, sizeof q);
	return n && send(k->dns, q, n, MSG_DONTWAIT) == (ssize_t)n;
}

/* A and AAAA, over UDP from a socket connected to the sentry (only its
 * answers reach it), with random ids, with EDNS so a refusal says why */
static void ask(struct http_proxy *p, struct conn *k)
{
	if (!p->prm.dns_port) {
		fail(p, k, 502, "the box has no resolver to look up %s", k->h.host);
		return;
	}
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(p->prm.dns_port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	k->dns = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (k->dns < 0 || connect(k->dns, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    getrandom(k->qid, sizeof k->qid, 0) != (ssize_t)sizeof k->qid || watch(p, k, k->dns) < 0 ||
	    !send_query(k, 0, DNS_TYPE_A) || !send_query(k, 1, DNS_TYPE_AAAA)) {
		fail(p, k, 502, "could not look up %s", k->h.host);
		return;
	}
	k->asking[0] = k->asking[1] = true;
	k->st = C_RESOLVE;
	k->deadline = now_ms() + HTTP_PROXY_RESOLVE_MS;
}

/* One answer: its addresses, or why there are none */
static void take_answer(struct conn *k, const uint8_t *msg, size_t len)
{
	struct dns_header hd;
	if (dns_parse_header(msg, len, &hd) < 0 || !(hd.flags & DNS_FLAG_QR))
		return;
	int i = k->asking[0] && hd.id == k->qid[0] ? 0 : k->asking[1] && hd.id == k->qid[1] ? 1 : -1;
	if (i < 0)
		return;
	struct dns_answer *a = malloc(sizeof *a);
	bool mine = a && dns_parse_answer(msg, len, a) == 0 && strcmp(a->q.name, k->h.host) == 0 &&
		    a->q.type == (i == 0 ? DNS_TYPE_A : DNS_TYPE_AAAA);
	if (a && !mine) {
		free(a);
		return;   /* not this question's answer */
	}
	k->asking[i] = false;
	int rcode = DNS_RCODE(hd.flags);
	uint16_t ede = 0;
	char text[WORDS_MAX];
	if (!a || (hd.flags & DNS_FLAG_TC))
		k->lookup_failed = true;
	else if (rcode == DNS_RCODE_NOERROR)
		for (size_t n = 0; n < a->n_addrs; n++)
			add_peer(k, a->addrs[n].family, a->addrs[n].addr);
	else if (rcode == DNS_RCODE_NXDOMAIN && dns_answer_ede(msg, len, &ede, text, sizeof text) == 0 &&
		 strncmp(text, REFUSAL_PREFIX, sizeof REFUSAL_PREFIX - 1) == 0)
		snprintf(k->dns_refusal, sizeof k->dns_refusal, "%s", text);   /* the sentry's: logged there */
	else
		k->lookup_failed = true;
	free(a);
}

static void read_answers(struct http_proxy *p, struct conn *k)
{
	uint8_t msg[ANSWER_MAX];
	while (k->asking[0] || k->asking[1]) {
		ssize_t n = recv(k->dns, msg, sizeof msg, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* nothing listens there (ICMP port unreachable) */
			k->asking[0] = k->asking[1] = false;
			k->lookup_failed = true;
			break;
		}
		take_answer(k, msg, (size_t)n);
	}
	close_fd(&k->dns);   /* both answered */
	if (k->dns_refusal[0]) {
		/* a refused answer refuses the name, whatever the other one held */
		answer(p, k, 403, k->dns_refusal, NULL, "dns");
		return;
	}
	if (k->n_addrs) {
		connect_next(p, k);
		return;
	}
	fail(p, k, 502, k->lookup_failed ? "the lookup of %s failed" : "%s has no address", k->h.host);
}

/* ---- the request ---- */

static bool loopback(int family, const uint8_t *a)
{
	return family == AF_INET ? a[0] == 127 : IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)a);
}

/* The policy's verdict on where the request goes, then on its way. */
static void judge(struct http_proxy *p, struct conn *k)
{
	const struct http_head *h = &k->h;
	if (h->target == HTTP_TARGET_NOT_PROXY) {
		char words[] = "agentbox egress proxy: only CONNECT host:port and absolute http:// URLs are served here";
		answer(p, k, 400, words, "https:// URLs go through CONNECT, as the usual proxy variables do", NULL);
		return;
	}
	enum egress_name_verdict v;
	if (h->port == 53 || h->port == 853)
		v = EGRESS_NAME_NONE;
	else if (h->family)
		v = loopback(h->family, h->addr) ? EGRESS_NAME_NONE : sni_addr_verdict(p->prm.policy, h->family, h->addr, h->port);
	else
		v = sni_name_verdict(p->prm.policy, h->host, h->port);
	if (v != EGRESS_NAME_ALLOW) {
		/* (learn mode refuses a literal only where its filter would) */
		const char *code = h->port == 53 || h->port == 853 ? "dns-bypass"
				   : h->family && loopback(h->family, h->addr) ? "loopback"
				   : v == EGRESS_NAME_DENY ? "denied"
				   : p->prm.policy->learn && h->family ? "internal-address" : "not-allowed";
		refuse(p, k, code, h->family, h->family ? h->addr : NULL);
		return;
	}
	if (!h->family) {
		ask(p, k);
		return;
	}
	add_peer(k, h->family, h->addr);
	connect_next(p, k);
}

static void read_head(struct http_proxy *p, struct conn *k)
{
	if (!map_peek(p)) {
		conn_end(p, k);
		return;
	}
	ssize_t n = recv(k->c, p->peek, HTTP_HEAD_MAX, MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_end(p, k);   /* gone before its head */
		return;
	}
	enum http_head_status s = http_head_parse(p->peek, (size_t)n, &k->h);
	if (s == HTTP_HEAD_MORE)
		return;
	if (s != HTTP_HEAD_DONE) {
		char words[] = "agentbox egress proxy: not an HTTP/1.x proxy request (or its head is over 8 KiB)";
		answer(p, k, s == HTTP_HEAD_TOO_BIG ? 431 : 400, words, NULL, NULL);
		return;
	}
	if (k->h.target == HTTP_TARGET_ABSOLUTE) {
		char out[HTTP_SERVER_HEAD_MAX];
		size_t len = http_head_for_server(p->peek, &k->h, out, sizeof out);
		k->server_head = len ? malloc(len) : NULL;
		if (!k->server_head) {
			conn_end(p, k);
			return;
		}
		memcpy(k->server_head, out, len);
		k->server_head_len = len;
	}
	judge(p, k);
}

static void step(struct http_proxy *p, struct conn *k)
{
	switch (k->st) {
	case C_HEAD:
		read_head(p, k);
		break;
	case C_RESOLVE:
		read_answers(p, k);
		break;
	case C_CONNECT:
		check_connect(p, k);
		break;
	case C_LINGER:
		linger(p, k);
		break;
	}
}

static void accept_all(struct http_proxy *p, int lfd)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable (agentbox egress proxy: too many connections "
				   "at once)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0)
			return;
		struct conn *k = p->n_conns < HTTP_PROXY_MAX_CONNS ? calloc(1, sizeof *k) : NULL;
		if (!k) {
			(void)send(c, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(c);
			continue;
		}
		k->c = c;
		k->u = k->dns = -1;
		int one = 1;
		(void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		k->next = p->conns;
		if (p->conns)
			p->conns->prev = k;
		p->conns = k;
		p->n_conns++;
		k->st = C_HEAD;
		k->deadline = now_ms() + HTTP_PROXY_HEAD_MS;
		if (watch(p, k, c) < 0)
			conn_end(p, k);
	}
}

/* A deadline passed: a head too slow is dropped; a lookup or a connect too
 * slow is an outage (504); a lingering client is let go. */
static void expire(struct http_proxy *p, struct conn *k)
{
	switch (k->st) {
	case C_HEAD:
	case C_LINGER:
		conn_end(p, k);
		break;
	case C_RESOLVE:
		fail(p, k, 504, "the lookup of %s took too long", k->h.host);
		break;
	case C_CONNECT:
		close_fd(&k->u);
		k->conn_errno = ETIMEDOUT;
		connect_next(p, k);
		break;
	}
}

static void free_zombies(struct http_proxy *p)
{
	while (p->zombies) {
		struct conn *z = p->zombies;
		p->zombies = z->next;
		free(z);
	}
}

int http_proxy_run(struct http_proxy *p)
{
	struct epoll_event evs[32];
	int n;
	while ((n = epoll_wait(p->ep, evs, 32, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			void *d = evs[i].data.ptr;
			if (d == &p->listen_tag[0] || d == &p->listen_tag[1])
				accept_all(p, p->prm.listen_fd[d == &p->listen_tag[0] ? 0 : 1]);
			else if (!((struct conn *)d)->zombie)
				step(p, d);
		}
		free_zombies(p);
		if (n < 32)
			break;
	}
	uint64_t now = now_ms(), next = UINT64_MAX;
	for (struct conn *k = p->conns, *nx; k; k = nx) {
		nx = k->next;
		if (k->deadline <= now)
			expire(p, k);
		else if (k->deadline < next)
			next = k->deadline;
	}
	/* (a connect given up on may have tried the next address: its deadline) */
	for (struct conn *k = p->conns; k; k = k->next)
		if (k->deadline < next)
			next = k->deadline;
	free_zombies(p);
	if (!p->conns && p->peek) {
		munmap(p->peek, HTTP_HEAD_MAX);   /* quiet: nothing of ours stays resident */
		p->peek = NULL;
	}
	return next == UINT64_MAX ? -1 : next > now ? (int)(next - now) : 0;
}

int http_proxy_new(const struct http_proxy_params *prm, struct http_proxy **ret, struct ab_err *err)
{
	struct http_proxy *p = calloc(1, sizeof *p);
	if (!p)
		return ab_error(err, ENOMEM, "HTTP proxy");
	p->prm = *prm;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0) {
		int e = errno;
		free(p);
		return ab_error(err, e, "HTTP proxy: epoll");
	}
	for (int i = 0; i < 2; i++) {
		if (prm->listen_fd[i] < 0)
			continue;
		(void)fcntl(prm->listen_fd[i], F_SETFL, O_NONBLOCK);
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &p->listen_tag[i] };
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, prm->listen_fd[i], &ev) < 0) {
			int e = errno;
			http_proxy_free(p);
			return ab_error(err, e, "HTTP proxy: epoll");
		}
	}
	*ret = p;
	return 0;
}

IDLE_TEXT int http_proxy_fd(const struct http_proxy *p)
{
	return p->ep;
}

void http_proxy_free(struct http_proxy *p)
{
	if (!p)
		return;
	while (p->conns)
		conn_end(p, p->conns);
	free_zombies(p);
	if (p->peek)
		munmap(p->peek, HTTP_HEAD_MAX);
	if (p->ep >= 0)
		close(p->ep);
	free(p);
}
