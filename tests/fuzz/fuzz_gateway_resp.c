/* The server's side of an HTTP/1.1 connection the credential gateway
 * terminated (netfilter/gateway/h1_resp.c, scan.c): any bytes, in any
 * chunks, as the answer to a GET, a HEAD or an upgrade, never bring the
 * secret to the box, and never more than the bounds queued for it. */
#include "fuzz.h"

#if __has_include(<http_parser.h>)
#include "gateway_sources.h"

#define FZ_RESP_SECRET "fz-Secret+0123/456789"

static struct gw_config fz_resp_cfg;

FUZZ_INIT(gateway_resp)
{
	struct gw_cred *c = &fz_resp_cfg.creds[0];
	snprintf(c->name, sizeof c->name, "FZ");
	struct ab_err err;
	if (cred_host_parse("api.test", "fz", &c->hosts[0], &err) < 0 ||
	    cred_header_parse("Authorization: Bearer {}", "fz", &c->header, &err) < 0)
		abort();
	c->n_hosts = 1;
	c->value = "Bearer " FZ_RESP_SECRET;
	c->value_len = strlen(c->value);
	c->secret = FZ_RESP_SECRET;
	c->secret_len = strlen(FZ_RESP_SECRET);
	fz_resp_cfg.n_creds = 1;
	gw_cfg = &fz_resp_cfg;
	if (!gw_secrets && gw_secrets_build(&fz_resp_cfg) < 0)
		abort();
	return 0;
}

FUZZ_TARGET(gateway_resp)
{
	static struct gw_pair pair;
	struct gw_pair *p = &pair;
	memset(p, 0, sizeof *p);
	snprintf(p->host, sizeof p->host, "api.test");
	p->n_creds = 1;
	gw_cfg = &fz_resp_cfg;
	if (gw_h1_init(p) < 0)
		abort();
	/* the request it answers: GET, HEAD, or an upgrade */
	uint8_t how = size ? data[0] : 0;
	const char *req = how & 1 ? "HEAD / HTTP/1.1\r\nHost: api.test\r\n\r\n"
		: how & 2 ? "GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
			  : "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n";
	gw_buf_put(&p->c.in, req, strlen(req));
	bool progress = false;
	gw_h1_process(p, &progress);
	gw_buf_drop(&p->u.out, p->u.out.len);
	size_t chunk = (size_t)(how >> 2) % 37 + 1;
	struct gw_buf seen = {0};   /* all the box got */
	for (size_t off = size ? 1 : 0, rounds = 0; rounds < 100000; rounds++) {
		if (off < size) {
			size_t n = size - off < chunk ? size - off : chunk;
			gw_buf_put(&p->u.in, data + off, n);
			off += n;
		} else {
			p->u.eof = true;   /* the server is done: everything held goes */
		}
		progress = false;
		int r = gw_h1_process(p, &progress);
		FUZZ_CHECK(p->c.out.len <= GW_BUF_HARD, "%zu bytes queued for the box", p->c.out.len);
		if (seen.len + p->c.out.len < (1u << 20))
			gw_buf_put(&seen, gw_buf_data(&p->c.out), p->c.out.len);
		gw_buf_drop(&p->c.out, p->c.out.len);
		if (r < 0 || (off >= size && !progress))
			break;
	}
	FUZZ_CHECK(!(seen.len && memmem(seen.b + seen.off, seen.len, FZ_RESP_SECRET, strlen(FZ_RESP_SECRET))),
		   "the secret reached the box");
	gw_h1_free(p);
	gw_buf_free(&seen);
	gw_buf_free(&p->c.in);
	gw_buf_free(&p->u.in);
	gw_buf_free(&p->u.out);
	gw_buf_free(&p->c.out);
	return 0;
}
#endif
