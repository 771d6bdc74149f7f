/* The credential gateway's response scan (netfilter/gateway/scan.c): every
 * copy of a secret is masked in place, as it is and as an echo writes it
 * (base64 at every alignment, percent, JSON and HTML escapes, wrapped
 * lines), wherever the stream is split; nothing else changes; and only what
 * could still become a copy is held back. */
#include "tap.h"

#include "../../netfilter/gateway/buf.c"
#include "../../netfilter/gateway/ctl.c"
#include "../../netfilter/gateway/scan.c"

#define SECRET "ghp_T0k3nForTests+/Zq9xLmN"

static struct gw_matcher *matcher(const char *secret, const char *header_value)
{
	struct gw_matcher *m = gw_matcher_new();
	gw_matcher_add_secret(m, (const uint8_t *)secret, strlen(secret), header_value, 0);
	if (gw_matcher_build(m) < 0)
		abort();
	return m;
}

/* text through a stream in pieces of `piece` bytes (0: one piece), flushed;
 * returns the output (static) and its hits */
static const char *through(const struct gw_matcher *m, const char *text, size_t len, size_t piece, unsigned *hits,
			   bool *cut)
{
	static char res[1 << 21];
	struct gw_scan s;
	struct gw_buf out = {0};
	gw_scan_init(&s, m);
	int r = 0;
	size_t w = 0;
	for (size_t off = 0; r == 0 && off < len;) {
		size_t n = piece && len - off > piece ? piece : len - off;
		r = gw_scan_feed(&s, (const uint8_t *)text + off, n, &out);
		off += n;
		/* taken as the relay takes it */
		if (out.len)
			memcpy(res + w, gw_buf_data(&out), out.len);
		w += out.len;
		gw_buf_drop(&out, out.len);
	}
	if (r == 0)
		r = gw_scan_flush(&s, &out);
	if (hits)
		*hits = s.hits;
	if (cut)
		*cut = r < 0;
	if (out.len)
		memcpy(res + w, gw_buf_data(&out), out.len);
	res[w + out.len] = 0;
	gw_buf_free(&out);
	gw_scan_free(&s);
	return res;
}

static char *b64(const uint8_t *in, size_t len, bool url)
{
	const char *a = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			    : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = calloc(1, len * 4 / 3 + 8);
	size_t n = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < len ? in[i + 2] : 0);
		o[n++] = a[v >> 18 & 63];
		o[n++] = a[v >> 12 & 63];
		o[n++] = i + 1 < len ? a[v >> 6 & 63] : '=';
		o[n++] = i + 2 < len ? a[v & 63] : '=';
	}
	return o;
}

/* base64 decoding that takes the mask for 'A' */
static size_t unb64(const char *in, uint8_t *out, bool url)
{
	const char *a = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			    : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;
	for (; *in && *in != '='; in++) {
		const char *p = *in == '*' ? a : strchr(a, *in);
		if (!p)
			continue;
		acc = acc << 6 | (uint32_t)(p - a);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	return n;
}

static void plain_copies(const struct gw_matcher *m)
{
	const char *text = "{\"headers\":{\"Authorization\":\"Bearer " SECRET "\"},\"again\":\"" SECRET "\"}";
	size_t len = strlen(text);
	unsigned hits;
	const char *whole = through(m, text, len, 0, &hits, NULL);
	ok(strlen(whole) == len, "the output is as long as the input");
	ok(!strstr(whole, SECRET) && !strstr(whole, "T0k3n"), "both copies masked: %s", whole);
	ok(hits == 2, "two hits (%u)", hits);
	has_substr(whole, "\"Bearer **************************\"", "masked with '*' in place");
	char want[512];
	snprintf(want, sizeof want, "%s", whole);
	bool same = true;
	for (size_t cut = 1; cut < len; cut++) {
		/* two pieces split at every offset, and bytes one at a time */
		struct gw_scan s;
		struct gw_buf out = {0};
		gw_scan_init(&s, m);
		gw_scan_feed(&s, (const uint8_t *)text, cut, &out);
		gw_scan_drain(&s, &out);   /* a pause there: nothing of a copy may slip out */
		gw_scan_feed(&s, (const uint8_t *)text + cut, len - cut, &out);
		int r = gw_scan_flush(&s, &out);
		/* a pause 1-3 bytes into a copy may let them go: then the stream is cut */
		if (r == 0 && (out.len != len || memcmp(gw_buf_data(&out), want, len) != 0))
			same = false;
		if (r < 0 && !s.cut)
			same = false;
		gw_buf_free(&out);
		gw_scan_free(&s);
	}
	ok(same, "split anywhere, with a pause there, the same output (or a cut)");
	ok(strcmp(through(m, text, len, 1, NULL, NULL), want) == 0, "one byte at a time, the same output");
	ok(strcmp(through(m, text, len, 3, NULL, NULL), want) == 0, "three at a time (the 3-byte chunks of an echo)");
}

static void base64_alignments(const struct gw_matcher *m)
{
	for (int url = 0; url < 2; url++)
		for (size_t k = 0; k < 3; k++) {
			uint8_t in[128];
			memcpy(in, "XYZ", k);
			memcpy(in + k, "Bearer " SECRET "\"}", strlen("Bearer " SECRET "\"}"));
			size_t len = k + strlen("Bearer " SECRET "\"}");
			char *enc = b64(in, len, url);
			unsigned hits;
			const char *o = through(m, enc, strlen(enc), 0, &hits, NULL);
			uint8_t dec[256];
			size_t n = unb64(o, dec, url);
			dec[n] = 0;
			ok(hits >= 1 && !memmem(dec, n, "T0k3nForTests", 13),
			   "base64%s, %zu bytes before: decoded output has no secret (%u hits)", url ? "url" : "", k, hits);
			free(enc);
		}
	/* the secret base64'd by itself, the way "Basic {base64}" sends it */
	char *enc = b64((const uint8_t *)SECRET, strlen(SECRET), false);
	char text[256];
	snprintf(text, sizeof text, "Authorization: Basic %s\r\n", enc);
	const char *o = through(m, text, strlen(text), 0, NULL, NULL);
	ok(!strstr(o, enc) && strstr(o, "Basic ****"), "a base64'd header value: %s", o);
	free(enc);
}

static void escapes(const struct gw_matcher *m)
{
	static const struct { const char *what, *text; } cases[] = {
		{"percent, upper", "?auth=Bearer%20ghp_T0k3nForTests%2B%2FZq9xLmN&x=1"},
		{"percent, lower", "?auth=ghp_T0k3nForTests%2b%2fZq9xLmN"},
		{"percent, every byte", "%67%68%70%5F%54%30%6B%33%6E%46%6F%72%54%65%73%74%73%2B%2F%5A%71%39%78%4C%6D%4E"},
		{"JSON \\/", "{\"a\":\"ghp_T0k3nForTests+\\/Zq9xLmN\"}"},
		{"JSON \\u", "{\"a\":\"ghp_T0k3nForTests\\u002b\\u002FZq9xLmN\"}"},
		{"JS \\x", "'ghp_T0k3nForTests\\x2b\\x2fZq9xLmN'"},
		{"HTML entities", "<p>ghp_T0k3nForTests&#43;&#x2f;Zq9xLmN</p>"},
		{"HTML, leading zeros", "ghp_T0k3nForTests&#0043;&#x002F;Zq9xLmN"},
		{"line breaks", "ghp_T0k3n\r\nForTests+/Zq9\nxLmN"},
		{"JSON line break escapes", "ghp_T0k3n\\nForTests+/Zq9xLmN"},
		{"HTML5 names", "ghp_T0k3nForTests&plus;&sol;Zq9xLmN"},
		{"percent twice (a URL in a URL)", "next=%3Fauth%3Dghp_T0k3nForTests%252B%252FZq9xLmN"},
		{"hex", "auth=6768705f54306b336e466f7254657374732b2f5a7139784c6d4e;"},
		{"HEX", "auth=6768705F54306B336E466F7254657374732B2F5A7139784C6D4E;"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned hits;
		size_t len = strlen(cases[i].text);
		const char *o = through(m, cases[i].text, len, 0, &hits, NULL);
		bool ok1 = hits == 1 && strlen(o) == len && !strstr(o, "T0k3n") && !strstr(o, "Zq9") && !strstr(o, "xLmN");
		const char *o1 = through(m, cases[i].text, len, 1, NULL, NULL);
		char a[512];
		snprintf(a, sizeof a, "%s", o);
		ok(ok1 && strcmp(a, o1) == 0, "%s: %s", cases[i].what, a);
	}
	/* escapes that decode to no secret stay as they are */
	const char *text = "100% sure &amp; \\u00e9 %zz &#; &#x; &bogus; \\q";
	is_str(through(m, text, strlen(text), 0, NULL, NULL), text, "other escapes pass unchanged");
}

/* a base64 text wrapped at 76 columns (MIME, `base64` with no -w 0) */
static void wrapped_base64(const struct gw_matcher *m)
{
	char in[400];
	snprintf(in, sizeof in, "{\"headers\": {\"Authorization\": \"Bearer %s\", \"Host\": \"api.test\", \"X\": \"%s\"}}",
		 SECRET, "padding padding padding padding");
	char *enc = b64((const uint8_t *)in, strlen(in), false);
	char wrapped[800];
	size_t n = 0;
	for (size_t i = 0; enc[i]; i++) {
		if (i && i % 76 == 0) {
			wrapped[n++] = '\r';
			wrapped[n++] = '\n';
		}
		wrapped[n++] = enc[i];
	}
	wrapped[n] = 0;
	unsigned hits;
	const char *o = through(m, wrapped, n, 7, &hits, NULL);
	uint8_t dec[800];
	size_t d = unb64(o, dec, false);
	ok(hits >= 1 && !memmem(dec, d, "T0k3nForTests", 13), "base64 wrapped at 76 columns (%u hits)", hits);
	free(enc);
}

static void nothing_else_changes(const struct gw_matcher *m)
{
	/* 1 MiB of random bytes and of base64 text: unchanged, in any pieces */
	static char data[1 << 20];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof data; i++) {
		x = x * 1103515245 + 12345;
		data[i] = (char)(x >> 16);
	}
	data[sizeof data - 1] = 0;
	unsigned hits;
	bool cut;
	const char *o = through(m, data, sizeof data - 1, 4093, &hits, &cut);
	ok(hits == 0 && !cut && memcmp(o, data, sizeof data - 1) == 0, "1 MiB of random bytes pass unchanged");
	char *enc = b64((const uint8_t *)data, 300000, false);
	o = through(m, enc, strlen(enc), 1000, &hits, &cut);
	ok(hits == 0 && !cut && strcmp(o, enc) == 0, "400 KB of base64 pass unchanged");
	free(enc);
}

/* what is held back: only what may still become a copy */
static void holding(const struct gw_matcher *m)
{
	struct gw_scan s;
	struct gw_buf out = {0};
	gw_scan_init(&s, m);
	gw_scan_feed(&s, (const uint8_t *)"data: {\"token\": 1}\n\n", 20, &out);
	ok(out.len == 20 && gw_scan_held(&s) == 0, "an event that cannot be a copy goes on at once");
	gw_scan_feed(&s, (const uint8_t *)"ghp_T0k", 7, &out);
	ok(gw_scan_held(&s) == 7, "the beginning of a copy is held (%zu)", gw_scan_held(&s));
	gw_scan_drain(&s, &out);
	ok(gw_scan_held(&s) == 7, "... also when the stream pauses");
	gw_scan_feed(&s, (const uint8_t *)"3nForTests+/Zq9xLmN and more", 28, &out);
	gw_scan_flush(&s, &out);
	ok(out.len == 55 && memmem(gw_buf_data(&out), out.len, "**************************", 26) && !s.cut,
	   "... and masked when it became one");
	gw_buf_free(&out);
	gw_scan_free(&s);

	/* a pause two bytes into a copy: they go on; the rest then cuts */
	gw_scan_init(&s, m);
	out = (struct gw_buf){0};
	gw_scan_feed(&s, (const uint8_t *)"x=gh", 4, &out);
	gw_scan_drain(&s, &out);
	ok(out.len == 4, "a pause: a short partial match goes on");
	int r = gw_scan_feed(&s, (const uint8_t *)"p_T0k3nForTests+/Zq9xLmN", 24, &out);
	ok(r < 0 && s.cut, "then the copy it began is cut, not passed");
	gw_buf_free(&out);
	gw_scan_free(&s);

	/* a message that ends 8 or more bytes into a copy: masked too */
	unsigned hits;
	const char *o = through(m, "tail ghp_T0k3nFo", 16, 0, &hits, NULL);
	is_str(o, "tail ***********", "a long partial copy at the end is masked");
	o = through(m, "tail ghp_T0", 11, 0, &hits, NULL);
	is_str(o, "tail ghp_T0", "a short one is not");
}

static void other_secrets(void)
{
	/* Basic: the password alone, as an echo that decodes the header shows it */
	char *enc = b64((const uint8_t *)"x-access-token:pa55w0rd-Sekr1t", 30, false);
	char hv[128];
	snprintf(hv, sizeof hv, "Basic %s", enc);
	struct gw_matcher *m = matcher("x-access-token:pa55w0rd-Sekr1t", hv);
	const char *o = through(m, "{\"user\":\"x-access-token\",\"password\":\"pa55w0rd-Sekr1t\"}", 54, 0, NULL, NULL);
	is_str(o, "{\"user\":\"x-access-token\",\"password\":\"***************\"}", "Basic: the password alone");
	gw_matcher_free(m);
	free(enc);

	/* a short secret: itself, no encodings (they would mask at random) */
	m = matcher("abc", NULL);
	ok(gw_matcher_patterns(m) == 1, "a 3-byte secret: one pattern (%zu)", gw_matcher_patterns(m));
	is_str(through(m, "xabcx YWJj", 10, 0, NULL, NULL), "x***x YWJj", "itself masked, its short base64 not");
	gw_matcher_free(m);

	/* a secret with an escape in it: as written, and written escaped */
	m = matcher("tok%41en-123456", NULL);
	is_str(through(m, "a tok%41en-123456 b", 19, 0, NULL, NULL), "a *************** b", "as written");
	is_str(through(m, "a tok%2541en-123456 b", 21, 0, NULL, NULL), "a ***************** b", "percent-encoded");
	gw_matcher_free(m);

	/* an escape that swallows a copy's first byte: "%a" + "1b2c..." decodes
	 * otherwise, the copy is still there as written */
	m = matcher("a1b2c3d4e5f6", NULL);
	const char *cut_short = "x=%a1b2c3d4e5f6 \\u00a1b2c3d4e5f6 &#a1b2c3d4e5f6";
	is_str(through(m, cut_short, strlen(cut_short), 0, NULL, NULL),
	       "x=%************ \\u00************ &#************", "the copy after a cut-short escape");
	gw_matcher_free(m);

	/* two secrets, told apart */
	m = gw_matcher_new();
	gw_matcher_add_secret(m, (const uint8_t *)"first-secret-1", 14, NULL, 3);
	gw_matcher_add_secret(m, (const uint8_t *)"second-secret-2", 15, NULL, 5);
	gw_matcher_build(m);
	struct gw_scan s;
	struct gw_buf out = {0};
	gw_scan_init(&s, m);
	gw_scan_feed(&s, (const uint8_t *)"second-secret-2", 15, &out);
	gw_scan_flush(&s, &out);
	ok(s.hits == 1 && s.hit_ids == 1u << 5, "the copy is of secret 5");
	gw_buf_free(&out);
	gw_scan_free(&s);
	gw_matcher_free(m);

	/* no matcher: bytes pass */
	gw_scan_init(&s, NULL);
	out = (struct gw_buf){0};
	gw_scan_feed(&s, (const uint8_t *)SECRET, strlen(SECRET), &out);
	ok(out.len == strlen(SECRET) && memcmp(gw_buf_data(&out), SECRET, out.len) == 0, "no matcher, no change");
	gw_buf_free(&out);
}

static void whole(const struct gw_matcher *m)
{
	char head[] = "HTTP/1.1 302 Found\r\nLocation: https://leak.test/?auth=Bearer%20ghp_T0k3nForTests%2B%2FZq9xLmN\r\n"
		      "Set-Cookie: t=ghp_T0k3nForTests+/Zq9xLmN\r\n\r\n";
	unsigned hits = gw_scan_whole(m, (uint8_t *)head, strlen(head));
	ok(hits == 2 && !strstr(head, "T0k3n") && strstr(head, "\r\nSet-Cookie: t=****"), "a header block: %u hits", hits);
}

int main(void)
{
	struct gw_matcher *m = matcher(SECRET, "Bearer " SECRET);
	plain_copies(m);
	base64_alignments(m);
	escapes(m);
	wrapped_base64(m);
	nothing_else_changes(m);
	holding(m);
	whole(m);
	gw_matcher_free(m);
	other_secrets();
	return tap_done();
}
