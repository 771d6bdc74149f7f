/* HTTP/2 through the gateway: a server session facing the box and a client
 * session facing the real server (nghttp2 frames, checks and compresses
 * everything), each box stream mapped to one server stream. Request headers
 * are checked for the connection's host and for what they ask of the server
 * (guard.h), and get the credential's header in place of the box's; request
 * bodies pass on as they come. Responses, informational responses and
 * trailers are scanned for the secrets (scan.h) on their way to the box:
 * header blocks whole, DATA as it comes, one scan a stream. Flow control is
 * end to end: a window is only opened again once the other side took the
 * bytes (or the scan holds them, see consume_resp). */
#include <ctype.h>
#include <nghttp2/nghttp2.h>
#include <string.h>

#include "buf.h"
#include "ctl.h"
#include "guard.h"
#include "h2.h"
#include "pair.h"
#include "records.h"
#include "scan.h"
#include "util.h"

#define H2_HEADERS_MAX 256
#define H2_HEAD_BYTES (64u * 1024)
#define H2_STREAMS_MAX 100

struct hfield {
	char *name, *value;
	size_t name_len, value_len;
};

struct hlist {
	struct hfield v[H2_HEADERS_MAX];
	size_t n, bytes;
	bool bad;
};

struct stream {
	int32_t c_id, u_id;
	struct hlist req, resp;         /* headers being collected */
	struct hlist req_trailers, resp_trailers;
	bool has_req_trailers, has_resp_trailers;
	struct gw_buf req_body, resp_body;
	bool req_end, resp_end;         /* END_STREAM seen from the box / the server */
	bool c_closed, u_closed;
	bool response_sent;
	bool head_request;              /* no body comes, whatever the headers say */
	bool resp_refused;              /* the gateway answered instead: the server's DATA is dropped */
	struct gw_scan rscan;           /* the response's DATA, scanned */
	uint64_t resp_received, resp_delivered, resp_consumed;   /* DATA bytes: flow control */
	unsigned logged;                /* rscan.hits already logged */
	struct stream *next;
};

struct h2 {
	struct gw_pair *p;
	nghttp2_session *cs, *us;       /* facing the box, facing the server */
	struct stream *streams;
	char cred_names[CRED_MAX][CRED_HEADER_NAME_MAX + 1];   /* lowercase */
};

static void hlist_clear(struct hlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		explicit_bzero(l->v[i].value, l->v[i].value_len);
		free(l->v[i].name);
		free(l->v[i].value);
	}
	l->n = l->bytes = 0;
	l->bad = false;
}

static void hlist_add(struct hlist *l, const uint8_t *name, size_t nlen, const uint8_t *value, size_t vlen)
{
	if (l->n == H2_HEADERS_MAX || l->bytes + nlen + vlen > H2_HEAD_BYTES) {
		l->bad = true;
		return;
	}
	struct hfield *f = &l->v[l->n++];
	f->name = xmalloc(nlen + 1);
	f->value = xmalloc(vlen + 1);
	memcpy(f->name, name, nlen);
	memcpy(f->value, value, vlen);
	f->name[nlen] = f->value[vlen] = 0;
	f->name_len = nlen;
	f->value_len = vlen;
	l->bytes += nlen + vlen;
}

static nghttp2_nv nv(const char *name, size_t nlen, const char *value, size_t vlen)
{
	return (nghttp2_nv){ (uint8_t *)name, (uint8_t *)value, nlen, vlen, NGHTTP2_NV_FLAG_NONE };
}

static size_t to_nva(const struct hlist *l, nghttp2_nv *out)
{
	for (size_t i = 0; i < l->n; i++)
		out[i] = nv(l->v[i].name, l->v[i].name_len, l->v[i].value, l->v[i].value_len);
	return l->n;
}

static void stream_free(struct h2 *h, struct stream *s)
{
	for (struct stream **pp = &h->streams; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	hlist_clear(&s->req);
	hlist_clear(&s->resp);
	hlist_clear(&s->req_trailers);
	hlist_clear(&s->resp_trailers);
	gw_scan_free(&s->rscan);
	if (s->req_body.b)
		explicit_bzero(s->req_body.b, s->req_body.cap);
	free(s->req_body.b);
	free(s->resp_body.b);
	free(s);
}

static void stream_maybe_free(struct h2 *h, struct stream *s)
{
	if (s->c_closed && (s->u_closed || s->u_id <= 0))
		stream_free(h, s);
}

/* ---- bodies: read from one side's buffer for the other side's session ---- */

static const struct gw_matcher *matcher(void)
{
	return gw_cfg->unprotected ? NULL : gw_secrets;
}

/* The server may send as much more DATA as the box took, and as the scan
 * holds back: a partial match never waits for a window it keeps shut. */
static void consume_resp(struct h2 *h, struct stream *s)
{
	uint64_t target = s->resp_delivered + gw_scan_held(&s->rscan);
	if (s->u_id > 0 && target > s->resp_consumed) {
		(void)nghttp2_session_consume(h->us, s->u_id, (size_t)(target - s->resp_consumed));
		s->resp_consumed = target;
	}
}

static ssize_t body_read(struct gw_buf *b, bool end, bool *trailers, nghttp2_session *peer, int32_t peer_id,
			 uint8_t *buf, size_t length, uint32_t *flags)
{
	size_t n = b->len < length ? b->len : length;
	if (n)
		memcpy(buf, gw_buf_data(b), n);
	gw_buf_drop(b, n);
	if (n && peer && peer_id > 0)
		(void)nghttp2_session_consume(peer, peer_id, n);   /* the sender may send that much more */
	if (b->len == 0 && end) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (*trailers)
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
		return (ssize_t)n;
	}
	if (n == 0)
		return NGHTTP2_ERR_DEFERRED;
	return (ssize_t)n;
}

static ssize_t req_body_read(nghttp2_session *us, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			     nghttp2_data_source *src, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = src->ptr;
	ssize_t n = body_read(&s->req_body, s->req_end, &s->has_req_trailers, h->cs, s->c_id, buf, length, flags);
	if ((*flags & NGHTTP2_DATA_FLAG_NO_END_STREAM) && s->has_req_trailers) {
		nghttp2_nv nva[H2_HEADERS_MAX];
		(void)nghttp2_submit_trailer(us, id, nva, to_nva(&s->req_trailers, nva));
		s->has_req_trailers = false;
	}
	return n;
}

static ssize_t resp_body_read(nghttp2_session *cs, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			      nghttp2_data_source *src, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = src->ptr;
	ssize_t n = body_read(&s->resp_body, s->resp_end, &s->has_resp_trailers, NULL, 0, buf, length, flags);
	if (n > 0) {
		s->resp_delivered += (uint64_t)n;
		consume_resp(h, s);
	}
	if ((*flags & NGHTTP2_DATA_FLAG_NO_END_STREAM) && s->has_resp_trailers) {
		nghttp2_nv nva[H2_HEADERS_MAX];
		(void)nghttp2_submit_trailer(cs, id, nva, to_nva(&s->resp_trailers, nva));
		s->has_resp_trailers = false;
	}
	return n;
}

/* ---- sending: frames into the ends' buffers ---- */

static ssize_t send_to(struct gw_buf *b, const uint8_t *data, size_t len)
{
	size_t room = gw_buf_room(b);
	if (room == 0)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (len > room)
		len = room;
	gw_buf_put(b, data, len);
	return (ssize_t)len;
}

static ssize_t send_box(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
	(void)s;
	(void)flags;
	return send_to(&((struct h2 *)ud)->p->c.out, data, len);
}

static ssize_t send_server(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
	(void)s;
	(void)flags;
	return send_to(&((struct h2 *)ud)->p->u.out, data, len);
}

/* ---- the box's side ---- */

static int box_begin_headers(nghttp2_session *cs, const nghttp2_frame *f, void *ud)
{
	struct h2 *h = ud;
	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	struct stream *s = nghttp2_session_get_stream_user_data(cs, f->hd.stream_id);
	if (f->headers.cat == NGHTTP2_HCAT_REQUEST && !s) {
		s = xcalloc(1, sizeof *s);
		gw_scan_init(&s->rscan, matcher());
		s->c_id = f->hd.stream_id;
		s->next = h->streams;
		h->streams = s;
		nghttp2_session_set_stream_user_data(cs, f->hd.stream_id, s);
	}
	return 0;
}

static int box_header(nghttp2_session *cs, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		      const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	(void)flags;
	(void)ud;
	struct stream *s = nghttp2_session_get_stream_user_data(cs, f->hd.stream_id);
	if (!s || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (f->headers.cat == NGHTTP2_HCAT_REQUEST)
		hlist_add(&s->req, name, nlen, value, vlen);
	else {
		hlist_add(&s->req_trailers, name, nlen, value, vlen);
		s->has_req_trailers = true;
	}
	return 0;
}

static ssize_t resp_body_read(nghttp2_session *cs, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			      nghttp2_data_source *src, void *ud);

/* The gateway answers instead of the server: status, and text saying why
 * (or nothing); logged as reason (detail). */
static void answer_stream(struct h2 *h, struct stream *s, const char *status, const char *reason, const char *detail,
			  const char *text)
{
	nghttp2_nv nva[] = { nv(":status", 7, status, 3), nv("content-type", 12, "text/plain", 10) };
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = resp_body_read };
	if (text)
		(void)gw_buf_printf(&s->resp_body, "refused by the agentbox credential gateway: %s\n", text);
	s->resp_end = true;
	s->resp_refused = true;
	(void)nghttp2_submit_response(h->cs, s->c_id, nva, text ? 2 : 1, text ? &dp : NULL);
	s->response_sent = true;
	gw_log_deny(h->p->host, &h->p->dst, reason, detail);
}

static void refuse_stream(struct h2 *h, struct stream *s, const char *reason, const char *detail)
{
	answer_stream(h, s, "421", reason, detail, NULL);
}

static bool is_cred_header(const struct h2 *h, const struct hfield *f)
{
	for (size_t k = 0; k < h->p->n_creds; k++)
		if (f->name_len == strlen(h->cred_names[k]) && memcmp(f->name, h->cred_names[k], f->name_len) == 0)
			return true;
	return false;
}

/* TRACE and its kin would give the request back, credential and all */
static bool method_allowed(struct h2 *h, struct stream *s, const char *method)
{
	if (gw_cfg->unprotected)
		return true;
	bool max_forwards = false;
	for (size_t i = 0; i < s->req.n; i++)
		max_forwards |= streq(s->req.v[i].name, "max-forwards");
	const char *why = gw_guard_method(method, strlen(method), max_forwards);
	if (!why)
		return true;
	char text[400], m[24];
	snprintf(m, sizeof m, "%s", method);
	for (char *c = m; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f || *c == '"' || *c == '\\')
			*c = '?';
	snprintf(text, sizeof text, "%s to %s: %s", m, h->p->host, why);
	answer_stream(h, s, "405", "method", m, text);
	return false;
}

/* The request head is whole: checked, the credential put in, sent on. */
static void forward_request(struct h2 *h, struct stream *s, bool end)
{
	struct gw_pair *p = h->p;
	const char *authority = NULL, *method = "";
	size_t alen = 0, n_auth = 0;
	for (size_t i = 0; i < s->req.n; i++) {
		const struct hfield *f = &s->req.v[i];
		if (streq(f->name, ":authority") || streq(f->name, "host")) {
			/* both may be there; both must name the host */
			n_auth++;
			if (!authority || !gw_authority_ok(p->host, f->value, f->value_len)) {
				authority = f->value;
				alen = f->value_len;
			}
		}
		if (streq(f->name, ":method"))
			method = f->value;
	}
	if (s->req.bad)
		{ refuse_stream(h, s, "head-too-large", "the request head"); return; }
	if (!authority || !gw_authority_ok(p->host, authority, alen))
		{ refuse_stream(h, s, "host-mismatch", authority ? authority : "no :authority"); return; }
	if (streq(method, "CONNECT"))
		{ refuse_stream(h, s, "connect", "CONNECT inside a terminated connection"); return; }
	if (!method_allowed(h, s, method))
		return;
	s->head_request = streq(method, "HEAD");
	bool guard = !gw_cfg->unprotected;
	nghttp2_nv nva[H2_HEADERS_MAX + CRED_MAX + 1];
	size_t n = 0;
	for (size_t i = 0; i < s->req.n; i++) {
		const struct hfield *f = &s->req.v[i];
		if (!is_cred_header(h, f) && !(guard && gw_guard_drops(f->name, f->name_len, f->value, f->value_len)))
			nva[n++] = nv(f->name, f->name_len, f->value, f->value_len);
	}
	/* bodies the response scan can read */
	if (guard)
		nva[n++] = nv("accept-encoding", 15, GW_ACCEPT_ENCODING, strlen(GW_ACCEPT_ENCODING));
	for (size_t k = 0; k < p->n_creds; k++) {
		const struct gw_cred *c = &gw_cfg->creds[p->creds[k]];
		nva[n] = nv(h->cred_names[k], strlen(h->cred_names[k]), c->value, c->value_len);
		nva[n++].flags = NGHTTP2_NV_FLAG_NO_INDEX;   /* never in the HPACK table */
		gw_pair_log_use(p, p->creds[k]);
	}
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = req_body_read };
	s->req_end = end;
	int32_t id = nghttp2_submit_request(h->us, NULL, nva, n, end ? NULL : &dp, s);
	if (id < 0) {
		(void)nghttp2_submit_rst_stream(h->cs, NGHTTP2_FLAG_NONE, s->c_id, NGHTTP2_REFUSED_STREAM);
		return;
	}
	s->u_id = id;
}

static int box_frame(nghttp2_session *cs, const nghttp2_frame *f, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(cs, f->hd.stream_id);
	if (!s)
		return 0;
	bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST) {
		forward_request(h, s, end);
		return 0;
	}
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && end) {
		s->req_end = true;
		if (s->u_id > 0)
			(void)nghttp2_session_resume_data(h->us, s->u_id);
	}
	return 0;
}

static int box_data(nghttp2_session *cs, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct h2 *h = ud;
	(void)flags;
	struct stream *s = nghttp2_session_get_stream_user_data(cs, id);
	if (!s || s->u_id <= 0) {
		(void)nghttp2_session_consume(cs, id, len);   /* nobody wants it: do not stall the others */
		return 0;
	}
	gw_buf_put(&s->req_body, data, len);   /* bounded by the window we advertise */
	(void)nghttp2_session_resume_data(h->us, s->u_id);
	return 0;
}

static int box_stream_close(nghttp2_session *cs, int32_t id, uint32_t code, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(cs, id);
	if (!s)
		return 0;
	s->c_closed = true;
	if (s->u_id > 0 && !s->u_closed)
		(void)nghttp2_submit_rst_stream(h->us, NGHTTP2_FLAG_NONE, s->u_id, code ? code : NGHTTP2_CANCEL);
	/* nobody takes the rest: the server's window gets it all back */
	if (s->u_id > 0 && s->resp_received > s->resp_consumed)
		(void)nghttp2_session_consume(h->us, s->u_id, (size_t)(s->resp_received - s->resp_consumed));
	s->resp_consumed = s->resp_received;
	s->resp_body.len = 0;
	stream_maybe_free(h, s);
	return 0;
}

/* ---- the server's side ---- */

static int server_header(nghttp2_session *us, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
			 const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	(void)flags;
	(void)ud;
	struct stream *s = nghttp2_session_get_stream_user_data(us, f->hd.stream_id);
	if (!s || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (f->headers.cat == NGHTTP2_HCAT_HEADERS && s->response_sent) {
		hlist_add(&s->resp_trailers, name, nlen, value, vlen);
		s->has_resp_trailers = true;
	} else {
		hlist_add(&s->resp, name, nlen, value, vlen);
	}
	return 0;
}

/* copies masked on a stream since its last record */
static void log_hits(struct h2 *h, struct stream *s, const char *where)
{
	if (s->rscan.hits == s->logged)
		return;
	char detail[96];
	snprintf(detail, sizeof detail, "masked %u in the %s of an HTTP/2 response", s->rscan.hits - s->logged, where);
	gw_log_deny(h->p->host, &h->p->dst, "secret-in-response", detail);
	s->logged = s->rscan.hits;
}

/* A header block, scanned whole: names and values as "name: value\r\n"
 * lines, masked in place and copied back (masking keeps every length). */
static void hlist_scan(struct h2 *h, struct stream *s, struct hlist *l, const char *where)
{
	const struct gw_matcher *m = matcher();
	if (!m || !l->n)
		return;
	struct gw_buf b = {0};
	for (size_t i = 0; i < l->n; i++)
		if (!gw_buf_put(&b, l->v[i].name, l->v[i].name_len) || !gw_buf_put(&b, ": ", 2) ||
		    !gw_buf_put(&b, l->v[i].value, l->v[i].value_len) || !gw_buf_put(&b, "\r\n", 2))
			break;
	unsigned hits = gw_scan_whole(m, gw_buf_data(&b), b.len);
	const uint8_t *p = gw_buf_data(&b);
	for (size_t i = 0; hits && i < l->n; i++) {
		memcpy(l->v[i].name, p, l->v[i].name_len);
		p += l->v[i].name_len + 2;
		memcpy(l->v[i].value, p, l->v[i].value_len);
		p += l->v[i].value_len + 2;
	}
	gw_buf_free(&b);
	s->rscan.hits += hits;
	log_hits(h, s, where);
}

/* a coding of the body the gateway cannot read, or NULL */
static const struct hfield *unreadable_coding(const struct stream *s)
{
	for (size_t i = 0; i < s->resp.n; i++)
		if (streq(s->resp.v[i].name, "content-encoding") &&
		    !gw_guard_coding_readable(s->resp.v[i].value, s->resp.v[i].value_len, false))
			return &s->resp.v[i];
	return NULL;
}

/* The response's head: scanned, or answered for when its body would be unreadable */
static void submit_head(struct h2 *h, struct stream *s, bool end)
{
	const struct hfield *coding = end || s->head_request || !matcher() ? NULL : unreadable_coding(s);
	if (coding) {
		char detail[96], text[600];
		/* said to the box and the log: the server's words, so scanned too */
		snprintf(detail, sizeof detail, "content-encoding: %.60s", coding->value);
		gw_scan_whole(matcher(), (uint8_t *)detail, strlen(detail));
		snprintf(text, sizeof text, "%s answered with %s, which the gateway cannot check for the credential (it "
			 "asked for identity) (see agentbox-egress(7))", h->p->host, detail);
		(void)nghttp2_submit_rst_stream(h->us, NGHTTP2_FLAG_NONE, s->u_id, NGHTTP2_CANCEL);
		answer_stream(h, s, "502", "unreadable-response", detail, text);
		return;
	}
	hlist_scan(h, s, &s->resp, "head");
	nghttp2_nv nva[H2_HEADERS_MAX];
	size_t n = to_nva(&s->resp, nva);
	s->resp_end = end;
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = resp_body_read };
	(void)nghttp2_submit_response(h->cs, s->c_id, nva, n, end ? NULL : &dp);
	s->response_sent = true;
}

/* the end of the server's DATA: what the scan holds goes on */
static int resp_end(struct h2 *h, struct stream *s)
{
	if (gw_scan_flush(&s->rscan, &s->resp_body) < 0)
		return -1;
	log_hits(h, s, "body");
	if (s->has_resp_trailers)
		hlist_scan(h, s, &s->resp_trailers, "trailers");
	consume_resp(h, s);
	s->resp_end = true;
	(void)nghttp2_session_resume_data(h->cs, s->c_id);
	return 0;
}

static int server_frame(nghttp2_session *us, const nghttp2_frame *f, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(us, f->hd.stream_id);
	if (!s || s->c_closed || s->resp_refused)
		return 0;
	bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;
	if (f->hd.type == NGHTTP2_HEADERS && !(s->response_sent && s->has_resp_trailers)) {
		bool informational = s->resp.n && s->resp.v[0].value[0] == '1' && streq(s->resp.v[0].name, ":status");
		if (informational) {
			hlist_scan(h, s, &s->resp, "head");
			nghttp2_nv nva[H2_HEADERS_MAX];
			size_t n = to_nva(&s->resp, nva);
			(void)nghttp2_submit_headers(h->cs, NGHTTP2_FLAG_NONE, s->c_id, NULL, nva, n, NULL);
		} else if (!s->response_sent) {
			submit_head(h, s, end);
			if (s->resp_refused)
				end = false;
		}
		hlist_clear(&s->resp);
	}
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && end && s->response_sent &&
	    resp_end(h, s) < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int server_data(nghttp2_session *us, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct h2 *h = ud;
	(void)flags;
	struct stream *s = nghttp2_session_get_stream_user_data(us, id);
	if (!s || s->c_closed || s->resp_refused) {
		(void)nghttp2_session_consume(us, id, len);
		return 0;
	}
	s->resp_received += len;
	if (gw_scan_feed(&s->rscan, data, len, &s->resp_body) < 0) {
		if (s->rscan.cut)
			gw_log_deny(h->p->host, &h->p->dst, "secret-in-response", "cut: a copy began in bytes already passed on");
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	log_hits(h, s, "body");
	consume_resp(h, s);
	(void)nghttp2_session_resume_data(h->cs, s->c_id);
	return 0;
}

/* The server's input is read for now: what only a short partial match held
 * back goes on, so a stream that pauses is not kept waiting */
static int drain_streams(struct h2 *h)
{
	for (struct stream *s = h->streams; s; s = s->next) {
		if (!gw_scan_held(&s->rscan) || s->c_closed)
			continue;
		if (gw_scan_drain(&s->rscan, &s->resp_body) < 0)
			return -1;
		if (s->resp_body.len)
			(void)nghttp2_session_resume_data(h->cs, s->c_id);
	}
	return 0;
}

static int server_stream_close(nghttp2_session *us, int32_t id, uint32_t code, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(us, id);
	if (!s)
		return 0;
	s->u_closed = true;
	if (!s->c_closed) {
		if (code || !s->response_sent)
			(void)nghttp2_submit_rst_stream(h->cs, NGHTTP2_FLAG_NONE, s->c_id,
							code ? code : NGHTTP2_INTERNAL_ERROR);
		else if (!s->resp_refused && resp_end(h, s) < 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	if (s->req_body.len)
		(void)nghttp2_session_consume(h->cs, s->c_id, s->req_body.len);
	s->req_body.len = 0;
	stream_maybe_free(h, s);
	return 0;
}

/* ---- the pair ---- */

int gw_h2_init(struct gw_pair *p)
{
	struct h2 *h = xcalloc(1, sizeof *h);
	h->p = p;
	for (size_t k = 0; k < p->n_creds; k++) {
		const char *n = gw_cfg->creds[p->creds[k]].header.name;
		for (size_t i = 0; n[i]; i++)
			h->cred_names[k][i] = (char)tolower((unsigned char)n[i]);
	}
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	if (nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0) {
		free(h);
		return -1;
	}
	/* windows open again only as the other side takes the bytes */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_session_callbacks_set_send_callback(cb, send_box);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, box_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, box_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, box_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, box_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, box_stream_close);
	int r = nghttp2_session_server_new2(&h->cs, cb, h, opt);
	nghttp2_session_callbacks_del(cb);
	if (r == 0 && nghttp2_session_callbacks_new(&cb) == 0) {
		nghttp2_session_callbacks_set_send_callback(cb, send_server);
		nghttp2_session_callbacks_set_on_header_callback(cb, server_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, server_frame);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, server_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, server_stream_close);
		r = nghttp2_session_client_new2(&h->us, cb, h, opt);
		nghttp2_session_callbacks_del(cb);
	}
	nghttp2_option_del(opt);
	p->ps = h;
	if (r != 0)
		return -1;
	nghttp2_settings_entry box_settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_STREAMS_MAX}};
	nghttp2_settings_entry server_settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
	if (nghttp2_submit_settings(h->cs, NGHTTP2_FLAG_NONE, box_settings, 1) != 0 ||
	    nghttp2_submit_settings(h->us, NGHTTP2_FLAG_NONE, server_settings, 1) != 0)
		return -1;
	return 0;
}

void gw_h2_free(struct gw_pair *p)
{
	struct h2 *h = p->ps;
	while (h->streams)
		stream_free(h, h->streams);
	nghttp2_session_del(h->cs);
	nghttp2_session_del(h->us);
	free(h);
	p->ps = NULL;
}

static int recv_into(nghttp2_session *s, struct gw_buf *in, bool *progress)
{
	if (!in->len)
		return 0;
	ssize_t n = nghttp2_session_mem_recv(s, gw_buf_data(in), in->len);
	if (n < 0)
		return -1;
	gw_buf_drop(in, (size_t)n);
	*progress |= n > 0;
	return 0;
}

int gw_h2_process(struct gw_pair *p, bool *progress)
{
	struct h2 *h = p->ps;
	if (recv_into(h->cs, &p->c.in, progress) < 0 || recv_into(h->us, &p->u.in, progress) < 0)
		return -1;
	if (!p->u.in.len && drain_streams(h) < 0)
		return -1;
	size_t before = p->c.out.len + p->u.out.len;
	if (nghttp2_session_send(h->cs) != 0 || nghttp2_session_send(h->us) != 0)
		return -1;
	*progress |= p->c.out.len + p->u.out.len != before;
	/* the server went away: the box is told (GOAWAY) and the pair ends */
	if ((p->u.eof || (!nghttp2_session_want_read(h->us) && !nghttp2_session_want_write(h->us))) && !p->c.shut &&
	    nghttp2_session_want_write(h->cs) == 0) {
		(void)nghttp2_session_terminate_session(h->cs, NGHTTP2_NO_ERROR);
		(void)nghttp2_session_send(h->cs);
		p->u.eof = true;
		p->u.in.len = 0;
		*progress = true;
	}
	if ((p->c.eof || (!nghttp2_session_want_read(h->cs) && !nghttp2_session_want_write(h->cs))) && !p->u.eof) {
		p->c.eof = true;
		p->c.in.len = 0;
		p->u.eof = true;   /* nothing of the server matters to a box that left */
		p->u.in.len = 0;
		*progress = true;
	}
	return 0;
}
