/* Shared glue of the libFuzzer targets (tests/fuzz/fuzz_*.c).
 *
 * Each target defines its entry point with FUZZ_TARGET(name) and, if it needs
 * one-time setup, FUZZ_INIT(name). Built with clang -fsanitize=fuzzer they are
 * LLVMFuzzerTestOneInput / LLVMFuzzerInitialize; built with FUZZ_REPLAY_ALL
 * (tests/unit/test_fuzz_regressions.c includes every target into one plain
 * program) they are fuzz_one_NAME / fuzz_init_NAME, so the regression inputs
 * and the seed corpus replay in the ordinary unit-test run, under whatever
 * SANITIZE the build has.
 *
 * A target returns 0 and never exits: a finding is a crash, a sanitizer report,
 * or FUZZ_CHECK failing (abort), which libFuzzer saves as a crash input. */
#ifndef AGENTBOX_FUZZ_H
#define AGENTBOX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FUZZ_REPLAY_ALL
#define FUZZ_TARGET(name) int fuzz_one_##name(const uint8_t *data, size_t size)
#define FUZZ_INIT(name) int fuzz_init_##name(void)
#else
#define FUZZ_TARGET(name) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#define FUZZ_INIT(name) \
	static int fuzz_init_##name(void); \
	int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return fuzz_init_##name(); } \
	static int fuzz_init_##name(void)
#endif

/* An invariant of the code under test: its failure is a finding. */
#define FUZZ_CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

/* The input as a NUL-terminated string (the parsers take C strings); caller frees. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* An error message must be a terminated, non-empty string after a failure. */
#define FUZZ_CHECK_ERR(e) FUZZ_CHECK((e)->msg[0] && memchr((e)->msg, 0, sizeof (e)->msg), "bad error message")

#endif
