/* The container's DNS sentry as a process: its sockets made before the
 * program can run, then forked (netfilter/sentry/sentry.c is its body), waited for,
 * stopped. */
#include "sentry_process.h"
#include "test_hooks.h"
#include "cgroups_host.h"
#include "deny_log.h"
#include "durable_log.h"
#include "egress_netns.h"
#include "log.h"
#include "process.h"
#include "sentry.h"
#include "sentry_sockets.h"
#include "upstream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RESOLV_CONF_READ_MAX (64 * 1024)

/* The resolver the container would use: a bind over /etc/resolv.conf (Docker,
 * Podman), else the rootfs' own file. */
static void resolv_conf_path(const struct oci_config *c, const char *rootfs, char *buf, size_t len)
{
	for (size_t i = c->n_mounts; i-- > 0;) {
		const struct oci_mount *m = &c->mounts[i];
		if (streq(m->destination, "/etc/resolv.conf") && m->source && m->source[0] == '/') {
			snprintf(buf, len, "%s", m->source);
			return;
		}
	}
	snprintf(buf, len, "%s/etc/resolv.conf", rootfs);
}


extern uintptr_t util_main_frame;
extern bool util_force_fallbacks;

/* A sentry made ready to fork: its sockets, pipe and init pidfd are open. */
struct sentry_child {
	struct egress_sentry_params sp;
	int ready_r, ready_w, netns;
	bool own_stack;
};

static void sentry_child_free(struct sentry_child *a)
{
	if (!a)
		return;
	egress_sentry_sockets_close(&a->sp);
	int fds[] = {a->ready_r, a->ready_w, a->netns, a->sp.init_pidfd, a->sp.log_fd, a->sp.gateway_fd,
		     a->sp.durable_dirfd, a->sp.policy_fd, a->sp.refused_fd, a->sp.learn_fd, a->sp.learn_durable_fd};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(a);
}

#define SENTRY_STACK (256 * 1024)

/* The sentry's body, on a stack of its own: everything it keeps is copied off
 * the runtime's stack first, so that stack is dead from the start and goes back
 * whole once the sentry is idle (it held ~80 KiB of the runtime's live frames). */
static int sentry_child(void *arg)
{
	const struct sentry_child *a = arg;
	/* the sentry keeps nothing of ours: not the state lock, not the engine's pipes */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	int keep[] = {a->ready_w, a->netns, a->sp.init_pidfd, a->sp.listen_fd[0], a->sp.listen_fd[1],
		      a->sp.listen_fd[2], a->sp.listen_fd[3], a->sp.nflog_fd, a->sp.nflog_repeat_fd, a->sp.log_fd,
		      a->sp.sni_fd[0], a->sp.sni_fd[1], a->sp.gateway_fd, a->sp.durable_dirfd, a->sp.policy_fd,
		      a->sp.refused_fd, a->sp.http_fd[0], a->sp.http_fd[1], a->sp.learn_fd, a->sp.learn_durable_fd,
		      a->sp.nflog_learn_fd};
	close_fds_from(3, keep, ARRAY_SIZE(keep));
	process_reset_signals();
	setsid();
	/* tests/integration/policy.bats: a slow sentry must cost the container nothing */
	const char *delay = test_hook("AGENTBOX_FAULT_SENTRY_DELAY_MS");
	if (delay)
		usleep((useconds_t)atoi(delay) * 1000u);
	/* tests/integration/policy.bats: a sentry that fails after create or run went on */
	if (test_hook("AGENTBOX_FAULT_SENTRY_FAIL")) {
		static const char why[] = "a failure injected by AGENTBOX_FAULT_SENTRY_FAIL";
		(void)!write(a->ready_w, why, sizeof why - 1);
		_exit(1);
	}
	struct egress_sentry_params *sp = malloc(sizeof *sp);
	struct egress_policy *policy = malloc(sizeof *policy);
	if (!sp || !policy)   /* copies: the runtime's stack is dead here */
		_exit(1);
	*sp = a->sp;
	*policy = *a->sp.policy;   /* its entries are on the heap */
	sp->policy = policy;
	sp->release_more = cgroup_host_release;   /* the sentry lives as long as the container */
	sp->dead_stack_hi = a->own_stack ? util_main_frame : 0;
	sp->ready_fd = a->ready_w;
	struct ab_err serr = {0};
	int r = egress_sentry_run(sp, &serr);
	if (r < 0)
		(void)!write(a->ready_w, serr.msg, strlen(serr.msg));
	_exit(r < 0 ? 1 : 0);
}

/* fork, with the child on a fresh stack (a guard page below it) */
static pid_t fork_sentry(struct sentry_child *child)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	child->own_stack = false;
	if (!util_main_frame) {   /* not the runtime's main (never): a plain fork */
		pid_t pid = fork();
		if (pid == 0)
			_exit(sentry_child(child));
		return pid;
	}
	char *stk = mmap(NULL, SENTRY_STACK + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stk == MAP_FAILED)
		return -1;
	if (mprotect(stk + page, SENTRY_STACK, PROT_READ | PROT_WRITE) < 0) {
		munmap(stk, SENTRY_STACK + page);
		return -1;
	}
	child->own_stack = true;
	pid_t pid = clone(sentry_child, stk + page + SENTRY_STACK, SIGCHLD, child);
	int e = errno;
	munmap(stk, SENTRY_STACK + page);   /* ours; the child has its own copy */
	errno = e;
	return pid;
}

static bool any_loopback(const struct egress_upstream *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (egress_upstream_is_loopback(&u[i]))
			return true;
	return false;
}

/* A sentry to prepare: every fd closed (-1) until opened. */
static struct sentry_child *sentry_child_new(void)
{
	struct sentry_child *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->ready_r = a->ready_w = a->sp.init_pidfd = a->sp.nflog_fd = a->sp.nflog_repeat_fd = a->sp.log_fd = -1;
	a->sp.refused_fd = a->sp.learn_fd = a->sp.learn_durable_fd = a->sp.nflog_learn_fd = -1;
	for (int i = 0; i < 4; i++)
		a->sp.listen_fd[i] = -1;
	a->sp.sni_fd[0] = a->sp.sni_fd[1] = a->sp.gateway_fd = a->sp.durable_dirfd = a->sp.policy_fd = -1;
	a->sp.http_fd[0] = a->sp.http_fd[1] = -1;
	return a;
}

/* What the sentry serves: the container's netns and policy, and the
 * gateway's connection when header credentials started one. */
static void sentry_params(struct sentry_child *a, struct agent_policy *p, const struct container_state *st)
{
	struct egress_sentry_params *sp = &a->sp;
	sp->netns_fd = a->netns;
	sp->policy = &p->egress;
	sp->container_id = st->id;
	sp->dns = true;
	sp->port = EGRESS_SENTRY_PORT;
	sp->init_pid = st->pid;
	sp->ready_fd = -1;
	sp->http_proxy = p->http_proxy;
	if (p->gateway_started && p->gateway.handoff_fd >= 0) {
		/* the sentry hands the gateway its connections; ours is closed now,
		 * so the gateway ends when the sentry does */
		sp->gateway_fd = p->gateway.handoff_fd;
		p->gateway.handoff_fd = -1;
		sp->cred_hosts = &p->gateway.hosts;
	}
}

void policy_note_resolv_before_hooks(struct agent_policy *p, const struct oci_config *c,
				     const struct container_state *st)
{
	if (!p->egress_enforced || p->egress_shared || !(egress_policy_allows_names(&p->egress) || p->egress_live))
		return;
	char resolv[PATH_MAX];
	resolv_conf_path(c, st->rootfs, resolv, sizeof resolv);
	char *text;
	size_t len;
	struct ab_err e;
	if (read_file_at(AT_FDCWD, resolv, RESOLV_CONF_READ_MAX, &text, &len, &e) < 0)
		return;   /* the sentry says what it makes of the file after the hooks */
	p->resolv_before_hooks = arena_strdup(&p->arena, text);
	free(text);
}

/* Where the container's loopback resolver (Docker's embedded one) forwards:
 * the servers the engine noted in the file (Docker 25 and later), else,
 * when a hook rewrote the file to point at that resolver (Docker before 25),
 * the servers it named before: the engine's own (--dns, daemon.json's dns,
 * or the host's as Docker read them). Else the runtime's own resolvers: a
 * loopback resolver nobody said more about. Loopback ones and the sentry's
 * own are left out: a forward to them would come back (--dns 127.0.0.11);
 * none left means such forwards fail, as they would with runc. */
static void forward_upstreams(struct egress_sentry_params *sp, const struct agent_policy *p,
			      const struct egress_resolv *now, const char *now_text)
{
	struct egress_resolv before;
	const struct egress_upstream *fwd = NULL;
	size_t n = 0;
	if (now->has_ext) {
		fwd = now->ext;
		n = now->n_ext;
	} else if (p->resolv_before_hooks && !streq(p->resolv_before_hooks, now_text)) {
		_cleanup_free_ char *text = xstrdup(p->resolv_before_hooks);
		egress_resolv_conf_parse(text, &before);
		fwd = before.ns;
		n = before.n_ns;
	}
	sp->n_forward_upstream = 0;
	if (fwd) {
		sp->forward_engine = true;
		for (size_t i = 0; i < n; i++)
			if (!egress_upstream_is_loopback(&fwd[i]))
				sp->forward_upstream[sp->n_forward_upstream++] = fwd[i];
		return;
	}
	struct ab_err e;
	if (egress_upstream_from_resolv_conf("/etc/resolv.conf", sp->forward_upstream, &sp->n_forward_upstream, &e) < 0) {
		log_debug("egress: %s: names the container's loopback resolver forwards will fail", e.msg);
		sp->n_forward_upstream = 0;
	}
}

/* The resolvers the sentry forwards to: the container's (none: DNS off),
 * and for a loopback one where that one forwards. */
static int sentry_upstreams(struct egress_sentry_params *sp, const struct agent_policy *p, const struct oci_config *c,
			    const struct container_state *st, struct ab_err *err)
{
	char resolv[PATH_MAX];
	resolv_conf_path(c, st->rootfs, resolv, sizeof resolv);
	struct ab_err e;
	struct egress_resolv now = {0};
	_cleanup_free_ char *text = NULL;
	if (egress_resolv_conf_read(resolv, &now, &text, &e) < 0)
		now.n_ns = 0;
	memcpy(sp->upstream, now.ns, now.n_ns * sizeof now.ns[0]);
	sp->n_upstream = now.n_ns;
	/* refused here, where create can still say so (the sentry refuses it too) */
	for (size_t i = 0; i < sp->n_upstream; i++)
		if (egress_upstream_is_sentry(&sp->upstream[i], EGRESS_SENTRY_PORT))
			return ab_error(err, 0, "egress: DNS sentry: the upstream resolver is the sentry's own address (%s)",
					resolv);
	/* nothing to forward to (a box without network): the sentry still
	 * answers, every name refused with the reason, rather than a missing
	 * resolver that clients read as a temporary failure */
	if (sp->n_upstream == 0)
		log_debug("egress: no upstream resolver in %s: the sentry refuses every name", resolv);
	/* A loopback upstream (Docker's embedded resolver) forwards what it does
	 * not serve from the box's netns, back to the sentry. Looked into only
	 * then: no file more at every other create. */
	if (sp->dns && (egress_policy_allows_names(&p->egress) || p->egress_live) &&
	    any_loopback(sp->upstream, sp->n_upstream))
		forward_upstreams(sp, p, &now, text);
	return 0;
}

/* Learn mode's records (sentry_learn.h): in the state directory, and where
 * they outlive it (egress suggest reads them after the box is gone); a
 * learning run of a named box begins them afresh. */
static int learn_files(struct egress_sentry_params *sp, int state_dirfd, struct ab_err *err)
{
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;
	sp->learn_fd = openat(state_dirfd, EGRESS_LEARN, flags, 0600);
	if (sp->learn_fd < 0)
		return ab_error(err, errno, "egress: open %s", EGRESS_LEARN);
	/* best effort, as the durable log */
	if (sp->durable_dirfd >= 0)
		sp->learn_durable_fd = openat(sp->durable_dirfd, DURABLE_LEARN, flags, 0600);
	return 0;
}

/* The files the sentry writes and reads: the deny log, its durable copy,
 * the live policy, the box's refused file. */
static int sentry_files(struct egress_sentry_params *sp, struct agent_policy *p, const struct container_state *st,
			int state_dirfd, struct ab_err *err)
{
	/* opened here, not by the sentry: a sentry still starting when run's
	 * delete empties the state dir must not create a file in it again */
	sp->log_fd = openat(state_dirfd, EGRESS_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sp->log_fd < 0)
		return ab_error(err, errno, "egress: open the deny log %s", EGRESS_LOG);
	/* the records go where they outlive the state too (deny_log.h): the
	 * sentry holds the container's directory, locked, while it lives */
	if (deny_log_open_dir(&p->config, st->id, &sp->durable_dirfd, &p->durable_made, err) < 0)
		return -1;
	sp->durable = true;
	sp->durable_max_bytes = p->config.log_max_bytes;
	/* live changes (egress allow/deny, egress_live.c) come through this file */
	sp->policy_fd = openat(state_dirfd, EGRESS_POLICY_FILE, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sp->policy_fd < 0)
		return ab_error(err, errno, "egress: open %s", EGRESS_POLICY_FILE);
	sp->reloadable = true;
	sp->live = p->egress_live;
	/* the box's refused file, when create made one (container.c) */
	sp->refused_fd = openat(state_dirfd, EGRESS_REFUSED, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	return p->egress.learn ? learn_files(sp, state_dirfd, err) : 0;
}

/* Where the sentry says it serves (or why it could not start): the status
 * file start reads, or a pipe create or run waits on. */
static int sentry_ready_channel(struct sentry_child *a, const struct agent_policy *p, int state_dirfd,
				struct ab_err *err)
{
	if (p->sentry_status_file) {
		/* create returns without waiting: start reads what the sentry says
		 * here (policy_sentry_wait_started). Opened here for the reason the
		 * deny log is. */
		a->ready_w = openat(state_dirfd, SENTRY_STATUS, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
				    0600);
		if (a->ready_w < 0)
			return ab_error(err, errno, "egress: open %s", SENTRY_STATUS);
		return 0;
	}
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return ab_error(err, errno, "egress: pipe");
	a->ready_r = ready[0];
	a->ready_w = ready[1];
	return 0;
}

int policy_prepare_sentry(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
			  int state_dirfd, struct ab_err *err)
{
	if (!p->egress_enforced || p->egress_shared)
		return 0;
	struct sentry_child *a = sentry_child_new();
	if (!a)
		return ab_error(err, ENOMEM, "egress: DNS sentry");
	struct egress_sentry_params *sp = &a->sp;
	a->netns = egress_netns_open(p, c, st->pid, err);
	if (a->netns < 0)
		goto fail;
	sentry_params(a, p, st);
	if (sentry_upstreams(sp, p, c, st, err) < 0)
		goto fail;
	if (sentry_files(sp, p, st, state_dirfd, err) < 0)
		goto fail;
	/* made now, before the container's program can run: its first lookups and
	 * refused packets wait in them until the sentry serves */
	if (egress_sentry_sockets_open(a->netns, sp->dns, EGRESS_SENTRY_PORT, sp, err) < 0) {
		ab_wrap(err, "egress: DNS sentry");
		goto fail;
	}
	/* init cannot be gone yet (it waits for start, and nobody reaps it before
	 * the fork): with a pidfd the sentry never mistakes a fast container for a
	 * setup failure */
	sp->init_pidfd = util_force_fallbacks ? -1 : (int)syscall(SYS_pidfd_open, st->pid, 0);
	if (sentry_ready_channel(a, p, state_dirfd, err) < 0)
		goto fail;
	p->sentry_prep = a;
	return 0;
fail:
	sentry_child_free(a);
	return -1;
}

int policy_fork_sentry(struct agent_policy *p, struct container_state *st, struct ab_err *err)
{
	struct sentry_child *a = p->sentry_prep;
	if (!a)
		return 0;
	p->sentry_prep = NULL;
	pid_t pid = fork_sentry(a);
	int e = errno;
	int ready_r = a->ready_r;
	a->ready_r = -1;
	sentry_child_free(a);   /* the child has its copies */
	if (pid < 0) {
		close(ready_r);
		return ab_error(err, e, "egress: fork the DNS sentry");
	}
	p->sentry_pid = pid;
	/* ours to reap, so the pid cannot be reused before this */
	if (p->sentry_pidfd < 0)
		p->sentry_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	p->sentry_ready_fd = ready_r;
	p->sentry_pending = ready_r >= 0;
	/* in the state from now on, so that delete finds it even before it serves */
	st->sentry_pid = pid;
	(void)proc_start_time(pid, &st->sentry_start_time);
	return 0;
}

/* The sentry's word, its n (> 0) bytes in msg (room for one more): "1" once
 * it serves, else why it could not start (sentry_child). 0, or -1 with err. */
static int sentry_word(char *msg, size_t n, struct ab_err *err)
{
	if (n == 1 && msg[0] == '1')
		return 0;
	msg[n] = 0;
	return ab_error(err, 0, "egress: the DNS sentry did not start: %s", msg);
}

/* What the sentry wrote to fd: 1 ready, 0 nothing yet, -1 its error in err. */
static int sentry_status_read(int fd, struct ab_err *err)
{
	char msg[AB_ERR_MSG_MAX];
	ssize_t n = pread(fd, msg, sizeof msg - 1, 0);
	if (n < 0)
		return ab_error(err, errno, "egress: read %s", SENTRY_STATUS);
	if (n == 0)
		return 0;
	return sentry_word(msg, (size_t)n, err) < 0 ? -1 : 1;
}

int policy_sentry_wait_started(int state_dirfd, pid_t sentry_pid, uint64_t sentry_start_time, struct ab_err *err)
{
	_cleanup_close_ int fd = openat(state_dirfd, SENTRY_STATUS, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : ab_error(err, errno, "egress: open %s", SENTRY_STATUS);
	int r = sentry_status_read(fd, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	/* still starting: wait for its word (inotify), or its end (pidfd; where
	 * there is none, a look at /proc every 100 ms) */
	_cleanup_close_ int pidfd = util_force_fallbacks ? -1 : (int)syscall(SYS_pidfd_open, sentry_pid, 0);
	_cleanup_close_ int in = inotify_init1(IN_CLOEXEC);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (in < 0 || inotify_add_watch(in, path, IN_MODIFY | IN_CLOSE_WRITE) < 0)
		return ab_error(err, errno, "egress: watch %s", SENTRY_STATUS);
	for (int waited_ms = 0;;) {
		/* a word written before the watch was in place is read here */
		if ((r = sentry_status_read(fd, err)) != 0)
			return r < 0 ? -1 : 0;
		if (!proc_is(sentry_pid, sentry_start_time))
			return ab_error(err, 0, "egress: the DNS sentry exited before it served");
		if (waited_ms >= SENTRY_START_MAX_MS)
			return ab_error(err, ETIMEDOUT, "egress: the DNS sentry did not start within %d s",
					SENTRY_START_MAX_MS / 1000);
		struct pollfd pf[2] = {{.fd = in, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
		int step = pidfd >= 0 ? SENTRY_START_MAX_MS - waited_ms : 100;
		int n = poll(pf, pidfd >= 0 ? 2 : 1, step);
		if (n < 0 && errno != EINTR)
			return ab_error(err, errno, "egress: wait for the DNS sentry");
		if (n == 0)
			waited_ms += step;
		if (n > 0 && (pf[0].revents & POLLIN)) {
			char buf[4096];
			(void)!read(in, buf, sizeof buf);
		}
		if (n > 0 && pidfd >= 0 && (pf[1].revents & POLLIN)) {
			/* gone (perhaps a zombie nobody reaped yet): its last word, if any */
			if ((r = sentry_status_read(fd, err)) != 0)
				return r < 0 ? -1 : 0;
			return ab_error(err, 0, "egress: the DNS sentry exited before it served");
		}
	}
}

size_t policy_sentry_wake_fds(const struct agent_policy *p, int fds[POLICY_SENTRY_WAKE_MAX])
{
	const struct sentry_child *a = p->sentry_prep;
	if (!a)
		return 0;
	size_t n = 0;
	for (int i = 0; i < 4; i++)
		if (a->sp.listen_fd[i] >= 0)
			fds[n++] = a->sp.listen_fd[i];
	/* (a repeat always follows a first packet: that one wakes it) */
	if (a->sp.nflog_fd >= 0)
		fds[n++] = a->sp.nflog_fd;
	if (a->sp.nflog_learn_fd >= 0)   /* a connection of a learning box is to be recorded */
		fds[n++] = a->sp.nflog_learn_fd;
	for (int i = 0; i < 2; i++) {   /* a TLS connection waits for the SNI check, a request for the proxy */
		if (a->sp.sni_fd[i] >= 0)
			fds[n++] = a->sp.sni_fd[i];
		if (a->sp.http_fd[i] >= 0)
			fds[n++] = a->sp.http_fd[i];
	}
	return n;
}

void policy_sentry_finish(struct agent_policy *p, int timeout_ms)
{
	if (p->sentry_pid <= 0)
		return;
	if (p->sentry_pidfd >= 0) {
		struct pollfd pf = {.fd = p->sentry_pidfd, .events = POLLIN};
		while (poll(&pf, 1, timeout_ms) < 0 && errno == EINTR)
			;
	}
	if (waitpid(p->sentry_pid, NULL, WNOHANG) == 0)
		return;   /* still there: delete's teardown kills it */
	p->sentry_pid = 0;
	if (p->sentry_pidfd >= 0)
		close(p->sentry_pidfd);
	p->sentry_pidfd = -1;
}

int policy_sentry_ready_fd(const struct agent_policy *p)
{
	return p->sentry_pending ? p->sentry_ready_fd : -1;
}

int policy_wait_sentry(struct agent_policy *p, struct ab_err *err)
{
	if (!p->sentry_pending)
		return 0;
	char msg[AB_ERR_MSG_MAX];
	ssize_t n;
	do
		n = read(p->sentry_ready_fd, msg, sizeof msg - 1);
	while (n < 0 && errno == EINTR);
	close(p->sentry_ready_fd);
	p->sentry_pending = false;
	if (n <= 0)   /* gone without a word */
		return ab_error(err, 0, "egress: the DNS sentry did not start");
	return sentry_word(msg, (size_t)n, err);
}

void policy_sentry_cleanup(struct agent_policy *p)
{
	sentry_child_free(p->sentry_prep);
	p->sentry_prep = NULL;
	if (p->sentry_pending) {
		close(p->sentry_ready_fd);
		p->sentry_pending = false;
	}
	if (p->sentry_pid > 0) {
		kill(p->sentry_pid, SIGKILL);
		while (waitpid(p->sentry_pid, NULL, 0) < 0 && errno == EINTR)
			;
		p->sentry_pid = 0;
	}
}

void policy_sentry_stop(const struct container_state *s)
{
	if (proc_is(s->sentry_pid, s->sentry_start_time))
		kill(s->sentry_pid, SIGKILL);
}

void policy_sentry_free(struct agent_policy *p)
{
	/* a foreground run whose program never needed its sentry */
	sentry_child_free(p->sentry_prep);
	p->sentry_prep = NULL;
	if (p->sentry_pid > 0 && p->sentry_pidfd >= 0)
		close(p->sentry_pidfd);
}
