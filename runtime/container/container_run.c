/* run: create and start in the foreground, forward signals and the terminal
 * until the program exits, fork the DNS sentry once something needs it, then
 * delete (unless --keep). run --detach is create + start. */
#include "container.h"
#include "container_internal.h"
#include "egress_suggest.h"
#include "json.h"
#include "log.h"
#include "mem_release.h"
#include "policy.h"
#include "refused_summary.h"
#include "sentry_process.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>

/* How long a foreground run goes without its DNS sentry when nothing asks for
 * it first: a program done sooner (a build step, a test) never needs one. */
#define SENTRY_LAZY_MS 100

/* After this long the runtime only waits for its program (and forwards
 * signals and the terminal): it gives back the pages of code and heap that
 * creating the container touched (mem_release.h), ~2.5 of its ~3 MiB
 * resident, which a box's machinery would keep for as long as the box
 * runs. Not sooner: a short program's teardown would fault them in again. */
#define RELEASE_IDLE_MS 1000

/* Any lookup or refused packet waiting for a sentry not forked yet? */
static bool sentry_has_input(const struct agent_policy *p)
{
	int fds[POLICY_SENTRY_WAKE_MAX];
	size_t n = policy_sentry_wake_fds(p, fds);
	struct pollfd pf[POLICY_SENTRY_WAKE_MAX];
	for (size_t i = 0; i < n; i++)
		pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	return n > 0 && poll(pf, (nfds_t)n, 0) > 0;
}

/* The sentry of a foreground run, forked once needed; into the state (read
 * afresh under the lock: the container runs, others may have written it). */
static int fork_sentry_late(struct create_ctx *cc, struct ab_err *err)
{
	if (policy_fork_sentry(&cc->policy, &cc->st, err) < 0)
		return -1;
	_cleanup_close_ int dirfd = -1;
	struct container_state now;
	struct ab_err e;
	if (state_dir_open(cc->g->root, cc->o->id, true, &dirfd, &e) < 0 ||
	    state_read(dirfd, cc->o->id, &now, &e) < 0) {
		log_debug("record the DNS sentry: %s", e.msg);
		return 0;
	}
	now.sentry_pid = cc->st.sentry_pid;
	now.sentry_start_time = cc->st.sentry_start_time;
	if (state_write(dirfd, &now, &e) < 0)
		log_debug("record the DNS sentry: %s", e.msg);
	state_free(&now);
	return 0;
}

/* What forward_until_exit keeps from one turn of its loop to the next. */
struct forward {
	struct create_ctx *cc;
	int sfd;                        /* every signal */
	struct tty_proxy proxy;
	bool have_tty;
	struct timespec start;
	bool timed_out, released;
	int status;                     /* the init's, once it exited */
};

/* One turn: what it polls, where in p each kind sits, how long it waits. */
struct forward_turn {
	struct pollfd p[16];            /* p[0] the signalfd, then the terminal's */
	int n;
	int wake_slot;                  /* the sockets of a sentry not forked yet */
	size_t n_wake;
	int sentry_slot;                /* the sentry's word that it is ready, or -1 */
	int wait_ms, lazy_ms, idle_ms;  /* -1: none */
	int ready;                      /* poll's return */
};

enum forward_next { FORWARD_AGAIN, FORWARD_EXITED, FORWARD_FAILED };

IDLE_TEXT static int64_t ms_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

IDLE_TEXT static void forward_pollfds(struct forward *f, struct forward_turn *t)
{
	t->n = 1;
	if (f->have_tty)
		t->n += tty_proxy_pollfds(&f->proxy, t->p + 1);
	int wake[POLICY_SENTRY_WAKE_MAX];
	t->wake_slot = t->n;
	t->n_wake = policy_sentry_wake_fds(&f->cc->policy, wake);
	for (size_t i = 0; i < t->n_wake; i++)
		t->p[t->n++] = (struct pollfd){.fd = wake[i], .events = POLLIN};
	/* the DNS sentry says ready (or why not) while the program already
	 * runs; a program that is done first never waits for it */
	int sentry_fd = policy_sentry_ready_fd(&f->cc->policy);
	t->sentry_slot = -1;
	if (sentry_fd >= 0) {
		t->sentry_slot = t->n;
		t->p[t->n++] = (struct pollfd){.fd = sentry_fd, .events = POLLIN};
	}
}

/* How long this turn waits: until the run's timeout, the sentry's lazy
 * fork or giving back memory, whichever comes first. True when memory is
 * to be given back now. */
IDLE_TEXT static bool forward_wait(struct forward *f, struct forward_turn *t)
{
	const struct create_opts *o = f->cc->o;
	t->wait_ms = -1;
	if (o->timeout_ms > 0 && !f->timed_out) {
		int64_t spent = ms_since(&f->start);
		t->wait_ms = spent >= o->timeout_ms ? 0 : (int)(o->timeout_ms - spent);
	}
	t->lazy_ms = -1;
	if (t->n_wake) {
		int64_t spent = ms_since(&f->start);
		t->lazy_ms = spent >= SENTRY_LAZY_MS ? 0 : (int)(SENTRY_LAZY_MS - spent);
		if (t->wait_ms < 0 || t->lazy_ms < t->wait_ms)
			t->wait_ms = t->lazy_ms;
	}
	t->idle_ms = -1;
	bool release_now = false;
	if (!f->released) {
		int64_t spent = ms_since(&f->start);
		release_now = spent >= RELEASE_IDLE_MS;
		if (!release_now) {
			t->idle_ms = (int)(RELEASE_IDLE_MS - spent);
			if (t->wait_ms < 0 || t->idle_ms < t->wait_ms)
				t->wait_ms = t->idle_ms;
		}
	}
	return release_now;
}

/* A lookup or a refused packet waits for the sentry, or it is time for it. */
IDLE_TEXT static bool sentry_wanted(const struct forward_turn *t)
{
	bool wanted = t->ready == 0 && t->wait_ms == t->lazy_ms;
	for (size_t i = 0; i < t->n_wake && t->ready > 0; i++)
		wanted |= t->p[t->wake_slot + i].revents != 0;
	return wanted;
}

/* out of time: everything in the container goes, not just its init */
IDLE_TEXT static void kill_timed_out(struct forward *f)
{
	struct create_ctx *cc = f->cc;
	f->timed_out = true;
	log_warn("container \"%s\" exceeded its timeout of %d ms: killed", cc->o->id, cc->o->timeout_ms);
	struct ab_err e;
	if (cc->st.cgroup.mode == CGROUP_MODE_DISABLED || cgroup_kill_all(&cc->st.cgroup, SIGKILL, &e) < 0)
		kill(cc->pid, SIGKILL);
}

/* A signal: SIGCHLD may be the init's exit, SIGWINCH resizes the terminal,
 * any other goes to the init. */
IDLE_TEXT static enum forward_next forward_signal(struct forward *f, const struct forward_turn *t)
{
	struct create_ctx *cc = f->cc;
	struct signalfd_siginfo si;
	if (!(t->p[0].revents & POLLIN))
		return FORWARD_AGAIN;
	if (read(f->sfd, &si, sizeof si) != sizeof si)
		return FORWARD_AGAIN;
	if (si.ssi_signo == SIGCHLD) {
		pid_t r;
		int st;
		bool done = false;
		/* the sentry is our child too: keep the init's status only */
		while ((r = waitpid(-1, &st, WNOHANG)) > 0)
			if (r == cc->pid) {
				f->status = st;
				done = true;
			}
		return done ? FORWARD_EXITED : FORWARD_AGAIN;
	}
	if (si.ssi_signo == SIGWINCH && f->have_tty) {
		tty_proxy_resize(&f->proxy);
		return FORWARD_AGAIN;
	}
	kill(cc->pid, (int)si.ssi_signo);
	return FORWARD_AGAIN;
}

/* What poll found, in order: the sentry wanted, the timeout, the terminal,
 * the sentry's word, a signal. */
IDLE_TEXT static enum forward_next forward_events(struct forward *f, struct forward_turn *t, struct ab_err *err)
{
	struct create_ctx *cc = f->cc;
	if (t->n_wake && sentry_wanted(t))
		return fork_sentry_late(cc, err) < 0 ? FORWARD_FAILED : FORWARD_AGAIN;
	if (t->ready == 0 && t->wait_ms >= 0) {
		kill_timed_out(f);
		return FORWARD_AGAIN;
	}
	if (f->have_tty)
		tty_proxy_handle(&f->proxy, t->p + 1);
	if (t->sentry_slot >= 0 && t->p[t->sentry_slot].revents && policy_wait_sentry(&cc->policy, err) < 0) {
		/* a sentry leaves when init does: then this is the exit, not a failure */
		int st;
		if (waitpid(cc->pid, &st, WNOHANG) == cc->pid) {
			f->status = st;
			return FORWARD_EXITED;
		}
		return FORWARD_FAILED;   /* the caller kills and removes the container */
	}
	return forward_signal(f, t);
}

IDLE_TEXT __attribute__((noinline)) static int forward_until_exit(struct create_ctx *cc, int *ret_status, struct ab_err *err)
{
	struct forward f = {.cc = cc, .have_tty = cc->console_master >= 0};
	_cleanup_close_ int sfd = container_forward_start(cc->console_master, &f.proxy, err);
	if (sfd < 0)
		return sfd;
	f.sfd = sfd;
	clock_gettime(CLOCK_MONOTONIC, &f.start);
	int r = 0;
	for (;;) {
		struct forward_turn t = {.p = {{.fd = sfd, .events = POLLIN}}};
		forward_pollfds(&f, &t);
		/* right before poll: code run after it is faulted in again, 64 KiB
		 * at a time */
		if (forward_wait(&f, &t)) {
			f.released = true;
			mem_release_pages(0);
		}
		t.ready = idle_poll(t.p, (nfds_t)t.n, t.wait_ms);
		if (t.ready < 0 && errno != EINTR)
			return ab_error(err, errno, "poll");
		if (t.ready == 0 && t.idle_ms >= 0 && t.wait_ms == t.idle_ms)
			continue;   /* time to give back memory: before the next poll */
		enum forward_next next = forward_events(&f, &t, err);
		if (next == FORWARD_AGAIN)
			continue;
		if (next == FORWARD_FAILED)
			r = -1;
		break;
	}
	if (f.have_tty) {
		if (r == 0)
			tty_proxy_drain(&f.proxy);
		tty_proxy_stop(&f.proxy);
	}
	if (r < 0)
		return r;
	cc->pid = 0;
	*ret_status = WIFEXITED(f.status) ? WEXITSTATUS(f.status) : 128 + WTERMSIG(f.status);
	return 0;
}

/* What the box tried to reach and was refused, before its state goes away: one
 * line per attempt on stderr, with why, so a user sees it without asking. */
static void report_refused_egress(const char *root, const char *id)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s/%s", root, id, EGRESS_LOG);
	egress_refused_summary(stderr, path, id);
}

/* Learn mode's summary, before the state goes away (its records stay in the
 * durable log, where egress suggest finds them). */
static void report_learnt_egress(const char *root, const char *id)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s/%s", root, id, EGRESS_LEARN);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return;
	struct egress_suggest *g = egress_suggest_new();
	char line[4096];
	while (fgets(line, sizeof line, f))
		(void)egress_suggest_add(g, line);
	struct egress_suggest_summary s;
	egress_suggest_summary(g, &s);
	egress_suggest_free(g);
	fprintf(stderr, "agentbox: learn mode: \"%s\" reached %zu name%s (%zu only looked up) and %zu address%s "
		"with no name", id, s.names, s.names == 1 ? "" : "s", s.lookups_only, s.addresses,
		s.addresses == 1 ? "" : "es");
	if (s.inside)
		fprintf(stderr, "; %zu answer%s pointed inside (withheld)", s.inside, s.inside == 1 ? "" : "s");
	if (s.lost || s.unrecorded || s.full)
		fprintf(stderr, "; INCOMPLETE: some were not recorded");
	fprintf(stderr, ".\nagentbox: the allowlist it calls for: agentbox egress suggest %s\n", id);
}

int container_run(const struct global_opts *g, const struct create_opts *o, struct ab_err *err)
{
	struct create_ctx cc = {.g = g, .o = o, .state_dirfd = -1, .sync_fd = -1, .console_master = -1};
	int r = create_common(&cc, true, err);
	if (r < 0)
		goto fail;
	if (o->detach) {
		/* the init waits on the fifo like after create: start it now */
		pid_t pid = cc.pid;
		cc.pid = 0;
		close(cc.state_dirfd);
		cc.state_dirfd = -1;
		r = container_start(g, o->id, err);
		if (r < 0 || (r = policy_wait_sentry(&cc.policy, err)) < 0) {
			cc.pid = pid;
			goto fail;
		}
		create_warn_made(&cc);
		create_ctx_finish(&cc, true);
		return 0;
	}
	if (o->on_created && o->on_created(cc.pid, o->on_created_data, err) < 0) {
		r = -1;
		goto fail;
	}
	create_warn_made(&cc);
	bool poststart_failed = false;
	{
		if (sync_send(cc.sync_fd, SYNC_START, 0, NULL, -1, err) < 0) {
			r = -1;
			goto fail;
		}
		/* a failing poststart hook: the program is stopped, and the
		 * container goes below as if by delete, --keep or not */
		if (container_run_late_hooks(&cc.st, HOOK_POSTSTART, cc.config, err) < 0) {
			poststart_failed = true;
			(void)kill(cc.pid, SIGKILL);
		}
		/* the DNS sentry comes when the program needs it (forward_until_exit):
		 * its sockets hold whatever the program sends until then */
	}
	int status = 0;
	/* the state lock must not be held while the container runs */
	close(cc.state_dirfd);
	cc.state_dirfd = -1;
	{
		struct ab_err e;
		r = forward_until_exit(&cc, &status, poststart_failed ? &e : err);
		if (r < 0 && poststart_failed)
			log_warn("%s", e.msg);
	}
	if (r < 0)
		goto fail;
	/* refused just before the end and not logged yet: a sentry logs it now */
	if (sentry_has_input(&cc.policy)) {
		struct ab_err e;
		if (fork_sentry_late(&cc, &e) < 0)
			log_warn("%s", e.msg);
	}
	policy_sentry_finish(&cc.policy, 2000);
	if (o->report_egress)
		report_refused_egress(g->root, o->id);
	if (o->report_learn)
		report_learnt_egress(g->root, o->id);
	if (poststart_failed) {
		container_destroy_after_poststart(g, &cc.st, cc.config);
	} else if (!o->keep) {
		struct ab_err e;
		if (container_destroy(g, &cc.st, cc.config, &e) < 0)
			log_warn("delete after run: %s", e.msg);
	}
	create_ctx_finish(&cc, true);
	return poststart_failed ? -1 : status;
fail:
	create_cleanup(&cc);
	create_ctx_free(&cc);
	return r;
}
