#include "hooks.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *hook_kind_name(enum oci_hook_kind kind)
{
	static const char *const names[] = {"prestart", "createRuntime", "createContainer",
					    "startContainer", "poststart", "poststop"};
	return kind < HOOK_KIND_COUNT ? names[kind] : "?";
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for pid with a deadline; kill it when the deadline passes. */
static int wait_hook(pid_t pid, int timeout_s, int *ret_status, bool *ret_timed_out)
{
	*ret_timed_out = false;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int64_t deadline = timeout_s > 0 ? now_ms() + (int64_t)timeout_s * 1000 : -1;
	for (;;) {
		pid_t r = waitpid(pid, ret_status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			if (pidfd >= 0)
				close(pidfd);
			return -errno;
		}
		int wait_ms = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && wait_ms <= 0) {
			kill(pid, SIGKILL);
			*ret_timed_out = true;
			while (waitpid(pid, ret_status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		if (pidfd >= 0) {
			struct pollfd p = {.fd = pidfd, .events = POLLIN};
			(void)poll(&p, 1, wait_ms);
		} else {
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return 0;
}

/* The environment of a hook whose config names none (no "env" key; "env": []
 * is an empty one). runc and crun hand such a hook the runtime's own
 * environment, and hooks rely on it (PATH, engine variables). Not for the
 * kinds that run in the container's namespaces: the runtime's (the host's)
 * environment has no business there. */
static char *const *hook_env(const struct oci_hook *h, enum oci_hook_kind kind)
{
	static char *const empty[] = {NULL};
	if (h->env)
		return h->env;
	if (kind == HOOK_CREATE_CONTAINER || kind == HOOK_START_CONTAINER)
		return empty;
	return environ;
}

static int run_hook(const struct oci_hook *h, enum oci_hook_kind kind, const char *state_json,
		    struct ab_err *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	pid_t pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return ab_error(err, errno, "fork");
	}
	if (pid == 0) {
		dup2(pipefd[0], STDIN_FILENO);
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		char *argv0[] = {h->path, NULL};
		execve(h->path, h->n_args ? h->args : argv0, hook_env(h, kind));
		_exit(127);
	}
	close(pipefd[0]);
	/* a hook that does not read its stdin must not stall us: ignore EPIPE */
	struct sigaction sa = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &sa, &old);
	(void)write_all(pipefd[1], state_json, strlen(state_json));
	close(pipefd[1]);
	sigaction(SIGPIPE, &old, NULL);
	int status = 0;
	bool timed_out;
	if (wait_hook(pid, h->has_timeout ? h->timeout : 0, &status, &timed_out) < 0)
		return ab_error(err, errno, "wait for hook %s", h->path);
	if (timed_out)
		return ab_error(err, 0, "hook %s timed out after %d s", h->path, h->timeout);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return ab_error(err, 0, "hook %s could not be executed", h->path);
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		return ab_error(err, 0, "hook %s exited with status %d", h->path, WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return ab_error(err, 0, "hook %s killed by signal %d", h->path, WTERMSIG(status));
	return 0;
}

int hooks_run(const struct oci_hooks *hooks, enum oci_hook_kind kind, const char *state_json,
	      struct ab_err *err)
{
	/* runtime-spec (lifecycle): a failing poststop hook is a warning, and the
	 * remaining hooks still run. Every other kind stops at the first failure;
	 * for poststart that is runtime-spec 1.3 (as runc and crun always did),
	 * where 1.0.2 to 1.2 asked for a warning. */
	bool warn_only = kind == HOOK_POSTSTOP;
	for (size_t i = 0; i < hooks->n_hooks[kind]; i++) {
		if (run_hook(&hooks->hooks[kind][i], kind, state_json, err) < 0) {
			ab_wrap(err, "%s hook %zu", hook_kind_name(kind), i);
			if (!warn_only)
				return -1;
			log_warn("%s", err->msg);
			ab_err_clear(err);
		}
	}
	return 0;
}
