#include "policy.h"
#include "cgroups.h"
#include "log.h"
#include "seccomp.h"

#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/capability.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <string.h>

#define ANNOTATION_SECCOMP "agentbox.seccomp.profile"

static bool profile_name_valid(const char *n)
{
	return streq(n, "agent") || streq(n, "default") || streq(n, "none");
}

#define ANNOTATION_EGRESS_ALLOW "agentbox.egress.allow"
#define ANNOTATION_EGRESS_DENY "agentbox.egress.deny"

static int resolve_egress(const struct global_opts *g, const struct oci_config *c,
			  struct agent_policy *ret, struct ab_err *err)
{
	const struct agent_config *cfg = &ret->config;
	if (g->egress_allow && streq(g->egress_allow, "all")) {
		ret->egress_enforced = false;
		return 0;
	}
	/* an admin may turn the firewall off in the config; entries on the command line
	 * turn it back on for that runtime */
	ret->egress_enforced = cfg->egress_enforce || g->egress_allow || g->egress_deny;
	if (!ret->egress_enforced)
		return 0;
	char source[PATH_MAX + 32];
	snprintf(source, sizeof source, "%s: egress.allow", cfg->path ? cfg->path : "config");
	if (cfg->egress_allow && egress_policy_add(&ret->egress, cfg->egress_allow, false, source, err) < 0)
		return -1;
	snprintf(source, sizeof source, "%s: egress.deny", cfg->path ? cfg->path : "config");
	if (cfg->egress_deny && egress_policy_add(&ret->egress, cfg->egress_deny, true, source, err) < 0)
		return -1;
	if (g->egress_allow && egress_policy_add(&ret->egress, g->egress_allow, false, "--egress-allow", err) < 0)
		return -1;
	if (g->egress_deny && egress_policy_add(&ret->egress, g->egress_deny, true, "--egress-deny", err) < 0)
		return -1;
	const char *ann_allow = oci_annotation(c, ANNOTATION_EGRESS_ALLOW);
	if (ann_allow && *ann_allow) {
		struct egress_policy req = {0};
		if (egress_policy_add(&req, ann_allow, false, "annotation " ANNOTATION_EGRESS_ALLOW, err) < 0)
			return -1;
		if (cfg->egress_annotations_may_widen) {
			for (size_t i = 0; i < req.allow.n; i++) {
				char buf[EGRESS_ENTRY_TEXT];
				egress_entry_to_string(&req.allow.v[i], buf, sizeof buf);
				if (egress_policy_add(&ret->egress, buf, false, "annotation " ANNOTATION_EGRESS_ALLOW, err) < 0) {
					egress_policy_free(&req);
					return -1;
				}
			}
			egress_policy_free(&req);
			goto deny;
		}
		/* the workload's side may only narrow what the admin allowed */
		for (size_t i = 0; i < req.allow.n; i++) {
			if (!egress_entry_covered(&ret->egress.allow, &req.allow.v[i])) {
				char buf[EGRESS_ENTRY_TEXT];
				egress_entry_to_string(&req.allow.v[i], buf, sizeof buf);
				egress_policy_free(&req);
				return ab_error(err, 0, "annotation %s: entry \"%s\" is not within the runtime's allowlist: refused (allow it with --egress-allow, or set egress.annotations_may_widen in %s)",
						ANNOTATION_EGRESS_ALLOW, buf, cfg->path ? cfg->path : DEFAULT_AGENT_CONFIG);
			}
		}
		/* narrowing: the annotation's list replaces the admin's */
		struct egress_list old = ret->egress.allow;
		ret->egress.allow = req.allow;
		req.allow = old;
		egress_policy_free(&req);
	}
deny:;
	const char *ann_deny = oci_annotation(c, ANNOTATION_EGRESS_DENY);
	if (ann_deny && egress_policy_add(&ret->egress, ann_deny, true, "annotation " ANNOTATION_EGRESS_DENY, err) < 0)
		return -1;
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	if (!net)
		return ab_error(err, 0, "egress policy: the container has no network namespace of its own, so its egress cannot be policed: refused (give it a network namespace, or turn the firewall off with --egress-allow all or egress.enforce: false in %s)",
				cfg->path ? cfg->path : DEFAULT_AGENT_CONFIG);
	return 0;
}

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

/* The container's network namespace: the one the config names by path (init
 * joins it only after SYNC_CONTINUE, so /proc/PID/ns/net is still the runtime's
 * then: Podman, CRI pods, --network container:X), else the new one init was
 * cloned into. Never the runtime's own: the firewall would police the host. */
static int open_container_netns(const struct agent_policy *p, const struct oci_config *c, pid_t pid,
				struct ab_err *err)
{
	if (p->netns_pooled) {
		/* the init may not have joined it yet: ours is the same namespace */
		int fd = fcntl(p->netns_fd, F_DUPFD_CLOEXEC, 3);
		return fd >= 0 ? fd : ab_error(err, errno, "egress: the network namespace from the pool");
	}
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	char buf[64];
	const char *path = buf;
	if (net && net->path)
		path = net->path;
	else
		snprintf(buf, sizeof buf, "/proc/%d/ns/net", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "egress: open the network namespace %s", path);
	struct stat a, b;
	if (fstat(fd, &a) < 0 || stat("/proc/self/ns/net", &b) < 0) {
		int e = errno;
		close(fd);
		return ab_error(err, e, "egress: stat the network namespace %s", path);
	}
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		close(fd);
		return ab_error(err, 0, "egress: the container's network namespace %s is the runtime's own: the firewall would police the host: refused", path);
	}
	return fd;
}

/* The path of the container's state directory (ROOT/ID), from its fd. */
static int state_dir_path(int state_dirfd, char *dir, size_t len, struct ab_err *err)
{
	char fdlink[64];
	snprintf(fdlink, sizeof fdlink, "/proc/self/fd/%d", state_dirfd);
	ssize_t dl = readlink(fdlink, dir, len - 1);
	if (dl < 0)
		return ab_error(err, errno, "egress: find the state directory");
	dir[dl] = 0;
	return 0;
}

/* The container of ROOT whose state records the pool token TOKEN (its
 * ruleset came from the pool, so the table's comment names the token): its id
 * into id, or -1. States are read without their locks: each is replaced
 * atomically, and only the match is read again properly. */
static int token_owner(const char *root, const char *token, char *id, size_t len)
{
	char **ids;
	size_t n;
	struct ab_err e;
	if (strlen(token) != NETNS_POOL_TOKEN_LEN || state_list_ids(root, &ids, &n, &e) < 0)
		return -1;
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = -1;
	for (size_t i = 0; i < n && r < 0; i++) {
		char path[PATH_MAX], *buf;
		size_t got;
		snprintf(path, sizeof path, "%s/" STATE_FILE, ids[i]);
		if (read_file_at(rootfd, path, STATE_FILE_MAX, &buf, &got, &e) < 0)
			continue;
		if (strstr(buf, token)) {
			snprintf(id, len, "%s", ids[i]);
			r = 0;
		}
		free(buf);
	}
	state_free_ids(ids, n);
	return r;
}

/* The policy of the container whose ruleset polices a joined netns, from its
 * state in the same root (the table comment names it, or the pool token its
 * state records). */
static int owner_policy(int netns, const char *path, const char *self_id, int state_dirfd, char *owner,
			size_t owner_len, struct egress_policy *ret, struct ab_err *err)
{
	int r = egress_table_owner(netns, owner, owner_len, err);
	if (r < 0)
		return ab_wrap(err, "egress: read the ruleset of the network namespace %s", path);
	if (r == 0)
		return 0;
	char dir[PATH_MAX];
	if (state_dir_path(state_dirfd, dir, sizeof dir, err) < 0)
		return -1;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	char token[NETNS_POOL_TOKEN_LEN + 2] = "";
	if (owner[0] == '@') {
		snprintf(token, sizeof token, "%s", owner + 1);
		if (token_owner(dir, token, owner, owner_len) < 0)
			return ab_error(err, 0, "egress: the network namespace %s has an agentbox ruleset of no live container under %s (its table comment names pool token \"%s\"): refused",
					path, dir, token);
	}
	if (!container_id_valid(owner) || streq(owner, self_id))
		return ab_error(err, 0, "egress: the network namespace %s has an agentbox ruleset of no live container (table comment names \"%s\"): refused (delete it with: nft delete table inet agentbox)",
				path, owner);
	int dfd;
	struct container_state ost;
	struct ab_err e;
	if (state_dir_open(dir, owner, false, &dfd, &e) < 0)
		return ab_error(err, 0, "egress: the network namespace %s is policed by container %s, whose state is not under %s (%s): refused",
				path, owner, dir, e.msg);
	r = state_read(dfd, owner, &ost, &e);
	close(dfd);
	if (r < 0)
		return ab_error(err, 0, "egress: the network namespace %s is policed by container %s: %s: refused", path, owner, e.msg);
	r = 1;
	char source[128];
	snprintf(source, sizeof source, "container %s's egressPolicy", owner);
	if (token[0] && !(ost.egress_token && streq(ost.egress_token, token)))
		r = ab_error(err, 0, "egress: the network namespace %s has an agentbox ruleset of no live container under %s (its table comment names pool token \"%s\"): refused",
			     path, dir, token);
	else if (!ost.egress_policy || strncmp(ost.egress_policy, "allow=", 6) != 0)
		r = ab_error(err, 0, "egress: the network namespace %s is policed by container %s, whose state has no egress policy: refused",
			     path, owner);
	else if (egress_policy_from_string(ost.egress_policy, source, ret, err) < 0)
		r = -1;
	state_free(&ost);
	return r;
}

/* Rules are per network namespace: a container that joins one another
 * container polices (a pod's pause container, --network container:X) gets that
 * container's rules and sentry whatever its own flags say. Refuse it when its
 * own policy would let it reach more; say so when it would let it reach less. */
static int check_joined(const struct agent_policy *p, int netns, const char *path, const char *id, int state_dirfd,
			struct ab_err *err)
{
	char owner[256];
	struct egress_policy op = {0};
	int r = owner_policy(netns, path, id, state_dirfd, owner, sizeof owner, &op, err);
	if (r <= 0)
		return r;
	char what[EGRESS_ENTRY_TEXT];
	bool missing_deny = false;
	r = 0;
	if (!p->egress_enforced)
		r = ab_error(err, 0, "egress: the network namespace %s is policed by container %s and this container's firewall is off (it would allow everything): refused (give it the same policy or a narrower one)",
			     path, owner);
	else if (egress_policy_wider(&p->egress, &op, what, sizeof what, &missing_deny))
		r = ab_error(err, 0, missing_deny
			     ? "egress: the network namespace %s is policed by container %s, which denies \"%s\" and this container does not: refused (containers sharing a network namespace share its rules; give it the same policy or a narrower one)"
			     : "egress: the network namespace %s is policed by container %s, whose policy does not allow \"%s\": refused (containers sharing a network namespace share its rules; give it the same policy or a narrower one)",
			     path, owner, what);
	else {
		char *a = egress_policy_to_string(&p->egress), *b = egress_policy_to_string(&op);
		if (streq(a, b))
			log_debug("egress: %s shares the network namespace %s and the policy of container %s", id, path, owner);
		else
			log_warn("egress: container %s joins the network namespace %s of container %s and gets its egress rules (rules are per network namespace): its own narrower policy does not apply",
				 id, path, owner);
		free(a);
		free(b);
	}
	egress_policy_free(&op);
	return r;
}

const char *policy_egress_text(struct agent_policy *p)
{
	if (!p->egress_enforced)
		return NULL;
	if (!p->egress_text) {
		char *text = egress_policy_to_string(&p->egress);
		p->egress_text = arena_strdup(&p->arena, text);
		free(text);
	}
	return p->egress_text;
}

int policy_install(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
		   int state_dirfd, struct ab_err *err)
{
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	if (!p->egress_enforced) {
		/* without a firewall of its own it would keep CAP_NET_ADMIN in a policed netns */
		if (!net || !net->path)
			return 0;
		_cleanup_close_ int fd = open(net->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;   /* joining it fails with its own error */
		char owner[256];
		struct ab_err e;
		int r = egress_table_owner(fd, owner, sizeof owner, &e);
		if (r < 0) {
			/* a host without nf_tables has no ruleset to widen */
			log_debug("egress: %s: %s", net->path, e.msg);
			return 0;
		}
		return r == 0 ? 0 : check_joined(p, fd, net->path, st->id, state_dirfd, err);
	}
	if (p->config.egress_hook_anchor) {
		struct ab_err e;
		if (egress_hook_anchor_ensure(EGRESS_HOOK_ANCHOR, &e) < 0)
			log_debug("egress: %s (the ruleset works without it, only its install is slower)", e.msg);
	}
	if (p->ruleset_pooled) {
		/* made by the pool's filler for this very policy: only say whose it is */
		st->egress_token = arena_strdup(&st->arena, p->pool_token);
		return 0;
	}
	_cleanup_close_ int netns = open_container_netns(p, c, st->pid, err);
	if (netns < 0)
		return -1;
	if (net && net->path) {
		/* a joined netns (pod, --network container:X) that another container
		 * already polices keeps its rules and its sentry */
		int r = egress_install_new(netns, &p->egress, st->id, EGRESS_SENTRY_PORT, err);
		if (r < 0)
			return ab_wrap(err, "egress: install the firewall");
		if (r == 1) {
			if (check_joined(p, netns, net->path, st->id, state_dirfd, err) < 0)
				return -1;
			p->egress_shared = true;
			/* policed all the same: exec must keep dropping CAP_NET_RAW/ADMIN */
			st->egress_policy = arena_printf(&st->arena, "shared:%s", net->path);
		} else {
			/* ours: a failed create must not leave it in a namespace that stays */
			p->egress_installed_path = arena_strdup(&p->arena, net->path);
		}
		return 0;
	}
	/* A namespace cloned a moment ago holds no table to replace. Replacing
	 * (add + delete + add) would leave a delete in the commit, which the kernel
	 * frees only after an RCU grace period, and closing our socket waits for
	 * that (Linux 6.x: 6-12 ms here under load). */
	int r = egress_install_new(netns, &p->egress, st->id, EGRESS_SENTRY_PORT, err);
	if (r == 1)
		return ab_error(err, 0, "egress: the container's new network namespace already has a ruleset");
	if (r < 0)
		return ab_wrap(err, "egress: install the firewall");
	return 0;
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
	int fds[] = {a->ready_r, a->ready_w, a->netns, a->sp.init_pidfd, a->sp.log_fd};
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
		      a->sp.listen_fd[2], a->sp.listen_fd[3], a->sp.nflog_fd, a->sp.log_fd};
	close_fds_from(3, keep, ARRAY_SIZE(keep));
	process_reset_signals();
	setsid();
	/* tests/integration/policy.bats: a slow sentry must cost the container nothing */
	const char *delay = getenv("AGENTBOX_FAULT_SENTRY_DELAY_MS");
	if (delay)
		usleep((useconds_t)atoi(delay) * 1000u);
	/* tests/integration/policy.bats: a sentry that fails after create or run went on */
	if (getenv("AGENTBOX_FAULT_SENTRY_FAIL")) {
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

int policy_prepare_sentry(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
			  int state_dirfd, struct ab_err *err)
{
	if (!p->egress_enforced || p->egress_shared)
		return 0;
	struct sentry_child *a = calloc(1, sizeof *a);
	if (!a)
		return ab_error(err, ENOMEM, "egress: DNS sentry");
	a->ready_r = a->ready_w = a->sp.init_pidfd = a->sp.nflog_fd = a->sp.log_fd = -1;
	for (int i = 0; i < 4; i++)
		a->sp.listen_fd[i] = -1;
	a->netns = open_container_netns(p, c, st->pid, err);
	if (a->netns < 0)
		goto fail;
	struct egress_sentry_params *sp = &a->sp;
	sp->netns_fd = a->netns;
	sp->policy = &p->egress;
	sp->container_id = st->id;
	sp->dns = true;
	sp->port = EGRESS_SENTRY_PORT;
	sp->init_pid = st->pid;
	sp->ready_fd = -1;
	char resolv[PATH_MAX];
	resolv_conf_path(c, st->rootfs, resolv, sizeof resolv);
	struct ab_err e;
	if (egress_upstream_from_resolv_conf(resolv, sp->upstream, &sp->n_upstream, &e) < 0)
		sp->n_upstream = 0;
	/* refused here, where create can still say so (the sentry refuses it too) */
	for (size_t i = 0; i < sp->n_upstream; i++)
		if (egress_upstream_is_sentry(&sp->upstream[i], EGRESS_SENTRY_PORT)) {
			ab_error(err, 0, "egress: DNS sentry: the upstream resolver is the sentry's own address (%s)",
				 resolv);
			goto fail;
		}
	if (sp->n_upstream == 0) {
		/* nothing to forward to: the sentry only logs, and lookups fail closed */
		log_debug("egress: no upstream resolver in %s: DNS is unavailable in the container", resolv);
		sp->dns = false;
	}
	/* opened here, not by the sentry: a sentry still starting when run's
	 * delete empties the state dir must not create a file in it again */
	sp->log_fd = openat(state_dirfd, EGRESS_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sp->log_fd < 0) {
		ab_error(err, errno, "egress: open the deny log %s", EGRESS_LOG);
		goto fail;
	}
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
	if (p->sentry_status_file) {
		/* create returns without waiting: start reads what the sentry says
		 * here (policy_sentry_wait_started). Opened here for the reason the
		 * deny log is. */
		a->ready_w = openat(state_dirfd, SENTRY_STATUS, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
				    0600);
		if (a->ready_w < 0) {
			ab_error(err, errno, "egress: open %s", SENTRY_STATUS);
			goto fail;
		}
	} else {
		int ready[2];
		if (pipe2(ready, O_CLOEXEC) < 0) {
			ab_error(err, errno, "egress: pipe");
			goto fail;
		}
		a->ready_r = ready[0];
		a->ready_w = ready[1];
	}
	st->egress_policy = arena_strdup(&st->arena, policy_egress_text(p));
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

size_t policy_sentry_wake_fds(const struct agent_policy *p, int fds[5])
{
	const struct sentry_child *a = p->sentry_prep;
	if (!a)
		return 0;
	size_t n = 0;
	for (int i = 0; i < 4; i++)
		if (a->sp.listen_fd[i] >= 0)
			fds[n++] = a->sp.listen_fd[i];
	if (a->sp.nflog_fd >= 0)
		fds[n++] = a->sp.nflog_fd;
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

int policy_resolve(const struct global_opts *g, const struct oci_config *c,
		   struct agent_policy *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	ret->sentry_pidfd = -1;
	if (agent_config_load(g->config_path, &ret->arena, &ret->config, err) < 0)
		return -1;
	/* with nothing selected anywhere every container gets the agent profile */
	const char *profile = ret->config.seccomp_profile;
	if (g->seccomp_profile) {
		if (!profile_name_valid(g->seccomp_profile))
			return ab_error(err, 0, "--seccomp-profile: unknown profile \"%s\" (agent, default, none)", g->seccomp_profile);
		profile = g->seccomp_profile;
	}
	const char *ann = oci_annotation(c, ANNOTATION_SECCOMP);
	if (ann) {
		if (!profile_name_valid(ann))
			return ab_error(err, 0, "annotation %s: unknown profile \"%s\" (agent, default, none)", ANNOTATION_SECCOMP, ann);
		/* annotations come from the workload's side: they may only tighten */
		bool widens = streq(ann, "none") || (streq(ann, "default") && streq(profile, "agent"));
		if (widens)
			return ab_error(err, 0, "annotation %s=%s would weaken the runtime's profile \"%s\": refused (set it with --seccomp-profile)",
					ANNOTATION_SECCOMP, ann, profile);
		profile = ann;
	}
	if (resolve_egress(g, c, ret, err) < 0)
		return -1;
	ret->seccomp_profile = profile;
	return 0;
}

int policy_seccomp_programs(struct agent_policy *p, const struct oci_config *c, const char *state_root,
			    struct seccomp_prog *progs, size_t *ret_n, struct ab_err *err)
{
	char cache[PATH_MAX];
	snprintf(cache, sizeof cache, "%s/.seccomp-cache", state_root);
	(void)mkdir(state_root, 0711);   /* the first container on a host fills the cache too */
	size_t n = 0;
	if (c->linux_.seccomp) {
		if (seccomp_compile_cached(c->linux_.seccomp, cache, &progs[n], err) < 0)
			return ab_wrap(err, "config.json: linux.seccomp");
		n++;
	}
	if (!streq(p->seccomp_profile, "none")) {
		if (seccomp_builtin_compile_cached(p->seccomp_profile, cache, &progs[n], err) < 0) {
			for (size_t i = 0; i < n; i++)
				seccomp_prog_free(&progs[i]);
			return ab_wrap(err, "seccomp profile \"%s\"", p->seccomp_profile);
		}
		n++;
	}
	*ret_n = n;
	return 0;
}

void policy_cleanup(struct agent_policy *p, struct container_state *st)
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
	if (p->egress_installed_path) {
		_cleanup_close_ int fd = open(p->egress_installed_path, O_RDONLY | O_CLOEXEC);
		struct ab_err e;
		if (fd >= 0 && egress_remove(fd, &e) < 0)
			log_warn("cleanup: %s", e.msg);
		p->egress_installed_path = NULL;
	}
}

void policy_teardown(const struct container_state *s)
{
	if (proc_is(s->sentry_pid, s->sentry_start_time))
		kill(s->sentry_pid, SIGKILL);
}

void policy_free(struct agent_policy *p)
{
	/* a foreground run whose program never needed its sentry */
	sentry_child_free(p->sentry_prep);
	p->sentry_prep = NULL;
	if (p->sentry_pid > 0 && p->sentry_pidfd >= 0)
		close(p->sentry_pidfd);
	egress_policy_free(&p->egress);
	if (p->netns_pooled)
		close(p->netns_fd);
	p->netns_pooled = false;
	arena_free(&p->arena);
}
