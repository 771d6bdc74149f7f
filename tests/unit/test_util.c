/* Unit tests of lib/util.c helpers that have their own arithmetic. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

/* path_lookup: a directory, a file without x, and an empty entry (the current
 * directory for execvp) are passed over; the first executable file wins */
static void test_path_lookup(void)
{
	char dir[] = "/tmp/test_util.XXXXXX", path[2048], buf[1024];
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	char a[600], b[600], c[600], f[700];
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	snprintf(c, sizeof c, "%s/c", dir);
	mkdir(a, 0755);
	mkdir(b, 0755);
	mkdir(c, 0755);
	snprintf(f, sizeof f, "%s/prog", a);
	mkdir(f, 0755);                                   /* a: a directory of that name */
	snprintf(f, sizeof f, "%s/prog", b);
	close(open(f, O_WRONLY | O_CREAT, 0644));         /* b: not executable */
	snprintf(f, sizeof f, "%s/prog", c);
	close(open(f, O_WRONLY | O_CREAT, 0755));         /* c: the one */
	const char *saved = getenv("PATH");
	char *keep = saved ? strdup(saved) : NULL;
	char cwd[600];
	if (!getcwd(cwd, sizeof cwd))
		cwd[0] = 0;
	if (chdir(c) < 0)
		ok(0, "chdir");
	snprintf(path, sizeof path, ":%s:%s", a, b);
	setenv("PATH", path, 1);
	ok(!path_lookup("prog", buf, sizeof buf), "path_lookup: an empty entry is not the current directory");
	snprintf(path, sizeof path, "%s::%s:%s", a, b, c);
	setenv("PATH", path, 1);
	ok(path_lookup("prog", buf, sizeof buf) && strcmp(buf, f) == 0,
	   "path_lookup: a directory and a file without x are passed over: %s", buf);
	ok(!path_lookup("none", buf, sizeof buf), "path_lookup: nothing found");
	ok(!path_lookup("prog", buf, 8), "path_lookup: a name that does not fit the buffer is not found");
	if (keep)
		setenv("PATH", keep, 1);
	free(keep);
	if (cwd[0] && chdir(cwd) < 0)
		ok(0, "chdir back");
	unlink(f);
	snprintf(f, sizeof f, "%s/prog", b);
	unlink(f);
	snprintf(f, sizeof f, "%s/prog", a);
	rmdir(f);
	rmdir(a);
	rmdir(b);
	rmdir(c);
	rmdir(dir);
}

/* what glibc says, for comparison (it may read /etc/localtime: fine in a test) */
static void reference(char *buf, size_t len, time_t t, long ns)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09ldZ", ns);
}

int main(void)
{
	static const time_t cases[] = {
		0,                 /* the epoch */
		-1,                /* 1969-12-31T23:59:59 */
		-86400 * 365LL,    /* 1969-01-01 */
		951782400,         /* 2000-02-29, a leap day of a year divisible by 400 */
		951868800,         /* 2000-03-01 */
		1709164800,        /* 2024-02-29 */
		4107542400LL,      /* 2100-03-01, 2100 is not a leap year */
		4102444799LL,      /* 2099-12-31T23:59:59 */
		253402300799LL,    /* 9999-12-31T23:59:59 */
		-2208988800LL,     /* 1900-01-01 */
	};
	char got[64], want[64];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct timespec ts = {.tv_sec = cases[i], .tv_nsec = 123456789};
		format_rfc3339_at(got, sizeof got, &ts);
		reference(want, sizeof want, cases[i], 123456789);
		is_str(got, want, "format_rfc3339_at(%lld)", (long long)cases[i]);
	}
	/* every day of four centuries, at 23:59:59 */
	int bad = 0;
	for (long long day = -50000; day < 100000 && bad < 3; day++) {
		struct timespec ts = {.tv_sec = day * 86400 + 86399, .tv_nsec = 0};
		format_rfc3339_at(got, sizeof got, &ts);
		reference(want, sizeof want, ts.tv_sec, 0);
		if (strcmp(got, want) != 0) {
			printf("# day %lld: got %s, expected %s\n", day, got, want);
			bad++;
		}
	}
	ok(bad == 0, "format_rfc3339_at agrees with gmtime_r on 150,000 consecutive days");
	char now[64];
	format_rfc3339(now, sizeof now);
	ok(strlen(now) == 30 && now[10] == 'T' && now[29] == 'Z', "format_rfc3339 of now: %s", now);
		/* proc_is: a pid with its start time, as the state records them */
	uint64_t self_start = 0;
	ok(proc_start_time(getpid(), &self_start) == 0, "proc_start_time of ourselves");
	ok(proc_is(getpid(), self_start), "proc_is: ourselves with our start time");
	ok(!proc_is(getpid(), self_start + 1), "proc_is: ourselves with another start time (a recycled pid)");
	ok(!proc_is(0, self_start), "proc_is: pid 0");
	ok(!proc_is(-1, self_start), "proc_is: a negative pid");
	test_path_lookup();
	return tap_done();
}
