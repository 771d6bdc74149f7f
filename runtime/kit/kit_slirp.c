#include "kit_slirp.h"
#include "netns.h"
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define SLIRP_READY_MS 10000
#define SLIRP_STOP_MS 2000

/* What slirp4netns said that tells why it failed: its first line that is no
 * warning (it prints "WARNING: Support for seccomp is experimental" on every
 * run, and "child failed" after the real error), with what to do about the
 * usual one: /dev/net/tun the user may not open. */
static int read_log_reason(const char *path, char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;
	size_t n;
	struct ab_err e;
	buf[0] = 0;
	if (read_file_at(AT_FDCWD, path, 1 << 20, &text, &n, &e) < 0)
		return -1;
	const char *fallback = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!*line || strncmp(line, "WARNING:", 8) == 0)
			continue;
		if (strncmp(line, "child failed", 12) == 0) {
			fallback = fallback ? fallback : line;
			continue;
		}
		snprintf(buf, len, "%s%s", line,
			 strstr(line, "/dev/net/tun") ? " (the user needs read and write access to /dev/net/tun: "
							"mode 0666, as most distributions ship it)" : "");
		return 0;
	}
	snprintf(buf, len, "%s", fallback ? fallback : "");
	return 0;
}

#define SLIRP_TAP "tap0"

/* In the box's network namespace: its tap device, persistent. Made in
 * slirp4netns' child before its exec, so that slirp4netns attaches to it. A
 * tap device that goes with its last file is unregistered there and then, and
 * that waits for every pending RCU callback of the kernel (rcu_barrier in
 * netdev_run_todo): 15-25 ms on the benchmark VM, in slirp4netns' exit, which
 * kit run waits for. A persistent one goes with the network namespace, whose
 * teardown the kernel does later in a worker. Nothing else may attach to it:
 * no owner is set, so that takes CAP_NET_ADMIN in the namespace, as the one
 * slirp4netns makes. Best effort: where this fails, slirp4netns makes its
 * own, as it always did. Run by egress_in_netns (rootless too: its child
 * enters the user namespace that owns the box's network namespace). */
static int make_persistent_tap(void *unused, struct ab_err *err)
{
	(void)unused, (void)err;
	int tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tun < 0)
		return 0;
	struct ifreq ifr = {.ifr_flags = IFF_TAP | IFF_NO_PI};
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", SLIRP_TAP);
	if (ioctl(tun, TUNSETIFF, &ifr) == 0)
		(void)ioctl(tun, TUNSETPERSIST, 1);
	close(tun);
	return 0;
}

int kit_slirp_find(struct kit_slirp *s, struct ab_err *err)
{
	if (s->exe[0] || path_lookup("slirp4netns", s->exe, sizeof s->exe))
		return 0;
	s->exe[0] = 0;
	return ab_error(err, 0, "network: slirp4netns not found on PATH (a box with network needs it: install slirp4netns)");
}

/* slirp4netns' sandbox (--enable-sandbox) makes a mount namespace, makes only
 * its "/" private, and detaches the old root after its pivot_root. Every
 * shared mount below "/" is then still a peer of the host's, and the detach
 * unmounts it on the host too: Docker's data root and every container's
 * root file system under it (a create at that moment: exec: "sh": not
 * found), the netns pins in /run/netns, podman's. Given a mount namespace of
 * its own whose mounts are all slaves, it unmounts nothing of anyone's.
 * Without the privilege for one (an unprivileged runtime) slirp4netns cannot
 * make its own either, but in a user namespace: a less privileged one, which
 * propagates nothing back. 0, or -errno. */
static int mount_namespace_for_slirp(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return errno == EPERM ? 0 : -errno;
	return mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ? -errno : 0;
}

int kit_slirp_spawn(struct kit_slirp *s, pid_t box_pid, int netns_fd, const char *log_dir, struct ab_err *err)
{
	int ready[2], ex[2];
	if (kit_slirp_find(s, err) < 0)
		return -1;
	snprintf(s->log_path, sizeof s->log_path, "%s/slirp4netns.log", log_dir);
	_cleanup_close_ int log = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (log < 0)
		return ab_error(err, errno, "create %s", s->log_path);
	if (pipe2(ready, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		return ab_error(err, errno, "pipe");
	}
	/* by pid: /proc/PID/ns/net; a namespace the box has still to join: our fd
	 * of it, as fd 5 of slirp4netns (which opens it before it closes fds) */
	char target[32];
	if (netns_fd >= 0)
		snprintf(target, sizeof target, "/proc/self/fd/5");
	else
		snprintf(target, sizeof target, "%d", (int)box_pid);
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
		/* fds 3 and 4 (and 5, the namespace) for slirp4netns; everything
		 * else of ours goes */
		int r = fcntl(ready[1], F_DUPFD, 10), x = fcntl(ex[0], F_DUPFD, 10);
		int ns = netns_fd >= 0 ? fcntl(netns_fd, F_DUPFD, 10) : -1;
		int null = open("/dev/null", O_RDONLY);
		if (r < 0 || x < 0 || null < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0 ||
		    dup2(r, 3) < 0 || dup2(x, 4) < 0 || (netns_fd >= 0 && (ns < 0 || dup2(ns, 5) < 0)))
			_exit(127);
		close_fds_from(netns_fd >= 0 ? 6 : 5, NULL, 0);
		char box_ns[64];
		snprintf(box_ns, sizeof box_ns, "/proc/%d/ns/net", (int)box_pid);
		int box_netns = netns_fd >= 0 ? 5 : open(box_ns, O_RDONLY | O_CLOEXEC);
		struct ab_err ignored;
		if (box_netns >= 0)
			(void)egress_in_netns(box_netns, make_persistent_tap, NULL, &ignored);
		if (box_netns >= 0 && box_netns != 5)
			close(box_netns);
		int mr = mount_namespace_for_slirp();
		if (mr < 0) {
			dprintf(2, "a mount namespace for slirp4netns: %s\n", strerror(-mr));
			_exit(127);
		}
		process_reset_signals();
		setsid();   /* the user's ^C is for the box, not for its network */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char *args[] = {"slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
				"--enable-sandbox", "--enable-seccomp", "--ready-fd=3", "--exit-fd=4",
				netns_fd >= 0 ? "--netns-type=path" : "--netns-type=pid", target, SLIRP_TAP, NULL};
		execv(s->exe, args);
		dprintf(2, "exec %s: %s\n", s->exe, strerror(errno));
		_exit(127);
	}
	close(ready[1]);
	close(ex[0]);
	s->pid = child;
	s->pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	s->exit_fd = ex[1];
	s->ready_fd = ready[0];
	return 0;
}

int kit_slirp_ready(struct kit_slirp *s, struct ab_err *err)
{
	if (s->ready_fd < 0)
		return 0;
	struct pollfd p = {.fd = s->ready_fd, .events = POLLIN};
	int n;
	do
		n = poll(&p, 1, SLIRP_READY_MS);
	while (n < 0 && errno == EINTR);
	char c = 0;
	ssize_t got = n > 0 ? read(s->ready_fd, &c, 1) : -1;
	close(s->ready_fd);
	s->ready_fd = -1;
	if (got == 1 && c == '1')
		return 0;
	char tail[512];
	if (n == 0)
		snprintf(tail, sizeof tail, "not ready after %d s", SLIRP_READY_MS / 1000);
	else if (read_log_reason(s->log_path, tail, sizeof tail) < 0 || !tail[0])
		snprintf(tail, sizeof tail, "exited before it was ready");
	return ab_error(err, 0, "network: slirp4netns: %s", tail);
}

int kit_slirp_start(struct kit_slirp *s, pid_t box_pid, const char *log_dir, struct ab_err *err)
{
	if (kit_slirp_spawn(s, box_pid, -1, log_dir, err) < 0)
		return -1;
	return kit_slirp_ready(s, err);
}

/* Has it exited within MS? On its pidfd, so the exit is seen when it
 * happens; without one (an old kernel), by asking every 10 ms. */
static bool exited_within(struct kit_slirp *s, int ms)
{
	if (s->pidfd >= 0) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int left = ms; left >= 0;) {
			struct pollfd p = {.fd = s->pidfd, .events = POLLIN};
			int n = poll(&p, 1, left);
			if (n > 0)
				return true;
			if (n == 0 || errno != EINTR)
				break;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			left = ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
		}
		return false;
	}
	for (int i = 0; i <= ms / 10; i++) {
		pid_t r = waitpid(s->pid, NULL, WNOHANG);
		if (r == s->pid || (r < 0 && errno == ECHILD)) {
			s->reaped = true;
			return true;
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return false;
}

void kit_slirp_stop_begin(struct kit_slirp *s)
{
	if (s->ready_fd >= 0) {
		close(s->ready_fd);
		s->ready_fd = -1;
	}
	if (s->exit_fd >= 0) {
		close(s->exit_fd);
		s->exit_fd = -1;
	}
}

void kit_slirp_stop(struct kit_slirp *s)
{
	kit_slirp_stop_begin(s);
	if (s->pid <= 0)
		return;
	/* it exits on the closed pipe; give it a moment, then make sure */
	if (!exited_within(s, SLIRP_STOP_MS)) {
		if (s->pidfd >= 0)
			(void)syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
		else
			kill(s->pid, SIGKILL);
	}
	if (!s->reaped)
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	s->pid = 0;
	s->reaped = false;
	if (s->pidfd >= 0) {
		close(s->pidfd);
		s->pidfd = -1;
	}
}
