/* The TLS ClientHello as the sentry reads it from a container's connection:
 * any byte string, whole or cut anywhere, is parsed or refused within bounds;
 * "incomplete" always asks for more than it has; a name is only called valid
 * when it is a lowercase DNS name. */
#include "fuzz.h"

#include "tls_hello.h"

static void fz_tls_check(const uint8_t *data, size_t size, enum tls_hello_status s, const struct tls_hello *h)
{
	FUZZ_CHECK(s >= TLS_HELLO_TOO_BIG && s <= TLS_HELLO_MORE, "status %d", s);
	if (s == TLS_HELLO_MORE)
		FUZZ_CHECK(h->need > size && h->need <= TLS_HELLO_MAX_BYTES, "need %zu with %zu", h->need, size);
	if (s == TLS_HELLO_DONE)
		FUZZ_CHECK(h->hello_bytes > 0 && h->hello_bytes <= size, "hello of %zu in %zu", h->hello_bytes, size);
	else
		FUZZ_CHECK(!h->has_sni, "a name without a hello");
	size_t n = strnlen(h->sni, sizeof h->sni);
	FUZZ_CHECK(n < sizeof h->sni, "name not terminated");
	if (h->sni_valid) {
		FUZZ_CHECK(h->has_sni && n > 0 && n <= 253 && h->sni[0] != '.' && h->sni[n - 1] != '.', "name \"%s\"", h->sni);
		for (size_t i = 0; i < n; i++)
			FUZZ_CHECK((h->sni[i] >= 'a' && h->sni[i] <= 'z') || (h->sni[i] >= '0' && h->sni[i] <= '9') ||
				   h->sni[i] == '-' || h->sni[i] == '_' || h->sni[i] == '.', "byte %#x in a valid name", h->sni[i]);
	}
}

FUZZ_TARGET(tls_hello)
{
	struct tls_hello h;
	enum tls_hello_status s = tls_hello_parse(data, size, &h);
	fz_tls_check(data, size, s, &h);
	/* what a complete hello says does not depend on bytes after it */
	if (s == TLS_HELLO_DONE) {
		struct tls_hello h2;
		FUZZ_CHECK(tls_hello_parse(data, h.hello_bytes, &h2) == TLS_HELLO_DONE &&
			   strcmp(h.sni, h2.sni) == 0 && h.ech == h2.ech, "the hello alone reads differently");
		/* and each proper prefix of it is incomplete */
		size_t cut = size ? data[0] % h.hello_bytes : 0;
		FUZZ_CHECK(tls_hello_parse(data, cut, &h2) == TLS_HELLO_MORE, "prefix of %zu", cut);
	}
	return 0;
}
