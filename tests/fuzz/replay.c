/* Plain replay of the fuzz targets: every file under tests/fuzz/regressions/T/
 * (inputs that once crashed, kept forever) and tests/fuzz/corpus/T/ (the
 * committed seed corpus) is fed to target T, built without libFuzzer, with the
 * project's normal compiler and flags (and SANITIZE, when set). Included by
 * tests/unit/test_fuzz_regressions.c, so it runs in `make unit` and CI.
 *
 *   test_fuzz_regressions                  every target, TAP, one line each
 *   test_fuzz_regressions TARGET FILE...   those files through one target
 *
 * Each target runs in a child process, so a crash names the target and the
 * input; FUZZ_DIR overrides where tests/fuzz is (default: found from the
 * binary's own path, else ./tests/fuzz). */
#define FUZZ_REPLAY_ALL 1

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_agent_config.c"
#include "fuzz_bpf.c"
#include "fuzz_config.c"
#include "fuzz_dns.c"
#include "fuzz_egress.c"
#include "fuzz_gateway_h1.c"
#include "fuzz_gateway_resp.c"
#include "fuzz_gateway_scan.c"
#include "fuzz_gitmeta.c"
#include "fuzz_http_head.c"
#include "fuzz_kit.c"
#include "fuzz_nflog.c"
#include "fuzz_process.c"
#include "fuzz_resources.c"
#include "fuzz_state.c"
#include "fuzz_tls_hello.c"
#include "fuzz_yaml.c"

static int replay_no_init(void) { return 0; }

static const struct replay_target {
	const char *name;
	int (*one)(const uint8_t *, size_t);
	int (*init)(void);
} replay_targets[] = {
	{"agent_config", fuzz_one_agent_config, fuzz_init_agent_config},
	{"bpf", fuzz_one_bpf, replay_no_init},
	{"config", fuzz_one_config, fuzz_init_config},
	{"dns", fuzz_one_dns, replay_no_init},
	{"egress", fuzz_one_egress, replay_no_init},
#if __has_include(<http_parser.h>)
	{"gateway_h1", fuzz_one_gateway_h1, fuzz_init_gateway_h1},
	{"gateway_resp", fuzz_one_gateway_resp, fuzz_init_gateway_resp},
#endif
	{"gateway_scan", fuzz_one_gateway_scan, fuzz_init_gateway_scan},
	{"gitmeta", fuzz_one_gitmeta, fuzz_init_gitmeta},
	{"http_head", fuzz_one_http_head, replay_no_init},
#if __has_include("kit.h")
	{"kit", fuzz_one_kit, fuzz_init_kit},
#endif
	{"nflog", fuzz_one_nflog, replay_no_init},
	{"process", fuzz_one_process, replay_no_init},
	{"resources", fuzz_one_resources, replay_no_init},
	{"state", fuzz_one_state, fuzz_init_state},
	{"tls_hello", fuzz_one_tls_hello, replay_no_init},
	{"yaml", fuzz_one_yaml, replay_no_init},
};

/* Where the child is, for the parent's report after a crash. */
static char *replay_current;

static int replay_file(const struct replay_target *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "# %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		abort();
	if (replay_current)
		snprintf(replay_current, PATH_MAX, "%s", path);
	/* an exact-size copy, so ASan sees any read past the input */
	uint8_t *exact = malloc(len ? len : 1);
	memcpy(exact, buf, len);
	free(buf);
	t->one(exact, len);
	free(exact);
	return 0;
}

static int replay_dir(const struct replay_target *t, const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	struct dirent *de;
	int r = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "README") == 0)
			continue;
		char path[2 * PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(t, path) < 0)
			r = -1;
		(*count)++;
	}
	closedir(d);
	return r;
}

static const char *replay_fuzz_dir(void)
{
	static char dir[PATH_MAX + 16];
	const char *env = getenv("FUZZ_DIR");
	if (env)
		return env;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;   /* .../tests/unit */
			snprintf(dir, sizeof dir, "%s/../fuzz", exe);
			if (access(dir, F_OK) == 0)
				return dir;
		}
	}
	return "tests/fuzz";
}

static const struct replay_target *replay_find(const char *name)
{
	for (size_t i = 0; i < sizeof replay_targets / sizeof replay_targets[0]; i++)
		if (strcmp(replay_targets[i].name, name) == 0)
			return &replay_targets[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		const struct replay_target *t = replay_find(argv[1]);
		if (!t) {
			fprintf(stderr, "unknown target %s\n", argv[1]);
			return 2;
		}
		t->init();
		for (int i = 2; i < argc; i++) {
			fprintf(stderr, "# %s %s\n", t->name, argv[i]);
			if (replay_file(t, argv[i]) < 0)
				return 1;
		}
		return 0;
	}
	const char *dir = replay_fuzz_dir();
	replay_current = mmap(NULL, PATH_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (replay_current == MAP_FAILED)
		return 1;
	size_t n_targets = sizeof replay_targets / sizeof replay_targets[0];
	int failed = 0;
	printf("1..%zu\n", n_targets);
	fflush(stdout);
	for (size_t i = 0; i < n_targets; i++) {
		const struct replay_target *t = &replay_targets[i];
		replay_current[0] = 0;
		int counts[2] = {0, 0};
		int pipefd[2];
		if (pipe(pipefd) < 0)
			return 1;
		pid_t pid = fork();
		if (pid == 0) {
			close(pipefd[0]);
			t->init();
			size_t reg = 0, corp = 0;
			char path[PATH_MAX + 64];
			snprintf(path, sizeof path, "%s/regressions/%s", dir, t->name);
			int r = replay_dir(t, path, &reg);
			snprintf(path, sizeof path, "%s/corpus/%s", dir, t->name);
			if (replay_dir(t, path, &corp) < 0)
				r = -1;
			int c[2] = {(int)reg, (int)corp};
			(void)!write(pipefd[1], c, sizeof c);
			/* exit, not _exit: LeakSanitizer reports at exit */
			exit(r < 0 ? 3 : 0);
		}
		close(pipefd[1]);
		(void)!read(pipefd[0], counts, sizeof counts);
		close(pipefd[0]);
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %zu - %s: %d regression inputs, %d corpus inputs\n", i + 1, t->name, counts[0],
			       counts[1]);
		} else {
			failed++;
			if (WIFSIGNALED(status))
				printf("not ok %zu - %s: killed by signal %d on %s\n", i + 1, t->name, WTERMSIG(status),
				       replay_current);
			else
				printf("not ok %zu - %s: exit status %d (last input %s)\n", i + 1, t->name,
				       WEXITSTATUS(status), replay_current[0] ? replay_current : "none");
			printf("#   replay: %s %s FILE\n", argv[0], t->name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
