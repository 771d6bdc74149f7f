#include "kit_slirp.h"
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define SLIRP_READY_MS 10000

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

int kit_slirp_start(struct kit_slirp *s, pid_t box_pid, const char *log_dir, struct ab_err *err)
{
	int ready[2], ex[2];
	char log_path[PATH_MAX + 32];
	snprintf(log_path, sizeof log_path, "%s/slirp4netns.log", log_dir);
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
	snprintf(pidstr, sizeof pidstr, "%d", (int)box_pid);
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
	s->pid = child;
	s->pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	s->exit_fd = ex[1];

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

void kit_slirp_stop(struct kit_slirp *s)
{
	if (s->exit_fd >= 0) {
		close(s->exit_fd);
		s->exit_fd = -1;
	}
	if (s->pid <= 0)
		return;
	/* it exits on the closed pipe; give it a moment, then make sure */
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(s->pid, NULL, WNOHANG);
		if (r == s->pid || (r < 0 && errno == ECHILD))
			goto done;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (s->pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
	else
		kill(s->pid, SIGKILL);
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
done:
	s->pid = 0;
	if (s->pidfd >= 0) {
		close(s->pidfd);
		s->pidfd = -1;
	}
}
