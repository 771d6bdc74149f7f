/* The lifecycle of a container that exists: load its state, start, kill,
 * delete, pause/resume, print its state; and what create and run share with
 * them (signalling the recorded init, the state given to hooks, the late
 * hooks, destroy), and the start of run's and exec's forwarding loops. */
#include "container.h"
#include "container_internal.h"
#include "cgroups_path.h"
#include "hooks.h"
#include "json.h"
#include "log.h"
#include "policy.h"
#include "sentry_process.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

extern bool util_force_fallbacks;

int container_pidfd_open_checked(pid_t pid, uint64_t start_time)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -1;
	if (!proc_is(pid, start_time)) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

/* Signal the recorded process only if it is still the same process (pid + start time). */
int container_signal_init(const struct container_state *s, int sig)
{
	if (!util_force_fallbacks) {
		int fd = container_pidfd_open_checked(s->pid, s->pid_start_time);
		if (fd >= 0) {
			int r = (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
			int e = errno;
			close(fd);
			errno = e;
			return r;
		}
		if (errno != ENOSYS)
			return -1;
	}
	if (!proc_is(s->pid, s->pid_start_time)) {
		errno = ESRCH;
		return -1;
	}
	return kill(s->pid, sig);
}

int container_forward_start(int master, struct tty_proxy *proxy, struct ab_err *err)
{
	sigset_t all;
	sigfillset(&all);
	int sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0)
		return ab_error(err, errno, "signalfd");
	if (master >= 0 && tty_proxy_start(proxy, master, err) < 0) {
		close(sfd);
		return -1;
	}
	return sfd;
}

/* Does ROOT/id exist (as anything: a state directory is looked at later)? */
static bool state_exists(const char *root, const char *id)
{
	char path[PATH_MAX];
	struct stat st;
	return container_id_valid(id) && snprintf(path, sizeof path, "%s/%s", root, id) < (int)sizeof path &&
	       lstat(path, &st) == 0;
}

const char *container_id_or_box(const struct global_opts *g, const char *id, char *buf, size_t len)
{
	if (state_exists(g->root, id) || (size_t)snprintf(buf, len, BOX_ID_PREFIX "%s", id) >= len ||
	    !state_exists(g->root, buf))
		return id;
	return buf;
}

int container_load(const struct global_opts *g, const char *id, bool exclusive, int *ret_dirfd,
		   struct container_state *ret, struct ab_err *err)
{
	if (!container_id_valid(id))
		return ab_error(err, 0, "container \"%s\" does not exist (invalid id)", id);
	_cleanup_close_ int fd = -1;
	if (state_dir_open(g->root, id, exclusive, &fd, err) < 0) {
		char box[PATH_MAX];
		if (!state_exists(g->root, id) && container_id_or_box(g, id, box, sizeof box) != id)
			return ab_error(err, 0, "container \"%s\" does not exist (the box %s runs as container \"%s\")",
					id, id, box);
		return -1;
	}
	if (state_read(fd, id, ret, err) < 0)
		return -1;
	if (ret_dirfd)
		*ret_dirfd = TAKE_FD(fd);
	return 0;
}

/* poststart and poststop: from the config in hand (run), else from the bundle, read
 * only when create recorded that there are such hooks. poststop failures are
 * warnings; a failing poststart hook (or its config gone) is the caller's error. */
int container_run_late_hooks(const struct container_state *s, enum oci_hook_kind kind,
			  const struct oci_config *config, struct ab_err *err)
{
	bool has = kind == HOOK_POSTSTART ? s->poststart_hooks : s->poststop_hooks;
	if (!has)
		return 0;
	struct oci_config *loaded = NULL;
	struct ab_err e;
	struct ab_err *fail = kind == HOOK_POSTSTART ? err : &e;
	if (!config) {
		char cfg_path[PATH_MAX + 16];
		snprintf(cfg_path, sizeof cfg_path, "%s/config.json", s->bundle);
		if (oci_config_load(cfg_path, &loaded, fail) < 0) {
			ab_wrap(fail, "%s hooks", hook_kind_name(kind));
			if (fail == err)
				return -1;
			log_warn("%s", e.msg);
			return 0;
		}
		config = loaded;
	}
	char state[SYNC_DATA_MAX];
	state_json_for_hooks(s, kind == HOOK_POSTSTART ? STATUS_RUNNING : STATUS_STOPPED, state, sizeof state);
	int r = hooks_run(&config->hooks, kind, state, fail);
	oci_config_free(loaded);
	return fail == err ? r : 0;
}

/* runtime-spec 1.3, lifecycle: a failing poststart hook stops the container
 * and destroys it as delete would (poststop hooks included); the hook's error
 * is what the caller reports. */
void container_destroy_after_poststart(const struct global_opts *g, struct container_state *s,
				    const struct oci_config *config)
{
	struct ab_err e;
	if (container_destroy(g, s, config, &e) < 0)
		log_warn("delete after the failed poststart hook: %s", e.msg);
}

int container_start(const struct global_opts *g, const char *id, struct ab_err *err)
{
	struct container_state s;
	_cleanup_close_ int dirfd = -1;
	if (container_load(g, id, true, &dirfd, &s, err) < 0)
		return -1;
	int r = -1;
	_cleanup_close_ int fifo = -1, pidfd = -1;
	enum container_status status = state_status(&s);
	if (status != STATUS_CREATED) {
		if (status == STATUS_STOPPED)
			ab_error(err, 0, "cannot start a container that has stopped");
		else
			ab_error(err, 0, "cannot start an already running container");
		goto out;
	}
	/* the program may run once its DNS sentry serves (create did not wait) */
	if (s.sentry_pid > 0 && policy_sentry_wait_started(dirfd, s.sentry_pid, s.sentry_start_time, err) < 0)
		goto out;
	fifo = openat(dirfd, EXEC_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fifo < 0) {
		ab_error(err, errno, "open exec fifo of container \"%s\"", id);
		goto out;
	}
	pidfd = container_pidfd_open_checked(s.pid, s.pid_start_time);
	for (;;) {
		struct pollfd p[2] = {{.fd = fifo, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
		int n = poll(p, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 50);
		if (n < 0 && errno != EINTR) {
			ab_error(err, errno, "wait for container \"%s\" to start", id);
			goto out;
		}
		if (p[0].revents & POLLIN) {
			char c;
			if (read(fifo, &c, 1) == 1)
				break;
		}
		if (p[0].revents & POLLHUP) {
			ab_error(err, 0, "container \"%s\" init exited before start", id);
			goto out;
		}
		if ((pidfd >= 0 && (p[1].revents & POLLIN)) || !state_init_alive(&s)) {
			ab_error(err, 0, "container \"%s\" init exited before start", id);
			goto out;
		}
	}
	/* the writer's end closes when the init execs the program (or dies) */
	for (;;) {
		struct pollfd p = {.fd = fifo, .events = POLLIN};
		if (poll(&p, 1, 10000) <= 0)
			break;
		char buf[16];
		ssize_t n = read(fifo, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			break;
	}
	(void)unlinkat(dirfd, EXEC_FIFO, 0);
	s.started = true;
	if (state_write(dirfd, &s, err) < 0)
		goto out;
	if (container_run_late_hooks(&s, HOOK_POSTSTART, NULL, err) < 0) {
		container_destroy_after_poststart(g, &s, NULL);
		goto out;
	}
	r = 0;
out:
	state_free(&s);
	return r;
}

int container_kill(const struct global_opts *g, const char *id, int sig, bool all, struct ab_err *err)
{
	struct container_state s;
	if (container_load(g, id, false, NULL, &s, err) < 0)
		return -1;
	int r = 0;
	if (all && s.cgroup.mode != CGROUP_MODE_DISABLED) {
		r = cgroup_kill_all(&s.cgroup, sig, err);
	} else if (!state_init_alive(&s)) {
		r = ab_error(err, 0, "container not running");
	} else if (container_signal_init(&s, sig) < 0) {
		r = errno == ESRCH ? ab_error(err, 0, "container not running")
				   : ab_error(err, errno, "signal %d to container \"%s\"", sig, id);
	}
	state_free(&s);
	return r;
}

/* Wait (bounded) for the init to be gone; a D-state process must not hang us. */
static void wait_gone(const struct container_state *s, int timeout_ms)
{
	int pidfd = container_pidfd_open_checked(s->pid, s->pid_start_time);
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		(void)poll(&p, 1, timeout_ms);
		close(pidfd);
		return;
	}
	for (int waited = 0; waited < timeout_ms && state_init_alive(s); waited += 5) {
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int container_destroy(const struct global_opts *g, struct container_state *s,
		   const struct oci_config *config, struct ab_err *err)
{
	enum container_status st = state_status(s);
	if (st != STATUS_STOPPED) {
		/* with its own pid namespace, the init's death takes every process with it;
		 * otherwise the cgroup is what holds them */
		if (!s->own_pidns && s->cgroup.mode != CGROUP_MODE_DISABLED) {
			struct ab_err e;
			if (cgroup_kill_all(&s->cgroup, SIGKILL, &e) < 0)
				log_debug("kill all: %s", e.msg);
		}
		(void)container_signal_init(s, SIGKILL);
		wait_gone(s, 5000);
	}
	policy_teardown(s);
	if (s->cgroup.mode != CGROUP_MODE_DISABLED && cgroup_destroy(&s->cgroup, err) < 0)
		return -1;
	(void)container_run_late_hooks(s, HOOK_POSTSTOP, config, err);
	return state_dir_remove(g->root, s->id, err);
}

/* Is the state dir empty (the lock's dot files aside)? A create stopped
 * before its first record made nothing else either. */
static bool state_dir_empty(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool empty = true;
	for (struct dirent *de; empty && (de = readdir(d));)
		empty = de->d_name[0] == '.';
	closedir(d);
	return empty;
}

/* With nothing else to go by: the cgroup agentbox names after the id when
 * the config has no cgroupsPath, if there is one (rootful only). 0 when it
 * was found and removed, -1 when there is none. */
static int destroy_cgroup_named_after(const struct global_opts *g, const char *id, struct ab_err *err)
{
	struct cgroup_ref cg;
	struct ab_err e;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	if (g->rootless || cgroup_resolve(NULL, id, false, false, &cg, &e) < 0 || cg.mode == CGROUP_MODE_DISABLED ||
	    cgroup_pids(&cg, &pids, &n, &e) < 0)
		return -1;
	log_warn("container \"%s\": found by its cgroup %s alone; ending what runs in it", id, cg.path);
	return cgroup_destroy(&cg, err) < 0 ? -2 : 0;
}

/* delete --force of a container whose state.json cannot be read (why):
 * what its cleanup record names (state_record.h), else what a truncated
 * state.json still says, else the cgroup named after the id. Where nothing
 * identifies it the directory is kept and that is an error: reporting
 * success would leave its processes running where nothing lists them. */
static int delete_damaged(const struct global_opts *g, const char *id, const char *why, struct ab_err *err)
{
	_cleanup_close_ int dirfd = -1;
	struct container_state s;
	struct ab_err e, re;
	if (state_dir_open(g->root, id, true, &dirfd, err) < 0)
		return strstr(err->msg, "does not exist") ? 0 : -1;
	bool salvaged = state_read_salvage(dirfd, id, &s, &e) == 0;
	if (!salvaged)
		memset(&s, 0, sizeof s);
	bool recorded = state_apply_record(dirfd, id, &s, &re) == 0;
	if (salvaged || recorded) {
		log_warn("%s; cleaning up what %s names and removing it", why,
			 recorded ? "its cleanup record" : "what is left of it");
		int r = container_destroy(g, &s, NULL, err);
		state_free(&s);
		return r;
	}
	state_free(&s);
	int r = state_dir_empty(dirfd) ? 0 : destroy_cgroup_named_after(g, id, err);
	if (r == -2)
		return -1;
	if (r == 0)
		return state_dir_remove(g->root, id, err);
	return ab_error(err, 0, "%s, and its %s: its processes and cgroups cannot be identified; its state directory %s/%s is kept (remove it once they are gone)",
			why, re.msg, g->root, id);
}

int container_delete(const struct global_opts *g, const char *id, bool force, struct ab_err *err)
{
	struct container_state s;
	_cleanup_close_ int dirfd = -1;
	if (container_load(g, id, true, &dirfd, &s, err) < 0) {
		if (!force)
			return -1;
		if (strstr(err->msg, "does not exist"))
			return 0;
		char why[AB_ERR_MSG_MAX];
		snprintf(why, sizeof why, "%s", err->msg);
		/* the lock is taken again there */
		if (dirfd >= 0)
			close(TAKE_FD(dirfd));
		return delete_damaged(g, id, why, err);
	}
	int r = -1;
	enum container_status st = state_status(&s);
	if (!force && (st == STATUS_RUNNING || st == STATUS_PAUSED)) {
		ab_error(err, 0, "cannot delete container \"%s\" that is not stopped: %s", id, status_name(st));
		goto out;
	}
	r = container_destroy(g, &s, NULL, err);
out:
	state_free(&s);
	return r;
}

int container_pause(const struct global_opts *g, const char *id, bool pause, struct ab_err *err)
{
	struct container_state s;
	_cleanup_close_ int dirfd = -1;
	if (container_load(g, id, true, &dirfd, &s, err) < 0)
		return -1;
	int r = -1;
	enum container_status st = state_status(&s);
	if (s.cgroup.mode == CGROUP_MODE_DISABLED)
		ab_error(err, 0, "cannot %s container \"%s\": it has no cgroup", pause ? "pause" : "resume", id);
	else if (st == STATUS_STOPPED)
		ab_error(err, 0, "container not running");
	else if (pause && st == STATUS_PAUSED)
		ab_error(err, 0, "container \"%s\" is already paused", id);
	else if (!pause && st != STATUS_PAUSED)
		ab_error(err, 0, "container \"%s\" is not paused", id);
	else
		r = cgroup_freeze(&s.cgroup, pause, err);
	state_free(&s);
	return r;
}

int container_print_state(const struct global_opts *g, const char *id, struct ab_err *err)
{
	struct container_state s;
	if (container_load(g, id, false, NULL, &s, err) < 0)
		return -1;
	struct json_out *o = json_out_new(true);
	state_oci_json(o, &s, state_status(&s));
	size_t n;
	const char *t = json_out_text(o, &n);
	fwrite(t, 1, n, stdout);
	fputc('\n', stdout);
	json_out_free(o);
	state_free(&s);
	return 0;
}
