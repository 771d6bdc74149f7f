/* The sentry's ClientHello reader: real hellos of curl, python, openssl
 * (tests/data/tls), hellos built here and cut into records and segments, and
 * malformed ones that must be refused, never guessed at. */
#include <fcntl.h>
#include <string.h>

#include "tap.h"
#include "tls_hello.h"
#include "util.h"

struct msg {
	uint8_t b[6 * (TLS_HELLO_MAX_MSG + 8)];   /* 1-byte records of the largest hello */
	size_t n;
};

static void u8(struct msg *m, unsigned v) { m->b[m->n++] = (uint8_t)v; }
static void u16(struct msg *m, unsigned v) { u8(m, v >> 8); u8(m, v & 0xff); }
static void u24(struct msg *m, unsigned v) { u8(m, v >> 16); u16(m, v & 0xffff); }
static void bytes(struct msg *m, const void *p, size_t n) { memcpy(m->b + m->n, p, n); m->n += n; }

struct ext {
	unsigned type;
	const uint8_t *data;
	size_t n;
};

/* A ClientHello handshake message with these extensions (n_ext < 0: none at all) */
static void hello(struct msg *m, const struct ext *ext, int n_ext)
{
	struct msg body = { .n = 0 };
	u16(&body, 0x0303);
	for (int i = 0; i < 32; i++)
		u8(&body, (unsigned)i);
	u8(&body, 0);                 /* session id */
	u16(&body, 4); u16(&body, 0x1301); u16(&body, 0xc02f);
	u8(&body, 1); u8(&body, 0);   /* null compression */
	if (n_ext >= 0) {
		size_t at = body.n;
		u16(&body, 0);
		for (int i = 0; i < n_ext; i++) {
			u16(&body, ext[i].type);
			u16(&body, (unsigned)ext[i].n);
			bytes(&body, ext[i].data, ext[i].n);
		}
		size_t l = body.n - at - 2;
		body.b[at] = (uint8_t)(l >> 8);
		body.b[at + 1] = (uint8_t)l;
	}
	m->n = 0;
	u8(m, 1);
	u24(m, (unsigned)body.n);
	bytes(m, body.b, body.n);
}

/* the server_name extension's data for one host_name */
static size_t sni_ext(uint8_t *out, const char *name)
{
	struct msg e = { .n = 0 };
	size_t n = strlen(name);
	u16(&e, (unsigned)(n + 3));
	u8(&e, 0);
	u16(&e, (unsigned)n);
	bytes(&e, name, n);
	memcpy(out, e.b, e.n);
	return e.n;
}

/* the message in records of at most `frag` bytes each */
static void records(struct msg *out, const struct msg *hs, size_t frag)
{
	out->n = 0;
	for (size_t off = 0; off < hs->n; off += frag) {
		size_t n = hs->n - off < frag ? hs->n - off : frag;
		u8(out, 22); u16(out, 0x0301); u16(out, (unsigned)n);
		bytes(out, hs->b + off, n);
	}
}

static struct msg hs, wire;
static struct tls_hello h;

static enum tls_hello_status parse_named(const char *name, size_t frag)
{
	uint8_t e[600];
	struct ext x = { 0, e, sni_ext(e, name) };
	hello(&hs, &x, 1);
	records(&wire, &hs, frag);
	return tls_hello_parse(wire.b, wire.n, &h);
}

static void real_hellos(void)
{
	static const struct { const char *file, *sni; } real[] = {
		{ "tests/data/tls/hello-curl.bin", "api.example.test" },
		{ "tests/data/tls/hello-python.bin", "pypi.example.test" },
		{ "tests/data/tls/hello-openssl.bin", "example.com" },   /* sent as Example.COM */
		{ "tests/data/tls/hello-nosni.bin", NULL },               /* curl to an address */
	};
	for (size_t i = 0; i < ARRAY_SIZE(real); i++) {
		char *buf;
		size_t len;
		struct ab_err err;
		if (read_file_at(AT_FDCWD, real[i].file, 1 << 16, &buf, &len, &err) < 0) {
			ok(0, "%s: %s", real[i].file, err.msg);
			continue;
		}
		enum tls_hello_status s = tls_hello_parse((uint8_t *)buf, len, &h);
		ok(s == TLS_HELLO_DONE && h.hello_bytes == len, "%s parses whole (%s)", real[i].file, tls_hello_status_text(s));
		if (real[i].sni)
			ok(h.has_sni && h.sni_valid && streq(h.sni, real[i].sni), "%s names %s (got \"%s\")", real[i].file, real[i].sni, h.sni);
		else
			ok(!h.has_sni, "%s names no server", real[i].file);
		/* every prefix asks for more, with a need beyond what it has */
		bool prefixes_ok = true;
		for (size_t cut = 0; cut < len; cut++) {
			struct tls_hello p;
			if (tls_hello_parse((uint8_t *)buf, cut, &p) != TLS_HELLO_MORE || p.need <= cut || p.need > len)
				prefixes_ok = false;
		}
		ok(prefixes_ok, "%s: each of its %zu prefixes is incomplete, needing no more than the whole", real[i].file, len);
		/* a flipped bit anywhere: refused or read, never out of bounds (ASan) */
		for (size_t at = 0; at < len; at++) {
			buf[at] ^= 0x40;
			(void)tls_hello_parse((uint8_t *)buf, len, &h);
			buf[at] ^= 0x40;
		}
		free(buf);
	}
}

int main(void)
{
	real_hellos();

	ok(parse_named("a.example.com", 16384) == TLS_HELLO_DONE && streq(h.sni, "a.example.com") && h.sni_valid,
	   "one record");
	ok(parse_named("a.example.com", 7) == TLS_HELLO_DONE && streq(h.sni, "a.example.com"),
	   "the hello cut into 7-byte records");
	ok(h.hello_bytes == wire.n, "hello_bytes counts every record");
	/* early data after the hello is not part of it */
	size_t whole = wire.n;
	u8(&wire, 23); u16(&wire, 0x0303); u16(&wire, 3); u8(&wire, 1); u8(&wire, 2); u8(&wire, 3);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_DONE && h.hello_bytes == whole,
	   "application data after the hello is left alone");

	ok(parse_named("A.Example.COM", 16384) == TLS_HELLO_DONE && streq(h.sni, "a.example.com"), "lowercased");
	ok(parse_named("example.com.", 16384) == TLS_HELLO_DONE && !h.sni_valid, "a final dot is not a DNS host_name");
	ok(parse_named("a..b", 16384) == TLS_HELLO_DONE && !h.sni_valid, "an empty label is not valid");
	ok(parse_named("198.19.96.1", 16384) == TLS_HELLO_DONE && h.sni_valid && streq(h.sni, "198.19.96.1"),
	   "an address sent as a name is read (the policy judges it)");
	ok(parse_named("evil.com\x01x", 16384) == TLS_HELLO_DONE && !h.sni_valid && streq(h.sni, "evil.com?x"),
	   "a control byte makes it invalid, shown as ?");
	char longname[300];
	memset(longname, 'a', 64);
	strcpy(longname + 64, ".com");
	ok(parse_named(longname, 16384) == TLS_HELLO_DONE && !h.sni_valid, "a 64-character label is not valid");

	/* no extensions, and extensions without a name */
	hello(&hs, NULL, -1);
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_DONE && !h.has_sni, "no extensions: no name");
	uint8_t alpn[] = { 0, 3, 2, 'h', '2' };
	struct ext ex[3] = { { 16, alpn, sizeof alpn } };
	hello(&hs, ex, 1);
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_DONE && !h.has_sni, "ALPN only: no name");

	/* ECH: the outer name is what is seen, and the flag says so */
	uint8_t e[600];
	uint8_t ech[] = { 0, 1, 2, 3 };
	ex[0] = (struct ext){ 0, e, sni_ext(e, "public.example") };
	ex[1] = (struct ext){ 0xfe0d, ech, sizeof ech };
	hello(&hs, ex, 2);
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_DONE && h.ech && streq(h.sni, "public.example"),
	   "encrypted ClientHello: flagged, outer name read");

	/* refusals */
	ex[1] = ex[0];
	hello(&hs, ex, 2);
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_BAD && !h.has_sni, "server_name twice: refused");
	uint8_t two[64];
	struct msg t = { .n = 0 };
	u16(&t, 2 * (3 + 5)); u8(&t, 0); u16(&t, 5); bytes(&t, "a.com", 5); u8(&t, 0); u16(&t, 5); bytes(&t, "b.com", 5);
	memcpy(two, t.b, t.n);
	ex[0] = (struct ext){ 0, two, t.n };
	hello(&hs, ex, 1);
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_BAD, "two host_names in one list: refused");
	t.n = 0;
	u16(&t, 3 + 5 + 3 + 5); u8(&t, 0); u16(&t, 5); bytes(&t, "a.com", 5); u8(&t, 7); u16(&t, 5); bytes(&t, "b.com", 5);
	memcpy(two, t.b, t.n);
	hello(&hs, ex, 1);
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_DONE && streq(h.sni, "a.com"), "an unknown name type is skipped");

	ok(tls_hello_parse((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &h) == TLS_HELLO_NOT_TLS, "plain HTTP: not TLS");
	ok(tls_hello_parse((const uint8_t *)"\x80\x2e\x01\x03\x01", 5, &h) == TLS_HELLO_NOT_TLS, "SSLv2 hello: not TLS");
	ok(tls_hello_parse((const uint8_t *)"\x16\x03\x01\x00\x00", 5, &h) == TLS_HELLO_BAD, "an empty record: malformed");
	ok(tls_hello_parse((const uint8_t *)"\x16\x03\x01\x40\x01", 5, &h) == TLS_HELLO_BAD, "a record over 16 KiB: malformed");

	parse_named("a.example.com", 16384);
	wire.b[5] = 2;   /* a ServerHello */
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_BAD, "another handshake message: malformed");
	parse_named("a.example.com", 16384);
	wire.b[0 + 5 + 4 + 2 + 32] = 33;   /* session id longer than 32 */
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_BAD, "a 33-byte session id: malformed");

	/* a record with the hello and then more handshake bytes */
	parse_named("a.example.com", 16384);
	hs.b[hs.n++] = 0x10;
	records(&wire, &hs, 16384);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_BAD, "bytes after the hello in its record: malformed");

	/* a second record of another type before the hello is whole */
	parse_named("a.example.com", 50);
	wire.b[5 + 50] = 21;
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_BAD, "an alert between the hello's records: malformed");

	/* a message longer than the bound, announced up front */
	wire.n = 0;
	u8(&wire, 22); u16(&wire, 0x0301); u16(&wire, 4);
	u8(&wire, 1); u24(&wire, TLS_HELLO_MAX_MSG + 1);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_TOO_BIG, "a hello announced over %u bytes: too big", TLS_HELLO_MAX_MSG);
	/* one at the bound, in full records, parses (a padding extension) */
	static uint8_t pad[TLS_HELLO_MAX_MSG];
	hello(&hs, NULL, -1);
	size_t base = hs.n + 2 + 4;   /* + extensions length + one extension header */
	ex[0] = (struct ext){ 21, pad, TLS_HELLO_MAX_MSG + 4 - base };
	hello(&hs, ex, 1);
	records(&wire, &hs, 16384);
	ok(hs.n == TLS_HELLO_MAX_MSG + 4 && tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_DONE,
	   "a hello of exactly %u bytes parses", TLS_HELLO_MAX_MSG);
	/* records in 1-byte fragments hit the byte bound before the message ends */
	records(&wire, &hs, 1);
	ok(tls_hello_parse(wire.b, wire.n, &h) == TLS_HELLO_TOO_BIG, "a large hello in 1-byte records: too big");
	return tap_done();
}
