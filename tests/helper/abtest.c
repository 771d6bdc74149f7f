/*
 * abtest — the static multi-call helper that goes into every test rootfs.
 *
 * Invoked as `abtest CMD ARGS...` or through a symlink named CMD. Every
 * command is small, prints one fact about the process it runs in, and exits
 * 0 unless the command says otherwise. `abtest help` lists the commands.
 *
 * Built static (see the Makefile) so it runs in a rootfs without libc.
 */
#define _GNU_SOURCE
/* every command has the (argc, argv) signature; most ignore one of them */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "EUNKNOWN";
}

static int die(const char *what)
{
	fprintf(stderr, "abtest: %s: %s\n", what, strerror(errno));
	return 1;
}

static int usage(const char *msg)
{
	fprintf(stderr, "abtest: %s\n", msg);
	return 2;
}

/* Copy a file (or stdin when fd given) to stdout. */
static int copy_fd(int fd)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		ssize_t off = 0;
		while (off < n) {
			ssize_t w = write(1, buf + off, n - off);
			if (w < 0)
				return -1;
			off += w;
		}
	}
	return n < 0 ? -1 : 0;
}

static int cat_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return die(path);
	int r = copy_fd(fd);
	close(fd);
	return r < 0 ? die(path) : 0;
}

/* Print the lines of /proc/self/status whose key is in keys[]. */
static int status_lines(const char *const *keys)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[512];

	if (!f)
		return die("/proc/self/status");
	while (fgets(line, sizeof line, f)) {
		for (const char *const *k = keys; *k; k++) {
			size_t l = strlen(*k);
			if (strncmp(line, *k, l) == 0 && line[l] == ':') {
				fputs(line, stdout);
				break;
			}
		}
	}
	fclose(f);
	return 0;
}

static volatile sig_atomic_t got_sig;
static void on_signal(int sig) { got_sig = sig; }

static int cmd_echo(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		printf("%s%s", i > 1 ? " " : "", argv[i]);
	putchar('\n');
	return 0;
}

static int cmd_sleep(int argc, char **argv)
{
	if (argc < 2)
		return usage("sleep SECS");
	double s = strtod(argv[1], NULL);
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}

/* Wait for signals; on SIGTERM/SIGINT/SIGHUP/SIGUSR1 say so and exit 0. */
static int cmd_pause(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
	/* say we are ready, so a test can wait for this line instead of sleeping */
	if (argc > 1 && strcmp(argv[1], "-q") != 0) {
		printf("%s\n", argv[1]);
		fflush(stdout);
	}
	while (!got_sig)
		pause();
	printf("got signal %d\n", (int)got_sig);
	return 0;
}

static int cmd_isatty(int argc, char **argv)
{
	int fd = argc > 1 ? atoi(argv[1]) : 0;
	int yes = isatty(fd);
	printf("%s\n", yes ? "yes" : "no");
	return yes ? 0 : 1;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Open fds of this process, except the one used to list them. */
static int cmd_fds(int argc, char **argv)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[4096], n = 0;

	if (!d)
		return die("/proc/self/fd");
	while ((e = readdir(d)) && n < 4096) {
		if (e->d_name[0] == '.')
			continue;
		int fd = atoi(e->d_name);
		if (fd != dirfd(d))
			fds[n++] = fd;
	}
	closedir(d);
	qsort(fds, n, sizeof fds[0], cmp_int);
	for (int i = 0; i < n; i++) {
		char p[64], t[4096];
		snprintf(p, sizeof p, "/proc/self/fd/%d", fds[i]);
		ssize_t l = readlink(p, t, sizeof t - 1);
		t[l < 0 ? 0 : l] = 0;
		printf("%d -> %s\n", fds[i], l < 0 ? errname(errno) : t);
	}
	return 0;
}

static int cmd_id(int argc, char **argv)
{
	gid_t g[256];
	int n = getgroups(256, g);
	mode_t um = umask(0);

	umask(um);
	printf("uid=%u gid=%u groups=", getuid(), getgid());
	for (int i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", g[i]);
	printf(" umask=%04o", um);
	/* only when they differ: a setuid/setgid program shows it */
	if (geteuid() != getuid())
		printf(" euid=%u", geteuid());
	if (getegid() != getgid())
		printf(" egid=%u", getegid());
	putchar('\n');
	return 0;
}

static int cmd_caps(int argc, char **argv)
{
	static const char *const keys[] = { "CapInh", "CapPrm", "CapEff", "CapBnd",
		"CapAmb", "NoNewPrivs", "Seccomp", NULL };
	return status_lines(keys);
}

static int cmd_sigmask(int argc, char **argv)
{
	static const char *const keys[] = { "SigBlk", "SigIgn", NULL };
	return status_lines(keys);
}

static int cmd_env(int argc, char **argv)
{
	extern char **environ;
	for (char **e = environ; *e; e++)
		puts(*e);
	return 0;
}

static int cmd_pwd(int argc, char **argv)
{
	char buf[4096];
	if (!getcwd(buf, sizeof buf))
		return die("getcwd");
	puts(buf);
	return 0;
}

static int cmd_hostname(int argc, char **argv)
{
	struct utsname u;
	if (uname(&u) < 0)
		return die("uname");
	printf("nodename=%s\ndomainname=%s\n", u.nodename, u.domainname);
	return 0;
}

static const struct { const char *name; int res; } rlimits[] = {
	{ "CPU", RLIMIT_CPU }, { "FSIZE", RLIMIT_FSIZE }, { "DATA", RLIMIT_DATA },
	{ "STACK", RLIMIT_STACK }, { "CORE", RLIMIT_CORE }, { "RSS", RLIMIT_RSS },
	{ "NPROC", RLIMIT_NPROC }, { "NOFILE", RLIMIT_NOFILE },
	{ "MEMLOCK", RLIMIT_MEMLOCK }, { "AS", RLIMIT_AS }, { "LOCKS", RLIMIT_LOCKS },
	{ "SIGPENDING", RLIMIT_SIGPENDING }, { "MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "NICE", RLIMIT_NICE }, { "RTPRIO", RLIMIT_RTPRIO }, { "RTTIME", RLIMIT_RTTIME },
};

static void print_rlim(rlim_t v)
{
	if (v == RLIM_INFINITY)
		fputs("unlimited", stdout);
	else
		printf("%llu", (unsigned long long)v);
}

/* rlimit NAME: "SOFT HARD"; NAME is NOFILE or RLIMIT_NOFILE, any case. */
static int cmd_rlimit(int argc, char **argv)
{
	if (argc < 2)
		return usage("rlimit NAME");
	const char *name = argv[1];
	if (strncasecmp(name, "RLIMIT_", 7) == 0)
		name += 7;
	for (size_t i = 0; i < sizeof rlimits / sizeof rlimits[0]; i++) {
		if (strcasecmp(name, rlimits[i].name) == 0) {
			struct rlimit r;
			if (getrlimit(rlimits[i].res, &r) < 0)
				return die("getrlimit");
			print_rlim(r.rlim_cur);
			putchar(' ');
			print_rlim(r.rlim_max);
			putchar('\n');
			return 0;
		}
	}
	return usage("rlimit: unknown limit name");
}

static int cmd_personality(int argc, char **argv)
{
	struct utsname u;
	int p = personality(0xffffffff);
	uname(&u);
	printf("personality=0x%x machine=%s\n", (unsigned)p, u.machine);
	return 0;
}

static int cmd_sysctl(int argc, char **argv)
{
	char path[512] = "/proc/sys/";
	if (argc < 2)
		return usage("sysctl KEY");
	size_t l = strlen(path);
	for (const char *k = argv[1]; *k && l < sizeof path - 1; k++)
		path[l++] = *k == '.' ? '/' : *k;
	path[l] = 0;
	return cat_path(path);
}

static int cmd_write(int argc, char **argv)
{
	if (argc < 3)
		return usage("write FILE DATA");
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, argv[2], strlen(argv[2])) < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	close(fd);
	puts("ok");
	return 0;
}

static int cmd_read(int argc, char **argv)
{
	if (argc < 2)
		return usage("read FILE");
	return cat_path(argv[1]);
}

static int cmd_stat(int argc, char **argv)
{
	struct stat st;
	if (argc < 2)
		return usage("stat FILE");
	if (lstat(argv[1], &st) < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	const char *t = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir"
		: S_ISCHR(st.st_mode) ? "chr" : S_ISBLK(st.st_mode) ? "blk"
		: S_ISLNK(st.st_mode) ? "link" : S_ISFIFO(st.st_mode) ? "fifo"
		: S_ISSOCK(st.st_mode) ? "sock" : "other";
	printf("type=%s mode=%04o rdev=%u:%u owner=%u:%u\n", t, st.st_mode & 07777,
	       major(st.st_rdev), minor(st.st_rdev), st.st_uid, st.st_gid);
	return 0;
}

/* forkbomb N: try to fork N children; "forked=K error=ERRNO". */
static int cmd_forkbomb(int argc, char **argv)
{
	int want = argc > 1 ? atoi(argv[1]) : 100, got = 0, err = 0;
	int pipefd[2];

	/* children block reading a pipe that closes when the parent exits */
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return die("pipe");
	while (got < want) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			char c;
			close(pipefd[1]);
			(void)!read(pipefd[0], &c, 1);
			_exit(0);
		}
		got++;
	}
	close(pipefd[1]);
	while (wait(NULL) > 0)
		;
	printf("forked=%d error=%s\n", got, err ? errname(err) : "none");
	return 0;
}

static int cmd_trysignal(int argc, char **argv)
{
	if (argc < 3)
		return usage("trysignal PID SIG");
	if (kill(atoi(argv[1]), atoi(argv[2])) < 0)
		printf("%s\n", errname(errno));
	else
		puts("ok");
	return 0;
}

static int cmd_tryopen(int argc, char **argv)
{
	if (argc < 2)
		return usage("tryopen PATH [r|w|rw]");
	int flags = O_RDONLY;
	if (argc > 2)
		flags = !strcmp(argv[2], "rw") ? O_RDWR : !strcmp(argv[2], "w") ? O_WRONLY : O_RDONLY;
	int fd = open(argv[1], flags | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		printf("%s\n", errname(errno));
	} else {
		puts("ok");
		close(fd);
	}
	return 0;
}

static int cmd_ns(int argc, char **argv)
{
	static const char *const names[] = { "cgroup", "ipc", "mnt", "net", "pid",
		"pid_for_children", "time", "time_for_children", "user", "uts", NULL };
	for (const char *const *n = names; *n; n++) {
		char p[64], t[256];
		snprintf(p, sizeof p, "/proc/self/ns/%s", *n);
		ssize_t l = readlink(p, t, sizeof t - 1);
		if (l < 0)
			continue; /* kernel without this namespace kind */
		t[l] = 0;
		printf("%s %s\n", *n, t);
	}
	return 0;
}

static int cmd_pidns(int argc, char **argv)
{
	printf("pid=%d ppid=%d\n", getpid(), getppid());
	return 0;
}

static int cmd_tty_size(int argc, char **argv)
{
	struct winsize ws;
	if (ioctl(0, TIOCGWINSZ, &ws) < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("%u %u\n", ws.ws_row, ws.ws_col);
	return 0;
}

/* Report whether PATH can be opened for writing, directly and through an
 * O_PATH fd reopened via /proc/self/fd (the CVE-2019-5736 route). Never
 * writes a byte. */
static void try_write_open(const char *path)
{
	char how[64], target[4096];
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	printf("%s direct: %s\n", path, fd < 0 ? errname(errno) : "WRITABLE");
	if (fd >= 0)
		close(fd);

	int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0) {
		printf("%s reopen: %s\n", path, errname(errno));
		return;
	}
	snprintf(how, sizeof how, "/proc/self/fd/%d", pfd);
	ssize_t l = readlink(how, target, sizeof target - 1);
	target[l < 0 ? 0 : l] = 0;
	fd = open(how, O_WRONLY | O_CLOEXEC);
	printf("%s reopen: %s target=%s\n", path, fd < 0 ? errname(errno) : "WRITABLE", target);
	if (fd >= 0)
		close(fd);
	close(pfd);
}

static int cmd_exe_overwrite(int argc, char **argv)
{
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			try_write_open(argv[i]);
	} else {
		try_write_open("/proc/self/exe");
		try_write_open("/proc/1/exe");
	}
	return 0;
}

/*
 * Second half of the CVE-2019-5736 probe (security.bats): the interpreter
 * from tests/integration/cve-2019-5736-interp.c ran inside the runtime's
 * binary, kept an O_PATH fd FD on /proc/self/exe and exec'd us. Try to reopen
 * that file for writing once the runtime has exited (ETXTBSY until then).
 * Reports, never writes.
 */
static int cmd_hijack_write(int argc, char **argv)
{
	char p[64], target[4096];
	if (argc < 2)
		return usage("hijack-write FD");
	snprintf(p, sizeof p, "/proc/self/fd/%s", argv[1]);
	ssize_t l = readlink(p, target, sizeof target - 1);
	target[l < 0 ? 0 : l] = 0;
	int err = 0;
	/* up to ~5 s for the runtime process to exit */
	for (int i = 0; i < 500; i++) {
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			printf("hijack: WRITABLE %s\n", target);
			close(fd);
			return 0;
		}
		err = errno;
		if (err != ETXTBSY)
			break;
		usleep(10000);
	}
	printf("hijack: %s %s\n", errname(err), target);
	return 0;
}

/* clone3 with a zero size: EINVAL from the kernel, ENOSYS under a seccomp
 * profile that hides clone3 (Docker's) so that libcs fall back to clone. */
static int cmd_clone3(int argc, char **argv)
{
	long r = syscall(SYS_clone3, NULL, 0);
	printf("%s\n", r < 0 ? errname(errno) : "ok");
	return 0;
}

/* syscall NR with no arguments: "ok" or its errno's name. */
static int cmd_syscall(int argc, char **argv)
{
	if (argc != 2)
		return usage("syscall NR");
	long r = syscall(strtol(argv[1], NULL, 0), 0, 0, 0, 0, 0, 0);
	printf("%s\n", r < 0 ? errname(errno) : "ok");
	return 0;
}

static int cmd_help(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{ "true", NULL, "exit 0" },
	{ "false", NULL, "exit 1" },
	{ "exit", NULL, "exit N" },
	{ "echo", cmd_echo, "echo ARGS..." },
	{ "cat", NULL, "copy stdin to stdout" },
	{ "sleep", cmd_sleep, "sleep SECS (fractions allowed)" },
	{ "pause", cmd_pause, "pause [READY-LINE|-q]: wait for a signal, print \"got signal N\"" },
	{ "isatty", cmd_isatty, "isatty FD: yes/no, exit 0/1" },
	{ "fds", cmd_fds, "list open fds: \"N -> target\"" },
	{ "id", cmd_id, "uid=U gid=G groups=A,B umask=0022 [euid=E] [egid=F]" },
	{ "caps", cmd_caps, "Cap*, NoNewPrivs, Seccomp from /proc/self/status" },
	{ "sigmask", cmd_sigmask, "SigBlk, SigIgn from /proc/self/status" },
	{ "env", cmd_env, "print the environment" },
	{ "pwd", cmd_pwd, "print the cwd" },
	{ "hostname", cmd_hostname, "nodename=X domainname=Y" },
	{ "rlimit", cmd_rlimit, "rlimit NAME: SOFT HARD" },
	{ "oomscore", NULL, "print /proc/self/oom_score_adj" },
	{ "personality", cmd_personality, "personality=0xN machine=M" },
	{ "sysctl", cmd_sysctl, "sysctl KEY: print /proc/sys/KEY" },
	{ "mountinfo", NULL, "print /proc/self/mountinfo" },
	{ "write", cmd_write, "write FILE DATA: ok or ERRNO (exit 1)" },
	{ "read", cmd_read, "read FILE" },
	{ "stat", cmd_stat, "stat FILE: type mode rdev owner (lstat)" },
	{ "forkbomb", cmd_forkbomb, "forkbomb N: forked=K error=ERRNO" },
	{ "trysignal", cmd_trysignal, "trysignal PID SIG: ok or ERRNO" },
	{ "tryopen", cmd_tryopen, "tryopen PATH [r|w|rw]: ok or ERRNO" },
	{ "ns", cmd_ns, "NAME TARGET for each /proc/self/ns/*" },
	{ "pidns", cmd_pidns, "pid=P ppid=Q" },
	{ "tty-size", cmd_tty_size, "ROWS COLS of stdin's terminal" },
	{ "exe-overwrite", cmd_exe_overwrite, "[PATH...]: can /proc/self/exe, /proc/1/exe be opened for writing" },
	{ "hijack-write", cmd_hijack_write, "hijack-write FD: can the file behind FD be opened for writing (CVE-2019-5736 probe)" },
	{ "syscall", cmd_syscall, "syscall NR: its errno's name, or ok" },
	{ "clone3", cmd_clone3, "clone3(NULL, 0): EINVAL, or ENOSYS when seccomp hides it" },
	{ "help", cmd_help, "this list" },
};

static int cmd_help(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		printf("%-14s %s\n", cmds[i].name, cmds[i].help);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;
	name = name ? name + 1 : argc > 0 ? argv[0] : "abtest";

	if (strncmp(name, "abtest", 6) == 0) { /* abtest, abtest-suid, ... */
		if (argc < 2)
			return cmd_help(argc, argv), 2;
		argc--, argv++;
		name = argv[0];
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(name, "true"))
		return 0;
	if (!strcmp(name, "false"))
		return 1;
	if (!strcmp(name, "exit"))
		return argc > 1 ? atoi(argv[1]) : 0;
	if (!strcmp(name, "cat"))
		return copy_fd(0) < 0 ? die("cat") : 0;
	if (!strcmp(name, "oomscore"))
		return cat_path("/proc/self/oom_score_adj");
	if (!strcmp(name, "mountinfo"))
		return cat_path("/proc/self/mountinfo");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (cmds[i].fn && !strcmp(name, cmds[i].name))
			return cmds[i].fn(argc, argv);
	fprintf(stderr, "abtest: unknown command '%s' (try: abtest help)\n", name);
	return 127;
}
