/* exec: a new process inside a running container — its namespaces, its cgroup, its
 * seccomp filters and the privileges process.json asks for. */
#include "caps.h"
#include "test_hooks.h"
#include "container.h"
#include "container_internal.h"
#include "json.h"
#include "log.h"
#include "lsm.h"
#include "floor.h"
#include "policy.h"
#include "process.h"
#include "procfs.h"
#include "sealed_exe.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

extern bool util_force_fallbacks;

struct ns_join {
	int fd;
	int flag;
	const char *name;
};

/* Order matters: the user namespace first (it decides what we may join next), the
 * mount namespace last (it changes what paths mean). pid and time apply to
 * children only: the middle child joins those first, then the rest, and only
 * then clones the process into them (exec_middle). */
static const struct {
	const char *name;
	int flag;
} ns_order[] = {
	{"user", CLONE_NEWUSER}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS}, {"net", CLONE_NEWNET},
	{"cgroup", CLONE_NEWCGROUP}, {"mnt", CLONE_NEWNS},
};

struct exec_child {
	const struct oci_process *p;
	char *const *env;               /* p->env, with HOME when it had none */
	struct ns_join ns[ARRAY_SIZE(ns_order)];
	size_t n_ns;
	struct ns_join child_ns[2];   /* pid and time: for the grandchild */
	size_t n_child_ns;
	int sync_fd;
	int preserve_fds;
	struct seccomp_prog *seccomp;
	size_t n_seccomp;
	bool joined_userns;
	struct cgroup_join cgroup_join;
	const char *cgroup_path;
	/* a procfs handle opened here, before any of ours enters the container's
	 * mount namespace: the process writes its oom_score_adj and LSM profile
	 * through it, never through the container's /proc (procfs.h) */
	int procfd;
};

static bool same_ns(pid_t pid, const char *name)
{
	char a[64], b[64];
	struct stat sa, sb;
	snprintf(a, sizeof a, "/proc/%d/ns/%s", (int)pid, name);
	snprintf(b, sizeof b, "/proc/self/ns/%s", name);
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* The middle child, in our pid namespace where nothing of the container sees
 * it: detach from our binary, join every namespace, then clone the process into
 * the container's pid namespace as our parent's child (CLONE_PARENT). The
 * container's processes never see a process of ours that is still outside its
 * mount namespace, or still an image of the runtime's binary. The process
 * shares our memory (nothing is copied) and runs on a stack of its own while we
 * wait (CLONE_VFORK) until it execs or exits. */
#define EXEC_STACK (1024 * 1024)
static int exec_process(void *arg);

static int exec_middle(struct exec_child *x, struct ab_err *err)
{
	struct sync_msg msg;
	/* the process is cloned from us: it starts in the cgroup */
	if (cgroup_join_self(&x->cgroup_join, x->cgroup_path, err) < 0)
		return -1;
	if (sealed_exe_detach(err) < 0)
		return -1;
	if (sync_recv(x->sync_fd, SYNC_CONTINUE, &msg, NULL, err) < 0)
		return -1;
	/* tests/integration/security.bats: stretch the time outside the container */
	const char *delay = test_hook("AGENTBOX_FAULT_EXEC_DELAY_MS");
	if (delay)
		usleep((useconds_t)atoi(delay) * 1000u);
	/* an unprivileged caller (a user's exec into the box of its rootless kit
	 * run) may join the rest only from inside the box's user namespace, which
	 * is its own; root joins pid and time first, whoever owns them */
	size_t first = 0;
	if (geteuid() != 0 && x->joined_userns) {
		if (setns(x->ns[0].fd, x->ns[0].flag) < 0)
			return ab_error(err, errno, "join the container's %s namespace", x->ns[0].name);
		first = 1;
	}
	for (size_t i = 0; i < x->n_child_ns; i++)
		if (setns(x->child_ns[i].fd, x->child_ns[i].flag) < 0)
			return ab_error(err, errno, "join the container's %s namespace", x->child_ns[i].name);
	for (size_t i = first; i < x->n_ns; i++)
		if (setns(x->ns[i].fd, x->ns[i].flag) < 0)
			return ab_error(err, errno, "join the container's %s namespace", x->ns[i].name);
	if (x->joined_userns && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
		return ab_error(err, errno, "become root in the container's user namespace");
	char *stack = mmap(NULL, EXEC_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return ab_error(err, errno, "mmap a stack");
	if (clone(exec_process, stack + EXEC_STACK, CLONE_VM | CLONE_VFORK | CLONE_PARENT, x) < 0)
		return ab_error(err, errno, "clone the process into the container");
	return 0;
}

static int exec_child_run(struct exec_child *x, char *exec_path, size_t len, struct ab_err *err)
{
	const struct oci_process *p = x->p;
	/* AGENTBOX_TEST_PROC_BY_PATH (procfs.h): the container's /proc, as
	 * before; closed with the rest by process_finish */
	int procfd = x->procfd;
	int by_path = procfs_test_by_path ? open("/proc", O_PATH | O_CLOEXEC) : -1;
	if (by_path >= 0)
		procfd = by_path;
	if (p->terminal && process_setup_console("/", p, x->sync_fd, false, err) < 0)
		return -1;
	/* a session of its own, terminal or not, as runc: kill(0, ...) and the
	 * terminal's signals must never reach the caller's process group */
	if (!p->terminal && setsid() < 0)
		return ab_error(err, errno, "setsid");
	if (process_set_rlimits(p, err) < 0 || process_set_oom_score_adj(p, procfd, err) < 0 ||
	    process_set_scheduling(p, false, err) < 0)
		return -1;
	const char *late_cwd;
	if (process_enter_cwd(p, &late_cwd, err) < 0)
		return -1;
	if (process_find_executable(p, exec_path, len, err) < 0)
		return -1;
	if (!(x->env = process_env_with_home(p, err)) || lsm_apply(p, procfd, err) < 0)
		return -1;
	/* its own fd directory, for process_finish's fallback (which closes it
	 * with the procfs handle); a local: x is shared with our parent, whose
	 * fd table is another */
	int fd_dir = procfs_open_self(procfd, false, "fd", O_RDONLY | O_DIRECTORY, err);
	if (fd_dir < 0)
		return -1;
	int keep[1] = {x->sync_fd};
	return process_finish(p, x->preserve_fds, keep, 1, fd_dir, x->seccomp, x->n_seccomp, x->sync_fd, -1,
			      late_cwd, err);
}

/* exec's process. Its first message tells the parent its pid: the kernel adds
 * the sender's credentials, as a pid of the parent's namespace. */
static int exec_process(void *arg)
{
	struct exec_child *x = arg;
	struct ab_err err = {0};
	char exec_path[PATH_MAX];
	struct sync_msg msg;
	if (sync_send(x->sync_fd, SYNC_PID, 0, NULL, -1, &err) < 0 ||
	    exec_child_run(x, exec_path, sizeof exec_path, &err) < 0)
		goto fail;
	process_reset_signals();
	if (sync_send(x->sync_fd, SYNC_READY, 0, NULL, -1, &err) < 0 ||
	    sync_recv(x->sync_fd, SYNC_START, &msg, NULL, &err) < 0)
		goto fail;
	if (process_set_scheduling(x->p, true, &err) < 0)
		goto fail;
	execve(exec_path, x->p->args, x->env);
	ab_error(&err, errno, "exec %s", x->p->args[0]);
fail:
	sync_send_error(x->sync_fd, &err);
	_exit(127);
}

__attribute__((noreturn)) static void exec_child_main(struct exec_child *x)
{
	struct ab_err err = {0};
	if (exec_middle(x, &err) < 0) {
		sync_send_error(x->sync_fd, &err);
		_exit(127);
	}
	_exit(0);   /* once the process has exec'd or died */
}

/* runc's individual flags build the process from the container's own. */
static int process_from_flags(struct exec_opts *o, const struct oci_config *c, struct arena *a,
			      struct oci_process **ret, struct ab_err *err)
{
	if (!o->n_args)
		return ab_error(err, 0, "exec: no command given (use --process FILE or give COMMAND)");
	struct oci_process *p = arena_alloc(a, sizeof *p);
	const struct oci_process *base = c->process;
	if (base)
		*p = *base;
	p->terminal = o->tty;
	p->has_console_size = false;
	p->args = arena_alloc(a, sizeof(char *) * (o->n_args + 1));
	for (size_t i = 0; i < o->n_args; i++)
		p->args[i] = o->args[i];
	p->n_args = o->n_args;
	size_t n_env = (base ? base->n_env : 0) + o->n_env;
	p->env = arena_alloc(a, sizeof(char *) * (n_env + 1));
	p->n_env = 0;
	for (size_t i = 0; base && i < base->n_env; i++)
		p->env[p->n_env++] = base->env[i];
	for (size_t i = 0; i < o->n_env; i++) {
		if (!strchr(o->env[i], '='))
			return ab_error(err, 0, "exec: --env \"%s\": expected KEY=VALUE", o->env[i]);
		p->env[p->n_env++] = o->env[i];
	}
	if (o->cwd)
		p->cwd = (char *)o->cwd;
	if (o->user) {
		/* as runc: without ":GID" the group stays the process' own */
		int64_t uid, gid = p->user.gid;
		char buf[64];
		snprintf(buf, sizeof buf, "%s", o->user);
		char *colon = strchr(buf, ':');
		if (colon)
			*colon = 0;
		if (parse_int64(buf, 0, UINT32_MAX - 1, &uid) < 0 ||
		    (colon && parse_int64(colon + 1, 0, UINT32_MAX - 1, &gid) < 0))
			return ab_error(err, 0, "exec: --user \"%s\": expected UID[:GID] as numbers", o->user);
		p->user.uid = (uint32_t)uid;
		p->user.gid = (uint32_t)gid;
	}
	if (o->n_additional_gids) {
		size_t n = p->user.n_additional_gids + o->n_additional_gids;
		uint32_t *gids = arena_alloc(a, sizeof *gids * n);
		if (p->user.n_additional_gids)
			memcpy(gids, p->user.additional_gids, sizeof *gids * p->user.n_additional_gids);
		memcpy(gids + p->user.n_additional_gids, o->additional_gids, sizeof *gids * o->n_additional_gids);
		p->user.additional_gids = gids;
		p->user.n_additional_gids = n;
	}
	if (o->no_new_privs)
		p->no_new_privileges = true;
	/* as runc: a non-empty flag replaces the container's own */
	if (o->apparmor && *o->apparmor)
		p->apparmor_profile = (char *)o->apparmor;
	if (o->process_label && *o->process_label)
		p->selinux_label = (char *)o->process_label;
	if (o->n_caps) {
		/* the flag adds to every set, as runc's does */
		char json[8192];
		size_t off = (size_t)snprintf(json, sizeof json, "{\"args\":[\"x\"],\"cwd\":\"/\",\"user\":{\"uid\":0,\"gid\":0},\"capabilities\":{\"bounding\":[");
		for (size_t i = 0; i < o->n_caps && off < sizeof json - 100; i++)
			off += (size_t)snprintf(json + off, sizeof json - off, "%s\"%s\"", i ? "," : "", o->caps[i]);
		snprintf(json + off, sizeof json - off, "]}}");
		struct oci_process *cp;
		if (oci_process_parse(json, "--cap", a, &cp, err) < 0)
			return -1;
		uint64_t add = cp->caps.bounding;
		p->has_capabilities = true;
		p->caps.bounding |= add;
		p->caps.effective |= add;
		p->caps.permitted |= add;
		p->caps.inheritable |= add;
		p->caps.ambient |= add;
	}
	*ret = p;
	return 0;
}

static int forward_exec(pid_t pid, int master, int *ret_status, struct ab_err *err)
{
	struct tty_proxy proxy;
	_cleanup_close_ int sfd = container_forward_start(master, &proxy, err);
	if (sfd < 0)
		return sfd;
	int status = 0;
	for (;;) {
		struct pollfd p[3] = {{.fd = sfd, .events = POLLIN}};
		int n = 1;
		if (master >= 0)
			n += tty_proxy_pollfds(&proxy, p + 1);
		if (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR)
			return ab_error(err, errno, "poll");
		if (master >= 0)
			tty_proxy_handle(&proxy, p + 1);
		if (!(p[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (si.ssi_signo == SIGCHLD) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			continue;
		}
		if (si.ssi_signo == SIGWINCH && master >= 0) {
			tty_proxy_resize(&proxy);
			continue;
		}
		kill(pid, (int)si.ssi_signo);
	}
	if (master >= 0) {
		tty_proxy_drain(&proxy);
		tty_proxy_stop(&proxy);
	}
	*ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

static int send_console_fd(const char *socket_path, int master, struct ab_err *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(socket_path) >= sizeof addr.sun_path)
		return ab_error(err, ENAMETOOLONG, "--console-socket %s", socket_path);
	strcpy(addr.sun_path, socket_path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0)
		return ab_error(err, errno, "connect to --console-socket %s", socket_path);
	return sync_send_raw_fd(fd, "/dev/ptmx", master, err);
}

/* What container_exec has loaded and made, so that exec_cleanup undoes
 * exactly that. On container_exec's stack: the middle child reads x. */
struct exec_run {
	struct exec_opts *o;
	struct container_state s;
	struct arena a;
	struct oci_config *c;
	struct agent_policy policy;
	struct seccomp_prog progs[POLICY_SECCOMP_MAX];
	size_t n_progs;
	struct exec_child x;
	int fds[2];
	int master;
	pid_t pid, middle;   /* exec's process, and the child that made it */
	int cgfd;
};

/* A running container's config. */
static int exec_load_config(struct exec_run *e, struct ab_err *err)
{
	enum container_status st = state_status(&e->s);
	if (st == STATUS_STOPPED)
		return ab_error(err, 0, "cannot exec in a stopped container: container not running");
	if (st == STATUS_PAUSED)
		return ab_error(err, 0, "cannot exec in a paused container");
	char cfg_path[PATH_MAX + 16];
	snprintf(cfg_path, sizeof cfg_path, "%s/config.json", e->s.bundle);
	return oci_config_load(cfg_path, &e->c, err);
}

/* 1. the process: process.json, or runc's flags on the container's own */
static int exec_process_of(struct exec_run *e, struct ab_err *err)
{
	struct exec_opts *o = e->o;
	const struct oci_process *p = NULL;
	if (o->process_path) {
		_cleanup_free_ char *text = NULL;
		struct oci_process *pp = NULL;
		if (read_file_at(AT_FDCWD, o->process_path, 4 << 20, &text, NULL, err) < 0)
			return ab_wrap(err, "--process");
		if (oci_process_parse(text, o->process_path, &e->a, &pp, err) < 0)
			return -1;
		if (o->tty)
			pp->terminal = true;
		p = pp;
	} else {
		struct oci_process *pp = NULL;
		if (process_from_flags(o, e->c, &e->a, &pp, err) < 0)
			return -1;
		p = pp;
	}
	if (p->terminal && !o->console_socket && o->detach)
		return ab_error(err, 0, "exec: a terminal with --detach needs --console-socket");
	if (lsm_check(p, NULL, o->process_path ? "process.json: " : "exec: process.", err) < 0)
		return -1;
	e->x.p = p;
	return 0;
}

/* 2. the same seccomp the container has: the engine's, then the agent profile */
static int exec_policy(struct exec_run *e, const struct global_opts *g, struct ab_err *err)
{
	struct global_opts pg = *g;
	pg.seccomp_profile = e->s.seccomp_profile ? e->s.seccomp_profile : "agent";
	/* the firewall is the container's, set at create: do not resolve it again */
	pg.egress_allow = "all";
	pg.egress_deny = NULL;
	if (policy_resolve(&pg, e->c, &e->policy, err) < 0 ||
	    policy_seccomp_programs(&e->policy, e->c, e->x.p, g->root, e->progs, &e->n_progs, err) < 0)
		return -1;
	e->policy.egress_enforced = e->s.egress_policy != NULL;
	/* the container's proxy, as create gave it (not the config's today) */
	e->policy.http_proxy = e->s.egress_proxy;
	policy_proxy_env(&e->policy, (struct oci_process *)e->x.p, &e->a);
	if (policy_floor_process(&e->policy, (struct oci_process *)e->x.p, e->o->process_path ? "process.json" : "exec",
				 err) < 0)
		return -1;
	e->x.seccomp = e->progs;
	e->x.n_seccomp = e->n_progs;
	return 0;
}

/* 3. the namespaces of the init that are not ours already */
static int open_init_namespaces(const struct container_state *s, struct exec_child *x, struct ab_err *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_order); i++) {
		if (same_ns(s->pid, ns_order[i].name))
			continue;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)s->pid, ns_order[i].name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return ab_error(err, errno, "open %s", path);
		x->ns[x->n_ns++] = (struct ns_join){.fd = fd, .flag = ns_order[i].flag, .name = ns_order[i].name};
		if (ns_order[i].flag == CLONE_NEWUSER)
			x->joined_userns = true;
	}
	static const struct {
		const char *name;
		int flag;
	} child_ns[] = {{"pid", CLONE_NEWPID}, {"time", CLONE_NEWTIME}};
	for (size_t i = 0; i < ARRAY_SIZE(child_ns); i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)s->pid, child_ns[i].name);
		if (same_ns(s->pid, child_ns[i].name))
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && child_ns[i].flag == CLONE_NEWPID)
			return ab_error(err, errno, "open %s", path);
		if (fd >= 0)   /* (no time namespaces before Linux 5.6) */
			x->child_ns[x->n_child_ns++] =
				(struct ns_join){.fd = fd, .flag = child_ns[i].flag, .name = child_ns[i].name};
	}
	/* the init may have died while we looked: never join a recycled pid's namespaces */
	if (!state_init_alive(s))
		return ab_error(err, 0, "cannot exec in a stopped container: container not running");
	return 0;
}

/* The sync socket: ours passes credentials (SYNC_PID), the child's end is
 * moved above the fds it keeps. */
static int exec_sync_socket(struct exec_run *e, struct ab_err *err)
{
	if (sync_socketpair(e->fds, err) < 0)
		return -1;
	int one = 1;   /* for SYNC_PID */
	if (setsockopt(e->fds[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
		return ab_error(err, errno, "sync: SO_PASSCRED");
	if (e->fds[1] < 3 + e->o->preserve_fds) {
		int n = fcntl(e->fds[1], F_DUPFD_CLOEXEC, 3 + e->o->preserve_fds);
		close(e->fds[1]);
		e->fds[1] = n;
	}
	e->x.sync_fd = e->fds[1];
	return 0;
}

/* 4. clone the middle child into the cgroup (clone3, or clone and then
 * moved there); it joins the rest (exec_child_main) */
static int clone_middle(struct exec_run *e, struct ab_err *err)
{
	if (exec_sync_socket(e, err) < 0)
		return -1;
	if (sealed_exe_prepare(err) < 0)
		return -1;
	e->x.cgroup_path = e->s.cgroup.path;
	if (cgroup_join_open(&e->s.cgroup, &e->x.cgroup_join, err) < 0)
		return -1;
	stack_below_not_inherited();
	e->cgfd = cgroup_v2_dirfd(&e->s.cgroup);
	if (e->cgfd >= 0 && !util_force_fallbacks) {
		struct clone_args args = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)e->cgfd};
		e->pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
		if (e->pid < 0 && (errno == ENOSYS || errno == EINVAL || errno == E2BIG)) {
			close(e->cgfd);
			e->cgfd = -1;
		}
	}
	bool in_cgroup = e->cgfd >= 0 && e->pid >= 0;
	if (!in_cgroup)
		e->pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, NULL);
	if (e->pid == 0) {
		close(e->fds[0]);
		exec_child_main(&e->x);
	}
	cgroup_join_close(&e->x.cgroup_join);
	if (e->pid < 0)
		return ab_error(err, errno, "clone");
	close(e->fds[1]);
	e->fds[1] = -1;
	if (!in_cgroup && cgroup_enter_v2(&e->s.cgroup, e->pid, err) < 0)
		return -1;
	return 0;
}

/* SYNC_SECCOMP_NOTIFY: the listener fd to linux.seccomp.listenerPath. */
static int exec_send_listener(const struct exec_run *e, int fd, struct ab_err *err)
{
	char state[SYNC_DATA_MAX];
	struct json_out *jo = json_out_new(false);
	state_oci_json(jo, &e->s, STATUS_RUNNING);
	snprintf(state, sizeof state, "%s", json_out_text(jo, NULL));
	json_out_free(jo);
	int rr = seccomp_send_listener(e->c->linux_.seccomp, state, fd, err);
	close(fd);
	return rr;
}

/* 5. the middle child on its way: the process it cloned into the container
 * (ours from now on), its terminal and listener, until it says READY */
static int drive_exec(struct exec_run *e, struct ab_err *err)
{
	if (sync_send(e->fds[0], SYNC_CONTINUE, 0, NULL, -1, err) < 0)
		return -1;
	{
		/* the process the middle child cloned into the container, ours */
		struct sync_msg pm;
		e->middle = e->pid;
		e->pid = -1;
		if (sync_recv(e->fds[0], SYNC_PID, &pm, NULL, err) < 0)
			return -1;
		e->pid = (pid_t)pm.code;
	}
	for (;;) {
		struct sync_msg msg;
		int fd = -1;
		if (sync_recv(e->fds[0], 0, &msg, &fd, err) < 0)
			return -1;
		if (msg.type == SYNC_READY)
			return 0;
		if (msg.type == SYNC_CONSOLE) {
			if (e->o->console_socket) {
				int rr = send_console_fd(e->o->console_socket, fd, err);
				close(fd);
				if (rr < 0)
					return -1;
			} else {
				e->master = fd;
			}
		} else if (msg.type == SYNC_SECCOMP_NOTIFY) {
			if (exec_send_listener(e, fd, err) < 0)
				return -1;
		} else {
			if (fd >= 0)
				close(fd);
			return ab_error(err, 0, "sync: unexpected message %u", msg.type);
		}
	}
}

/* 6. --pid-file, then the process goes on to its execve; detached, we are
 * done once it has; else forward signals and the terminal until it exits.
 * Returns its exit status. */
static int start_exec(struct exec_run *e, struct ab_err *err)
{
	struct exec_opts *o = e->o;
	if (o->pid_file) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "%d", (int)e->pid);
		if (write_file_atomic_at(AT_FDCWD, o->pid_file, buf, (size_t)n, 0644, err) < 0) {
			ab_wrap(err, "--pid-file");
			return -1;   /* not the errno: that would pass for an exit status */
		}
	}
	if (sync_send(e->fds[0], SYNC_START, 0, NULL, -1, err) < 0)
		return -1;
	if (o->detach) {
		/* it exits as soon as the process has exec'd (in the foreground it is
		 * reaped at the end, off the process's way) */
		while (waitpid(e->middle, NULL, 0) < 0 && errno == EINTR)
			;
		e->middle = -1;
		e->pid = -1;   /* the engine, as subreaper, owns it now */
		return 0;
	}
	int status = 0;
	if (forward_exec(e->pid, e->master, &status, err) < 0)
		return -1;
	e->pid = -1;
	return status;
}

/* Undo what container_exec made (r < 0: it failed) and free what it loaded. */
static void exec_cleanup(struct exec_run *e, int r)
{
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (e->middle > 0) {
		if (r < 0)
			kill(e->middle, SIGKILL);
		while (waitpid(e->middle, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (e->master >= 0)
		close(e->master);
	if (e->x.procfd >= 0)
		close(e->x.procfd);
	if (e->cgfd >= 0)
		close(e->cgfd);
	for (size_t i = 0; i < 2; i++)
		if (e->fds[i] >= 0)
			close(e->fds[i]);
	for (size_t i = 0; i < e->x.n_ns; i++)
		close(e->x.ns[i].fd);
	for (size_t i = 0; i < e->x.n_child_ns; i++)
		close(e->x.child_ns[i].fd);
	for (size_t i = 0; i < e->n_progs; i++)
		seccomp_prog_free(&e->progs[i]);
	policy_free(&e->policy);
	if (e->c)
		oci_config_free(e->c);
	arena_free(&e->a);
	state_free(&e->s);
}

int container_exec(const struct global_opts *g, struct exec_opts *o, struct ab_err *err)
{
	struct exec_run e = {
		.o = o,
		.x = {.sync_fd = -1, .preserve_fds = o->preserve_fds, .procfd = -1},
		.fds = {-1, -1},
		.master = -1,
		.pid = -1,
		.middle = -1,
		.cgfd = -1,
	};
	if (container_load(g, o->id, false, NULL, &e.s, err) < 0)
		return -1;
	int r = -1;
	if (exec_load_config(&e, err) < 0 || exec_process_of(&e, err) < 0 || exec_policy(&e, g, err) < 0 ||
	    open_init_namespaces(&e.s, &e.x, err) < 0 || (e.x.procfd = procfs_open_private(err)) < 0)
		goto out;
	/* learnt here, inherited by the child: inside, /proc/sys may be missing */
	(void)caps_last_cap();
	if (clone_middle(&e, err) < 0 || drive_exec(&e, err) < 0)
		goto out;
	r = start_exec(&e, err);
out:
	exec_cleanup(&e, r);
	return r;
}
