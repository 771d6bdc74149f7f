/* Parent side of the lifecycle: create/run (clone the init, drive it through the
 * sync protocol, undo everything on failure), start, kill, delete, pause, state. */
#include "container.h"
#include "sealed_exe.h"
#include "caps.h"
#include "hooks.h"
#include "json.h"
#include "log.h"
#include "lsm.h"
#include "netns_pool.h"
#include "floor_devices.h"
#include "idmap.h"
#include "policy.h"
#include "sentry_process.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "userns.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

extern bool util_force_fallbacks;

/* Everything create has made so far, so a failure can undo exactly that. */
struct create_ctx {
	const struct global_opts *g;
	const struct create_opts *o;
	char bundle[PATH_MAX];
	struct oci_config *config;
	struct agent_policy policy;
	struct container_state st;
	int state_dirfd;
	bool state_created;
	bool cgroup_created;
	pid_t pid;
	int sync_fd;
	int console_master;             /* kept for a foreground run with a terminal */
	struct seccomp_prog seccomp[2];
	size_t n_seccomp;
	unsigned netns_pool_refill;     /* pool size to top up once done, 0: none */
	const char *netns_pool_policy;  /* ... with firewalled entries of this policy */
};

/* Fault injection for tests/reliability/faults.bats: AGENTBOX_FAULT_STOP_AT=N
 * makes create/run SIGKILL themselves at checkpoint N of create_common, so the
 * tests can show that whatever a killed create leaves, `delete --force` removes.
 * Always compiled in; the variable is read once. */
static void fault_point(int n)
{
	static int stop_at = -1;
	if (stop_at < 0) {
		const char *s = getenv("AGENTBOX_FAULT_STOP_AT");
		stop_at = s ? atoi(s) : 0;
	}
	if (n == stop_at)
		raise(SIGKILL);
}

static int pidfd_open_checked(pid_t pid, uint64_t start_time)
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
static int signal_init(const struct container_state *s, int sig)
{
	if (!util_force_fallbacks) {
		int fd = pidfd_open_checked(s->pid, s->pid_start_time);
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

static void state_json_for_hooks(const struct container_state *s, enum container_status st,
				 char *buf, size_t len)
{
	struct json_out *o = json_out_new(false);
	state_oci_json(o, s, st);
	size_t n;
	const char *t = json_out_text(o, &n);
	snprintf(buf, len, "%s", t);
	json_out_free(o);
}

static int write_pid_file(const char *path, pid_t pid, struct ab_err *err)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d", (int)pid);
	if (write_file_atomic_at(AT_FDCWD, path, buf, (size_t)n, 0644, err) < 0)
		return ab_wrap(err, "--pid-file");
	return 0;
}

static int write_id_map(pid_t pid, const char *file, const struct oci_id_mapping *m, size_t n,
			struct ab_err *err)
{
	char buf[4096];
	size_t off = 0;
	for (size_t i = 0; i < n && off < sizeof buf - 40; i++)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%u %u %u\n", m[i].container_id,
					m[i].host_id, m[i].size);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	if (write_file_at(AT_FDCWD, path, buf, off, err) < 0)
		return ab_wrap(err, "linux.%s", streq(file, "uid_map") ? "uidMappings" : "gidMappings");
	return 0;
}

/* Send the pty master to the engine's console socket: one message, path as the
 * payload, the master as the single SCM_RIGHTS fd. */
static int send_console(const char *socket_path, int master, struct ab_err *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(socket_path) >= sizeof addr.sun_path)
		return ab_error(err, ENAMETOOLONG, "--console-socket %s", socket_path);
	strcpy(addr.sun_path, socket_path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ab_error(err, errno, "socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0)
		return ab_error(err, errno, "connect to --console-socket %s", socket_path);
	if (sync_send_raw_fd(fd, "/dev/ptmx", master, err) < 0)
		return ab_wrap(err, "--console-socket %s", socket_path);
	return 0;
}

static int clone_flags_of(const struct oci_config *c, bool *ret_new_userns)
{
	int flags = 0;
	*ret_new_userns = false;
	for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
		const struct oci_namespace *ns = &c->linux_.namespaces[i];
		if (ns->path || ns->kind == NS_CGROUP || ns->kind == NS_TIME)
			continue;   /* cgroup ns: unshared by the child once in its cgroup; time: by us */
		flags |= ns->clone_flag;
		if (ns->kind == NS_USER)
			*ret_new_userns = true;
	}
	return flags;
}

/* clone3 with CLONE_INTO_CGROUP puts the child straight into its v2 cgroup; plain
 * clone (fork-like, no new stack) where that is missing. */
static pid_t clone_init(int flags, int cgroup_fd, bool *ret_in_cgroup)
{
	*ret_in_cgroup = false;
	if (cgroup_fd >= 0 && !util_force_fallbacks) {
		struct clone_args args = {
			.flags = (uint64_t)flags | CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)cgroup_fd,
		};
		pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
		if (pid >= 0 || (errno != ENOSYS && errno != EINVAL && errno != E2BIG)) {
			*ret_in_cgroup = pid >= 0;
			return pid;
		}
	}
	return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

/* A new time namespace cannot come from clone (CLONE_NEWTIME collides with the exit
 * signal bits): unshare it here, so our next child is born in it, and set its
 * offsets before any process enters. */
static int new_time_namespace(const struct oci_config *c, struct ab_err *err)
{
	const struct oci_namespace *ns = oci_namespace_find(c, NS_TIME);
	if (!ns || ns->path)
		return 0;
	if (unshare(CLONE_NEWTIME) < 0)
		return ab_error(err, errno, "create time namespace");
	const struct oci_linux *l = &c->linux_;
	if (l->has_time_offsets) {
		char buf[128];
		int n = snprintf(buf, sizeof buf, "monotonic %lld %u\nboottime %lld %u\n",
				 (long long)l->time_monotonic_secs, l->time_monotonic_nanosecs,
				 (long long)l->time_boottime_secs, l->time_boottime_nanosecs);
		if (write_file_at(AT_FDCWD, "/proc/self/timens_offsets", buf, (size_t)n, err) < 0)
			return ab_wrap(err, "linux.timeOffsets");
	}
	return 0;
}

/* Namespaces that apply to children only (pid, time) are joined here, before clone. */
static int join_parent_namespaces(const struct oci_config *c, struct ab_err *err)
{
	for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
		const struct oci_namespace *ns = &c->linux_.namespaces[i];
		if (!ns->path || (ns->kind != NS_PID && ns->kind != NS_TIME))
			continue;
		_cleanup_close_ int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return ab_error(err, errno, "open %s namespace %s", oci_ns_kind_name(ns->kind), ns->path);
		if (setns(fd, ns->clone_flag) < 0)
			return ab_error(err, errno, "join %s namespace %s", oci_ns_kind_name(ns->kind), ns->path);
	}
	return 0;
}

static int validate_for_create(const struct oci_config *c, const char *rootfs, struct ab_err *err)
{
	if (!c->process)
		return ab_error(err, 0, "config.json: process: missing (required to create a container)");
	if (!oci_namespace_find(c, NS_MOUNT))
		return ab_error(err, 0, "config.json: linux.namespaces: a mount namespace is required");
	const struct oci_namespace *user = oci_namespace_find(c, NS_USER);
	if (user && !user->path) {
		for (size_t i = 0; i < c->linux_.n_namespaces; i++)
			if (c->linux_.namespaces[i].path && c->linux_.namespaces[i].kind != NS_USER)
				return ab_error(err, 0, "config.json: linux.namespaces[%zu]: joining an existing %s namespace together with a new user namespace is not supported",
						i, oci_ns_kind_name(c->linux_.namespaces[i].kind));
		if (!c->linux_.n_uid_mappings || !c->linux_.n_gid_mappings)
			return ab_error(err, 0, "config.json: linux.uidMappings: a new user namespace needs uid and gid mappings");
	}
	if (lsm_check(c->process, c->linux_.mount_label, "config.json: process.", err) < 0)
		return -1;
	if (c->linux_.n_net_devices)
		return ab_error(err, 0, "config.json: linux.netDevices: moving host network devices into a container is not supported");
	/* a sysctl names a namespace: writing it without a private one changes the host */
	static const struct {
		const char *prefix;
		enum oci_ns_kind kind;
	} sysctl_ns[] = {
		{"net.", NS_NETWORK}, {"kernel.shm", NS_IPC}, {"kernel.msg", NS_IPC},
		{"kernel.sem", NS_IPC}, {"fs.mqueue.", NS_IPC}, {"kernel.hostname", NS_UTS},
		{"kernel.domainname", NS_UTS},
	};
	for (size_t i = 0; i < c->linux_.n_sysctl; i++) {
		const char *key = c->linux_.sysctl[i].key;
		bool known = false;
		for (size_t j = 0; j < ARRAY_SIZE(sysctl_ns); j++) {
			if (strncmp(key, sysctl_ns[j].prefix, strlen(sysctl_ns[j].prefix)) != 0)
				continue;
			known = true;
			const struct oci_namespace *ns = oci_namespace_find(c, sysctl_ns[j].kind);
			if (!ns || ns->path)
				return ab_error(err, 0, "config.json: linux.sysctl: \"%s\" needs a new %s namespace of the container's own",
						key, oci_ns_kind_name(sysctl_ns[j].kind));
		}
		if (!known)
			return ab_error(err, 0, "config.json: linux.sysctl: \"%s\" is not namespaced: it would change the host", key);
	}
	struct stat st;
	if (stat(rootfs, &st) < 0)
		return ab_error(err, errno, "config.json: root.path: rootfs %s", rootfs);
	if (!S_ISDIR(st.st_mode))
		return ab_error(err, ENOTDIR, "config.json: root.path: rootfs %s", rootfs);
	return 0;
}

/* Undo whatever create made; best effort with its own error. */
static void create_cleanup(struct create_ctx *cc)
{
	struct ab_err e;
	if (cc->pid > 0) {
		kill(cc->pid, SIGKILL);
		while (waitpid(cc->pid, NULL, 0) < 0 && errno == EINTR)
			;
		cc->pid = 0;
	}
	policy_cleanup(&cc->policy, &cc->st);
	if (cc->cgroup_created && cgroup_destroy(&cc->st.cgroup, &e) < 0)
		log_warn("cleanup: %s", e.msg);
	if (cc->state_created && state_dir_remove(cc->g->root, cc->o->id, &e) < 0)
		log_warn("cleanup: %s", e.msg);
}

static void create_ctx_free(struct create_ctx *cc)
{
	for (size_t i = 0; i < cc->n_seccomp; i++)
		seccomp_prog_free(&cc->seccomp[i]);
	if (cc->sync_fd >= 0)
		close(cc->sync_fd);
	if (cc->state_dirfd >= 0)
		close(cc->state_dirfd);
	if (cc->console_master >= 0)
		close(cc->console_master);
	policy_free(&cc->policy);
	state_free(&cc->st);
	if (cc->config)
		oci_config_free(cc->config);
}

/* The end of a create or run: free it all, then, if the container was made,
 * start topping up the network namespace pool it took from (last: the filler
 * starts in the background and needs nothing of ours, and the fds it gets a
 * copy of for a moment — a state lock, the sync socket — are closed by then). */
static void create_ctx_finish(struct create_ctx *cc, bool made)
{
	unsigned refill = made ? cc->netns_pool_refill : 0;
	/* copied: the policy it lives in is freed first */
	bool firewalled = cc->netns_pool_policy != NULL;
	char *policy = firewalled && refill ? strdup(cc->netns_pool_policy) : NULL;
	create_ctx_free(cc);
	if (!firewalled || policy)
		netns_pool_refill(refill, policy);
	free(policy);
}

/* Move an fd the child keeps above the preserved range, close-on-exec. */
static int move_above(int fd, int min, struct ab_err *err)
{
	if (fd >= min)
		return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, min);
	if (n < 0)
		return ab_error(err, errno, "dup fd");
	close(fd);
	return n;
}

/* The init reopens its O_PATH fd of the exec fifo for writing (wait_for_start)
 * once it is process.user, with that user's rights: the fifo becomes that user's,
 * as its ids are seen from here (through the init's id maps when it has a user
 * namespace of its own). The state directory stays the runtime's alone (0700),
 * so no one else reaches the fifo by its path. */
static int hand_over_exec_fifo(struct create_ctx *cc, struct ab_err *err)
{
	const struct oci_user *u = &cc->config->process->user;
	uint32_t uid, gid;
	if (userns_id_in_self(cc->pid, false, u->uid, &uid, err) < 0)
		return ab_wrap(err, "process.user.uid");
	if (userns_id_in_self(cc->pid, true, u->gid, &gid, err) < 0)
		return ab_wrap(err, "process.user.gid");
	if (fchownat(cc->state_dirfd, EXEC_FIFO, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_error(err, errno, "hand the exec fifo to uid %u gid %u", uid, gid);
	return sync_send(cc->sync_fd, SYNC_CONTINUE, 0, NULL, -1, err);
}

/* The parent's half of the conversation with init, until it says READY. */
static int drive_init(struct create_ctx *cc, bool keep_console, struct ab_err *err)
{
	struct sync_msg msg;
	for (;;) {
		int fd = -1;
		if (sync_recv(cc->sync_fd, 0, &msg, &fd, err) < 0)
			return -1;
		switch (msg.type) {
		case SYNC_CONSOLE:
			if (fd < 0)
				return ab_error(err, 0, "sync: console message without a pty");
			if (keep_console) {
				cc->console_master = fd;
				break;
			}
			{
				int r = send_console(cc->o->console_socket, fd, err);
				close(fd);
				if (r < 0)
					return -1;
			}
			break;
		case SYNC_SECCOMP_NOTIFY: {
			char state[SYNC_DATA_MAX];
			state_json_for_hooks(&cc->st, STATUS_CREATING, state, sizeof state);
			int r = seccomp_send_listener(cc->config->linux_.seccomp, state, fd, err);
			if (fd >= 0)
				close(fd);
			if (r < 0)
				return ab_wrap(err, "linux.seccomp.listenerPath");
			break;
		}
		case SYNC_RUNTIME_HOOKS: {
			char state[SYNC_DATA_MAX];
			state_json_for_hooks(&cc->st, STATUS_CREATING, state, sizeof state);
			if (hooks_run(&cc->config->hooks, HOOK_PRESTART, state, err) < 0 ||
			    hooks_run(&cc->config->hooks, HOOK_CREATE_RUNTIME, state, err) < 0)
				return -1;
			if (sync_send(cc->sync_fd, SYNC_HOOKS_DONE, 0, state, -1, err) < 0)
				return -1;
			break;
		}
		case SYNC_EXEC_FIFO_OWNER:
			if (hand_over_exec_fifo(cc, err) < 0)
				return -1;
			break;
		case SYNC_READY:
			return 0;
		default:
			if (fd >= 0)
				close(fd);
			return ab_error(err, 0, "sync: unexpected message %u from init", msg.type);
		}
	}
}

static int create_cgroup(struct create_ctx *cc, struct ab_err *err)
{
	const struct oci_config *c = cc->config;
	if (cgroup_create(&cc->st.cgroup, c->linux_.has_resources ? &c->linux_.resources : NULL, err) < 0)
		return -1;
	cc->cgroup_created = true;
	fault_point(4);
	return 0;
}

/* create and run share everything up to the child saying READY. */
static int create_common(struct create_ctx *cc, bool run_mode, struct ab_err *err)
{
	const struct create_opts *o = cc->o;
	const struct global_opts *g = cc->g;

	/* 1. arguments and config (a config given in o is taken: freed with cc) */
	cc->config = o->config;
	if (!container_id_valid(o->id))
		return ab_error(err, 0, "invalid container id \"%s\": use letters, digits and _ . + - (no / or ..)", o->id);
	if (!realpath(o->bundle, cc->bundle))
		return ab_error(err, errno, "--bundle %s", o->bundle);
	char cfg_path[PATH_MAX + 16];
	snprintf(cfg_path, sizeof cfg_path, "%s/config.json", cc->bundle);
	if (!cc->config && oci_config_load(cfg_path, &cc->config, err) < 0)
		return -1;
	struct oci_config *c = cc->config;
	struct arena *a = &cc->st.arena;
	char *rootfs = c->root_path[0] == '/' ? arena_strdup(a, c->root_path)
					      : arena_printf(a, "%s/%s", cc->bundle, c->root_path);
	char real_rootfs[PATH_MAX];
	if (validate_for_create(c, rootfs, err) < 0)
		return -1;
	if (!realpath(rootfs, real_rootfs))
		return ab_error(err, errno, "config.json: root.path: %s", rootfs);
	if (c->process->terminal && !o->console_socket && !(run_mode && !o->detach))
		return ab_error(err, 0, "process.terminal is true: --console-socket is required");
	if (!c->process->terminal && o->console_socket)
		return ab_error(err, 0, "--console-socket given but process.terminal is false");
	fault_point(1);

	/* 2. the agent policy: seccomp profile, floor, egress */
	if (policy_resolve(g, c, &cc->policy, err) < 0)
		return -1;
	if (policy_floor_config(&cc->policy, c, err) < 0 || policy_floor_create(&cc->policy, c, o->no_pivot, err) < 0)
		return -1;
	if (policy_seccomp_programs(&cc->policy, c, cc->g->root, cc->seccomp, &cc->n_seccomp, err) < 0)
		return -1;
	fault_point(2);

	/* 3. state: lock, refuse duplicates */
	if (state_dir_create(g->root, o->id, &cc->state_dirfd, err) < 0)
		return -1;
	cc->state_created = true;
	struct container_state *st = &cc->st;
	st->id = arena_strdup(a, o->id);
	st->bundle = arena_strdup(a, cc->bundle);
	st->rootfs = arena_strdup(a, real_rootfs);
	char now[64];
	format_rfc3339(now, sizeof now);
	st->created = arena_strdup(a, now);
	st->annotations = c->annotations;
	st->n_annotations = c->n_annotations;
	st->systemd_cgroup = g->systemd_cgroup;
	st->poststart_hooks = c->hooks.n_hooks[HOOK_POSTSTART] > 0;
	st->poststop_hooks = c->hooks.n_hooks[HOOK_POSTSTOP] > 0;
	const struct oci_namespace *pidns = oci_namespace_find(c, NS_PID);
	st->own_pidns = pidns && !pidns->path;
	st->seccomp_profile = (char *)cc->policy.seccomp_profile;
	if (!run_mode || o->detach) {
		if (mkfifoat(cc->state_dirfd, EXEC_FIFO, 0600) < 0)
			return ab_error(err, errno, "create exec fifo");
	}

	fault_point(3);

	/* 4. cgroup */
	if (cgroup_resolve(c->linux_.cgroups_path, o->id, g->systemd_cgroup, g->cgroups_disabled,
			   &st->cgroup, err) < 0)
		return -1;
	/* from here on the state names what exists (pid 0: no init yet), so that
	 * delete --force can clean up after a create that was killed */
	if (state_write(cc->state_dirfd, st, err) < 0)
		return -1;
	/* the device cgroup, always: deny-all first (floor_devices.c) */
	if (floor_device_rules(c, err) < 0)
		return -1;
	/* before the clone: the init is cloned into the cgroup2 directory, and
	 * joins the v1 ones itself through files opened here */
	if (create_cgroup(cc, err) < 0)
		return -1;

	/* 5. clone the init into its namespaces */
	bool new_userns;
	int flags = clone_flags_of(c, &new_userns);
	/* a new network namespace from the pool, made while nobody waited for it;
	 * not for a new user namespace, which must own its network namespace */
	if ((flags & CLONE_NEWNET) && !new_userns && cc->policy.config.netns_pool > 0) {
		/* one with our ruleset in it already if there is one, else a pristine one;
		 * topped up with the kind we asked for */
		const char *text = policy_egress_text(&cc->policy);
		char key[NETNS_POOL_KEY_LEN + 1];
		if (text)
			netns_pool_key(text, key);
		cc->netns_pool_refill = cc->policy.config.netns_pool;
		cc->netns_pool_policy = text;
		int fd = netns_pool_take(NETNS_POOL_DIR, text ? key : NULL, cc->policy.pool_token,
					 &cc->policy.ruleset_pooled);
		if (fd >= 0 && (fd = move_above(fd, 3 + o->preserve_fds, err)) < 0)
			return -1;
		log_debug("netns pool: %s", fd < 0 ? "empty, a namespace of its own"
				 : cc->policy.ruleset_pooled ? "a namespace with this policy's ruleset"
				 : "a pristine namespace");
		if (fd >= 0) {
			cc->policy.netns_pooled = true;
			cc->policy.netns_fd = fd;
			flags &= ~CLONE_NEWNET;
		}
	}
	int fds[2];
	if (sync_socketpair(fds, err) < 0)
		return -1;
	int min_fd = 3 + o->preserve_fds;
	fds[1] = move_above(fds[1], min_fd, err);
	/* the init gets the fifo itself, not a directory of the host (CVE-2024-21626):
	 * an O_PATH fd it reopens for writing through /proc when start comes */
	_cleanup_close_ int fifo_fd = -1;
	if (!run_mode || o->detach) {
		fifo_fd = openat(cc->state_dirfd, EXEC_FIFO, O_PATH | O_CLOEXEC);
		if (fifo_fd < 0)
			return ab_error(err, errno, "open exec fifo");
		fifo_fd = move_above(fifo_fd, min_fd, err);
	}
	if (fds[1] < 0 || ((!run_mode || o->detach) && fifo_fd < 0))
		return -1;
	cc->sync_fd = fds[0];
	struct init_ctx ictx = {
		.id = o->id,
		.bundle = cc->bundle,
		.config = c,
		.process = c->process,
		.sync_fd = fds[1],
		.exec_fifo_fd = fifo_fd,
		.preserve_fds = o->preserve_fds,
		.wait_on_sync = run_mode && !o->detach,
		/* the init reopens the fifo for writing as process.user, which must
		 * own it unless that is the runtime's own root */
		.exec_fifo_handover = fifo_fd >= 0 && (c->process->user.uid || c->process->user.gid ||
							oci_namespace_find(c, NS_USER)),
		.console = c->process->terminal,
		.no_pivot = o->no_pivot,
		.no_new_keyring = o->no_new_keyring,
		.new_userns = new_userns,
		/* no device cgroup: the floor guards devices by the mounts instead */
		.nodev_mounts = g->cgroups_disabled && cc->policy.config.refuse_host_devices,
		.cgroup_mode = st->cgroup.mode,
		.cgroup_path = st->cgroup.path,
		.seccomp = cc->seccomp,
		.n_seccomp = cc->n_seccomp,
		.parent_pidfd = -1,
		.netns_fd = -1,
	};
	snprintf(ictx.rootfs, sizeof ictx.rootfs, "%s", real_rootfs);
	if (cc->policy.netns_pooled)
		ictx.netns_fd = cc->policy.netns_fd;
	_cleanup_close_ int self_pidfd = -1;
	if (run_mode && o->die_with_parent) {
		int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		if (fd < 0)
			return ab_error(err, errno, "pidfd_open of the runtime");
		self_pidfd = move_above(fd, min_fd, err);
		if (self_pidfd < 0) {
			close(fd);
			return -1;
		}
	}
	ictx.parent_pidfd = self_pidfd;
	if (join_parent_namespaces(c, err) < 0 || new_time_namespace(c, err) < 0)
		return -1;
	_cleanup_close_ int cgfd = cgroup_v2_dirfd(&st->cgroup);
	/* learnt here, inherited by init: after pivot_root it may have no /proc/sys */
	(void)caps_last_cap();
	bool in_cgroup;
	if (sealed_exe_prepare(err) < 0)
		return -1;
	if (cgroup_join_open(&st->cgroup, &ictx.cgroup_join, err) < 0)
		return -1;
	/* id-mapped mounts are made here, in the host's namespaces */
	if (idmap_prepare(c, cc->bundle, min_fd, &ictx.idmap_fds, err) < 0) {
		cgroup_join_close(&ictx.cgroup_join);
		return -1;
	}
	stack_below_not_inherited();
	pid_t pid = clone_init(flags, cgfd, &in_cgroup);
	if (pid != 0)
		idmap_close(c, ictx.idmap_fds);
	if (pid < 0) {
		cgroup_join_close(&ictx.cgroup_join);
		close(fds[1]);
		return ab_error(err, errno, "clone the container init");
	}
	if (pid == 0) {
		close(fds[0]);
		/* the lock lives on the parent's open file: the child must not keep it */
		close(cc->state_dirfd);
		init_main(&ictx);
	}
	/* the child's end must go now, or we never see EOF if it dies */
	close(fds[1]);
	cgroup_join_close(&ictx.cgroup_join);
	cc->pid = pid;
	st->pid = pid;
	if (proc_start_time(pid, &st->pid_start_time) < 0)
		return ab_error(err, errno, "read start time of init %d", pid);
	if (state_write(cc->state_dirfd, st, err) < 0)
		return -1;
	fault_point(5);

	/* 6. parent side: id maps, cgroup, egress, then let the child go on */
	if (new_userns) {
		if (write_id_map(pid, "uid_map", c->linux_.uid_mappings, c->linux_.n_uid_mappings, err) < 0 ||
		    write_id_map(pid, "gid_map", c->linux_.gid_mappings, c->linux_.n_gid_mappings, err) < 0)
			return -1;
	}
	if (!in_cgroup && cgroup_enter_v2(&st->cgroup, pid, err) < 0)
		return -1;
	if (sync_send(cc->sync_fd, SYNC_CONTINUE, 0, NULL, -1, err) < 0)
		return -1;
	cc->policy.sentry_status_file = !run_mode;
	/* while init mounts: the firewall only has to be in place before the user's
	 * program runs, and that waits for `start` (or SYNC_START), after create */
	if (policy_install(&cc->policy, c, st, cc->state_dirfd, err) < 0)
		return -1;
	/* A ruleset from the pool leaves that time free for the sentry's sockets,
	 * unless a hook may still rewrite the resolv.conf they are made for. The
	 * pool brought lo up already: the init's own bringing up cannot race
	 * their binds. */
	bool sentry_early = cc->policy.ruleset_pooled && !c->hooks.n_hooks[HOOK_PRESTART] &&
			    !c->hooks.n_hooks[HOOK_CREATE_RUNTIME] && !c->hooks.n_hooks[HOOK_CREATE_CONTAINER];
	if (sentry_early && policy_prepare_sentry(&cc->policy, c, st, cc->state_dirfd, err) < 0)
		return -1;
	fault_point(6);
	if (drive_init(cc, run_mode && !o->detach && !o->console_socket, err) < 0)
		return -1;
	fault_point(7);
	/* The sentry comes once init is ready: it reads the container's resolv.conf,
	 * which Docker's prestart hook rewrites, and forking it earlier only takes
	 * CPU from init's set-up, the longest leg of create (measured: +2 ms on a
	 * 2-core host). Its sockets are made now (or were above), before the
	 * program can run; run (in the foreground) forks it only once the program
	 * runs. */
	bool fork_after_start = run_mode && !o->detach;
	if (!sentry_early && policy_prepare_sentry(&cc->policy, c, st, cc->state_dirfd, err) < 0)
		return -1;
	if (!fork_after_start && policy_fork_sentry(&cc->policy, st, err) < 0)
		return -1;
	/* Nobody waits for the sentry here: its listeners are bound, lookups queue
	 * until it serves. run waits for it once the program runs (container_run,
	 * forward_until_exit), and after a create, start waits for its word in
	 * SENTRY_STATUS before it lets the program run (container_start): the
	 * engine's own work between create and start usually covers it. */
	fault_point(8);

	/* 7. record it */
	st->started = run_mode && !o->detach;
	if (state_write(cc->state_dirfd, st, err) < 0)
		return -1;
	fault_point(9);
	if (o->pid_file && write_pid_file(o->pid_file, pid, err) < 0)
		return -1;
	fault_point(10);
	return 0;
}

int container_create(const struct global_opts *g, const struct create_opts *o, struct ab_err *err)
{
	struct create_ctx cc = {.g = g, .o = o, .state_dirfd = -1, .sync_fd = -1, .console_master = -1};
	int r = create_common(&cc, false, err);
	if (r < 0)
		create_cleanup(&cc);
	create_ctx_finish(&cc, r == 0);
	return r;
}

int container_load(const struct global_opts *g, const char *id, bool exclusive, int *ret_dirfd,
		   struct container_state *ret, struct ab_err *err)
{
	if (!container_id_valid(id))
		return ab_error(err, 0, "container \"%s\" does not exist (invalid id)", id);
	_cleanup_close_ int fd = -1;
	if (state_dir_open(g->root, id, exclusive, &fd, err) < 0)
		return -1;
	if (state_read(fd, id, ret, err) < 0)
		return -1;
	if (ret_dirfd)
		*ret_dirfd = TAKE_FD(fd);
	return 0;
}

/* poststart and poststop: from the config in hand (run), else from the bundle, read
 * only when create recorded that there are such hooks. poststop failures are
 * warnings; a failing poststart hook (or its config gone) is the caller's error. */
static int run_late_hooks(const struct container_state *s, enum oci_hook_kind kind,
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

static int destroy(const struct global_opts *g, struct container_state *s,
		   const struct oci_config *config, struct ab_err *err);

/* runtime-spec 1.3, lifecycle: a failing poststart hook stops the container
 * and destroys it as delete would (poststop hooks included); the hook's error
 * is what the caller reports. */
static void destroy_after_poststart(const struct global_opts *g, struct container_state *s,
				    const struct oci_config *config)
{
	struct ab_err e;
	if (destroy(g, s, config, &e) < 0)
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
	pidfd = pidfd_open_checked(s.pid, s.pid_start_time);
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
	if (run_late_hooks(&s, HOOK_POSTSTART, NULL, err) < 0) {
		destroy_after_poststart(g, &s, NULL);
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
	} else if (signal_init(&s, sig) < 0) {
		r = errno == ESRCH ? ab_error(err, 0, "container not running")
				   : ab_error(err, errno, "signal %d to container \"%s\"", sig, id);
	}
	state_free(&s);
	return r;
}

/* Wait (bounded) for the init to be gone; a D-state process must not hang us. */
static void wait_gone(const struct container_state *s, int timeout_ms)
{
	int pidfd = pidfd_open_checked(s->pid, s->pid_start_time);
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

static int destroy(const struct global_opts *g, struct container_state *s,
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
		(void)signal_init(s, SIGKILL);
		wait_gone(s, 5000);
	}
	policy_teardown(s);
	if (s->cgroup.mode != CGROUP_MODE_DISABLED && cgroup_destroy(&s->cgroup, err) < 0)
		return -1;
	(void)run_late_hooks(s, HOOK_POSTSTOP, config, err);
	return state_dir_remove(g->root, s->id, err);
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
		/* damaged state: still clean up what it names (a truncated file keeps
		 * the pid, start time and cgroup it begins with), then remove it */
		struct ab_err e;
		if (state_dir_open(g->root, id, true, &dirfd, &e) == 0 &&
		    state_read_salvage(dirfd, id, &s, &e) == 0) {
			log_warn("%s; cleaning up what it still names and removing it", err->msg);
			int r = destroy(g, &s, NULL, err);
			state_free(&s);
			return r;
		}
		log_warn("%s; removing it (its processes and cgroup, if any, cannot be identified from it)", err->msg);
		return state_dir_remove(g->root, id, err);
	}
	int r = -1;
	enum container_status st = state_status(&s);
	if (!force && (st == STATUS_RUNNING || st == STATUS_PAUSED)) {
		ab_error(err, 0, "cannot delete container \"%s\" that is not stopped: %s", id, status_name(st));
		goto out;
	}
	r = destroy(g, &s, NULL, err);
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

/* ---- run: create + start in the foreground ---- */

/* How long a foreground run goes without its DNS sentry when nothing asks for
 * it first: a program done sooner (a build step, a test) never needs one. */
#define SENTRY_LAZY_MS 100

/* Any lookup or refused packet waiting for a sentry not forked yet? */
static bool sentry_has_input(const struct agent_policy *p)
{
	int fds[5];
	size_t n = policy_sentry_wake_fds(p, fds);
	struct pollfd pf[5];
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

static int forward_until_exit(struct create_ctx *cc, int *ret_status, struct ab_err *err)
{
	sigset_t all;
	sigfillset(&all);
	_cleanup_close_ int sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0)
		return ab_error(err, errno, "signalfd");
	struct tty_proxy proxy;
	bool have_tty = cc->console_master >= 0;
	if (have_tty && tty_proxy_start(&proxy, cc->console_master, err) < 0)
		return -1;
	int status = 0;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	bool timed_out = false;
	int r = 0;
	for (;;) {
		struct signalfd_siginfo si;
		struct pollfd p[12] = {{.fd = sfd, .events = POLLIN}};
		int n = 1;
		if (have_tty)
			n += tty_proxy_pollfds(&proxy, p + 1);
		int wake[5], wake_slot = n;
		size_t n_wake = policy_sentry_wake_fds(&cc->policy, wake);
		for (size_t i = 0; i < n_wake; i++)
			p[n++] = (struct pollfd){.fd = wake[i], .events = POLLIN};
		/* the DNS sentry says ready (or why not) while the program already
		 * runs; a program that is done first never waits for it */
		int sentry_slot = -1, sentry_fd = policy_sentry_ready_fd(&cc->policy);
		if (sentry_fd >= 0) {
			sentry_slot = n;
			p[n++] = (struct pollfd){.fd = sentry_fd, .events = POLLIN};
		}
		int wait_ms = -1;
		if (cc->o->timeout_ms > 0 && !timed_out) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			int64_t spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
			wait_ms = spent >= cc->o->timeout_ms ? 0 : (int)(cc->o->timeout_ms - spent);
		}
		int lazy_ms = -1;
		if (n_wake) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			int64_t spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
			lazy_ms = spent >= SENTRY_LAZY_MS ? 0 : (int)(SENTRY_LAZY_MS - spent);
			if (wait_ms < 0 || lazy_ms < wait_ms)
				wait_ms = lazy_ms;
		}
		int ready = poll(p, (nfds_t)n, wait_ms);
		if (ready < 0 && errno != EINTR)
			return ab_error(err, errno, "poll");
		if (n_wake) {
			bool wanted = ready == 0 && wait_ms == lazy_ms;
			for (size_t i = 0; i < n_wake && ready > 0; i++)
				wanted |= p[wake_slot + i].revents != 0;
			if (wanted) {
				if (fork_sentry_late(cc, err) < 0) {
					r = -1;
					break;
				}
				continue;
			}
		}
		if (ready == 0 && wait_ms >= 0) {
			/* out of time: everything in the container goes, not just its init */
			timed_out = true;
			log_warn("container \"%s\" exceeded its timeout of %d ms: killed", cc->o->id, cc->o->timeout_ms);
			struct ab_err e;
			if (cc->st.cgroup.mode == CGROUP_MODE_DISABLED || cgroup_kill_all(&cc->st.cgroup, SIGKILL, &e) < 0)
				kill(cc->pid, SIGKILL);
			continue;
		}
		if (have_tty)
			tty_proxy_handle(&proxy, p + 1);
		if (sentry_slot >= 0 && p[sentry_slot].revents && policy_wait_sentry(&cc->policy, err) < 0) {
			/* a sentry leaves when init does: then this is the exit, not a failure */
			int st;
			if (waitpid(cc->pid, &st, WNOHANG) == cc->pid) {
				status = st;
				break;
			}
			r = -1;   /* the caller kills and removes the container */
			break;
		}
		if (!(p[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (si.ssi_signo == SIGCHLD) {
			pid_t r;
			int st;
			bool done = false;
			/* the sentry is our child too: keep the init's status only */
			while ((r = waitpid(-1, &st, WNOHANG)) > 0)
				if (r == cc->pid) {
					status = st;
					done = true;
				}
			if (done)
				break;
			continue;
		}
		if (si.ssi_signo == SIGWINCH && have_tty) {
			tty_proxy_resize(&proxy);
			continue;
		}
		kill(cc->pid, (int)si.ssi_signo);
	}
	if (have_tty) {
		if (r == 0)
			tty_proxy_drain(&proxy);
		tty_proxy_stop(&proxy);
	}
	if (r < 0)
		return r;
	cc->pid = 0;
	*ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

/* What the box tried to reach and was refused, before its state goes away: one
 * line per attempt on stderr, so a user sees it without asking. */
static void report_refused_egress(const char *root, const char *id)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s/%s", root, id, EGRESS_LOG);
	/* the sentry has written its last records: run waited for it to exit */
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[4096];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		yajl_val v;
		struct ab_err e;
		if (json_parse(line, "egress log", &v, &e) < 0)
			continue;
		yajl_val dst = json_get(v, "dst"), port = json_get(v, "port"), proto = json_get(v, "proto"),
			 name = json_get(v, "name");
		if (n++ == 0)
			fprintf(stderr, "agentbox: egress refused for \"%s\" (agentbox-egress(7)):\n", id);
		char where[300] = "";
		if (YAJL_IS_STRING(dst))
			snprintf(where, sizeof where, YAJL_IS_INTEGER(port) ? "%s:%lld" : "%s", YAJL_GET_STRING(dst),
				 YAJL_IS_INTEGER(port) ? YAJL_GET_INTEGER(port) : 0LL);
		fprintf(stderr, "  %s %s%s%s\n", YAJL_IS_STRING(proto) ? YAJL_GET_STRING(proto) : "?", where,
			YAJL_IS_STRING(name) ? " name " : "", YAJL_IS_STRING(name) ? YAJL_GET_STRING(name) : "");
		json_free(v);
	}
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
		create_ctx_finish(&cc, true);
		return 0;
	}
	if (o->on_created && o->on_created(cc.pid, o->on_created_data, err) < 0) {
		r = -1;
		goto fail;
	}
	bool poststart_failed = false;
	{
		if (sync_send(cc.sync_fd, SYNC_START, 0, NULL, -1, err) < 0) {
			r = -1;
			goto fail;
		}
		/* a failing poststart hook: the program is stopped, and the
		 * container goes below as if by delete, --keep or not */
		if (run_late_hooks(&cc.st, HOOK_POSTSTART, cc.config, err) < 0) {
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
	if (poststart_failed) {
		destroy_after_poststart(g, &cc.st, cc.config);
	} else if (!o->keep) {
		struct ab_err e;
		if (destroy(g, &cc.st, cc.config, &e) < 0)
			log_warn("delete after run: %s", e.msg);
	}
	create_ctx_finish(&cc, true);
	return poststart_failed ? -1 : status;
fail:
	create_cleanup(&cc);
	create_ctx_free(&cc);
	return r;
}
