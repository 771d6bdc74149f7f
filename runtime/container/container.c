/* Parent side of create (and of run up to READY): clone the init, drive it
 * through the sync protocol, undo everything on failure. run is in
 * container_run.c, the lifecycle of an existing container in container_ops.c. */
#include "container.h"
#include "test_hooks.h"
#include "config_linux.h"
#include "container_internal.h"
#include "cgroups_path.h"
#include "sealed_exe.h"
#include "caps.h"
#include "hooks.h"
#include "log.h"
#include "lsm.h"
#include "netns_pool.h"
#include "floor_devices.h"
#include "mount_trees.h"
#include "floor.h"
#include "policy.h"
#include "policy_gateway.h"
#include "procfs.h"
#include "sentry_process.h"
#include "seccomp.h"
#include "sync.h"
#include "sysctls.h"
#include "userns.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

extern bool util_force_fallbacks;

/* Fault injection for tests/reliability/faults.bats: AGENTBOX_FAULT_STOP_AT=N
 * makes create/run SIGKILL themselves at checkpoint N of create_common, so the
 * tests can show that whatever a killed create leaves, `delete --force` removes.
 * Test builds only (test_hooks.h); the variable is read once. */
static void fault_point(int n)
{
	static int stop_at = -1;
	if (stop_at < 0) {
		const char *s = test_hook("AGENTBOX_FAULT_STOP_AT");
		stop_at = s ? atoi(s) : 0;
	}
	if (n == stop_at)
		raise(SIGKILL);
}

static int write_pid_file(const char *path, pid_t pid, struct ab_err *err)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d", (int)pid);
	if (write_file_atomic_at(AT_FDCWD, path, buf, (size_t)n, 0644, err) < 0)
		return ab_wrap(err, "--pid-file");
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
		_cleanup_close_ int procfd = procfs_open_own(err);
		if (procfd < 0 || procfs_write_self(procfd, false, "timens_offsets", buf, (size_t)n, err) < 0)
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
		int r = init_join_namespace(ns, err);
		if (r < 0)
			return r;
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
	if (sysctls_check_namespaces(c, err) < 0)
		return -1;
	struct stat st;
	if (stat(rootfs, &st) < 0)
		return ab_error(err, errno, "config.json: root.path: rootfs %s", rootfs);
	if (!S_ISDIR(st.st_mode))
		return ab_error(err, ENOTDIR, "config.json: root.path: rootfs %s", rootfs);
	return 0;
}

/* Undo whatever create made; best effort with its own error. */
void create_cleanup(struct create_ctx *cc)
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

void create_ctx_free(struct create_ctx *cc)
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
void create_ctx_finish(struct create_ctx *cc, bool made)
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

/* The parent's half of the conversation with init, until it says READY.
 * Always inlined into create_common, its buffers (64 KiB) in create_common's
 * frame: stack_below_not_inherited cut the stack a little below that frame
 * for the clone, and a child forked later from below the cut (a hook here,
 * run's poststart hooks and sentry) would start without its own frames. */
__attribute__((always_inline)) static inline int drive_init(struct create_ctx *cc, bool keep_console,
							    struct ab_err *err)
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

/* What the steps of create_common from the clone on share: the clone's flags
 * and the fds made for the init. The parent's copies of fifo_fd, refused,
 * self_pidfd and cgfd are closed when create_common returns (launch_close),
 * as the locals they were. */
struct init_launch {
	int flags;                      /* clone flags */
	bool new_userns;
	bool new_netns;                 /* asked for, even if one came from the pool */
	bool in_cgroup;                 /* cloned straight into its cgroup2 directory */
	bool sentry_early;              /* the sentry's sockets made before drive_init */
	int child_sync_fd;              /* the init's end of the sync socket */
	int fifo_fd;                    /* O_PATH fd of the exec fifo, for the init */
	int refused;                    /* the refused file's tree, for the init */
	int self_pidfd;                 /* die_with_parent: a pidfd of the runtime */
	int cgfd;                       /* the cgroup2 directory cloned into */
};

static void launch_close(struct init_launch *l)
{
	/* in the order the locals they were went out of scope */
	int fds[] = {l->cgfd, l->self_pidfd, l->refused, l->fifo_fd};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* 1. arguments and config (a config given in o is taken: freed with cc) */
static int load_config(struct create_ctx *cc, bool run_mode, char real_rootfs[PATH_MAX], struct ab_err *err)
{
	const struct create_opts *o = cc->o;
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
	if (validate_for_create(c, rootfs, err) < 0)
		return -1;
	if (!realpath(rootfs, real_rootfs))
		return ab_error(err, errno, "config.json: root.path: %s", rootfs);
	if (c->process->terminal && !o->console_socket && !(run_mode && !o->detach))
		return ab_error(err, 0, "process.terminal is true: --console-socket is required");
	if (!c->process->terminal && o->console_socket)
		return ab_error(err, 0, "--console-socket given but process.terminal is false");
	return 0;
}

/* 2. the agent policy: seccomp profile, floor, egress */
static int resolve_policy(struct create_ctx *cc, struct ab_err *err)
{
	struct oci_config *c = cc->config;
	if (policy_resolve(cc->g, c, &cc->policy, err) < 0)
		return -1;
	if (policy_floor_config(&cc->policy, c, err) < 0 || policy_floor_create(&cc->policy, c, cc->o->no_pivot, err) < 0)
		return -1;
	policy_proxy_env(&cc->policy, c->process, &c->arena);
	if (policy_seccomp_programs(&cc->policy, c, c->process, cc->g->root, cc->seccomp, &cc->n_seccomp, err) < 0)
		return -1;
	return 0;
}

/* What the state records of the container from the start. */
static void state_fill(struct create_ctx *cc, const char *real_rootfs)
{
	const struct oci_config *c = cc->config;
	struct container_state *st = &cc->st;
	struct arena *a = &st->arena;
	st->id = arena_strdup(a, cc->o->id);
	st->bundle = arena_strdup(a, cc->bundle);
	st->rootfs = arena_strdup(a, real_rootfs);
	char now[64];
	format_rfc3339(now, sizeof now);
	st->created = arena_strdup(a, now);
	st->annotations = c->annotations;
	st->n_annotations = c->n_annotations;
	st->systemd_cgroup = cc->g->systemd_cgroup;
	st->poststart_hooks = c->hooks.n_hooks[HOOK_POSTSTART] > 0;
	st->poststop_hooks = c->hooks.n_hooks[HOOK_POSTSTOP] > 0;
	const struct oci_namespace *pidns = oci_namespace_find(c, NS_PID);
	st->own_pidns = pidns && !pidns->path;
	st->seccomp_profile = (char *)cc->policy.seccomp_profile;
}

/* 3. state: lock, refuse duplicates */
static int make_state(struct create_ctx *cc, bool run_mode, const char *real_rootfs, struct ab_err *err)
{
	const struct create_opts *o = cc->o;
	if (state_dir_create(cc->g->root, o->id, &cc->state_dirfd, err) < 0)
		return -1;
	cc->state_created = true;
	if (sysctls_check_joined_netns(cc->config, &cc->policy, o->id, cc->state_dirfd, err) < 0)
		return -1;
	state_fill(cc, real_rootfs);
	if (!run_mode || o->detach) {
		if (mkfifoat(cc->state_dirfd, EXEC_FIFO, 0600) < 0)
			return ab_error(err, errno, "create exec fifo");
	}
	return 0;
}

static int create_cgroup(struct create_ctx *cc, struct ab_err *err)
{
	const struct oci_config *c = cc->config;
	struct oci_resources res;
	if (c->linux_.has_resources) {
		res = c->linux_.resources;
		/* rootless, as runc: no device cgroup (a BPF program needs privileges of
		 * the host). In a user namespace no device node can be made anyway, and
		 * the floor decides which host nodes are bound in. */
		if (cc->g->rootless) {
			res.devices = NULL;
			res.n_devices = 0;
		}
	}
	if (cgroup_create(&cc->st.cgroup, c->linux_.has_resources ? &res : NULL, err) < 0)
		return -1;
	cc->cgroup_created = true;
	fault_point(4);
	return 0;
}

/* 4. cgroup */
static int make_cgroup(struct create_ctx *cc, struct ab_err *err)
{
	const struct global_opts *g = cc->g;
	const struct create_opts *o = cc->o;
	struct oci_config *c = cc->config;
	struct container_state *st = &cc->st;
	if (g->rootless) {
		if (cgroup_resolve_rootless(c->linux_.cgroups_path, o->id, g->systemd_cgroup, g->cgroups_disabled,
					    c->linux_.has_resources ? &c->linux_.resources : NULL, &st->cgroup,
					    &cc->cgroup_skipped, err) < 0)
			return -1;
	} else if (cgroup_resolve(c->linux_.cgroups_path, o->id, g->systemd_cgroup, g->cgroups_disabled,
				  &st->cgroup, err) < 0) {
		return -1;
	}
	/* from here on the state names what exists (pid 0: no init yet), so that
	 * delete --force can clean up after a create that was killed */
	if (state_write(cc->state_dirfd, st, err) < 0)
		return -1;
	/* header credentials: their gateway runs, and its CA is in the config's
	 * trust store, before the init reads the config */
	if (policy_gateway_start(&cc->policy, g, o, c, st, cc->state_dirfd, err) < 0)
		return -1;
	/* the device cgroup, always: deny-all first (floor_devices.c) */
	if (floor_device_rules(c, err) < 0)
		return -1;
	/* before the clone: the init is cloned into the cgroup2 directory, and
	 * joins the v1 ones itself through files opened here */
	return create_cgroup(cc, err);
}

/* A new network namespace from the pool, made while nobody waited for it: one
 * with our ruleset in it already if there is one, else a pristine one; topped
 * up with the kind we asked for. Taken, it replaces CLONE_NEWNET. */
static int take_pooled_netns(struct create_ctx *cc, int *flags, struct ab_err *err)
{
	const char *text = policy_egress_text(&cc->policy);
	char key[NETNS_POOL_KEY_LEN + 1];
	if (text)
		netns_pool_key(text, key);
	cc->netns_pool_refill = cc->policy.config.netns_pool;
	cc->netns_pool_policy = text;
	int fd = netns_pool_take(NETNS_POOL_DIR, text ? key : NULL, cc->policy.pool_token,
				 &cc->policy.ruleset_pooled);
	if (fd >= 0 && (fd = move_above(fd, 3 + cc->o->preserve_fds, err)) < 0)
		return -1;
	log_debug("netns pool: %s", fd < 0 ? "empty, a namespace of its own"
			 : cc->policy.ruleset_pooled ? "a namespace with this policy's ruleset"
			 : "a pristine namespace");
	if (fd >= 0) {
		cc->policy.netns_pooled = true;
		cc->policy.netns_fd = fd;
		*flags &= ~CLONE_NEWNET;
	}
	return 0;
}

/* 5a. the namespaces the init is cloned into */
static int choose_namespaces(struct create_ctx *cc, struct init_launch *l, struct ab_err *err)
{
	l->flags = clone_flags_of(cc->config, &l->new_userns);
	l->new_netns = l->flags & CLONE_NEWNET;
	/* not from the pool for a new user namespace, which must own its network
	 * namespace, nor for a rootless runtime (the pool is root's) */
	if ((l->flags & CLONE_NEWNET) && !l->new_userns && !cc->g->rootless && cc->policy.config.netns_pool > 0 &&
	    take_pooled_netns(cc, &l->flags, err) < 0)
		return -1;
	return 0;
}

/* 5b. the sync socket, and the exec fifo for the init */
static int open_sync_and_fifo(struct create_ctx *cc, bool run_mode, struct init_launch *l, struct ab_err *err)
{
	const struct create_opts *o = cc->o;
	int fds[2];
	if (sync_socketpair(fds, err) < 0)
		return -1;
	int min_fd = 3 + o->preserve_fds;
	fds[1] = move_above(fds[1], min_fd, err);
	/* the init gets the fifo itself, not a directory of the host (CVE-2024-21626):
	 * an O_PATH fd it reopens for writing through /proc when start comes */
	if (!run_mode || o->detach) {
		l->fifo_fd = openat(cc->state_dirfd, EXEC_FIFO, O_PATH | O_CLOEXEC);
		if (l->fifo_fd < 0)
			return ab_error(err, errno, "open exec fifo");
		l->fifo_fd = move_above(l->fifo_fd, min_fd, err);
	}
	if (fds[1] < 0 || ((!run_mode || o->detach) && l->fifo_fd < 0))
		return -1;
	cc->sync_fd = fds[0];
	l->child_sync_fd = fds[1];
	return 0;
}

/* 5c. the refused file, for a box whose own sentry will write it: made now,
 * attached by init; and the runtime's pidfd for die_with_parent */
static int open_refused_and_pidfd(struct create_ctx *cc, bool run_mode, struct init_launch *l, struct ab_err *err)
{
	int min_fd = 3 + cc->o->preserve_fds;
	const struct oci_namespace *netns = oci_namespace_find(cc->config, NS_NETWORK);
	if (cc->policy.egress_enforced && netns && (!netns->path || cc->policy.netns_pooled)) {
		/* best effort: where the tree cannot be made (no mount API for this
		 * user), the container runs without the file */
		struct ab_err e;
		l->refused = mount_tree_read_only_file(cc->state_dirfd, EGRESS_REFUSED, min_fd, &e);
		if (l->refused < 0)
			log_debug("egress: no %s in the container: %s", REFUSED_FILE_BOX, e.msg);
	}
	if (run_mode && cc->o->die_with_parent) {
		int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		if (fd < 0)
			return ab_error(err, errno, "pidfd_open of the runtime");
		l->self_pidfd = move_above(fd, min_fd, err);
		if (l->self_pidfd < 0) {
			close(fd);
			return -1;
		}
	}
	return 0;
}

/* 5d. what must be done or opened here, before the clone */
static int prepare_clone(struct create_ctx *cc, struct init_launch *l, struct init_ctx *ictx, struct ab_err *err)
{
	const struct oci_config *c = cc->config;
	if (join_parent_namespaces(c, err) < 0 || new_time_namespace(c, err) < 0)
		return -1;
	l->cgfd = cgroup_v2_dirfd(&cc->st.cgroup);
	/* learnt here, inherited by init: after pivot_root it may have no /proc/sys */
	(void)caps_last_cap();
	if (sealed_exe_prepare(err) < 0)
		return -1;
	if (cgroup_join_open(&cc->st.cgroup, &ictx->cgroup_join, err) < 0)
		return -1;
	/* id-mapped mounts, and binds a user namespace may not reach, are opened
	 * here, in the host's namespaces */
	if (mount_trees_prepare(c, cc->bundle, l->new_userns, 3 + cc->o->preserve_fds, &ictx->mount_trees, err) < 0) {
		cgroup_join_close(&ictx->cgroup_join);
		return -1;
	}
	return 0;
}

/* 5e. clone the init; the child runs init_main and never comes back here */
static int clone_init_child(struct create_ctx *cc, bool run_mode, struct init_launch *l, const char *real_rootfs,
			    struct ab_err *err)
{
	const struct create_opts *o = cc->o;
	const struct oci_config *c = cc->config;
	struct init_ctx ictx = {
		.id = o->id,
		.bundle = cc->bundle,
		.config = c,
		.process = c->process,
		.sync_fd = l->child_sync_fd,
		.exec_fifo_fd = l->fifo_fd,
		.preserve_fds = o->preserve_fds,
		.wait_on_sync = run_mode && !o->detach,
		/* the init reopens the fifo for writing as process.user, which must
		 * own it unless that is the runtime's own root */
		.exec_fifo_handover = l->fifo_fd >= 0 && (c->process->user.uid || c->process->user.gid ||
							  oci_namespace_find(c, NS_USER)),
		.console = c->process->terminal,
		.no_pivot = o->no_pivot,
		.no_new_keyring = o->no_new_keyring,
		.new_userns = l->new_userns,
		/* no device cgroup: the floor guards devices by the mounts instead */
		.nodev_mounts = cc->g->cgroups_disabled && cc->policy.config.refuse_host_devices,
		.cgroup_mode = cc->st.cgroup.mode,
		.cgroup_path = cc->st.cgroup.path,
		.seccomp = cc->seccomp,
		.n_seccomp = cc->n_seccomp,
		.parent_pidfd = l->self_pidfd,
		.netns_fd = cc->policy.netns_pooled ? cc->policy.netns_fd : -1,
		.refused_fd = l->refused,
		.refuse_kernel_fs_binds = cc->policy.config.refuse_privileged,
		.procfd = -1,
		.devnull_fd = -1,
	};
	snprintf(ictx.rootfs, sizeof ictx.rootfs, "%s", real_rootfs);
	if (prepare_clone(cc, l, &ictx, err) < 0)
		return -1;
	stack_below_not_inherited();
	pid_t pid = clone_init(l->flags, l->cgfd, &l->in_cgroup);
	if (pid != 0)
		mount_trees_close(c, ictx.mount_trees);
	if (pid < 0) {
		cgroup_join_close(&ictx.cgroup_join);
		close(l->child_sync_fd);
		return ab_error(err, errno, "clone the container init");
	}
	if (pid == 0) {
		close(cc->sync_fd);
		/* the lock lives on the parent's open file: the child must not keep it */
		close(cc->state_dirfd);
		init_main(&ictx);
	}
	/* the child's end must go now, or we never see EOF if it dies */
	close(l->child_sync_fd);
	cgroup_join_close(&ictx.cgroup_join);
	cc->pid = pid;
	cc->st.pid = pid;
	return 0;
}

/* 5. clone the init into its namespaces */
static int clone_into_namespaces(struct create_ctx *cc, bool run_mode, struct init_launch *l,
				 const char *real_rootfs, struct ab_err *err)
{
	if (choose_namespaces(cc, l, err) < 0 || open_sync_and_fifo(cc, run_mode, l, err) < 0 ||
	    open_refused_and_pidfd(cc, run_mode, l, err) < 0 || clone_init_child(cc, run_mode, l, real_rootfs, err) < 0)
		return -1;
	if (proc_start_time(cc->pid, &cc->st.pid_start_time) < 0)
		return ab_error(err, errno, "read start time of init %d", cc->pid);
	return state_write(cc->state_dirfd, &cc->st, err);
}

/* 6a. parent side: id maps, cgroup, egress, then let the child go on */
static int let_init_go_on(struct create_ctx *cc, bool run_mode, struct init_launch *l, struct ab_err *err)
{
	const struct create_opts *o = cc->o;
	const struct oci_config *c = cc->config;
	pid_t pid = cc->pid;
	if (l->new_userns) {
		if (userns_write_maps(pid, c->linux_.uid_mappings, c->linux_.n_uid_mappings,
				      c->linux_.gid_mappings, c->linux_.n_gid_mappings, err) < 0)
			return -1;
	}
	if (!l->in_cgroup && cgroup_enter_v2(&cc->st.cgroup, pid, err) < 0)
		return -1;
	if (sync_send(cc->sync_fd, SYNC_CONTINUE, 0, NULL, -1, err) < 0)
		return -1;
	/* e.g. kit run's slirp4netns, whose start-up then overlaps the init's */
	if (run_mode && !o->detach && l->new_netns && o->on_netns &&
	    o->on_netns(pid, cc->policy.netns_pooled ? cc->policy.netns_fd : -1, o->on_created_data, err) < 0)
		return -1;
	return 0;
}

/* 6b. the firewall, while init mounts: it only has to be in place before the
 * user's program runs, and that waits for `start` (or SYNC_START), after
 * create */
static int install_firewall(struct create_ctx *cc, bool run_mode, struct init_launch *l, struct ab_err *err)
{
	const struct oci_config *c = cc->config;
	cc->policy.sentry_status_file = !run_mode;
	if (policy_install(&cc->policy, c, &cc->st, cc->state_dirfd, err) < 0)
		return -1;
	/* A ruleset from the pool leaves that time free for the sentry's sockets,
	 * unless a hook may still rewrite the resolv.conf they are made for. The
	 * pool brought lo up already: the init's own bringing up cannot race
	 * their binds. */
	bool hooks = c->hooks.n_hooks[HOOK_PRESTART] || c->hooks.n_hooks[HOOK_CREATE_RUNTIME] ||
		     c->hooks.n_hooks[HOOK_CREATE_CONTAINER];
	l->sentry_early = cc->policy.ruleset_pooled && !hooks;
	if (l->sentry_early && policy_prepare_sentry(&cc->policy, c, &cc->st, cc->state_dirfd, err) < 0)
		return -1;
	/* the resolvers the engine named before its hook pointed the container
	 * at a resolver of its own (Docker's 127.0.0.11) */
	if (hooks)
		policy_note_resolv_before_hooks(&cc->policy, c, &cc->st);
	return 0;
}

/* 6c. The sentry comes once init is ready: it reads the container's resolv.conf,
 * which Docker's prestart hook rewrites, and forking it earlier only takes
 * CPU from init's set-up, the longest leg of create (measured: +2 ms on a
 * 2-core host). Its sockets are made now (or were in install_firewall),
 * before the program can run; run (in the foreground) forks it only once
 * the program runs. */
static int start_sentry(struct create_ctx *cc, bool run_mode, const struct init_launch *l, struct ab_err *err)
{
	bool fork_after_start = run_mode && !cc->o->detach;
	if (!l->sentry_early && policy_prepare_sentry(&cc->policy, cc->config, &cc->st, cc->state_dirfd, err) < 0)
		return -1;
	if (!fork_after_start && policy_fork_sentry(&cc->policy, &cc->st, err) < 0)
		return -1;
	/* Nobody waits for the sentry here: its listeners are bound, lookups queue
	 * until it serves. run waits for it once the program runs (container_run,
	 * forward_until_exit), and after a create, start waits for its word in
	 * SENTRY_STATUS before it lets the program run (container_start): the
	 * engine's own work between create and start usually covers it. */
	return 0;
}

/* create and run share everything up to the child saying READY. Each step
 * records in cc what it made, for create_cleanup; fault_point(N) lets
 * tests/reliability/faults.bats kill a create between them. */
int create_common(struct create_ctx *cc, bool run_mode, struct ab_err *err)
{
	const struct create_opts *o = cc->o;
	char real_rootfs[PATH_MAX];
	__attribute__((cleanup(launch_close))) struct init_launch l = {
		.child_sync_fd = -1, .fifo_fd = -1, .refused = -1, .self_pidfd = -1, .cgfd = -1,
	};

	if (load_config(cc, run_mode, real_rootfs, err) < 0)                    /* 1. */
		return -1;
	fault_point(1);
	if (resolve_policy(cc, err) < 0)                                        /* 2. */
		return -1;
	fault_point(2);
	if (make_state(cc, run_mode, real_rootfs, err) < 0)                     /* 3. */
		return -1;
	fault_point(3);
	if (make_cgroup(cc, err) < 0)                                           /* 4. */
		return -1;
	if (clone_into_namespaces(cc, run_mode, &l, real_rootfs, err) < 0)      /* 5. */
		return -1;
	fault_point(5);
	if (let_init_go_on(cc, run_mode, &l, err) < 0 ||                       /* 6. */
	    install_firewall(cc, run_mode, &l, err) < 0)
		return -1;
	fault_point(6);
	if (drive_init(cc, run_mode && !o->detach && !o->console_socket, err) < 0)
		return -1;
	fault_point(7);
	if (start_sentry(cc, run_mode, &l, err) < 0)
		return -1;
	fault_point(8);

	/* 7. record it */
	cc->st.started = run_mode && !o->detach;
	if (state_write(cc->state_dirfd, &cc->st, err) < 0)
		return -1;
	fault_point(9);
	if (o->pid_file && write_pid_file(o->pid_file, cc->pid, err) < 0)
		return -1;
	fault_point(10);
	return 0;
}

void create_warn_made(const struct create_ctx *cc)
{
	if (cc->cgroup_skipped)
		log_warn("container \"%s\" runs without a cgroup: rootless, and no cgroup v2 subtree is delegated to the user (no resource limits, pause or stats; see agentbox(8), ROOTLESS)",
			 cc->o->id);
}

int container_create(const struct global_opts *g, const struct create_opts *o, struct ab_err *err)
{
	struct create_ctx cc = {.g = g, .o = o, .state_dirfd = -1, .sync_fd = -1, .console_master = -1};
	int r = create_common(&cc, false, err);
	if (r < 0)
		create_cleanup(&cc);
	else
		create_warn_made(&cc);
	create_ctx_finish(&cc, r == 0);
	return r;
}

