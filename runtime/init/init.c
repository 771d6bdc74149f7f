/* The child side of create/run: everything between clone and execve, in the order
 * the kernel needs it. Runs in a fresh copy of the parent's memory; reports every
 * failure over the sync socket and exits. */
#include "caps.h"
#include "config_linux.h"
#include "init.h"
#include "hooks.h"
#include "log.h"
#include "lsm.h"
#include "mounts.h"
#include "mount_paths.h"
#include "netdev.h"
#include "procfs.h"
#include "process.h"
#include "sealed_exe.h"
#include "seccomp.h"
#include "sync.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>

int init_join_namespace(const struct oci_namespace *ns, struct ab_err *err)
{
	_cleanup_close_ int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open %s namespace %s", oci_ns_kind_name(ns->kind), ns->path);
	if (setns(fd, ns->clone_flag) < 0)
		return ab_error(err, errno, "join %s namespace %s", oci_ns_kind_name(ns->kind), ns->path);
	return 0;
}

/* Joining an existing user namespace comes first: it decides what we may do next. */
static int join_namespaces(const struct oci_config *c, bool userns_only, struct ab_err *err)
{
	for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
		const struct oci_namespace *ns = &c->linux_.namespaces[i];
		if (!ns->path || (ns->kind == NS_USER) != userns_only)
			continue;
		if (ns->kind == NS_PID || ns->kind == NS_TIME)
			continue;   /* joined by the parent: they apply to children only */
		int r = init_join_namespace(ns, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* linux.sysctl through the init's own procfs (procfs.h): a mount of the
 * config's at /proc/sys/net holding "ipv4 -> /proc/sys/kernel" would make a
 * net.ipv4 key a write of a host-wide knob; nothing of the container is on
 * this way, and the read-only /proc/sys the container gets is another mount. */
static int write_sysctls(const struct oci_config *c, int procfd, struct ab_err *err)
{
	for (size_t i = 0; i < c->linux_.n_sysctl; i++) {
		const struct oci_kv *kv = &c->linux_.sysctl[i];
		if (strstr(kv->key, "..") || strchr(kv->key, '/') || !*kv->key)
			return ab_error(err, 0, "linux.sysctl: invalid key \"%s\"", kv->key);
		char path[PATH_MAX];
		int n = snprintf(path, sizeof path, "sys/%s", kv->key);
		if (n >= (int)sizeof path)
			return ab_error(err, 0, "linux.sysctl: invalid key \"%.64s...\"", kv->key);
		for (char *p = path + 4; p < path + n; p++)
			if (*p == '.')
				*p = '/';
		if (procfs_write(procfd, path, kv->value, strlen(kv->value), err) < 0)
			return ab_wrap(err, "linux.sysctl \"%s\"", kv->key);
	}
	return 0;
}

/* linux.memoryPolicy: the init's, so every process it starts inherits it. */
static int set_memory_policy(const struct oci_linux *l, struct ab_err *err)
{
	const struct oci_memory_policy *mp = &l->memory_policy;
	if (!l->has_memory_policy)
		return 0;
	if (syscall(SYS_set_mempolicy, mp->mode_num | (int)mp->flags, mp->maxnode ? mp->nodemask : NULL,
		    mp->maxnode) < 0)
		return ab_error(err, errno, "linux.memoryPolicy: set %s%s%s", mp->mode,
				mp->nodes ? " on nodes " : "", mp->nodes ? mp->nodes : "");
	return 0;
}

/* Block until `start`: the fifo rendezvous (create) or the sync socket (run). */
static int wait_for_start(const struct init_ctx *ctx, struct ab_err *err)
{
	if (ctx->wait_on_sync) {
		struct sync_msg msg;
		return sync_recv(ctx->sync_fd, SYNC_START, &msg, NULL, err);
	}
	/* By its path in the container's /proc: a procfs directory of ours held
	 * until start would be one a process exec'd meanwhile could reach through
	 * /proc/1/fd (CVE-2024-21626). That path is the container's to change (a
	 * mount over /proc/self/fd, an image's directory of symlinks), so what
	 * opens is refused unless it is the fifo itself: a redirect can only
	 * fail the start, never send the "0" elsewhere (issue 34). */
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", ctx->exec_fifo_fd);
	int fd;
	do
		fd = open(path, O_WRONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return ab_error(err, errno, "open exec fifo (is /proc mounted in the container?)");
	struct stat a, b;
	if (!procfs_test_by_path && (fstat(ctx->exec_fifo_fd, &a) < 0 || fstat(fd, &b) < 0 ||
				     a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
		close(fd);
		return ab_error(err, EXDEV, "open exec fifo: %s is another file (a mount over the container's /proc?): refused",
				path);
	}
	close(ctx->exec_fifo_fd);
	if (write(fd, "0", 1) != 1) {
		int e = errno;
		close(fd);
		return ab_error(err, e, "write exec fifo");
	}
	/* left open (close-on-exec): `start` waits for its EOF, which comes when
	 * execve succeeds, so poststart hooks run after the program started */
	return 0;
}

/* What the init reaches by handle from here on, opened in the runtime's view
 * before it joins a namespace or makes a mount of the container: a procfs
 * of its own and the null device the masks bind. */
static int open_handles(struct init_ctx *ctx, struct ab_err *err)
{
	if ((ctx->procfd = procfs_open_private(err)) < 0)
		return -1;
	if ((ctx->devnull_fd = mounts_open_dev_null(err)) < 0)
		return -1;
	return 0;
}

/* 1. into the cgroup and a pooled network namespace, off our binary; then
 * the parent's word that the id maps are written */
static int init_begin(struct init_ctx *ctx, struct sync_msg *msg, struct ab_err *err)
{
	/* first, so that what follows is charged to the container */
	if (cgroup_join_self(&ctx->cgroup_join, ctx->cgroup_path, err) < 0)
		return -1;
	/* a network namespace of its own, made ahead of time (netns_pool.h) */
	if (ctx->netns_fd >= 0) {
		if (setns(ctx->netns_fd, CLONE_NEWNET) < 0)
			return ab_error(err, errno, "join the network namespace from the pool");
		close(ctx->netns_fd);
		ctx->netns_fd = -1;
	}
	/* while the parent writes the id maps */
	if (sealed_exe_detach(err) < 0)
		return -1;
	/* the parent has written the id maps (and joined us to a cgroup2
	 * directory we could not be cloned into) */
	if (sync_recv(ctx->sync_fd, SYNC_CONTINUE, msg, NULL, err) < 0)
		return -1;
	if (open_handles(ctx, err) < 0)
		return -1;
	if (chdir(ctx->bundle) < 0)
		return ab_error(err, errno, "chdir to bundle %s", ctx->bundle);
	return 0;
}

/* 2. namespaces */
static int enter_namespaces(const struct init_ctx *ctx, struct ab_err *err)
{
	const struct oci_config *c = ctx->config;
	if (join_namespaces(c, true, err) < 0 || join_namespaces(c, false, err) < 0)
		return -1;
	if (ctx->new_userns) {
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
			return ab_error(err, errno, "become root in the user namespace (is uid/gid 0 mapped?)");
	}
	const struct oci_namespace *cgns = oci_namespace_find(c, NS_CGROUP);
	if (cgns && !cgns->path && unshare(CLONE_NEWCGROUP) < 0)
		return ab_error(err, errno, "create cgroup namespace");
	if (setsid() < 0)
		return ab_error(err, errno, "setsid");
	/* a network namespace of our own starts with lo down; runc and crun bring
	 * it up, and programs expect 127.0.0.1 and ::1 to answer */
	const struct oci_namespace *netns = oci_namespace_find(c, NS_NETWORK);
	if (netns && !netns->path && netdev_loopback_up(err) < 0)
		return -1;
	return 0;
}

/* 3. hostname and domain name need a private UTS namespace */
static int set_host_names(const struct oci_config *c, struct ab_err *err)
{
	const struct oci_namespace *uts = oci_namespace_find(c, NS_UTS);
	if ((c->hostname && *c->hostname) || (c->domainname && *c->domainname)) {
		if (!uts)
			return ab_error(err, 0, "hostname: cannot set the host name without a private UTS namespace");
		if (c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0)
			return ab_error(err, errno, "hostname: set \"%s\"", c->hostname);
		if (c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0)
			return ab_error(err, errno, "domainname: set \"%s\"", c->domainname);
	}
	return 0;
}

/* 5. hooks: prestart and createRuntime by the parent, createContainer here.
 * The round trip also brings the state the hooks are given; without hooks
 * (most containers) it is skipped. */
static int run_create_container_hooks(const struct init_ctx *ctx, struct sync_msg *msg, char **state_json,
				      struct ab_err *err)
{
	const struct oci_config *c = ctx->config;
	const size_t *nh = c->hooks.n_hooks;
	if (nh[HOOK_PRESTART] || nh[HOOK_CREATE_RUNTIME] || nh[HOOK_CREATE_CONTAINER] || nh[HOOK_START_CONTAINER]) {
		if (sync_send(ctx->sync_fd, SYNC_RUNTIME_HOOKS, 0, NULL, -1, err) < 0 ||
		    sync_recv(ctx->sync_fd, SYNC_HOOKS_DONE, msg, NULL, err) < 0)
			return -1;
		*state_json = xstrdup(msg->data);
		/* in the rootfs, as runc runs them: a hook may name paths in it
		 * relative to its cwd; the next step moves there anyway */
		if (nh[HOOK_CREATE_CONTAINER] && chdir(ctx->rootfs) < 0)
			return ab_error(err, errno, "createContainer hooks: chdir %s", ctx->rootfs);
		if (hooks_run(&c->hooks, HOOK_CREATE_CONTAINER, *state_json, err) < 0)
			return -1;
	}
	return 0;
}

/* 6. into the rootfs: the cwd, masked and read-only paths (by handle, while
 * the rootfs is still below the runtime's root), pivot_root, sysctls, the
 * read-only root, the personality */
/* AGENTBOX_TEST_PROC_BY_PATH (procfs.h): the container's /proc instead,
 * as the runtime used it before issue 34; test builds only. */
static int handles_by_path(struct init_ctx *ctx, struct ab_err *err)
{
	if (!procfs_test_by_path)
		return 0;
	close(ctx->procfd);
	ctx->procfd = open("/proc", O_PATH | O_CLOEXEC);
	if (ctx->procfd < 0)
		return ab_error(err, errno, "open /proc by path");
	return 0;
}

static int enter_rootfs(struct init_ctx *ctx, struct ab_err *err)
{
	const struct oci_config *c = ctx->config;
	const struct oci_process *p = ctx->process;
	/* a missing cwd is made (root's, 0755) inside the new root, before it may
	 * turn read-only, as runc does (Kubernetes' workingDir relies on it) */
	if (p->cwd && mounts_make_cwd(ctx->rootfs, p->cwd, err) < 0)
		return ab_wrap(err, "process.cwd");
	if (!procfs_test_by_path && mounts_mask_and_protect(ctx->rootfs, ctx, err) < 0)
		return -1;
	if (mounts_enter_rootfs(ctx->rootfs, ctx->no_pivot, err) < 0 || handles_by_path(ctx, err) < 0 ||
	    write_sysctls(c, ctx->procfd, err) < 0)
		return -1;
	/* AGENTBOX_TEST_PROC_BY_PATH: in the order and by the paths of before */
	if (procfs_test_by_path && mounts_mask_and_protect("/", ctx, err) < 0)
		return -1;
	if (mounts_finalize(c, err) < 0)
		return -1;
	if (c->linux_.has_personality && personality(c->linux_.personality) < 0)
		return ab_error(err, errno, "linux.personality: set %s", c->linux_.personality_domain);
	return 0;
}

/* 7. the process' own settings: limits, scheduling, memory policy, keyring,
 * cwd, the executable and its environment, the LSM profile */
static int process_settings(struct init_ctx *ctx, char *exec_path, size_t exec_len, const char **late_cwd,
			    struct ab_err *err)
{
	const struct oci_process *p = ctx->process;
	if (process_set_rlimits(p, err) < 0 || process_set_oom_score_adj(p, ctx->procfd, err) < 0 ||
	    process_set_scheduling(p, false, err) < 0 || set_memory_policy(&ctx->config->linux_, err) < 0)
		return -1;
	if (!ctx->no_new_keyring) {
		char name[128];
		snprintf(name, sizeof name, "_ses.%.100s", ctx->id);
		/* best effort: a kernel or profile without keyrings is fine */
		(void)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name);
	}
	if (process_enter_cwd(p, late_cwd, err) < 0)
		return -1;
	if (process_find_executable(p, exec_path, exec_len, err) < 0)
		return -1;
	if (!(ctx->exec_env = process_env_with_home(p, err)))
		return -1;
	/* the profile applies from the execve on; set while the process still has
	 * its capabilities and no no_new_privs, as runc does */
	if (lsm_apply(p, ctx->procfd, err) < 0)
		return -1;
	return 0;
}

/* The steps of the init, in the order the kernel needs them; seccomp last. */
static int init_run(struct init_ctx *ctx, char *exec_path, size_t exec_len, char **state_json,
		    struct ab_err *err)
{
	const struct oci_process *p = ctx->process;
	struct sync_msg msg;    /* one for every round trip with the parent */

	if (init_begin(ctx, &msg, err) < 0)                                     /* 1. */
		return -1;
	if (enter_namespaces(ctx, err) < 0 || set_host_names(ctx->config, err) < 0)   /* 2., 3. */
		return -1;
	/* 4. the file system view */
	if (mounts_setup(ctx, err) < 0)
		return -1;
	if (ctx->console && process_setup_console(ctx->rootfs, p, ctx->sync_fd, true, err) < 0)
		return -1;
	if (run_create_container_hooks(ctx, &msg, state_json, err) < 0 ||     /* 5. */
	    enter_rootfs(ctx, err) < 0)                                         /* 6. */
		return -1;
	const char *late_cwd;
	if (process_settings(ctx, exec_path, exec_len, &late_cwd, err) < 0)    /* 7. */
		return -1;
	/* the exec fifo is reopened as process.user (wait_for_start): the parent
	 * hands it over now that our namespaces say who that is */
	if (ctx->exec_fifo_handover &&
	    (sync_send(ctx->sync_fd, SYNC_EXEC_FIFO_OWNER, 0, NULL, -1, err) < 0 ||
	     sync_recv(ctx->sync_fd, SYNC_CONTINUE, &msg, NULL, err) < 0))
		return -1;

	/* 8. privileges, fds and seccomp, last */
	/* the procfs handle and every other fd of ours go there */
	int fd_dir = procfs_open_self(ctx->procfd, false, "fd", O_RDONLY | O_DIRECTORY, err);
	if (fd_dir < 0)
		return -1;
	int keep[3] = {ctx->sync_fd, ctx->exec_fifo_fd, ctx->parent_pidfd};
	return process_finish(p, ctx->preserve_fds, keep, 3, fd_dir, ctx->seccomp, ctx->n_seccomp,
			      ctx->sync_fd, ctx->parent_pidfd, late_cwd, err);
}

void init_main(struct init_ctx *ctx)
{
	struct ab_err err = {0};
	char exec_path[PATH_MAX];
	char *state_json = NULL;
	bool ready = false;
	if (init_run(ctx, exec_path, sizeof exec_path, &state_json, &err) < 0)
		goto fail;
	/* after seccomp only the rendezvous and execve remain */
	process_reset_signals();
	if (sync_send(ctx->sync_fd, SYNC_READY, 0, NULL, -1, &err) < 0)
		goto fail;
	ready = true;
	if (wait_for_start(ctx, &err) < 0)
		goto fail;
	if (ctx->config->hooks.n_hooks[HOOK_START_CONTAINER]) {
		/* by now the container is created: say so to its startContainer hooks */
		char *status = strstr(state_json, "\"status\":\"creating\"");
		if (status)
			memcpy(status, "\"status\":\"created\" ", 19);
		if (hooks_run(&ctx->config->hooks, HOOK_START_CONTAINER, state_json, &err) < 0)
			goto fail;
	}
	if (process_set_scheduling(ctx->process, true, &err) < 0)
		goto fail;
	execve(exec_path, ctx->process->args, ctx->exec_env);
	ab_error(&err, errno, "exec %s", ctx->process->args[0]);
fail:
	sync_send_error(ctx->sync_fd, &err);
	/* after create has returned nobody reads the socket: say it on stderr too */
	if (ready) {
		dprintf(STDERR_FILENO, "agentbox: %s\n", err.msg);
	}
	_exit(err.code == ENOENT ? 127 : 1);
}
