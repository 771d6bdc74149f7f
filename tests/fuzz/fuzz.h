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

/* A scratch directory BASE/agentbox-fuzz-NAME.PID for targets that need files,
 * removed at exit; directories that a crashed or killed run left (their PID is
 * gone) are removed first. Returns the path (static storage per call site). */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static int fuzz_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void fuzz_rm_tree(const char *dir)
{
	nftw(dir, fuzz_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static inline void fuzz_scratch_dir(const char *base, const char *name, char *out, size_t len)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "agentbox-fuzz-%s.", name);
	DIR *d = opendir(base);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		long pid = atol(de->d_name + strlen(prefix));
		if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			char stale[512];
			snprintf(stale, sizeof stale, "%s/%s", base, de->d_name);
			fuzz_rm_tree(stale);
		}
	}
	if (d)
		closedir(d);
	snprintf(out, len, "%s/%s%ld", base, prefix, (long)getpid());
	fuzz_rm_tree(out);
	if (mkdir(out, 0700) < 0)
		abort();
}

#endif
