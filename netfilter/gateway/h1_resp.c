/* HTTP/1.1 responses toward the box, read and scanned (h1_resp.h).
 *
 * The head is rebuilt from what the parser read (status line, then each
 * field as "Name: value"), scanned whole and passed on. The body goes through
 * the response's scan as it comes: a Content-Length or close-delimited body
 * byte for byte (masking keeps its length), a chunked one framed anew around
 * what the scan passes on, so a secret sent in 3-byte chunks is one piece to
 * it, and its trailers scanned like a head. */
#include <http_parser.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "guard.h"
#include "h1_resp.h"
#include "records.h"
#include "scan.h"
#include "util.h"

#define REASON_MAX 128

struct h1_resp {
	struct gw_pair *p;
	http_parser hp;
	struct gw_scan scan;
	struct gw_buf head, trailers;   /* the fields rebuilt, "Name: value\r\n" each */
	struct gw_buf *fields;          /* head, then trailers */
	struct gw_buf body;             /* chunked: what the scan passed, for the next chunk */
	char reason[REASON_MAX];
	size_t reason_len;
	size_t name_off, name_len;
	bool in_name, in_value;
	bool head_request;              /* it answers a HEAD: no body */
	bool reframe;                   /* chunked */
	char unreadable[64];            /* a coding of the body the gateway cannot read */
	bool msg_done, refused, eof_done;
	unsigned logged;                /* scan.hits already logged */
};

static http_parser_settings settings;

static const struct gw_matcher *matcher(void)
{
	return gw_cfg->unprotected ? NULL : gw_secrets;
}

/* copies masked since the last record: one record a message */
static void log_hits(struct h1_resp *r, const char *where)
{
	if (r->scan.hits == r->logged)
		return;
	char detail[96];
	snprintf(detail, sizeof detail, "masked %u in the %s of a %d response", r->scan.hits - r->logged, where,
		 r->hp.status_code);
	gw_log_deny(r->p->host, &r->p->dst, "secret-in-response", detail);
	r->logged = r->scan.hits;
}

/* ---- the head, read ---- */

static int on_status(http_parser *hp, const char *at, size_t len)
{
	struct h1_resp *r = hp->data;
	for (size_t i = 0; i < len && r->reason_len + 1 < REASON_MAX; i++)
		r->reason[r->reason_len++] = (unsigned char)at[i] < 0x20 ? ' ' : at[i];
	return 0;
}

/* bytes of a field, no line break among them (a folded value's) */
static int field_put(struct h1_resp *r, const char *at, size_t len)
{
	size_t from = r->fields->len;
	if (!gw_buf_put(r->fields, at, len))
		return -1;
	uint8_t *b = gw_buf_data(r->fields) + from;
	for (size_t i = 0; i < len; i++)
		if (b[i] == '\r' || b[i] == '\n')
			b[i] = ' ';
	return 0;
}

/* a field is whole: a coding the gateway cannot read is remembered */
static int field_end(struct h1_resp *r)
{
	const char *f = (const char *)gw_buf_data(r->fields) + r->name_off;
	size_t vlen = r->fields->len - r->name_off - r->name_len - 2;
	bool ce = r->name_len == 16 && strncasecmp(f, "content-encoding", 16) == 0;
	bool te = r->name_len == 17 && strncasecmp(f, "transfer-encoding", 17) == 0;
	if ((ce || te) && !gw_guard_coding_readable(f + r->name_len + 2, vlen, te)) {
		/* said to the box and the log: the server's words, so scanned too */
		snprintf(r->unreadable, sizeof r->unreadable, "%.*s", (int)(r->name_len + 2 + (vlen < 40 ? vlen : 40)), f);
		gw_scan_whole(matcher(), (uint8_t *)r->unreadable, strlen(r->unreadable));
	}
	r->in_value = false;
	return gw_buf_put(r->fields, "\r\n", 2) ? 0 : -1;
}

static int on_field(http_parser *hp, const char *at, size_t len)
{
	struct h1_resp *r = hp->data;
	if (r->in_value && field_end(r) < 0)
		return -1;
	if (!r->in_name) {
		r->in_name = true;
		r->name_off = r->fields->len;
	}
	return field_put(r, at, len);
}

static int on_value(http_parser *hp, const char *at, size_t len)
{
	struct h1_resp *r = hp->data;
	if (r->in_name) {
		r->in_name = false;
		r->in_value = true;
		r->name_len = r->fields->len - r->name_off;
		if (!gw_buf_put(r->fields, ": ", 2))
			return -1;
	}
	return field_put(r, at, len);
}

/* The box is told why instead of getting a body the gateway cannot read */
static void refuse_unreadable(struct h1_resp *r)
{
	char body[512];
	int n = snprintf(body, sizeof body,
			 "refused by the agentbox credential gateway: %s answered with %s, which the gateway cannot "
			 "check for the credential (it asked for identity) (see agentbox-egress(7))\n",
			 r->p->host, r->unreadable);
	(void)gw_buf_printf(&r->p->c.out,
			    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
			    "Connection: close\r\n\r\n%s", n, body);
	gw_log_deny(r->p->host, &r->p->dst, "unreadable-response", r->unreadable);
	r->refused = true;
}

static int on_headers_complete(http_parser *hp)
{
	struct h1_resp *r = hp->data;
	if (r->in_value && field_end(r) < 0)
		return -1;
	r->in_name = false;
	int status = hp->status_code;
	bool no_body = (r->head_request && status >= 200) || status < 200 || status == 204 || status == 304;
	if (r->unreadable[0] && !no_body && matcher()) {
		refuse_unreadable(r);
		return -1;
	}
	/* the head, written anew and scanned whole */
	struct gw_buf h = {0};
	bool ok = gw_buf_printf(&h, "HTTP/%u.%u %d %.*s\r\n", hp->http_major, hp->http_minor, status,
				(int)r->reason_len, r->reason) &&
		  gw_buf_put(&h, gw_buf_data(&r->head), r->head.len) && gw_buf_put(&h, "\r\n", 2);
	if (ok) {
		r->scan.hits += gw_scan_whole(matcher(), gw_buf_data(&h), h.len);
		ok = gw_buf_put(&r->p->c.out, gw_buf_data(&h), h.len);
	}
	gw_buf_free(&h);
	log_hits(r, "head");
	r->reframe = hp->flags & F_CHUNKED;
	r->fields = &r->trailers;
	if (!ok)
		return -1;
	/* a response to HEAD has no body, whatever it says */
	return r->head_request && status >= 200 ? 1 : 0;
}

/* ---- the body, scanned ---- */

static struct gw_buf *body_out(struct h1_resp *r)
{
	return r->reframe ? &r->body : &r->p->c.out;
}

/* what the scan passed on of a chunked body, as one chunk */
static int frame_body(struct h1_resp *r)
{
	struct gw_buf *b = &r->body;
	if (!b->len)
		return 0;
	bool ok = gw_buf_printf(&r->p->c.out, "%zx\r\n", b->len) && gw_buf_put(&r->p->c.out, gw_buf_data(b), b->len) &&
		  gw_buf_put(&r->p->c.out, "\r\n", 2);
	gw_buf_drop(b, b->len);
	return ok ? 0 : -1;
}

static int scan_failed(struct h1_resp *r)
{
	if (r->scan.cut)
		gw_log_deny(r->p->host, &r->p->dst, "secret-in-response",
			    "cut: a copy began in bytes already passed on");
	return -1;
}

static int on_body(http_parser *hp, const char *at, size_t len)
{
	struct h1_resp *r = hp->data;
	return gw_scan_feed(&r->scan, (const uint8_t *)at, len, body_out(r)) < 0 ? scan_failed(r) : 0;
}

static int on_message_complete(http_parser *hp)
{
	struct h1_resp *r = hp->data;
	if (gw_scan_flush(&r->scan, body_out(r)) < 0)
		return scan_failed(r);
	if (r->reframe) {
		if (r->in_value && field_end(r) < 0)
			return -1;
		r->scan.hits += gw_scan_whole(matcher(), gw_buf_data(&r->trailers), r->trailers.len);
		if (frame_body(r) < 0 || !gw_buf_put(&r->p->c.out, "0\r\n", 3) ||
		    !gw_buf_put(&r->p->c.out, gw_buf_data(&r->trailers), r->trailers.len) ||
		    !gw_buf_put(&r->p->c.out, "\r\n", 2))
			return -1;
	}
	log_hits(r, "body");
	r->msg_done = true;
	http_parser_pause(hp, 1);
	return 0;
}

/* ---- the driver's side ---- */

struct h1_resp *h1_resp_new(struct gw_pair *p)
{
	if (!settings.on_headers_complete) {
		settings.on_status = on_status;
		settings.on_header_field = on_field;
		settings.on_header_value = on_value;
		settings.on_headers_complete = on_headers_complete;
		settings.on_body = on_body;
		settings.on_message_complete = on_message_complete;
	}
	struct h1_resp *r = xcalloc(1, sizeof *r);
	r->p = p;
	gw_scan_init(&r->scan, matcher());
	h1_resp_next(r);
	return r;
}

void h1_resp_free(struct h1_resp *r)
{
	if (!r)
		return;
	gw_scan_free(&r->scan);
	gw_buf_free(&r->head);
	gw_buf_free(&r->trailers);
	gw_buf_free(&r->body);
	free(r);
}

void h1_resp_next(struct h1_resp *r)
{
	http_parser_init(&r->hp, HTTP_RESPONSE);
	r->hp.data = r;
	gw_buf_drop(&r->head, r->head.len);
	gw_buf_drop(&r->trailers, r->trailers.len);
	r->fields = &r->head;
	r->reason_len = 0;
	r->in_name = r->in_value = r->reframe = r->msg_done = false;
	r->unreadable[0] = 0;
}

ssize_t h1_resp_execute(struct h1_resp *r, const uint8_t *data, size_t len, bool head_request)
{
	r->head_request = head_request;
	size_t n = http_parser_execute(&r->hp, &settings, (const char *)data, len);
	enum http_errno e = HTTP_PARSER_ERRNO(&r->hp);
	if (r->refused)
		return -2;
	if (e != HPE_OK && e != HPE_PAUSED)
		return -1;   /* a server we cannot follow (or a copy we could not mask): end it */
	if (e == HPE_PAUSED)
		http_parser_pause(&r->hp, 0);
	if (r->reframe && !r->msg_done && frame_body(r) < 0)
		return -1;
	return (ssize_t)n;
}

bool h1_resp_done(struct h1_resp *r, int *status)
{
	*status = r->hp.status_code;
	return r->msg_done;
}

int h1_resp_tunnel(struct h1_resp *r, const uint8_t *data, size_t len)
{
	if (gw_scan_feed(&r->scan, data, len, &r->p->c.out) < 0)
		return scan_failed(r);
	log_hits(r, "tunnel");
	return 0;
}

int h1_resp_pause(struct h1_resp *r, bool tunnel)
{
	if (gw_scan_drain(&r->scan, tunnel ? &r->p->c.out : body_out(r)) < 0)
		return -1;
	return tunnel || !r->reframe ? 0 : frame_body(r);
}

int h1_resp_eof(struct h1_resp *r, bool tunnel)
{
	if (r->eof_done)
		return 0;
	r->eof_done = true;
	if (!tunnel) {
		/* a body that ends with the connection ends now */
		(void)http_parser_execute(&r->hp, &settings, NULL, 0);
		if (r->msg_done)
			return 0;
	}
	int ret = gw_scan_flush(&r->scan, tunnel ? &r->p->c.out : body_out(r));
	if (ret == 0 && !tunnel && r->reframe)
		ret = frame_body(r);
	log_hits(r, tunnel ? "tunnel" : "body");
	return ret < 0 ? scan_failed(r) : 0;
}
