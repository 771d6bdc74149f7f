/* HTTP/1.1 through the gateway. Requests are parsed (http_parser): each head
 * is rebuilt with the credential's header replaced and checked to be for the
 * connection's host and for what it asks of the server (guard.h: no TRACE,
 * no compressed or ranged answers); bodies (lengths and chunks alike) pass
 * through byte for byte as they arrive. Responses are read and scanned for
 * the secrets by h1_resp.c; this file follows the exchange: which request
 * each answers, and a 101 to an Upgrade request (WebSocket) that turns the
 * connection into a tunnel (still scanned toward the box). */
#include <ctype.h>
#include <http_parser.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "ctl.h"
#include "guard.h"
#include "h1.h"
#include "h1_resp.h"
#include "pair.h"
#include "records.h"
#include "util.h"

#define HEAD_MAX (64u * 1024)   /* bytes of one request head */
#define HEADERS_MAX 256
#define PENDING_MAX 64          /* requests sent and not answered (pipelining) */

enum req_phase { REQ_HEAD, REQ_BODY, REQ_WAIT_UPGRADE };

struct field {
	uint32_t name, name_len, value, value_len;   /* offsets into text */
};

struct h1 {
	struct gw_pair *p;
	http_parser req;
	struct h1_resp *resp;
	enum req_phase phase;
	bool tunnel;
	/* the head being read */
	char *text;                 /* url, then names and values, back to back */
	size_t text_len;
	uint32_t url_len;
	struct field f[HEADERS_MAX];
	size_t n_f;
	bool in_value, head_bad, head_done, msg_done;
	size_t head_tail;           /* bytes of the head the parser reads again (its final LF) */
	bool cr;                    /* the head's last byte so far was CR */
	bool chunked;               /* the body is re-framed: chunks as read, no extensions or trailers */
	bool bare_eol;              /* a line of the head did not end in CRLF */
	/* methods of the requests sent, oldest first, for their responses */
	uint8_t pending[PENDING_MAX];
	size_t n_pending;
	bool upgrade_sent;          /* the last request asked for an upgrade */
};

static http_parser_settings req_settings;

/* ---- the request head, collected ---- */

static int append(struct h1 *h, const char *at, size_t len)
{
	if (h->text_len + len > HEAD_MAX) {
		h->head_bad = true;
		return -1;
	}
	memcpy(h->text + h->text_len, at, len);
	h->text_len += len;
	return 0;
}

static int on_url(http_parser *hp, const char *at, size_t len)
{
	struct h1 *h = hp->data;
	h->url_len += (uint32_t)len;
	return append(h, at, len);
}

static int on_header_field(http_parser *hp, const char *at, size_t len)
{
	struct h1 *h = hp->data;
	if (h->in_value || h->n_f == 0) {
		if (h->n_f == HEADERS_MAX) {
			h->head_bad = true;
			return -1;
		}
		h->f[h->n_f++] = (struct field){ .name = (uint32_t)h->text_len };
		h->in_value = false;
	}
	h->f[h->n_f - 1].name_len += (uint32_t)len;
	return append(h, at, len);
}

static int on_header_value(http_parser *hp, const char *at, size_t len)
{
	struct h1 *h = hp->data;
	struct field *f = &h->f[h->n_f - 1];
	if (!h->in_value) {
		h->in_value = true;
		f->value = (uint32_t)h->text_len;
	}
	f->value_len += (uint32_t)len;
	return append(h, at, len);
}

/* A chunked body is framed anew: the data of each chunk as the parser read
 * it, then the last chunk, and nothing else (no extensions, no trailers).
 * The server then reads exactly the body read here, whatever a lenient
 * reading let through (fuzz_gateway_h1 found a last chunk with NUL-filled
 * extensions and bare-LF trailers that two readers ended differently). */
static int on_req_body(http_parser *hp, const char *at, size_t len)
{
	struct h1 *h = hp->data;
	if (!h->chunked || !len)
		return 0;
	struct gw_buf *o = &h->p->u.out;
	return gw_buf_printf(o, "%zx\r\n", len) && gw_buf_put(o, at, len) && gw_buf_put(o, "\r\n", 2) ? 0 : -1;
}

static int on_req_headers_complete(http_parser *hp)
{
	struct h1 *h = hp->data;
	h->head_done = true;
	http_parser_pause(hp, 1);   /* the head ends here: rebuild it before any body byte */
	return 0;
}

static int on_req_message_complete(http_parser *hp)
{
	struct h1 *h = hp->data;
	if (h->chunked && !gw_buf_put(&h->p->u.out, "0\r\n\r\n", 5))
		return -1;
	h->msg_done = true;
	http_parser_pause(hp, 1);
	return 0;
}

int gw_h1_init(struct gw_pair *p)
{
	if (!req_settings.on_url) {
		req_settings.on_url = on_url;
		req_settings.on_header_field = on_header_field;
		req_settings.on_header_value = on_header_value;
		req_settings.on_headers_complete = on_req_headers_complete;
		req_settings.on_body = on_req_body;
		req_settings.on_message_complete = on_req_message_complete;
	}
	struct h1 *h = xcalloc(1, sizeof *h);
	h->p = p;
	h->text = xmalloc(HEAD_MAX);
	http_parser_init(&h->req, HTTP_REQUEST);
	h->req.data = h;
	h->resp = h1_resp_new(p);
	p->ps = h;
	return 0;
}

void gw_h1_free(struct gw_pair *p)
{
	struct h1 *h = p->ps;
	explicit_bzero(h->text, HEAD_MAX);
	free(h->text);
	h1_resp_free(h->resp);
	free(h);
	p->ps = NULL;
}

/* Nothing more from the box, nothing more to the server: what is queued for
 * the box goes, then the pair ends. */
static void gw_pair_close_box(struct gw_pair *p)
{
	p->c.eof = true;
	p->c.in.len = 0;
	p->u.eof = p->u.shut = true;
	p->u.in.len = p->u.out.len = 0;
}

static const char *status_text(int code)
{
	switch (code) {
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 421: return "Misdirected Request";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	default: return "Bad Request";
	}
}

/* A refusal the box can read: a short response saying why (text, or a
 * generic line), then the end; logged as reason (detail). */
static void refuse_saying(struct gw_pair *p, int code, const char *reason, const char *detail, const char *text)
{
	char body[768];
	if (text)
		snprintf(body, sizeof body, "refused by the agentbox credential gateway: %s\n", text);
	else
		snprintf(body, sizeof body, "refused by the agentbox credential gateway\n");
	(void)gw_buf_printf(&p->c.out,
			    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			    code, status_text(code), strlen(body), body);
	if (reason)
		gw_log_deny(p->host, &p->dst, reason, detail);
	gw_pair_close_box(p);
}

static void refuse(struct gw_pair *p, int code, const char *reason, const char *detail)
{
	refuse_saying(p, code, reason, detail, NULL);
}

/* RFC 9110 token characters (header names) */
static bool token(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c))))
			return false;
	}
	return n > 0;
}

/* a request target: visible ASCII only */
static bool visible(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return n > 0;
}

static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
			return false;
	return true;
}

/* the json-safe first part of s, for a log detail */
static const char *safe(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++)
		out[o++] = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' ? s[i] : '?';
	out[o] = 0;
	return out;
}

/* TRACE and its kin would give the request back, credential and all; an
 * upgrade to another protocol than WebSocket would hide the answer */
static bool method_allowed(struct h1 *h)
{
	if (gw_cfg->unprotected)
		return true;
	bool max_forwards = false;
	for (size_t i = 0; i < h->n_f; i++) {
		const struct field *f = &h->f[i];
		max_forwards |= cred_header_name_eq("max-forwards", h->text + f->name, f->name_len);
		if (cred_header_name_eq("upgrade", h->text + f->name, f->name_len) &&
		    !gw_guard_upgrade_ok(h->text + f->value, f->value_len)) {
			char text[600], v[64];
			snprintf(text, sizeof text, "Upgrade: %s to %s: only WebSocket upgrades are passed on (another "
				 "protocol would carry the answer past the gateway's check for the credential)",
				 safe(h->text + f->value, f->value_len, v, sizeof v), h->p->host);
			refuse_saying(h->p, 400, "upgrade", v, text);
			return false;
		}
	}
	const char *m = http_method_str((enum http_method)h->req.method);
	const char *why = gw_guard_method(m, strlen(m), max_forwards);
	if (!why)
		return true;
	char text[400];
	snprintf(text, sizeof text, "%s to %s: %s", m, h->p->host, why);
	refuse_saying(h->p, 405, "method", m, text);
	return false;
}

/* The head as it goes to the server: request line, the box's headers but the
 * credentials' own, then each credential of this host. Refused (and false)
 * when it is not for this host. */
static bool emit_head(struct h1 *h)
{
	struct gw_pair *p = h->p;
	char tmp[80];
	const char *url = h->text;
	size_t n_host = 0;
	const struct field *host = NULL;
	/* The head is written anew for the server, so it must read there as it
	 * did here: HTTP/1.0 or 1.1 only, a plain target, token names, no
	 * control byte in a value. http_parser as Debian builds it is lenient
	 * (it took "HTTp/\377..." for 0.9, whose bytes the server then framed
	 * otherwise: found by fuzz_gateway_h1). */
	/* the head's final LF is read again by the next call: the last byte seen is its CR */
	if (h->bare_eol || !h->cr) {
		refuse(p, 400, "bad-request", "a line of the head does not end in CRLF");
		return false;
	}
	if (h->req.http_major != 1 || h->req.http_minor > 1) {
		refuse(p, 400, "bad-request", "not HTTP/1.0 or 1.1");
		return false;
	}
	if (!visible(url, h->url_len)) {
		refuse(p, 400, "bad-request", "the request target");
		return false;
	}
	for (size_t i = 0; i < h->n_f; i++) {
		const struct field *f = &h->f[i];
		if (!token(h->text + f->name, f->name_len) || !printable(h->text + f->value, f->value_len)) {
			refuse(p, 400, "bad-header", "a control character in a header");
			return false;
		}
		if (cred_header_name_eq("host", h->text + f->name, f->name_len)) {
			n_host++;
			host = f;
		}
	}
	/* the Host (and an absolute URL's authority) must be the name the TLS
	 * connection was made for: nothing reaches another name on the same
	 * server, with or without the credential */
	if (n_host != 1 || !gw_authority_ok(p->host, h->text + host->value, host->value_len)) {
		refuse(p, 421, "host-mismatch",
		       n_host == 1 ? safe(h->text + host->value, host->value_len, tmp, sizeof tmp) : "no single Host header");
		return false;
	}
	if (h->url_len && url[0] != '/' && url[0] != '*') {
		struct http_parser_url u;
		http_parser_url_init(&u);
		if (http_parser_parse_url(url, h->url_len, h->req.method == HTTP_CONNECT, &u) != 0 ||
		    !(u.field_set & (1 << UF_HOST)) ||
		    !gw_authority_ok(p->host, url + u.field_data[UF_HOST].off, u.field_data[UF_HOST].len)) {
			refuse(p, 421, "host-mismatch", safe(url, h->url_len, tmp, sizeof tmp));
			return false;
		}
	}
	if (h->req.method == HTTP_CONNECT) {
		refuse(p, 400, "connect", "CONNECT inside a terminated connection");
		return false;
	}
	if (!method_allowed(h))
		return false;
	if (p->up_failed) {
		/* the server is out of reach: the box hears why, and what to do */
		refuse_saying(p, 502, NULL, NULL, p->up_failure);
		return false;
	}
	struct gw_buf *o = &p->u.out;
	bool guard = !gw_cfg->unprotected;
	bool ok = gw_buf_printf(o, "%s ", http_method_str((enum http_method)h->req.method)) &&
		  gw_buf_put(o, url, h->url_len) &&
		  gw_buf_printf(o, " HTTP/%u.%u\r\n", h->req.http_major, h->req.http_minor);
	for (size_t i = 0; ok && i < h->n_f; i++) {
		const struct field *f = &h->f[i];
		bool replaced = false;
		for (size_t k = 0; k < p->n_creds; k++)
			replaced |= cred_header_name_eq(gw_cfg->creds[p->creds[k]].header.name, h->text + f->name, f->name_len);
		if (replaced || (guard && gw_guard_drops(h->text + f->name, f->name_len, h->text + f->value, f->value_len)))
			continue;
		ok = gw_buf_put(o, h->text + f->name, f->name_len) && gw_buf_put(o, ": ", 2) &&
		     gw_buf_put(o, h->text + f->value, f->value_len) && gw_buf_put(o, "\r\n", 2);
	}
	/* bodies the response scan can read */
	if (ok && guard)
		ok = gw_buf_printf(o, "Accept-Encoding: %s\r\n", GW_ACCEPT_ENCODING);
	for (size_t k = 0; ok && k < p->n_creds; k++) {
		const struct gw_cred *c = &gw_cfg->creds[p->creds[k]];
		ok = gw_buf_printf(o, "%s: ", c->header.name) && gw_buf_put(o, c->value, c->value_len) &&
		     gw_buf_put(o, "\r\n", 2);
		if (ok)
			gw_pair_log_use(p, p->creds[k]);
	}
	if (!ok || !gw_buf_put(o, "\r\n", 2)) {
		refuse(p, 431, "head-too-large", "the request head");
		return false;
	}
	return true;
}

static void head_reset(struct h1 *h)
{
	h->cr = h->bare_eol = h->chunked = false;
	explicit_bzero(h->text, h->text_len);
	h->text_len = 0;
	h->url_len = 0;
	h->n_f = 0;
	h->in_value = h->head_done = h->msg_done = false;
}

/* A method http_parser does not know (TRACK, IIS's TRACE, among them) never
 * reaches the server: the box is told which */
static void refuse_unknown_method(struct gw_pair *p)
{
	char m[24], text[400];
	const uint8_t *b = gw_buf_data(&p->c.in);
	size_t n = 0;
	while (n < p->c.in.len && n + 1 < sizeof m && b[n] > 0x20 && b[n] < 0x7f && b[n] != '"' && b[n] != '\\') {
		m[n] = (char)b[n];
		n++;
	}
	m[n] = 0;
	const char *why = gw_guard_method(m, n, false);
	snprintf(text, sizeof text, "%s to %s: %s", m, p->host, why ? why : "a method the gateway does not know");
	refuse_saying(p, 405, "method", m, text);
}

/* the box's bytes toward the server */
static int requests(struct h1 *h, bool *progress)
{
	struct gw_pair *p = h->p;
	struct gw_buf *in = &p->c.in, *out = &p->u.out;
	while (in->len && gw_buf_room(out)) {
		if (h->tunnel) {
			size_t n = in->len < gw_buf_room(out) ? in->len : gw_buf_room(out);
			gw_buf_put(out, gw_buf_data(in), n);
			gw_buf_drop(in, n);
			*progress = true;
			continue;
		}
		if (h->phase == REQ_WAIT_UPGRADE)
			return 0;   /* held until the server says whether it switched */
		size_t avail = in->len;
		if (h->phase == REQ_BODY && avail > gw_buf_room(out))
			avail = gw_buf_room(out);
		size_t n = http_parser_execute(&h->req, &req_settings, (const char *)gw_buf_data(in), avail);
		enum http_errno e = HTTP_PARSER_ERRNO(&h->req);
		if (e != HPE_OK && e != HPE_PAUSED) {
			if (h->head_bad)
				refuse(p, 431, "head-too-large", "the request head");
			else if (e == HPE_INVALID_METHOD)
				refuse_unknown_method(p);
			else
				refuse(p, 400, "bad-request", http_errno_name(e));
			*progress = true;
			return 0;
		}
		if (h->phase == REQ_HEAD) {
			/* every line of a head ends in CRLF: a lenient parser's bare LF or
			 * CR is where two readers of the same bytes part ways */
			const uint8_t *b = gw_buf_data(in);
			for (size_t i = 0; i < n; i++) {
				if ((b[i] == '\n') != h->cr)
					h->bare_eol = true;
				h->cr = b[i] == '\r';
			}
		}
		if (h->phase == REQ_BODY && n && !h->chunked) {
			/* body bytes, as they came; a pause at the end of the head leaves
			 * its final LF to the next call, which is no body byte */
			size_t skip = h->head_tail < n ? h->head_tail : n;
			h->head_tail -= skip;
			gw_buf_put(out, gw_buf_data(in) + skip, n - skip);
		}
		gw_buf_drop(in, n);
		*progress |= n > 0;
		if (e == HPE_PAUSED)
			http_parser_pause(&h->req, 0);
		if (h->phase == REQ_HEAD && h->head_done) {
			if (!emit_head(h)) {
				*progress = true;
				return 0;
			}
			if (h->n_pending < PENDING_MAX)
				h->pending[h->n_pending++] = (uint8_t)h->req.method;
			h->upgrade_sent = h->req.upgrade;
			h->chunked = h->req.flags & F_CHUNKED;
			h->head_tail = in->len && gw_buf_data(in)[0] == '\n' ? 1 : 0;
			h->phase = REQ_BODY;
			h->head_done = false;
			*progress = true;
		}
		if (h->phase == REQ_BODY && h->msg_done) {
			bool upgrade = h->upgrade_sent;
			head_reset(h);
			h->phase = upgrade ? REQ_WAIT_UPGRADE : REQ_HEAD;
			*progress = true;
		} else if (!n && e != HPE_PAUSED) {
			break;
		}
	}
	return 0;
}

/* a message ended: which request it answered, and whether the connection
 * is a tunnel from here */
static void response_done(struct h1 *h, int status)
{
	if (status == 101 && h->phase == REQ_WAIT_UPGRADE) {
		h->tunnel = true;     /* WebSocket and the like: bytes both ways from here */
		return;
	}
	if (status >= 200) {
		if (h->n_pending)
			memmove(h->pending, h->pending + 1, --h->n_pending);
		if (h->phase == REQ_WAIT_UPGRADE) {
			/* not switched: HTTP goes on */
			http_parser_init(&h->req, HTTP_REQUEST);
			h->req.data = h;
			h->phase = REQ_HEAD;
		}
	}
	h1_resp_next(h->resp);
}

/* the server's bytes toward the box: read, scanned, rewritten (h1_resp.c) */
static int responses(struct h1 *h, bool *progress)
{
	struct gw_pair *p = h->p;
	struct gw_buf *in = &p->u.in, *out = &p->c.out;
	while (in->len && gw_buf_room(out)) {
		size_t avail = in->len < gw_buf_room(out) ? in->len : gw_buf_room(out);
		if (h->tunnel) {
			if (h1_resp_tunnel(h->resp, gw_buf_data(in), avail) < 0)
				return -1;
			gw_buf_drop(in, avail);
			*progress = true;
			continue;
		}
		bool head = h->n_pending && h->pending[0] == HTTP_HEAD;
		ssize_t n = h1_resp_execute(h->resp, gw_buf_data(in), avail, head);
		if (n == -2) {
			gw_pair_close_box(p);   /* the box was told why: the 502 goes, then the end */
			*progress = true;
			return 0;
		}
		if (n < 0)
			return -1;
		gw_buf_drop(in, (size_t)n);
		*progress |= n > 0;
		int status;
		if (h1_resp_done(h->resp, &status)) {
			response_done(h, status);
			*progress = true;
		} else if (!n) {
			break;
		}
	}
	/* what only a short partial match held back goes on while the server
	 * pauses, and everything when it has closed */
	if (!in->len && (p->u.eof ? h1_resp_eof(h->resp, h->tunnel) : h1_resp_pause(h->resp, h->tunnel)) < 0)
		return -1;
	return 0;
}

int gw_h1_process(struct gw_pair *p, bool *progress)
{
	struct h1 *h = p->ps;
	if (requests(h, progress) < 0 || responses(h, progress) < 0)
		return -1;
	return 0;
}
