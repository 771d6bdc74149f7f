/* The floor's namespace rules: a container may not share the host's network,
 * PID, IPC or mount namespace. "The host's" is found by identity, never by
 * the path's spelling (a symlink, a bind-mounted nsfs file, /proc/PID/ns of
 * any host process and /proc/thread-self all name the same namespace):
 *   - PID: the namespace must lie below the runtime's own (NS_GET_PARENT
 *     answers only for descendants), so the host's, the runtime's and any
 *     outside ours are refused alike;
 *   - network: a namespace is refused when it is the initial one (it alone
 *     carries the init-only net.core sysctls), the runtime's, pid 1's, or
 *     that of one of the runtime's ancestors (the engine);
 *   - IPC and mount: the runtime's, pid 1's or an ancestor's.
 * Whatever cannot be opened or told apart is refused: the check fails
 * closed. A bind of the host's /dev/shm or /dev/mqueue is host IPC too.
 * UTS is not refused: without CAP_SYS_ADMIN (refused by the floor) a
 * process can only read the host name in it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floor_ns.h"
#include "config_linux.h"
#include "util.h"

struct ns_rule {
	enum oci_ns_kind kind;
	const char *proc_name;      /* under /proc/PID/ns/ */
	const char *what;           /* in messages */
	size_t setting_off;         /* bool in struct agent_config */
	const char *setting;
	bool missing_is_host;       /* a missing entry shares the host's */
};

static const struct ns_rule rules[] = {
	{NS_NETWORK, "net", "network", offsetof(struct agent_config, refuse_host_network), "floor.refuse_host_network", true},
	{NS_PID, "pid", "PID", offsetof(struct agent_config, refuse_host_pid), "floor.refuse_host_pid", true},
	{NS_IPC, "ipc", "IPC", offsetof(struct agent_config, refuse_host_ipc), "floor.refuse_host_ipc", true},
	/* always required by create; joining the host's would mount on the host */
	{NS_MOUNT, "mnt", "mount", offsetof(struct agent_config, refuse_privileged), "floor.refuse_privileged", false},
};

/* Is the namespace at fd the one /proc/PID/ns/NAME shows? -1: cannot tell. */
static int same_ns_as(const struct stat *st, const char *pid, const char *name)
{
	char path[64];
	struct stat other;
	snprintf(path, sizeof path, "/proc/%s/ns/%s", pid, name);
	if (stat(path, &other) < 0)
		return -1;
	return other.st_dev == st->st_dev && other.st_ino == st->st_ino;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	int ppid = 0;
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/* The runtime's, pid 1's or an ancestor's (the engine that called us)?
 * *who says which. pid 1's may be unreadable (EACCES where the host's init
 * is shielded): the others still answer. */
static bool is_runtimes_or_ancestors(const struct stat *st, const char *name, const char **who)
{
	if (same_ns_as(st, "self", name) == 1) {
		*who = "the runtime's own";
		return true;
	}
	if (same_ns_as(st, "1", name) == 1) {
		*who = "pid 1's";
		return true;
	}
	pid_t pid = getppid();
	for (int depth = 0; pid > 1 && depth < 32; depth++, pid = parent_of(pid)) {
		char num[16];
		snprintf(num, sizeof num, "%d", (int)pid);
		if (same_ns_as(st, num, name) == 1) {
			*who = "that of a process of the host (an ancestor of the runtime)";
			return true;
		}
	}
	return false;
}

/* 1: the initial network namespace, 0: another, -1: cannot tell. Only the
 * initial namespace registers the init-only net.core sysctls; a child joins
 * and looks, so the runtime never leaves its own namespace. */
static int is_initial_netns(int fd)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setns(fd, CLONE_NEWNET) < 0)
			_exit(2);
		_exit(access("/proc/sys/net/core/netdev_max_backlog", F_OK) == 0 ? 1
		      : errno == ENOENT ? 0 : 2);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return -1;
	return WEXITSTATUS(status);
}

/* Is the namespace at path the host's? 0 no; 1 yes (why in *why); -1 cannot
 * tell (err set): the caller refuses either way. */
static int host_namespace(const struct ns_rule *r, const struct oci_namespace *ns, size_t idx,
			  const char **why, struct ab_err *err)
{
	_cleanup_close_ int fd = open(ns->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ab_error(err, errno, "linux.namespaces[%zu].path: open %s", idx, ns->path);
	int type = ioctl(fd, NS_GET_NSTYPE);
	if (type < 0)
		return ab_error(err, errno, "linux.namespaces[%zu].path: %s is not a namespace file", idx, ns->path);
	if (type != ns->clone_flag)
		return ab_error(err, 0, "linux.namespaces[%zu].path: %s is not a %s namespace", idx, ns->path,
				oci_ns_kind_name(ns->kind));
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ab_error(err, errno, "linux.namespaces[%zu].path: stat %s", idx, ns->path);
	if (is_runtimes_or_ancestors(&st, r->proc_name, why))
		return 1;
	if (ns->kind == NS_PID) {
		int parent = ioctl(fd, NS_GET_PARENT);
		if (parent >= 0) {
			close(parent);
			return 0;
		}
		*why = "not below the runtime's own (the host's, or one outside it)";
		return 1;
	}
	if (ns->kind == NS_NETWORK) {
		int initial = is_initial_netns(fd);
		if (initial < 0)
			return ab_error(err, 0, "linux.namespaces[%zu].path: cannot tell whether %s is the host's network namespace",
					idx, ns->path);
		if (initial) {
			*why = "the host's initial one";
			return 1;
		}
	}
	return 0;
}

/* Host shared memory reached through a bind mount: the host's /dev/shm or
 * /dev/mqueue file system (engines bind a tmpfs of the container's own). */
static int host_ipc_binds(const struct agent_config *cfg, const struct oci_config *c, struct ab_err *err)
{
	static const char *const host_ipc[] = {"/dev/shm", "/dev/mqueue"};
	struct stat dev;
	if (stat("/dev", &dev) < 0)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(host_ipc); k++) {
		struct stat ipc;
		/* only where it is a file system of its own, not a directory of /dev */
		if (stat(host_ipc[k], &ipc) < 0 || ipc.st_dev == dev.st_dev)
			continue;
		for (size_t i = 0; i < c->n_mounts; i++) {
			const struct oci_mount *m = &c->mounts[i];
			bool bind = (m->flags & MS_BIND) || (m->type && streq(m->type, "bind"));
			struct stat st;
			if (bind && m->source && stat(m->source, &st) == 0 && st.st_dev == ipc.st_dev)
				return ab_error(err, 0, "floor: the host's IPC namespace is refused: mounts[%zu] binds %s, the host's %s (give the container its own, or set floor.refuse_host_ipc: false in %s)",
						i, m->source, host_ipc[k], agent_config_name(cfg));
		}
	}
	return 0;
}

int floor_namespaces(const struct agent_config *cfg, const struct oci_config *c, struct ab_err *err)
{
	const char *file = agent_config_name(cfg);
	if (cfg->refuse_host_ipc && host_ipc_binds(cfg, c, err) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		const struct ns_rule *r = &rules[i];
		if (!*(const bool *)((const char *)cfg + r->setting_off))
			continue;
		const char *kind = r->what;
		const struct oci_namespace *ns = oci_namespace_find(c, r->kind);
		if (!ns) {
			if (!r->missing_is_host)
				continue;
			return ab_error(err, 0, "floor: the host's %s namespace is refused: linux.namespaces has no \"%s\" entry, which shares the host's (give the container its own, or set %s: false in %s)",
					kind, oci_ns_kind_name(r->kind), r->setting, file);
		}
		if (!ns->path)
			continue;
		size_t idx = (size_t)(ns - c->linux_.namespaces);
		const char *why = NULL;
		struct ab_err e = {0};
		int host = host_namespace(r, ns, idx, &why, &e);
		if (host < 0) {
			int code = e.code;
			ab_error(err, 0, "floor: %s: refused, as it may be the host's %s namespace (or set %s: false in %s)",
				 e.msg, kind, r->setting, file);
			err->code = code;
			return -1;
		}
		if (host)
			return ab_error(err, 0, "floor: the host's %s namespace is refused: linux.namespaces[%zu].path %s is %s (give the container its own, or set %s: false in %s)",
					kind, idx, ns->path, why, r->setting, file);
	}
	return 0;
}
