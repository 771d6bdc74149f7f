/* The compiled-seccomp cache: a hit gives the same program as a compile, a damaged
 * or foreign file is never used, a directory others can write is ignored, and
 * SHA-256 is right on the standard vectors. */
#include "seccomp.h"
#include "sha256.h"
#include "tap.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static char *first_file(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *r = NULL;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			r = xasprintf("%s/%s", dir, de->d_name);
	if (d)
		closedir(d);
	return r;
}

static bool same_prog(const struct seccomp_prog *a, const struct seccomp_prog *b)
{
	return a->len == b->len && a->flags == b->flags && a->notify == b->notify &&
	       memcmp(a->filter, b->filter, a->len * sizeof *a->filter) == 0;
}

int main(void)
{
	static const char *const vec[][2] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(vec); i++) {
		struct sha256 h;
		uint8_t d[32];
		char hex[65];
		sha256_init(&h);
		sha256_update(&h, vec[i][0], strlen(vec[i][0]));
		sha256_final(&h, d);
		sha256_hex(d, hex);
		is_str(hex, vec[i][1], "sha256 of \"%s\"", vec[i][0]);
	}

	char tmpl[] = "/tmp/abtest-seccache.XXXXXX";
	char *base = mkdtemp(tmpl);
	char *cache = xasprintf("%s/cache", base);
	struct ab_err err;
	struct seccomp_prog ref, a, b, c;
	struct arena ar = {0};
	struct oci_seccomp *prof;
	struct oci_seccomp *prof0;
	ok(seccomp_builtin_profile("agent", &ar, &prof0, &err) == 0, "agent profile parses (kept unchanged)");
	ok(seccomp_builtin_profile("agent", &ar, &prof, &err) == 0, "agent profile parses");
	ok(seccomp_compile(prof, &ref, &err) == 0, "agent profile compiles");

	ok(seccomp_builtin_compile_cached("agent", cache, &a, &err) == 0, "first cached compile (miss)");
	ok(count_files(cache) == 1, "one cache file written");
	struct stat st;
	ok(stat(cache, &st) == 0 && (st.st_mode & 0777) == 0700, "cache dir is 0700");
	ok(seccomp_builtin_compile_cached("agent", cache, &b, &err) == 0, "second (hit)");
	ok(same_prog(&ref, &a) && same_prog(&ref, &b), "hit and miss give the compiled program");

	/* damage the file: it is not used, and a good one replaces it */
	char *f = first_file(cache, "builtin-agent-");
	int fd = open(f, O_WRONLY);
	ok(fd >= 0 && pwrite(fd, "\xff\xff\xff\xff", 4, 100) == 4, "corrupt the cached program");
	close(fd);
	ok(seccomp_builtin_compile_cached("agent", cache, &c, &err) == 0 && same_prog(&ref, &c),
	   "a corrupt entry is recompiled, not loaded");
	seccomp_prog_free(&c);
	ok(seccomp_builtin_compile_cached("agent", cache, &c, &err) == 0 && same_prog(&ref, &c),
	   "and rewritten good");
	seccomp_prog_free(&c);

	/* an engine profile: keyed by SHA-256 of its content */
	ok(seccomp_compile_cached(prof, cache, &c, &err) == 0 && same_prog(&ref, &c), "engine-profile path");
	seccomp_prog_free(&c);
	ok(count_files(cache) == 2, "a second entry under a content key");
	prof->syscalls[0].action = prof->syscalls[0].action == SECCOMP_ACT_ALLOW_ ? SECCOMP_ACT_LOG_ : SECCOMP_ACT_ALLOW_;
	ok(seccomp_compile_cached(prof, cache, &c, &err) == 0, "a changed profile compiles");
	ok(!same_prog(&ref, &c), "and is not served the old program");
	ok(count_files(cache) == 3, "under its own key");
	seccomp_prog_free(&c);

	/* a directory others can write is not trusted */
	char *open_dir = xasprintf("%s/open", base);
	mkdir(open_dir, 0777);
	chmod(open_dir, 0777);
	struct seccomp_prog lib;
	ok(seccomp_compile_libseccomp(prof0, &lib, &err) == 0 && !same_prog(&ref, &lib),
	   "libseccomp's program differs from the shortened one");
	ok(seccomp_builtin_compile_cached("agent", open_dir, &c, &err) == 0 && same_prog(&lib, &c),
	   "a world-writable cache dir still compiles (libseccomp's program: not worth shortening uncached)");
	ok(count_files(open_dir) == 0, "but nothing is read from or written to it");
	seccomp_prog_free(&c);
	ok(seccomp_builtin_compile_cached("agent", NULL, &c, &err) == 0 && same_prog(&lib, &c),
	   "no cache dir: libseccomp's program");
	seccomp_prog_free(&c);
	ok(seccomp_compile_cached(prof0, NULL, &c, &err) == 0 && same_prog(&lib, &c),
	   "engine profile, no cache dir: libseccomp's program");
	seccomp_prog_free(&c);
	seccomp_prog_free(&lib);

	/* old entries go when a new one is written; young ones and other files stay */
	char *gc_dir = xasprintf("%s/gc", base);
	mkdir(gc_dir, 0700);
	const char *names[] = {"old.bpf", "old.bpf.tmp", "young.bpf", "old.txt"};
	struct timespec forty_days_ago[2] = {{.tv_sec = time(NULL) - 40L * 24 * 3600},
					     {.tv_sec = time(NULL) - 40L * 24 * 3600}};
	for (size_t i = 0; i < 4; i++) {
		char *fp = xasprintf("%s/%s", gc_dir, names[i]);
		int gfd = open(fp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		close(gfd);
		if (strcmp(names[i], "young.bpf") != 0)
			utimensat(AT_FDCWD, fp, forty_days_ago, 0);
		free(fp);
	}
	ok(seccomp_builtin_compile_cached("agent", gc_dir, &c, &err) == 0 && same_prog(&ref, &c),
	   "a miss in a directory with old entries compiles");
	seccomp_prog_free(&c);
	char *probe = xasprintf("%s/old.bpf", gc_dir);
	ok(access(probe, F_OK) < 0 && errno == ENOENT, "an entry written 40 days ago is removed");
	free(probe);
	probe = xasprintf("%s/old.bpf.tmp", gc_dir);
	ok(access(probe, F_OK) < 0 && errno == ENOENT, "and an old temporary file");
	free(probe);
	probe = xasprintf("%s/young.bpf", gc_dir);
	ok(access(probe, F_OK) == 0, "a young entry stays");
	free(probe);
	probe = xasprintf("%s/old.txt", gc_dir);
	ok(access(probe, F_OK) == 0, "a file that is not an entry stays, however old");
	free(probe);
	ok(count_files(gc_dir) == 3, "with the new entry: young.bpf, old.txt and it");
	free(gc_dir);

	seccomp_prog_free(&ref);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
	arena_free(&ar);
	struct ab_err e;
	rm_rf_at(AT_FDCWD, base, &e);
	free(f);
	free(cache);
	free(open_dir);
	return tap_done();
}
