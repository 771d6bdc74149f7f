/* Connection pairs: the two handshakes (the box's paused at its ClientHello
 * until the real server has answered, so the box gets the ALPN the server
 * chose and nothing is said to the box before the server is verified), then
 * the event pump that moves plaintext through the HTTP relays. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <time.h>

#include "buf.h"
#include "ctl.h"
#include "h1.h"
#include "h2.h"
#include "log.h"
#include "pair.h"
#include "records.h"
#include "relay.h"
#include "tls.h"
#include "util.h"

#define MAX_PAIRS 512
#define HANDSHAKE_MS 15000
#define IDLE_MS (15 * 60 * 1000)

static struct gw_pair *pairs;
static struct gw_pair *zombies;   /* ended while events for them may still be queued */
static size_t n_pairs;
static struct gw_tls *tls;

static uint64_t gw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- pairs ---- */

/* Close a pair's sockets now; its memory goes at the next tick, after every
 * event of the current batch (some may name it) has been seen. */
static void pair_free(struct gw_pair *p)
{
	if (p->zombie)
		return;
	if (p->ps)
		p->proto == GW_H2 ? gw_h2_free(p) : gw_h1_free(p);
	struct gw_end *ends[2] = {&p->c, &p->u};
	for (int i = 0; i < 2; i++) {
		SSL_free(ends[i]->ssl);
		ends[i]->ssl = NULL;
		if (ends[i]->fd >= 0) {
			(void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, ends[i]->fd, NULL);
			close(ends[i]->fd);
		}
		ends[i]->fd = -1;
		gw_buf_free(&ends[i]->in);
		gw_buf_free(&ends[i]->out);
	}
	if (p->prev)
		p->prev->next = p->next;
	else
		pairs = p->next;
	if (p->next)
		p->next->prev = p->prev;
	n_pairs--;
	p->zombie = true;
	p->prev = NULL;
	p->next = zombies;
	zombies = p;
}

static void reset(int fd)
{
	struct linger l = {1, 0};
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

/* End the pair now (an error, a refusal): both sockets reset */
static void gw_pair_fail(struct gw_pair *p, const char *why)
{
	if (p->dead)
		return;
	log_debug("gateway: %s: %s", p->host, why);
	reset(p->c.fd);
	reset(p->u.fd);
	p->dead = true;
}

/* ---- TLS I/O on one end ---- */

/* >0 bytes read, 0 nothing now, -1 the pair must end */
static int end_read(struct gw_end *e)
{
	size_t room = gw_buf_room(&e->in);
	if (e->eof || room == 0)
		return 0;
	if (!e->in.b) {
		e->in.b = xmalloc(GW_BUF_SOFT);
		e->in.cap = GW_BUF_SOFT;
	}
	if (e->in.off + e->in.len + room > e->in.cap) {
		/* the data to the front: the room is then at its end */
		memmove(e->in.b, gw_buf_data(&e->in), e->in.len);
		e->in.off = 0;
	}
	if (e->in.len + room > e->in.cap)
		room = e->in.cap - e->in.len;
	if (room == 0)
		return 0;
	e->want_read = e->want_write = false;
	size_t got = 0;
	int r = SSL_read_ex(e->ssl, e->in.b + e->in.off + e->in.len, room, &got);
	if (r == 1) {
		e->in.len += got;
		return (int)got;
	}
	switch (SSL_get_error(e->ssl, r)) {
	case SSL_ERROR_WANT_READ: e->want_read = true; return 0;
	case SSL_ERROR_WANT_WRITE: e->want_write = true; return 0;
	case SSL_ERROR_ZERO_RETURN: e->eof = true; return 1;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		if (errno == 0 || errno == ECONNRESET || errno == EPIPE) {
			e->eof = true;   /* a close without close_notify: the end of what it sends */
			return 1;
		}
		return -1;
	default:
		/* OpenSSL 3 says the same close this way: what the response scan
		 * holds back must still go on, not die with a reset */
		if (ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			ERR_clear_error();
			e->eof = true;
			return 1;
		}
		ERR_clear_error();
		return -1;
	}
}

static int end_write(struct gw_end *e)
{
	if (e->out.len == 0 || e->shut)
		return 0;
	e->want_read = e->want_write = false;
	size_t put = 0;
	int r = SSL_write_ex(e->ssl, gw_buf_data(&e->out), e->out.len, &put);
	if (r == 1) {
		gw_buf_drop(&e->out, put);
		return (int)put;
	}
	switch (SSL_get_error(e->ssl, r)) {
	case SSL_ERROR_WANT_READ: e->want_read = true; return 0;
	case SSL_ERROR_WANT_WRITE: e->want_write = true; return 0;
	default:
		ERR_clear_error();
		return -1;
	}
}

static void end_shutdown(struct gw_end *e)
{
	if (e->shut)
		return;
	e->shut = true;
	(void)SSL_shutdown(e->ssl);   /* close_notify, best effort */
	ERR_clear_error();
	(void)shutdown(e->fd, SHUT_WR);
}

/* ---- epoll interest ---- */

static void interest(struct gw_pair *p, struct gw_end *e, uint32_t *cur, bool connecting)
{
	if (e->fd < 0)
		return;   /* the server's end, closed when it could not be reached */
	uint32_t want = 0;
	if (connecting)
		want = EPOLLOUT;
	else {
		if (e->want_read || (!e->eof && gw_buf_room(&e->in) && !e->want_write))
			want |= EPOLLIN;
		if (e->want_write || (e->out.len && !e->shut))
			want |= EPOLLOUT;
	}
	if (want == *cur)
		return;
	struct epoll_event ev = {.events = want, .data.ptr = p};
	(void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, e->fd, &ev);
	*cur = want;
}

/* ---- handshakes ---- */

/* The box's ClientHello: keep its ALPN offer (h2 and http/1.1 only, in its
 * order) and wait until the server has answered; then its leaf. */
static int client_hello_cb(SSL *ssl, int *alert, void *arg)
{
	struct gw_pair *p = SSL_get_app_data(ssl);
	(void)arg;
	if (!p->hello_seen) {
		p->hello_seen = true;
		const unsigned char *ext;
		size_t len;
		if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &ext, &len) == 1 &&
		    len >= 2 && (size_t)(ext[0] << 8 | ext[1]) == len - 2) {
			for (size_t i = 2; i < len;) {
				size_t n = ext[i];
				if (i + 1 + n > len)
					break;
				bool h2 = n == 2 && memcmp(ext + i + 1, "h2", 2) == 0;
				bool h1 = n == 8 && memcmp(ext + i + 1, "http/1.1", 8) == 0;
				if ((h2 || h1) && p->alpn_offer_len + 1 + n <= sizeof p->alpn_offer) {
					memcpy(p->alpn_offer + p->alpn_offer_len, ext + i, 1 + n);
					p->alpn_offer_len += 1 + n;
				}
				i += 1 + n;
			}
		}
	}
	if (!p->up_done && !p->up_failed)
		return SSL_CLIENT_HELLO_RETRY;
	if (gw_tls_use_leaf(tls, ssl, p->host) < 0) {
		*alert = SSL_AD_INTERNAL_ERROR;
		return SSL_CLIENT_HELLO_ERROR;
	}
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* The server's choice, if the box offered it; nothing when the server chose nothing */
static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
		   unsigned int inlen, void *arg)
{
	struct gw_pair *p = SSL_get_app_data(ssl);
	(void)arg;
	const unsigned char *want = p->up_alpn;
	unsigned want_len = p->up_alpn_len;
	if (!want_len) {
		want = (const unsigned char *)"http/1.1";
		want_len = 8;
	}
	for (unsigned i = 0; i < inlen;) {
		unsigned n = in[i];
		if (i + 1 + n > inlen)
			break;
		if (n == want_len && memcmp(in + i + 1, want, n) == 0) {
			*out = in + i + 1;
			*outlen = (unsigned char)n;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static void log_refusal(struct gw_pair *p, const char *reason, const char *detail)
{
	gw_log_deny(p->host, &p->dst, reason, detail);
}

static int step_handshakes(struct gw_pair *p, bool *progress);

/* The server is out of reach: its end closes, the box's handshake goes on,
 * and its first request gets a 502 that says why and what to do (h1.c),
 * where a reset told it nothing. Logged as reason (detail). */
static int upstream_failed(struct gw_pair *p, const char *reason, const char *detail, const char *text,
			   bool *progress)
{
	log_refusal(p, reason, detail);
	snprintf(p->up_failure, sizeof p->up_failure, "%.*s", (int)sizeof p->up_failure - 1, text);
	p->up_failed = p->connected = true;
	SSL_free(p->u.ssl);
	p->u.ssl = NULL;
	if (p->u.fd >= 0) {
		(void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, p->u.fd, NULL);
		reset(p->u.fd);
		close(p->u.fd);
		p->u.fd = -1;
	}
	p->u.eof = p->u.shut = true;
	*progress = true;
	return step_handshakes(p, progress);
}

static int upstream_unverified(struct gw_pair *p, long v, bool *progress)
{
	char detail[128], text[sizeof p->up_failure + 256];
	const char *why = X509_verify_cert_error_string(v);
	snprintf(detail, sizeof detail, "%s; a private CA goes in upstream_ca (agentbox-kit(5))", why);
	snprintf(text, sizeof text,
		 "the certificate of %s could not be verified (%s). If it is a private server, give its certificate "
		 "authority to upstream_ca in the kit (gateway.upstream_ca in /etc/agentbox/config.yaml for an "
		 "engine's container): see agentbox-kit(5)",
		 p->host, why);
	return upstream_failed(p, "upstream-unverified", detail, text, progress);
}

static int upstream_unreachable(struct gw_pair *p, const char *reason, const char *why, bool *progress)
{
	char text[sizeof p->up_failure + 256], addr[INET6_ADDRSTRLEN] = "?";
	const void *a = p->dst.ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)&p->dst)->sin_addr
						     : (const void *)&((struct sockaddr_in6 *)&p->dst)->sin6_addr;
	inet_ntop(p->dst.ss_family, a, addr, sizeof addr);
	snprintf(text, sizeof text, "%s (%s) could not be reached: %s", p->host, addr, why);
	return upstream_failed(p, reason, why, text, progress);
}

/* 1 done, 0 waiting, -1 failed */
static int handshake(struct gw_end *e)
{
	e->want_read = e->want_write = false;
	int r = SSL_do_handshake(e->ssl);
	if (r == 1)
		return 1;
	switch (SSL_get_error(e->ssl, r)) {
	case SSL_ERROR_WANT_READ: e->want_read = true; return 0;
	case SSL_ERROR_WANT_WRITE: e->want_write = true; return 0;
	case SSL_ERROR_WANT_CLIENT_HELLO_CB: return 0;
	default: return -1;
	}
}

static int step_handshakes(struct gw_pair *p, bool *progress)
{
	if (!p->hello_seen || !p->box_done) {
		int r = handshake(&p->c);
		if (r < 0 && !p->up_done)
			return gw_pair_fail(p, "the box's TLS handshake failed"), -1;
		if (r < 0) {
			log_refusal(p, "box-handshake", gw_tls_error());
			return gw_pair_fail(p, "the box's TLS handshake failed"), -1;
		}
		if (r == 1) {
			p->box_done = true;
			*progress = true;
		}
	}
	if (!p->connected) {
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (getsockopt(p->u.fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			if (soerr == EINPROGRESS || soerr == EALREADY)
				return 0;
			return upstream_unreachable(p, "upstream-connect", strerror(soerr ? soerr : errno), progress);
		}
		struct sockaddr_storage ss;
		socklen_t len = sizeof ss;
		if (getpeername(p->u.fd, (struct sockaddr *)&ss, &len) < 0)
			return 0;   /* still connecting */
		p->connected = true;
		*progress = true;
	}
	if (p->connected && p->hello_seen && !p->u.ssl && !p->up_failed) {
		p->u.ssl = gw_tls_new_upstream_side(tls, p->host, p->alpn_offer, p->alpn_offer_len);
		if (!p->u.ssl || SSL_set_fd(p->u.ssl, p->u.fd) != 1)
			return gw_pair_fail(p, "upstream TLS"), -1;
		SSL_set_connect_state(p->u.ssl);
	}
	if (p->u.ssl && !p->up_done) {
		int r = handshake(&p->u);
		if (r < 0) {
			long v = SSL_get_verify_result(p->u.ssl);
			if (v != X509_V_OK)
				return upstream_unverified(p, v, progress);
			return upstream_unreachable(p, "upstream-handshake", gw_tls_error(), progress);
		}
		if (r == 0)
			return 0;
		const unsigned char *a;
		unsigned alen;
		SSL_get0_alpn_selected(p->u.ssl, &a, &alen);
		if (alen <= sizeof p->up_alpn) {
			memcpy(p->up_alpn, a, alen);
			p->up_alpn_len = alen;
		}
		p->up_done = true;
		*progress = true;
		return step_handshakes(p, progress);   /* the box's hello goes on */
	}
	if (p->box_done && (p->up_done || p->up_failed)) {
		/* the box asked the sentry for this name, and OpenSSL read the same */
		const char *sn = SSL_get_servername(p->c.ssl, TLSEXT_NAMETYPE_host_name);
		if (!sn || strcasecmp(sn, p->host) != 0)
			return gw_pair_fail(p, "the server name changed between the sentry and the gateway"), -1;
		const unsigned char *a;
		unsigned alen;
		SSL_get0_alpn_selected(p->c.ssl, &a, &alen);
		p->proto = alen == 2 && memcmp(a, "h2", 2) == 0 && !p->up_failed ? GW_H2 : GW_H1;
		if ((p->proto == GW_H2 ? gw_h2_init(p) : gw_h1_init(p)) < 0)
			return gw_pair_fail(p, "relay"), -1;
		p->deadline_ms = gw_now_ms() + IDLE_MS;
		return 1;
	}
	return 0;
}

/* ---- the pump ---- */

/* A pair that is over: an error, or both ends closed with nothing left to say */
static bool finished(const struct gw_pair *p)
{
	return p->dead || ((p->c.eof || p->c.shut) && (p->u.eof || p->u.shut) && !p->c.out.len && !p->u.out.len);
}

static void pump(struct gw_pair *p)
{
	bool progress = true;
	for (int rounds = 0; progress && !p->dead && rounds < 64; rounds++) {
		progress = false;
		if (!p->ps) {
			if (step_handshakes(p, &progress) <= 0)
				continue;
			progress = true;
		}
		int rc = end_read(&p->c), ru = end_read(&p->u);
		if (rc < 0 || ru < 0) {
			gw_pair_fail(p, "read");
			break;
		}
		progress |= rc > 0 || ru > 0;
		if ((p->proto == GW_H2 ? gw_h2_process(p, &progress) : gw_h1_process(p, &progress)) < 0) {
			gw_pair_fail(p, "relay");
			break;
		}
		int wc = end_write(&p->c), wu = end_write(&p->u);
		if (wc < 0 || wu < 0) {
			gw_pair_fail(p, "write");
			break;
		}
		progress |= wc > 0 || wu > 0;
		/* an end that has said all it will, all of it passed on: the other
		 * side hears the end too */
		if (p->c.eof && !p->c.in.len && !p->u.out.len && !p->u.shut) {
			end_shutdown(&p->u);
			progress = true;
		}
		/* (a server out of reach has said nothing: the box hears why first) */
		if (p->u.eof && !p->u.in.len && !p->c.out.len && !p->c.shut && !(p->up_failed && !p->c.eof)) {
			end_shutdown(&p->c);
			progress = true;
		}
		if (progress && p->ps)
			p->deadline_ms = gw_now_ms() + IDLE_MS;
	}
	if (finished(p)) {
		pair_free(p);
		return;
	}
	interest(p, &p->c, &p->ev_c, false);
	interest(p, &p->u, &p->ev_u, !p->connected);
}

void gw_relay_event(struct gw_pair *p, uint32_t events)
{
	(void)events;
	if (!p->zombie)
		pump(p);
}

int gw_relay_tick(void)
{
	while (zombies) {
		struct gw_pair *z = zombies;
		zombies = z->next;
		free(z);
	}
	uint64_t now = gw_now_ms(), next = UINT64_MAX;
	for (struct gw_pair *p = pairs, *n; p; p = n) {
		n = p->next;
		if (p->deadline_ms <= now) {
			if (!p->ps)
				log_refusal(p, "handshake-timeout", "no handshake within 15 s");
			gw_pair_fail(p, "timeout");
			pair_free(p);
			continue;
		}
		if (p->deadline_ms < next)
			next = p->deadline_ms;
	}
	return next == UINT64_MAX ? -1 : (int)(next - now);
}

void gw_relay_init(struct gw_tls *t)
{
	tls = t;
	gw_tls_box_callbacks(t, client_hello_cb, alpn_cb);
}

int gw_relay_start(int epfd, const struct gw_handoff *h, int client_fd, int upstream_fd)
{
	if (n_pairs >= MAX_PAIRS) {
		gw_log_deny(h->sni, NULL, "gateway-busy", "");
		reset(client_fd);
		close(client_fd);
		close(upstream_fd);
		return -1;
	}
	struct gw_pair *p = xcalloc(1, sizeof *p);
	p->epfd = epfd;
	p->c.fd = client_fd;
	p->u.fd = upstream_fd;
	snprintf(p->host, sizeof p->host, "%s", h->sni);
	p->n_creds = gw_creds_for(p->host, p->creds);
	p->deadline_ms = gw_now_ms() + HANDSHAKE_MS;
	p->next = pairs;
	if (pairs)
		pairs->prev = p;
	pairs = p;
	n_pairs++;
	if (h->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&p->dst;
		in->sin_family = AF_INET;
		in->sin_port = htons(h->port);
		memcpy(&in->sin_addr, h->addr, 4);
		p->dst_len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&p->dst;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(h->port);
		memcpy(&in6->sin6_addr, h->addr, 16);
		p->dst_len = sizeof *in6;
	}
	if (p->n_creds == 0) {
		/* the sentry sends only credential hosts; anything else is a bug */
		gw_pair_fail(p, "no credential for this host");
		pair_free(p);
		return -1;
	}
	p->c.ssl = gw_tls_new_client_side(tls);
	if (!p->c.ssl || SSL_set_fd(p->c.ssl, client_fd) != 1) {
		gw_pair_fail(p, "TLS");
		pair_free(p);
		return -1;
	}
	SSL_set_app_data(p->c.ssl, p);
	SSL_set_accept_state(p->c.ssl);
	int fl = O_NONBLOCK;
	(void)fcntl(client_fd, F_SETFL, fl);
	(void)fcntl(upstream_fd, F_SETFL, fl);
	int one = 1;
	(void)setsockopt(upstream_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	(void)setsockopt(client_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(upstream_fd, (struct sockaddr *)&p->dst, p->dst_len) < 0 && errno != EINPROGRESS) {
		log_refusal(p, "upstream-connect", strerror(errno));
		gw_pair_fail(p, "connect");
		pair_free(p);
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	p->ev_c = EPOLLIN;
	p->ev_u = EPOLLOUT;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, client_fd, &ev) < 0 ||
	    (ev.events = EPOLLOUT, epoll_ctl(epfd, EPOLL_CTL_ADD, upstream_fd, &ev) < 0)) {
		gw_pair_fail(p, "epoll");
		pair_free(p);
		return -1;
	}
	pump(p);
	return 0;
}
