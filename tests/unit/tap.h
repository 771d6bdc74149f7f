/* Minimal TAP producer for the C unit tests. */
#ifndef AGENTBOX_TAP_H
#define AGENTBOX_TAP_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;
#define ok(cond, ...) do { \
	int _ok = !!(cond); \
	tap_n++; \
	if (_ok) { printf("ok %d - ", tap_n); } \
	else { tap_failed++; printf("not ok %d - ", tap_n); } \
	printf(__VA_ARGS__); printf("\n"); \
	if (!_ok) printf("#   failed at %s:%d\n", __FILE__, __LINE__); \
} while (0)
#define is_str(got, want, ...) do { const char *_g = (got), *_w = (want); \
	ok(_g && _w && strcmp(_g, _w) == 0, __VA_ARGS__); \
	if (!(_g && _w && strcmp(_g, _w) == 0)) printf("#   got: '%s'\n#   expected: '%s'\n", _g ? _g : "(null)", _w ? _w : "(null)"); \
} while (0)
#define has_substr(got, want, ...) do { const char *_g = (got), *_w = (want); \
	ok(_g && strstr(_g, _w), __VA_ARGS__); \
	if (!(_g && strstr(_g, _w))) printf("#   got: '%s'\n#   expected to contain: '%s'\n", _g ? _g : "(null)", _w); \
} while (0)
static inline int tap_done(void) { printf("1..%d\n", tap_n); return tap_failed ? 1 : 0; }
#endif
