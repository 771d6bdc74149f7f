/* agentbox kit build|run|show: kits (agentbox-kit(5)) compiled to OCI bundles.
 *
 * `kit run` builds into a temporary directory, puts a copy-on-write overlay over
 * the rootfs, reads the credentials into memory, hands the lifecycle a config
 * parsed in memory (the one on disk has no secret in it), attaches slirp4netns
 * when the box may reach anything, writes file credentials into the box's tmpfs
 * before its program starts, and removes everything it made at the end. */
#include "commands.h"
#include "config.h"
#include "egress.h"
#include "kit.h"
#include "log.h"
#include "mounts.h"
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define KIT_RUN_DIR "/run/agentbox-kits"
#define SECRET_MAX (1u << 20)
#define SLIRP_READY_MS 10000
#define OWNER_FILE "owner"
#define IMAGE_CACHE ".images"

static const char kit_usage[] =
	"usage: agentbox kit build KIT -o BUNDLE\n"
	"       agentbox kit run [--allow ENTRY]... [--workspace DIR] [-t|--tty] [KIT] [-- COMMAND [ARG...]]\n"
	"       agentbox kit show [KIT]\n"
	"\n"
	"Kits are YAML definitions of the box an agent runs in; see agentbox-kit(5).\n"
	"  build  write an OCI bundle (config.json and rootfs) for KIT into BUNDLE\n"
	"  run    build KIT into a temporary bundle and run COMMAND in it (without KIT:\n"
	"         the host's rootfs, the current directory as workspace, no network)\n"
	"  show   print the effective kit after extends, with the policy it implies\n";

static int usage_error(struct ab_err *err, const char *fmt, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof msg, fmt, arg ? arg : "");
	return ab_error(err, 0, "kit: %s; see agentbox kit --help", msg);
}

/* ---------------------------------------------------------------- build, show */

/* Unpacked images are cached under the state root (see agentbox-kit(5)). */
static int resolve_image(const struct global_opts *g, struct kit *k, struct ab_err *err)
{
	if (k->rootfs != KIT_ROOTFS_IMAGE)
		return 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/" IMAGE_CACHE, g->root);
	return kit_resolve_image(k, dir, err);
}

static int kit_build_cmd(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *out = NULL;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h': fputs(kit_usage, stdout); return 0;
		default: return usage_error(err, "build: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(err, "build: give exactly one KIT%s", "");
	if (!out)
		return usage_error(err, "build: -o BUNDLE is required%s", "");
	struct kit *k;
	if (kit_load(argv[optind], &k, err) < 0)
		return -1;
	struct kit_build_opts bo = {
		.bundle = out,
		.network = k->n_allow > 0,
		.egress_annotations = true,
	};
	int r = resolve_image(g, k, err);
	if (r == 0)
		r = kit_build_bundle(k, &bo, err);
	kit_free(k);
	return r < 0 ? -1 : 0;
}

static int kit_show_cmd(int argc, char **argv, struct ab_err *err)
{
	if (argc > 2)
		return usage_error(err, "show: give at most one KIT%s", "");
	if (argc == 2 && (streq(argv[1], "-h") || streq(argv[1], "--help"))) {
		fputs(kit_usage, stdout);
		return 0;
	}
	if (argc == 2 && argv[1][0] == '-')
		return usage_error(err, "show: unknown option \"%s\"", argv[1]);
	struct kit *k;
	if (argc == 2) {
		if (kit_load(argv[1], &k, err) < 0)
			return -1;
	} else {
		k = kit_default(NULL);
	}
	char *text;
	int r = kit_show(k, &text, err);
	kit_free(k);
	if (r < 0)
		return -1;
	fputs(text, stdout);
	free(text);
	return 0;
}

/* ---------------------------------------------------------------- run */

struct run_ctx {
	struct kit *k;
	char dir[PATH_MAX - 64];        /* the temporary directory; "" until made */
	char bundle[PATH_MAX];
	char merged[PATH_MAX];
	bool mounted;
	uint32_t uid, gid;
	struct kit_secret *secrets;
	size_t n_secrets;
	bool network;
	pid_t slirp_pid;
	int slirp_pidfd;
	int slirp_exit_fd;              /* our end: closing it stops slirp4netns */
};

static void wipe_secrets(struct run_ctx *rc)
{
	for (size_t i = 0; i < rc->n_secrets; i++) {
		if (rc->secrets[i].value) {
			explicit_bzero(rc->secrets[i].value, rc->secrets[i].len);
			free(rc->secrets[i].value);
		}
	}
	free(rc->secrets);
	rc->secrets = NULL;
	rc->n_secrets = 0;
}

/* Read every credential's value now, into memory only. */
static int read_secrets(struct run_ctx *rc, struct ab_err *err)
{
	const struct kit *k = rc->k;
	rc->secrets = xcalloc(k->n_credentials + 1, sizeof *rc->secrets);
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		struct kit_secret *s = &rc->secrets[rc->n_secrets++];
		s->cred = c;
		if (c->from == KIT_FROM_ENV) {
			const char *v = getenv(c->from_ref);
			if (!v)
				return ab_error(err, 0, "credentials[%zu] (%s): the host has no environment variable %s",
						i, c->name, c->from_ref);
			s->len = strlen(v);
			s->value = xstrdup(v);
		} else {
			struct ab_err e;
			if (read_file_at(AT_FDCWD, c->from_ref, SECRET_MAX, &s->value, &s->len, &e) < 0)
				return ab_error(err, 0, "credentials[%zu] (%s): %s", i, c->name, e.msg);
		}
		if (c->from == KIT_FROM_ENV && c->to == KIT_TO_FILE && (!s->len || s->value[s->len - 1] != '\n')) {
			/* a file's text ends with a newline (ssh keys must); $(cat f) took it off */
			s->value = xrealloc(s->value, s->len + 2);
			s->value[s->len++] = '\n';
			s->value[s->len] = 0;
		}
		if (c->to == KIT_TO_ENV) {
			if (memchr(s->value, 0, s->len))
				return ab_error(err, 0, "credentials[%zu] (%s): the value has a NUL byte, so it cannot be an environment variable",
						i, c->name);
			/* a token file usually ends with a newline the variable must not have */
			if (s->len && s->value[s->len - 1] == '\n')
				s->value[--s->len] = 0;
			if (s->len && s->value[s->len - 1] == '\r')
				s->value[--s->len] = 0;
		}
	}
	return 0;
}

/* Write the file credentials into the box's tmpfs, through /proc/PID/root, before
 * its program runs: never a symlink, never a disk. */
static int write_file_credentials(struct run_ctx *rc, pid_t pid, struct ab_err *err)
{
	_cleanup_close_ int rootfd = -1;
	for (size_t i = 0; i < rc->n_secrets; i++) {
		const struct kit_secret *s = &rc->secrets[i];
		if (s->cred->to != KIT_TO_FILE)
			continue;
		if (rootfd < 0) {
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/root", (int)pid);
			rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (rootfd < 0)
				return ab_error(err, errno, "open %s", p);
		}
		const char *path = s->cred->to_path;
		const char *slash = strrchr(path, '/');
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
		_cleanup_close_ int dfd = -1;
		if (open_in_root(rootfd, dir, O_PATH | O_DIRECTORY, &dfd, err) < 0)
			return ab_wrap(err, "credential %s: %s", s->cred->name, path);
		struct statfs sf;
		if (fstatfs(dfd, &sf) < 0)
			return ab_error(err, errno, "credential %s: statfs %s", s->cred->name, dir);
		if (sf.f_type != TMPFS_MAGIC)
			return ab_error(err, 0, "credential %s: %s in the box is not a tmpfs: refused to write it there",
					s->cred->name, dir);
		_cleanup_close_ int fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
		if (fd < 0)
			return ab_error(err, errno, "credential %s: create %s", s->cred->name, path);
		if (write_all(fd, s->value, s->len) < 0)
			return ab_error(err, errno, "credential %s: write %s", s->cred->name, path);
		if (fchown(fd, rc->uid, rc->gid) < 0)
			return ab_error(err, errno, "credential %s: chown %s", s->cred->name, path);
	}
	return 0;
}

static int read_log_tail(const char *path, char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;
	size_t n;
	struct ab_err e;
	buf[0] = 0;
	if (read_file_at(AT_FDCWD, path, 1 << 20, &text, &n, &e) < 0)
		return -1;
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = 0;
	const char *last = strrchr(text, '\n');
	snprintf(buf, len, "%s", last ? last + 1 : text);
	return 0;
}

/* slirp4netns --configure in the box's network namespace; returns once it says
 * it is ready. It exits when our end of its --exit-fd pipe closes (also when
 * agentbox dies). */
static int start_slirp(struct run_ctx *rc, pid_t pid, struct ab_err *err)
{
	int ready[2], ex[2];
	char log_path[PATH_MAX + 32];
	snprintf(log_path, sizeof log_path, "%s/slirp4netns.log", rc->dir);
	_cleanup_close_ int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (log < 0)
		return ab_error(err, errno, "create %s", log_path);
	if (pipe2(ready, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		return ab_error(err, errno, "pipe");
	}
	char pidstr[32];
	snprintf(pidstr, sizeof pidstr, "%d", (int)pid);
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		close(ready[0]);
		close(ready[1]);
		close(ex[0]);
		close(ex[1]);
		return ab_error(err, e, "fork slirp4netns");
	}
	if (child == 0) {
		/* fds 3 and 4 for slirp4netns; everything else of ours goes */
		int r = fcntl(ready[1], F_DUPFD, 10), x = fcntl(ex[0], F_DUPFD, 10);
		int null = open("/dev/null", O_RDONLY);
		if (r < 0 || x < 0 || null < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0 ||
		    dup2(r, 3) < 0 || dup2(x, 4) < 0)
			_exit(127);
		close_fds_from(5, NULL, 0);
		process_reset_signals();
		setsid();   /* the user's ^C is for the box, not for its network */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char *args[] = {"slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
				"--enable-sandbox", "--enable-seccomp", "--ready-fd=3", "--exit-fd=4",
				pidstr, "tap0", NULL};
		execvp(args[0], args);
		dprintf(2, "exec slirp4netns: %s\n", strerror(errno));
		_exit(127);
	}
	close(ready[1]);
	close(ex[0]);
	rc->slirp_pid = child;
	rc->slirp_pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	rc->slirp_exit_fd = ex[1];

	struct pollfd p = {.fd = ready[0], .events = POLLIN};
	int n = poll(&p, 1, SLIRP_READY_MS);
	char c = 0;
	ssize_t got = n > 0 ? read(ready[0], &c, 1) : -1;
	close(ready[0]);
	if (got == 1 && c == '1')
		return 0;
	char tail[512];
	if (n == 0)
		snprintf(tail, sizeof tail, "not ready after %d s", SLIRP_READY_MS / 1000);
	else if (read_log_tail(log_path, tail, sizeof tail) < 0 || !tail[0])
		snprintf(tail, sizeof tail, "exited before it was ready");
	return ab_error(err, 0, "network: slirp4netns: %s", tail);
}

static void stop_slirp(struct run_ctx *rc)
{
	if (rc->slirp_exit_fd >= 0) {
		close(rc->slirp_exit_fd);
		rc->slirp_exit_fd = -1;
	}
	if (rc->slirp_pid <= 0)
		return;
	/* it exits on the closed pipe; give it a moment, then make sure */
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(rc->slirp_pid, NULL, WNOHANG);
		if (r == rc->slirp_pid || (r < 0 && errno == ECHILD))
			goto done;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (rc->slirp_pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, rc->slirp_pidfd, SIGKILL, NULL, 0);
	else
		kill(rc->slirp_pid, SIGKILL);
	while (waitpid(rc->slirp_pid, NULL, 0) < 0 && errno == EINTR)
		;
done:
	rc->slirp_pid = 0;
	if (rc->slirp_pidfd >= 0) {
		close(rc->slirp_pidfd);
		rc->slirp_pidfd = -1;
	}
}

static int on_created(pid_t pid, void *data, struct ab_err *err)
{
	struct run_ctx *rc = data;
	if (write_file_credentials(rc, pid, err) < 0)
		return -1;
	if (rc->network && start_slirp(rc, pid, err) < 0)
		return -1;
	return 0;
}

static void random_hex(char *buf, size_t bytes)
{
	unsigned char r[32];
	if (bytes > sizeof r)
		bytes = sizeof r;
	if (getrandom(r, bytes, 0) != (ssize_t)bytes) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
		for (size_t i = 0; i < bytes; i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
			r[i] = (unsigned char)(x >> 56);
	}
	for (size_t i = 0; i < bytes; i++)
		sprintf(buf + 2 * i, "%02x", r[i]);
}

/* Where kit run's temporary directories go. */
static const char *temp_base(void)
{
	const char *base = KIT_RUN_DIR;
	if (geteuid() != 0 || (mkdir(base, 0700) < 0 && errno != EEXIST)) {
		base = getenv("TMPDIR");
		if (!base || !*base)
			base = "/tmp";
	}
	return base;
}

/* The temporary directory, with OWNER_FILE naming who made it ("PID START_TIME
 * STATE_ROOT"), so that a later kit command can clean up after a killed run. Made
 * as .new-NAME and renamed once the owner is written: a kit-* directory without
 * one belongs to someone else (an older agentbox) and is never touched. */
static int make_temp_dir(struct run_ctx *rc, const struct global_opts *g, const char *name,
			 struct ab_err *err)
{
	const char *base = temp_base();
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s/.new-%s", base, name);
	if (mkdir(tmp, 0700) < 0)
		return ab_error(err, errno, "mkdir %s", tmp);
	uint64_t start = 0;
	char root[PATH_MAX];
	if (!realpath(g->root, root))
		snprintf(root, sizeof root, "%s", g->root);
	int r;
	if (proc_start_time(getpid(), &start) < 0) {
		r = ab_error(err, errno, "read our own start time");
	} else {
		char *text = xasprintf("%d %llu %s\n", (int)getpid(), (unsigned long long)start, root);
		_cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = fd < 0 ? ab_error(err, errno, "open %s", tmp)
			   : write_file_atomic_at(fd, OWNER_FILE, text, strlen(text), 0600, err);
		free(text);
	}
	snprintf(rc->dir, sizeof rc->dir, "%s/%s", base, name);
	if (r == 0 && rename(tmp, rc->dir) < 0)
		r = ab_error(err, errno, "rename %s to %s", tmp, rc->dir);
	if (r < 0) {
		struct ab_err e;
		(void)rm_rf_at(AT_FDCWD, tmp, &e);
		rc->dir[0] = 0;
		return -1;
	}
	snprintf(rc->bundle, sizeof rc->bundle, "%s/bundle", rc->dir);
	snprintf(rc->merged, sizeof rc->merged, "%s/merged", rc->dir);
	return 0;
}

/* Remove one temporary directory of a run whose process is gone: its container
 * (state, cgroup, processes), its overlay, then the directory. Best effort. */
static void sweep_one(const struct global_opts *g, const char *base, const char *name)
{
	char dir[PATH_MAX], merged[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/%s", base, name);
	snprintf(merged, sizeof merged, "%s/merged", dir);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	struct ab_err e;
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file_at(dfd, OWNER_FILE, 4 * PATH_MAX, &text, &len, &e) == 0) {
		int pid;
		unsigned long long start;
		int off = 0;
		if (sscanf(text, "%d %llu %n", &pid, &start, &off) < 2 || !off)
			return;
		if (proc_is(pid, start))
			return;         /* still running */
		char *root = text + off;
		root[strcspn(root, "\n")] = 0;
		struct global_opts g2 = *g;
		g2.root = root;
		if (strncmp(name, "kit-", 4) == 0 && container_delete(&g2, name, true, &e) < 0)
			log_warn("kit: clean up after the killed run %s: %s", name, e.msg);
	} else {
		/* no owner: not ours to judge, unless it is our .new- directory of a
		 * run killed right after mkdir (a live one gets a minute) */
		struct stat st;
		if (strncmp(name, ".new-", 5) != 0 || fstat(dfd, &st) < 0 || time(NULL) - st.st_mtime < 60)
			return;
	}
	if (umount2(merged, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
		log_warn("kit: unmount %s: %s; leaving %s in place", merged, strerror(errno), dir);
		return;
	}
	struct stat a, b;
	if (stat(dir, &a) == 0 && stat(merged, &b) == 0 && a.st_dev != b.st_dev)
		return;         /* never remove through a mount */
	if (rm_rf_at(AT_FDCWD, dir, &e) < 0)
		log_warn("kit: remove %s: %s", dir, e.msg);
}

/* Clean up after kit runs that were killed (their box died with them: see
 * die_with_parent); run by every kit command. */
static void sweep_stale_runs(const struct global_opts *g)
{
	const char *base = temp_base();
	_cleanup_closedir_ DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *id = strncmp(de->d_name, ".new-", 5) == 0 ? de->d_name + 5 : de->d_name;
		if (strncmp(id, "kit-", 4) == 0 && container_id_valid(id))
			sweep_one(g, base, de->d_name);
	}
}

static bool overlay_safe(const char *p)
{
	return !strpbrk(p, ",:\\");
}

/* The copy-on-write view: lower = the rootfs (never written), upper/work here. */
static int mount_overlay(struct run_ctx *rc, struct ab_err *err)
{
	char lower[PATH_MAX + 8], upper[PATH_MAX + 8], work[PATH_MAX + 8];
	if (rc->k->rootfs == KIT_ROOTFS_HOST)
		snprintf(lower, sizeof lower, "%s/rootfs", rc->bundle);
	else if (rc->k->rootfs == KIT_ROOTFS_IMAGE)
		snprintf(lower, sizeof lower, "%s", rc->k->image_root);
	else if (!realpath(rc->k->rootfs_path, lower))
		return ab_error(err, errno, "rootfs %s", rc->k->rootfs_path);
	snprintf(upper, sizeof upper, "%s/upper", rc->dir);
	snprintf(work, sizeof work, "%s/work", rc->dir);
	if (!overlay_safe(lower) || !overlay_safe(rc->dir))
		return ab_error(err, 0, "overlay: the paths %s and %s must not contain ',', ':' or '\\'", lower, rc->dir);
	struct stat st;
	if (stat(lower, &st) < 0)
		return ab_error(err, errno, "rootfs %s", lower);
	if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0 || mkdir(rc->merged, 0755) < 0)
		return ab_error(err, errno, "overlay: mkdir in %s", rc->dir);
	/* the box's / takes its owner and mode from the upper directory */
	if (chown(upper, st.st_uid, st.st_gid) < 0 || chmod(upper, st.st_mode & 07777) < 0)
		return ab_error(err, errno, "overlay: %s", upper);
	char data[3 * PATH_MAX + 128];
	snprintf(data, sizeof data, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("overlay", rc->merged, "overlay", 0, data) < 0)
		return ab_error(err, errno, "mount an overlay on %s (lower %s)", rc->merged, lower);
	rc->mounted = true;
	(void)mount(NULL, rc->merged, NULL, MS_PRIVATE, NULL);
	return 0;
}

static void run_cleanup(struct run_ctx *rc)
{
	stop_slirp(rc);
	wipe_secrets(rc);
	if (!rc->dir[0])
		return;
	bool safe = true;
	if (rc->mounted) {
		if (umount2(rc->merged, MNT_DETACH) < 0) {
			log_warn("kit run: unmount %s: %s; leaving %s in place", rc->merged, strerror(errno), rc->dir);
			safe = false;
		}
		rc->mounted = false;
	}
	/* never remove through a mount: only when merged is on the same file system */
	struct stat a, b;
	if (safe && stat(rc->dir, &a) == 0 && stat(rc->merged, &b) == 0 && a.st_dev != b.st_dev) {
		log_warn("kit run: %s is still a mount point; leaving %s in place", rc->merged, rc->dir);
		safe = false;
	}
	struct ab_err e;
	if (safe && rm_rf_at(AT_FDCWD, rc->dir, &e) < 0)
		log_warn("kit run: remove %s: %s", rc->dir, e.msg);
	rc->dir[0] = 0;
}

/* "a,b" + "c" -> "a,b,c" (NULL when both are empty) */
static char *join_list(char *acc, const char *add)
{
	if (!add || !*add)
		return acc;
	if (!acc)
		return xstrdup(add);
	char *r = xasprintf("%s,%s", acc, add);
	free(acc);
	return r;
}

static int kit_run_cmd(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"allow", required_argument, NULL, 'a'},
		{"workspace", required_argument, NULL, 'w'},
		{"tty", no_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	char **allow = xcalloc((size_t)argc + 1, sizeof *allow);
	size_t n_allow = 0;
	const char *workspace = NULL;
	bool tty = false;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+ta:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': allow[n_allow++] = optarg; break;
		case 'w': workspace = optarg; break;
		case 't': tty = true; break;
		case 'h': free(allow); fputs(kit_usage, stdout); return 0;
		default:
			free(allow);
			return usage_error(err, "run: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	const char *kit_path = NULL;
	char **cmd = NULL;
	size_t n_cmd = 0;
	if (optind > 1 && streq(argv[optind - 1], "--")) {
		cmd = argv + optind;            /* no KIT: "kit run [OPTIONS] -- CMD" */
		n_cmd = (size_t)(argc - optind);
	} else if (optind < argc) {
		kit_path = argv[optind++];
		if (optind < argc) {
			if (!streq(argv[optind], "--")) {
				free(allow);
				return usage_error(err, "run: unexpected \"%s\" after KIT (put the command after --)", argv[optind]);
			}
			cmd = argv + optind + 1;
			n_cmd = (size_t)(argc - optind - 1);
		}
	}

	struct run_ctx rc = {.slirp_pidfd = -1, .slirp_exit_fd = -1};
	char *allow_list = NULL, *deny_list = NULL;
	const char *saved_allow = g->egress_allow, *saved_deny = g->egress_deny;
	const char *saved_seccomp = g->seccomp_profile;
	char ws_real[PATH_MAX];
	int ret = -1;
	/* --allow entries are checked here, where the error can name them */
	for (size_t i = 0; i < n_allow; i++) {
		struct egress_policy tmp = {0};
		char src[64];
		snprintf(src, sizeof src, "--allow #%zu", i + 1);
		if (strchr(allow[i], ',') || streq(allow[i], "all")) {
			ab_error(err, 0, "--allow \"%s\": give one entry per --allow (and \"all\" is not an entry)", allow[i]);
			goto out;
		}
		int r = egress_policy_add(&tmp, allow[i], false, src, err);
		egress_policy_free(&tmp);
		if (r < 0)
			goto out;
	}
	if (workspace) {
		if (!realpath(workspace, ws_real)) {
			ab_error(err, errno, "--workspace %s", workspace);
			goto out;
		}
		workspace = ws_real;
	}
	if (kit_path) {
		if (kit_load(kit_path, &rc.k, err) < 0)
			goto out;
	} else {
		rc.k = kit_default(workspace);
	}
	if (resolve_image(g, rc.k, err) < 0)
		goto out;
	const struct kit *k = rc.k;
	const char *ws = workspace ? workspace : k->workspace;
	kit_effective_user(k, ws, &rc.uid, &rc.gid);

	/* egress: the operator's flags, the kit's lists and --allow, as the runtime's flags */
	bool firewall_off = g->egress_allow && streq(g->egress_allow, "all");
	if (!firewall_off) {
		allow_list = join_list(g->egress_allow ? xstrdup(g->egress_allow) : NULL, NULL);
		for (size_t i = 0; i < k->n_allow; i++)
			allow_list = join_list(allow_list, k->allow[i]);
		for (size_t i = 0; i < n_allow; i++)
			allow_list = join_list(allow_list, allow[i]);
		g->egress_allow = allow_list;
		rc.network = allow_list != NULL;
	} else {
		rc.network = k->n_allow + n_allow > 0;
	}
	deny_list = join_list(g->egress_deny ? xstrdup(g->egress_deny) : NULL, NULL);
	for (size_t i = 0; i < k->n_deny; i++)
		deny_list = join_list(deny_list, k->deny[i]);
	g->egress_deny = deny_list;
	if (!g->seccomp_profile)
		g->seccomp_profile = k->seccomp;

	/* 1. credentials, read now and kept in memory only */
	if (read_secrets(&rc, err) < 0)
		goto out;

	/* 2. the temporary bundle and the overlay over its rootfs */
	char id[32] = "kit-";
	random_hex(id + 4, 6);
	if (make_temp_dir(&rc, g, id, err) < 0)
		goto out;
	struct kit_build_opts bo = {
		.bundle = rc.bundle,
		.workspace = workspace,
		.root_path = rc.merged,
		.command = cmd,
		.n_command = n_cmd,
		.terminal = tty,
		.network = rc.network,
		.egress_annotations = false,    /* passed as the runtime's flags instead */
		.seccomp_profile = g->seccomp_profile,
	};
	if (kit_build_bundle(k, &bo, err) < 0)
		goto out;
	if (mount_overlay(&rc, err) < 0)
		goto out;

	/* 3. the config with the credentials, in memory only */
	struct oci_config *config = NULL;
	{
		bo.secrets = rc.secrets;
		bo.n_secrets = rc.n_secrets;
		char *json = NULL;
		if (kit_config_json(k, &bo, &json, err) < 0)
			goto out;
		size_t len = strlen(json);
		int r = oci_config_parse(json, "kit config", &config, err);
		explicit_bzero(json, len);
		free(json);
		if (r < 0)
			goto out;
	}

	/* 4. run it */
	struct create_opts co = {
		.id = id,
		.bundle = rc.bundle,
		.on_created = on_created,
		.on_created_data = &rc,
		.timeout_ms = k->resources.has_timeout ? (int)k->resources.timeout_ms : 0,
		.report_egress = true,
		.config = config,
		.die_with_parent = true,
	};
	ret = container_run(g, &co, err);
out:
	run_cleanup(&rc);
	g->egress_allow = saved_allow;
	g->egress_deny = saved_deny;
	g->seccomp_profile = saved_seccomp;
	kit_free(rc.k);
	free(allow_list);
	free(deny_list);
	free(allow);
	return ret;
}

DECLARE_COMMAND(kit)
{
	if (argc < 2)
		return usage_error(err, "give a subcommand: build, run or show%s", "");
	const char *sub = argv[1];
	sweep_stale_runs(g);
	if (streq(sub, "build"))
		return kit_build_cmd(g, argc - 1, argv + 1, err);
	if (streq(sub, "run"))
		return kit_run_cmd(g, argc - 1, argv + 1, err);
	if (streq(sub, "show"))
		return kit_show_cmd(argc - 1, argv + 1, err);
	if (streq(sub, "--help") || streq(sub, "-h") || streq(sub, "help")) {
		fputs(kit_usage, stdout);
		return 0;
	}
	return usage_error(err, "unknown subcommand \"%s\" (build, run or show)", sub);
}
