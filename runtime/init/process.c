#include "process.h"
#include "caps.h"
#include "mounts.h"
#include "procfs.h"
#include "seccomp.h"
#include "sync.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <termios.h>

int process_set_rlimits(const struct oci_process *p, struct ab_err *err)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		struct rlimit rl = {.rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard};
		if (setrlimit(p->rlimits[i].resource, &rl) < 0)
			return ab_error(err, errno, "process.rlimits[%zu]: set %s to %llu/%llu", i,
					p->rlimits[i].type, (unsigned long long)rl.rlim_cur,
					(unsigned long long)rl.rlim_max);
	}
	return 0;
}

int process_set_oom_score_adj(const struct oci_process *p, int procfd, struct ab_err *err)
{
	if (!p->has_oom_score_adj)
		return 0;
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d", p->oom_score_adj);
	if (procfs_write_self(procfd, false, "oom_score_adj", buf, (size_t)n, err) < 0)
		return ab_wrap(err, "process.oomScoreAdj");
	return 0;
}

/* sched_setattr's argument: glibc has no wrapper. */
struct sched_attr_ {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

static const struct {
	const char *name;
	uint64_t flag;
} sched_flag_bits[] = {
	{"SCHED_FLAG_RESET_ON_FORK", 0x01}, {"SCHED_FLAG_RECLAIM", 0x02}, {"SCHED_FLAG_DL_OVERRUN", 0x04},
	{"SCHED_FLAG_KEEP_POLICY", 0x08}, {"SCHED_FLAG_KEEP_PARAMS", 0x10},
	{"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20}, {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
};

/* Parse "0-3,7" into a cpu set. */
static int parse_cpu_list(const char *list, cpu_set_t *set)
{
	CPU_ZERO(set);
	const char *p = list;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0)
			return -1;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo)
				return -1;
		}
		for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

int process_set_scheduling(const struct oci_process *p, bool final, struct ab_err *err)
{
	if (!final && p->has_scheduler) {
		const struct oci_scheduler *sc = &p->scheduler;
		struct sched_attr_ attr = {
			.size = sizeof attr,
			.sched_policy = (uint32_t)sc->policy_num,
			.sched_nice = sc->nice,
			.sched_priority = (uint32_t)sc->priority,
			.sched_runtime = sc->runtime,
			.sched_deadline = sc->deadline,
			.sched_period = sc->period,
		};
		for (size_t i = 0; i < sc->n_flags; i++)
			for (size_t j = 0; j < ARRAY_SIZE(sched_flag_bits); j++)
				if (streq(sc->flags[i], sched_flag_bits[j].name))
					attr.sched_flags |= sched_flag_bits[j].flag;
		if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
			/* SCHED_FIFO/RR: CAP_SYS_NICE is not all; with RT group
			 * scheduling a cgroup without real-time time refuses too */
			if (errno == EPERM && (sc->policy_num == SCHED_FIFO || sc->policy_num == SCHED_RR))
				return ab_error(err, EPERM, "process.scheduler: set policy %s (a real-time policy "
						"needs CAP_SYS_NICE and, on a kernel with cpu.rt_runtime_us, real-time "
						"CPU time for the container's cgroup: linux.resources.cpu.realtimeRuntime)",
						sc->policy);
			return ab_error(err, errno, "process.scheduler: set policy %s", sc->policy);
		}
	}
	if (!final && p->has_io_priority) {
		/* IOPRIO_PRIO_VALUE(class, data) = class << 13 | data */
		int value = (p->io_priority.class << 13) | p->io_priority.priority;
		if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, value) < 0)
			return ab_error(err, errno, "process.ioPriority: set");
	}
	const char *cpus = final ? p->exec_cpu_affinity_final : p->exec_cpu_affinity_initial;
	if (cpus) {
		cpu_set_t set;
		if (parse_cpu_list(cpus, &set) < 0)
			return ab_error(err, 0, "process.execCPUAffinity: invalid CPU list \"%s\"", cpus);
		if (sched_setaffinity(0, sizeof set, &set) < 0)
			return ab_error(err, errno, "process.execCPUAffinity: set \"%s\"", cpus);
	}
	return 0;
}

static const char *env_get(char *const *env, size_t n, const char *name)
{
	size_t l = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], name, l) == 0 && env[i][l] == '=')
			return env[i] + l + 1;
	return NULL;
}

int process_find_executable(const struct oci_process *p, char *buf, size_t len, struct ab_err *err)
{
	const char *name = p->args[0];
	if (strchr(name, '/')) {
		snprintf(buf, len, "%s", name);
		if (access(buf, X_OK) < 0)
			return ab_error(err, errno, "exec: \"%s\"", name);
		return 0;
	}
	const char *path = env_get(p->env, p->n_env, "PATH");
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	bool any_dir = false;   /* does the root hold any directory of PATH? */
	while (*path) {
		const char *end = strchrnul(path, ':');
		int n = (int)(end - path);
		snprintf(buf, len, "%.*s", n ? n : 1, n ? path : ".");
		struct stat st;
		any_dir = any_dir || (stat(buf, &st) == 0 && S_ISDIR(st.st_mode));
		snprintf(buf, len, "%.*s/%s", n ? n : 1, n ? path : ".", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		path = *end ? end + 1 : end;
	}
	/* a root file system without even those is most likely not there at all
	 * (an engine's mount missing, a rootfs directory never filled): say so */
	if (!any_dir)
		return ab_error(err, ENOENT, "exec: \"%s\": executable file not found in $PATH: the root file system "
				"holds none of its directories (is root.path mounted, or filled?)", name);
	return ab_error(err, ENOENT, "exec: \"%s\": executable file not found in $PATH", name);
}

/* One /etc/passwd line (name:password:uid:gid:gecos:home:shell, changed in
 * place): its home when it is uid's entry and names one. */
static const char *passwd_line_home(char *line, uint32_t uid)
{
	char *f[7] = {line};
	size_t k = 1;
	for (char *c = line; *c && k < 7; c++)
		if (*c == ':') {
			*c = 0;
			f[k++] = c + 1;
		}
	char *end;
	if (k < 6 || !*f[2] || !*f[5] || strtoul(f[2], &end, 10) != uid || *end)
		return NULL;
	return f[5];
}

/* The home directory of uid in the container's /etc/passwd, "/" when there is
 * none. The file is the container's to shape: only a regular file is read
 * (never a FIFO or a device), at most PASSWD_MAX bytes; a line longer than the
 * buffer is skipped. */
#define PASSWD_MAX (4 << 20)
static void passwd_home(uint32_t uid, char *home, size_t len)
{
	snprintf(home, len, "/");
	int fd = open("/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	char buf[8192];
	size_t have = 0, total = 0;
	bool skip = false;   /* in the rest of a line longer than the buffer */
	const char *found = NULL;
	while (!found && total < PASSWD_MAX) {
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* a last line without its newline */
			buf[have] = 0;
			if (have && !skip)
				found = passwd_line_home(buf, uid);
			break;
		}
		total += (size_t)n;
		have += (size_t)n;
		char *line = buf, *nl;
		while (!found && (nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			*nl = 0;
			if (!skip)
				found = passwd_line_home(line, uid);
			skip = false;
			line = nl + 1;
		}
		if (found)
			break;
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1) {
			have = 0;
			skip = true;
		}
	}
	if (found)
		snprintf(home, len, "%s", found);
	close(fd);
}

char *const *process_env_with_home(const struct oci_process *p, struct ab_err *err)
{
	for (size_t i = 0; i < p->n_env; i++)
		if (strncmp(p->env[i], "HOME=", 5) == 0 && p->env[i][5])
			return p->env;
	char home[PATH_MAX];
	passwd_home(p->user.uid, home, sizeof home);
	/* mmap, not malloc: exec's process shares its parent's memory (CLONE_VM) */
	size_t slots = p->n_env + 2, hlen = strlen(home);
	size_t size = slots * sizeof(char *) + 5 + hlen + 1;
	char **env = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED) {
		ab_error(err, errno, "set HOME");
		return NULL;
	}
	char *var = (char *)(env + slots);
	memcpy(var, "HOME=", 5);
	memcpy(var + 5, home, hlen + 1);
	size_t n = 0;
	for (size_t i = 0; i < p->n_env; i++)
		if (strncmp(p->env[i], "HOME=", 5) != 0)   /* an empty HOME is replaced */
			env[n++] = p->env[i];
	env[n++] = var;
	env[n] = NULL;
	return env;
}

int process_setup_console(const char *root, const struct oci_process *p, int sync_fd,
			  bool bind_console, struct ab_err *err)
{
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int master = -1;
	if (rootfd < 0)
		return ab_error(err, errno, "open %s", root);
	if (open_in_root(rootfd, "/dev/pts/ptmx", O_RDWR | O_NOCTTY, &master, err) < 0)
		return ab_wrap(err, "create the console (is devpts mounted at /dev/pts?)");
	/* a running container may have mounted something else there (exec):
	 * only a devpts's own ptmx is handed out as the console */
	struct stat st;
	struct statfs sf;
	if (fstat(master, &st) < 0 || fstatfs(master, &sf) < 0 || !S_ISCHR(st.st_mode) ||
	    st.st_rdev != makedev(5, 2) || sf.f_type != DEVPTS_SUPER_MAGIC)
		return ab_error(err, 0, "create the console: /dev/pts/ptmx is not a devpts's ptmx (5:2)");
	int unlock = 0;
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return ab_error(err, errno, "unlock pty");
	_cleanup_close_ int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return ab_error(err, errno, "open pty peer");
	if (p->has_console_size) {
		struct winsize ws = {.ws_row = (unsigned short)p->console_height,
				     .ws_col = (unsigned short)p->console_width};
		(void)ioctl(slave, TIOCSWINSZ, &ws);
	}
	if (bind_console) {
		char sp[64];
		snprintf(sp, sizeof sp, "/proc/self/fd/%d", slave);
		if (mounts_bind_console(root, sp, err) < 0)
			return -1;
	}
	if (sync_send(sync_fd, SYNC_CONSOLE, 0, "/dev/ptmx", master, err) < 0)
		return -1;
	if (setsid() < 0 && errno != EPERM)
		return ab_error(err, errno, "setsid");
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return ab_error(err, errno, "set controlling terminal");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return ab_error(err, errno, "dup pty to fd %d", fd);
	return 0;
}

/* The program may reopen its stdio by path (/dev/stdout, /proc/self/fd/1: a log
 * file linked to /dev/stdout is common), which checks the inode's permissions
 * against the user it runs as. As runc does, the stdio become that user's before
 * the switch; unlike runc, only what belongs to the container or to no file
 * system: a pty of the container's own devpts and pipes. A host file or a host
 * terminal handed over as stdio is left as it is (changing its owner would
 * change the host), and so is /dev/null. The group stays (devpts' tty group).
 * EPERM and EINVAL mean the owner or the group is not mapped in a user
 * namespace, EROFS a read-only /dev: the stdio are then left alone, not an
 * error. */
static int give_stdio_to(uid_t uid, struct ab_err *err)
{
	struct stat pts;
	bool have_pts = stat("/dev/pts/ptmx", &pts) == 0;
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		struct statfs sf;
		if (fstat(fd, &st) < 0 || st.st_uid == uid || fstatfs(fd, &sf) < 0)
			continue;
		bool container_pty = have_pts && S_ISCHR(st.st_mode) && st.st_dev == pts.st_dev;
		bool pipe = S_ISFIFO(st.st_mode) && sf.f_type == PIPEFS_MAGIC;
		if (!container_pty && !pipe)
			continue;
		if (fchown(fd, uid, (gid_t)-1) < 0 && errno != EPERM && errno != EINVAL && errno != EROFS)
			return ab_error(err, errno, "give stdio fd %d to uid %u", fd, (unsigned)uid);
	}
	return 0;
}

static int switch_user(const struct oci_process *p, struct ab_err *err)
{
	const struct oci_user *u = &p->user;
	if (give_stdio_to(u->uid, err) < 0)
		return -1;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return ab_error(err, errno, "keep capabilities");
	gid_t groups[256];
	size_t n = u->n_additional_gids > ARRAY_SIZE(groups) ? ARRAY_SIZE(groups) : u->n_additional_gids;
	for (size_t i = 0; i < n; i++)
		groups[i] = u->additional_gids[i];
	/* setgroups is denied in some user namespaces: an empty list is then moot */
	if (setgroups(n, groups) < 0 && !(errno == EPERM && n == 0))
		return ab_error(err, errno, "process.user.additionalGids: setgroups");
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return ab_error(err, errno, "process.user.gid: setgid %u", u->gid);
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return ab_error(err, errno, "process.user.uid: setuid %u", u->uid);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return ab_error(err, errno, "reset keep capabilities");
	return 0;
}

static int load_seccomp(const struct seccomp_prog *progs, size_t n, int sync_fd, struct ab_err *err)
{
	for (size_t i = 0; i < n; i++) {
		int notify_fd = -1;
		if (seccomp_prog_load(&progs[i], &notify_fd, err) < 0)
			return ab_wrap(err, "load seccomp filter %zu", i);
		if (notify_fd >= 0) {
			int r = sync_send(sync_fd, SYNC_SECCOMP_NOTIFY, 0, NULL, notify_fd, err);
			close(notify_fd);
			if (r < 0)
				return -1;
		}
	}
	return 0;
}

/* PR_SET_PDEATHSIG, then a look at the parent's pidfd: had it died before the
 * prctl, the signal would never come (getppid is 0 across a pid namespace). The
 * signal follows the parent thread; the runtime has only its main thread. */
static int die_with_parent(int parent_pidfd, struct ab_err *err)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return ab_error(err, errno, "set the parent-death signal");
	struct pollfd pf = {.fd = parent_pidfd, .events = POLLIN};
	int n = poll(&pf, 1, 0);
	close(parent_pidfd);
	if (n != 0)
		return ab_error(err, n < 0 ? errno : 0, "the runtime process that started the container is gone");
	return 0;
}

/* A cwd reached through a leaked fd would sit outside the root (CVE-2024-21626). */
static int check_cwd_inside(const char *cwd, struct ab_err *err)
{
	char real[PATH_MAX];
	if (!getcwd(real, sizeof real) || real[0] != '/')
		return ab_error(err, 0, "process.cwd: %s is outside the container's root", cwd);
	return 0;
}

int process_enter_cwd(const struct oci_process *p, const char **ret_late, struct ab_err *err)
{
	const char *cwd = p->cwd ? p->cwd : "/";
	*ret_late = NULL;
	if (chdir(cwd) == 0)
		return check_cwd_inside(cwd, err);
	/* a directory root may not enter but the user may (the user's own 0700
	 * volume, a root-squashing NFS, root without CAP_DAC_OVERRIDE in a user
	 * namespace): entered again as the user, as runc does */
	if ((errno == EACCES || errno == EPERM) && (p->user.uid || p->user.gid)) {
		*ret_late = cwd;
		return 0;
	}
	return ab_error(err, errno, "process.cwd: chdir %s", cwd);
}

int process_finish(const struct oci_process *p, int preserve_fds, const int *keep, size_t n_keep, int fd_dir,
		   const struct seccomp_prog *progs, size_t n_progs, int sync_fd, int parent_pidfd,
		   const char *late_cwd, struct ab_err *err)
{
	if (caps_drop_bounding(p->has_capabilities ? p->caps.bounding : 0, err) < 0)
		return -1;
	for (int fd = 3; fd < 3 + preserve_fds; fd++)
		(void)fcntl(fd, F_SETFD, 0);
	if (close_fds_from_dir(fd_dir, 3 + preserve_fds, keep, n_keep) < 0)
		return ab_error(err, errno, "close inherited fds");
	if (!p->no_new_privileges && load_seccomp(progs, n_progs, sync_fd, err) < 0)
		return -1;
	if (switch_user(p, err) < 0)
		return -1;
	if (late_cwd) {
		if (chdir(late_cwd) < 0)
			return ab_error(err, errno, "process.cwd: chdir %s as uid %u", late_cwd, p->user.uid);
		if (check_cwd_inside(late_cwd, err) < 0)
			return -1;
	}
	/* credential changes clear the parent-death signal: only now does it stick */
	if (parent_pidfd >= 0 && die_with_parent(parent_pidfd, err) < 0)
		return -1;
	/* no capabilities object means none at all, not the runtime's */
	struct oci_capabilities none = {0};
	if (caps_set_process(p->has_capabilities ? &p->caps : &none, err) < 0)
		return ab_wrap(err, "process.capabilities");
	umask(p->user.has_umask ? (p->user.umask & 0777) : 0022);
	if (p->no_new_privileges) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			return ab_error(err, errno, "set no_new_privs");
		if (load_seccomp(progs, n_progs, sync_fd, err) < 0)
			return -1;
	}
	return 0;
}

void process_reset_signals(void)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, &sa, NULL) == 0 || sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* glibc refuses its own 32 and 33; an ignored disposition there
		 * (inherited from whoever started us) would reach the program */
		struct {
			void *handler;
			unsigned long flags;
			void *restorer;
			uint64_t mask;
		} k = {SIG_DFL, 0, NULL, 0};
		(void)syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}
