/* The box's side of an HTTP/1.1 connection the credential gateway
 * terminated (netfilter/gateway/h1.c): any bytes, in any chunks, come out either
 * refused or as requests for the connection's host that carry the
 * credential exactly once (read back with the same parser a server would
 * use), and no head bigger than the bounds. */
#include "fuzz.h"

#if __has_include(<http_parser.h>)
#include "gateway_sources.h"

static struct gw_config fz_gw_cfg;
static struct gw_pair fz_gw_pair;

/* the server's view of what the gateway sent */
struct fz_gw_seen {
	int requests, cred_headers, other_cred, bad_host;
	bool in_name_cred, in_name_host, value_cred, value_host;
	char value[512];
	size_t vlen;
	bool last_was_value;
	bool upgrade;
};

static void fz_gw_end_field(struct fz_gw_seen *s)
{
	if (s->in_name_cred) {
		if (s->vlen == strlen("Bearer fz-secret") && memcmp(s->value, "Bearer fz-secret", s->vlen) == 0)
			s->cred_headers++;
		else
			s->other_cred++;
	}
	/* the same name: any case, a final dot, the default port */
	size_t v = s->vlen;
	if (v > 4 && memcmp(s->value + v - 4, ":443", 4) == 0)
		v -= 4;
	if (v && s->value[v - 1] == '.')
		v--;
	if (s->in_name_host && !(v == 8 && strncasecmp(s->value, "api.test", 8) == 0))
		s->bad_host++;
	s->in_name_cred = s->in_name_host = false;
	s->vlen = 0;
}

static int fz_gw_field(http_parser *hp, const char *at, size_t len)
{
	struct fz_gw_seen *s = hp->data;
	if (s->last_was_value)
		fz_gw_end_field(s);
	s->last_was_value = false;
	/* names arrive whole here: the gateway writes each head in one piece */
	s->in_name_cred = len == 13 && strncasecmp(at, "authorization", 13) == 0;
	s->in_name_host = len == 4 && strncasecmp(at, "host", 4) == 0;
	return 0;
}

static int fz_gw_value(http_parser *hp, const char *at, size_t len)
{
	struct fz_gw_seen *s = hp->data;
	s->last_was_value = true;
	size_t n = len < sizeof s->value - s->vlen ? len : sizeof s->value - s->vlen;
	memcpy(s->value + s->vlen, at, n);
	s->vlen += n;
	return 0;
}

static int fz_gw_headers_done(http_parser *hp)
{
	struct fz_gw_seen *s = hp->data;
	if (s->last_was_value)
		fz_gw_end_field(s);
	s->last_was_value = false;
	s->requests++;
	FUZZ_CHECK(s->cred_headers == s->requests && s->other_cred == 0 && s->bad_host == 0,
		   "request %d: %d credential headers, %d others, %d bad hosts", s->requests, s->cred_headers,
		   s->other_cred, s->bad_host);
	return 0;
}

FUZZ_INIT(gateway_h1)
{
	struct gw_cred *c = &fz_gw_cfg.creds[0];
	snprintf(c->name, sizeof c->name, "FZ");
	struct ab_err err;
	if (cred_host_parse("api.test", "fz", &c->hosts[0], &err) < 0 ||
	    cred_header_parse("Authorization: Bearer {}", "fz", &c->header, &err) < 0)
		abort();
	c->n_hosts = 1;
	c->value = "Bearer fz-secret";
	c->value_len = strlen(c->value);
	fz_gw_cfg.n_creds = 1;
	gw_cfg = &fz_gw_cfg;
	return 0;
}

FUZZ_TARGET(gateway_h1)
{
	struct gw_pair *p = &fz_gw_pair;
	memset(p, 0, sizeof *p);
	snprintf(p->host, sizeof p->host, "api.test");
	p->creds[0] = 0;
	p->n_creds = 1;
	if (gw_h1_init(p) < 0)
		abort();
	size_t chunk = size ? (size_t)data[0] % 61 + 1 : 1;
	http_parser server;
	http_parser_settings ss = {.on_header_field = fz_gw_field, .on_header_value = fz_gw_value,
				   .on_headers_complete = fz_gw_headers_done};
	struct fz_gw_seen seen = {0};
	http_parser_init(&server, HTTP_REQUEST);
	server.data = &seen;
	bool server_ok = true;
	for (size_t off = size ? 1 : 0; off < size || p->c.in.len;) {
		if (off < size && !p->c.eof) {
			size_t n = size - off < chunk ? size - off : chunk;
			gw_buf_put(&p->c.in, data + off, n);
			off += n;
		}
		bool progress = false;
		FUZZ_CHECK(gw_h1_process(p, &progress) == 0 || true, "process");
		struct gw_buf *out = &p->u.out;
		FUZZ_CHECK(out->len <= GW_BUF_HARD, "%zu bytes queued", out->len);
		if (out->len && server_ok && !seen.upgrade) {
			size_t n = http_parser_execute(&server, &ss, (const char *)gw_buf_data(out), out->len);
			if (HTTP_PARSER_ERRNO(&server) != HPE_OK)
				server_ok = false;   /* what it sent on from a malformed tail: the server refuses it too */
			else if (server.upgrade)
				seen.upgrade = true;
			(void)n;
		}
		if (out->len && getenv("FZ_GW_DEBUG"))   /* what went to the server */
			fwrite(gw_buf_data(out), 1, out->len, stderr);
		gw_buf_drop(out, out->len);
		if (p->c.eof || (!progress && off >= size))
			break;
	}
	gw_h1_free(p);
	gw_buf_free(&p->c.in);
	gw_buf_free(&p->u.out);
	gw_buf_free(&p->c.out);
	return 0;
}
#endif
