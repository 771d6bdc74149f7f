/* abbench — the timing driver of agentbox's benchmark (bench/run.sh).
 *
 *   abbench reap -- CMD [ARG...]
 *       Run CMD as a child subreaper: container processes orphaned by a runtime
 *       (run -d, create/start) are reparented here and reaped at once, so a
 *       stopped container never lingers as a zombie of a slow PID 1. Exits
 *       with CMD's status.
 *
 *   abbench rounds [-n ROUNDS] [-w WARMUP] [-s SECTION] [-l LOG] PLAN OUT
 *       Run the cases of PLAN alternately: round r runs every case once, in
 *       the order of row r of a Williams design (round_order.h), so over every
 *       few rounds each case runs in each position and right after each other
 *       case equally often: none always goes first or always follows the same
 *       neighbour (and pays for the work it left running). WARMUP rounds run
 *       first and are not recorded. Each
 *       timed step appends one JSON line to OUT:
 *         {"section","case","label","round","ns","utime_us","stime_us",
 *          "maxrss_kb","status"}
 *       ns is wall time from spawn to reap (CLOCK_MONOTONIC); maxrss_kb,
 *       utime/stime come from wait4(): the peak RSS of the process and of the
 *       descendants it reaped itself, and their CPU time.
 *       The children's stdout/stderr go to LOG (default /dev/null).
 *
 * PLAN, one directive a line, fields split on blanks, '#' starts a comment:
 *   case NAME
 *   step LABEL ARGV...     timed; LABEL "-" runs it untimed
 * ARGV may use {case}, {round} (the round number, warm-up rounds negative)
 * and {id} (NAME-ROUND, an id unique to the case and round). Built-in steps:
 *   @sleep MS               wait MS milliseconds
 *   @poll WORD ARGV...      run ARGV every 5 ms until its stdout contains WORD
 *                           (at most 5 s; status 1 if it never does)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "round_order.h"

extern char **environ;

#define MAX_CASES 32
#define MAX_STEPS 16
#define MAX_ARGS 128

struct step {
	char *label;
	int argc;
	char *argv[MAX_ARGS];
};

struct bcase {
	char *name;
	int nsteps;
	struct step steps[MAX_STEPS];
	int failures;
};

static struct bcase cases[MAX_CASES];
static int ncases;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("abbench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ------------------------------------------------------------------ reap */

static int cmd_reap(int argc, char **argv)
{
	if (argc < 1)
		die("usage: abbench reap -- CMD [ARG...]");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	pid_t main_pid;
	int r = posix_spawnp(&main_pid, argv[0], NULL, NULL, argv, environ);
	if (r)
		die("spawn %s: %s", argv[0], strerror(r));
	/* pass the usual stop signals on to the main child, not to ourselves */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status = 0;
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, 0);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing left */
		}
		if (p == main_pid) {
			status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			/* whatever is still running (a leaked container) goes on to our
			 * parent; reap what has already exited and leave */
			while (waitpid(-1, &st, WNOHANG) > 0)
				;
			return status;
		}
	}
	return status;
}

/* ------------------------------------------------------------------ plan */

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		die("out of memory");
	return d;
}

static void load_plan(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		die("open %s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *tok[MAX_ARGS + 2];
		int n = 0;
		for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t;
		     t = strtok_r(NULL, " \t\r\n", &save)) {
			if (n == MAX_ARGS + 2)
				die("%s:%d: too many fields", path, lineno);
			tok[n++] = t;
		}
		if (n == 0)
			continue;
		if (!strcmp(tok[0], "case")) {
			if (n != 2)
				die("%s:%d: usage: case NAME", path, lineno);
			if (ncases == MAX_CASES)
				die("%s:%d: too many cases", path, lineno);
			cases[ncases++].name = xstrdup(tok[1]);
		} else if (!strcmp(tok[0], "step")) {
			if (n < 3)
				die("%s:%d: usage: step LABEL ARGV...", path, lineno);
			if (ncases == 0)
				die("%s:%d: step before any case", path, lineno);
			struct bcase *c = &cases[ncases - 1];
			if (c->nsteps == MAX_STEPS)
				die("%s:%d: too many steps", path, lineno);
			struct step *s = &c->steps[c->nsteps++];
			s->label = xstrdup(tok[1]);
			for (int i = 2; i < n; i++)
				s->argv[s->argc++] = xstrdup(tok[i]);
		} else {
			die("%s:%d: unknown directive %s", path, lineno, tok[0]);
		}
	}
	free(line);
	fclose(f);
	if (ncases == 0)
		die("%s: no case", path);
}

/* expand {case}, {round}, {id} into a new string */
static char *expand(const char *arg, const char *cname, int round)
{
	char buf[4096];
	size_t o = 0;
	for (const char *p = arg; *p;) {
		char sub[256];
		const char *rep = NULL;
		size_t skip = 0;
		if (!strncmp(p, "{case}", 6)) {
			rep = cname, skip = 6;
		} else if (!strncmp(p, "{round}", 7)) {
			snprintf(sub, sizeof sub, "%d", round);
			rep = sub, skip = 7;
		} else if (!strncmp(p, "{id}", 4)) {
			snprintf(sub, sizeof sub, "%s-%s%d", cname, round < 0 ? "w" : "", round < 0 ? -round : round);
			rep = sub, skip = 4;
		}
		if (rep) {
			size_t l = strlen(rep);
			if (o + l >= sizeof buf)
				die("argument too long: %s", arg);
			memcpy(buf + o, rep, l);
			o += l;
			p += skip;
		} else {
			if (o + 1 >= sizeof buf)
				die("argument too long: %s", arg);
			buf[o++] = *p++;
		}
	}
	buf[o] = 0;
	return xstrdup(buf);
}

/* ------------------------------------------------------------------ rounds */

struct result {
	int64_t ns;
	long utime_us, stime_us, maxrss_kb;
	int status;
};

/* run argv once; 0 if its stdout contains word */
static int poll_once(const char *word, char **argv, int logfd)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	pid_t pid;
	int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		return -1;
	}
	char buf[65536];
	size_t n = 0;
	ssize_t k;
	while (n < sizeof buf - 1 && ((k = read(p[0], buf + n, sizeof buf - 1 - n)) > 0 || (k < 0 && errno == EINTR)))
		if (k > 0)
			n += (size_t)k;
	buf[n] = 0;
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return strstr(buf, word) ? 0 : 1;
}

static int run_step(const struct step *s, const char *cname, int round, int logfd, struct result *res)
{
	char *argv[MAX_ARGS + 1];
	for (int i = 0; i < s->argc; i++)
		argv[i] = expand(s->argv[i], cname, round);
	argv[s->argc] = NULL;
	memset(res, 0, sizeof *res);

	if (!strcmp(argv[0], "@poll") && s->argc >= 3) {
		int64_t t0 = now_ns();
		res->status = 1;
		while (now_ns() - t0 < 5000000000LL) {
			if (poll_once(argv[1], argv + 2, logfd) == 0) {
				res->status = 0;
				break;
			}
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
		}
		res->ns = now_ns() - t0;
		if (res->status)
			dprintf(logfd, "abbench: @poll: \"%s\" never showed in the output of %s\n", argv[1], argv[2]);
		goto out;
	}
	if (!strcmp(argv[0], "@sleep")) {
		long ms = argv[1] ? atol(argv[1]) : 0;
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
		int64_t t0 = now_ns();
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		res->ns = now_ns() - t0;
		goto out;
	}

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	pid_t pid;
	int64_t t0 = now_ns();
	int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r) {
		dprintf(logfd, "abbench: spawn %s: %s\n", argv[0], strerror(r));
		res->status = 127;
		goto out;
	}
	int st;
	struct rusage ru;
	pid_t p;
	while ((p = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
		;
	res->ns = now_ns() - t0;
	if (p < 0)
		die("wait4: %s", strerror(errno));
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	res->utime_us = ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec;
	res->stime_us = ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec;
	res->maxrss_kb = ru.ru_maxrss;
	if (res->status) {
		dprintf(logfd, "abbench: ^ exit status %d:", res->status);
		for (int i = 0; argv[i]; i++)
			dprintf(logfd, " %s", argv[i]);
		dprintf(logfd, "\n");
	}
out:
	for (int i = 0; argv[i]; i++)
		free(argv[i]);
	return res->status;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int cmd_rounds(int argc, char **argv)
{
	int rounds = 10, warmup = 1, opt;
	const char *section = "", *log = "/dev/null";
	while ((opt = getopt(argc, argv, "+n:w:s:l:")) != -1) {
		switch (opt) {
		case 'n': rounds = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 's': section = optarg; break;
		case 'l': log = optarg; break;
		default: die("usage: abbench rounds [-n ROUNDS] [-w WARMUP] [-s SECTION] [-l LOG] PLAN OUT");
		}
	}
	if (argc - optind != 2)
		die("usage: abbench rounds [-n ROUNDS] [-w WARMUP] [-s SECTION] [-l LOG] PLAN OUT");
	load_plan(argv[optind]);
	FILE *out = fopen(argv[optind + 1], "ae");
	if (!out)
		die("open %s: %s", argv[optind + 1], strerror(errno));
	int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		die("open %s: %s", log, strerror(errno));

	for (int r = -warmup; r < rounds; r++) {
		for (int k = 0; k < ncases; k++) {
			int ci = round_order_case(ncases, r, k);
			struct bcase *c = &cases[ci];
			for (int si = 0; si < c->nsteps; si++) {
				struct step *s = &c->steps[si];
				struct result res;
				run_step(s, c->name, r, logfd, &res);
				if (res.status)
					c->failures++;
				if (r < 0 || !strcmp(s->label, "-"))
					continue;
				fputs("{\"section\":", out);
				json_str(out, section);
				fputs(",\"case\":", out);
				json_str(out, c->name);
				fputs(",\"label\":", out);
				json_str(out, s->label);
				fprintf(out, ",\"round\":%d,\"ns\":%lld,\"utime_us\":%ld,\"stime_us\":%ld,"
					     "\"maxrss_kb\":%ld,\"status\":%d}\n",
					r, (long long)res.ns, res.utime_us, res.stime_us, res.maxrss_kb, res.status);
			}
		}
		fflush(out);
	}
	int bad = 0;
	for (int i = 0; i < ncases; i++) {
		if (cases[i].failures) {
			fprintf(stderr, "abbench: %s: %s: %d failed step(s), see %s\n", section, cases[i].name,
				cases[i].failures, log);
			bad = 1;
		}
	}
	fclose(out);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: abbench reap -- CMD... | abbench rounds [OPTIONS] PLAN OUT");
	if (!strcmp(argv[1], "reap")) {
		int i = 2;
		if (i < argc && !strcmp(argv[i], "--"))
			i++;
		return cmd_reap(argc - i, argv + i);
	}
	if (!strcmp(argv[1], "rounds"))
		return cmd_rounds(argc - 1, argv + 1);
	die("unknown command %s", argv[1]);
}
