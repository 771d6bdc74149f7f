/* prober: call syscalls by name inside a container and report what the kernel (and
 * its seccomp filter) answered, one line each:
 *     NAME ok
 *     NAME errno=N (ENAME)
 *
 * Every call gets arguments chosen so that, if the filter lets it through, the
 * kernel refuses it (bad fd, bad pointer, bad flags: EBADF/EFAULT/EINVAL...) rather
 * than acting — the prober must be harmless even when run as root with no filter.
 * The few calls that cannot be made harmless that way run in a throwaway child.
 *
 *   prober NAME...             probe each syscall ("--list" shows the names)
 *   prober --all               probe every syscall it knows
 *   prober --clone-newuser     unshare(CLONE_NEWUSER) and clone(CLONE_NEWUSER)
 *   prober --personality X     personality(X) (X in C notation: 0x8, 8, ...)
 *   prober --socket F [T [P]]  socket(F, T, P), defaults T=SOCK_STREAM P=0
 *   prober --int80             x86_64 only: getpid via the 32-bit int $0x80 ABI
 *
 * Static, no dependencies: it runs in any rootfs. Exit 0 when every probe ran,
 * 2 on a usage error (unknown name). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BADPTR 1L               /* never mapped: copy_from_user fails with EFAULT */
#define BADFLAGS 0xffffffffL    /* no syscall takes all flag bits: EINVAL */

static const struct {
	int e;
	const char *name;
} errnames[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" }, { EINTR, "EINTR" },
	{ EIO, "EIO" }, { ENXIO, "ENXIO" }, { E2BIG, "E2BIG" }, { ENOEXEC, "ENOEXEC" },
	{ EBADF, "EBADF" }, { ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { ENOTBLK, "ENOTBLK" }, { EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" }, { EXDEV, "EXDEV" }, { ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" },
	{ EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" },
	{ ENOTTY, "ENOTTY" }, { ETXTBSY, "ETXTBSY" }, { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" },
	{ ESPIPE, "ESPIPE" }, { EROFS, "EROFS" }, { EMLINK, "EMLINK" }, { EPIPE, "EPIPE" },
	{ EDOM, "EDOM" }, { ERANGE, "ERANGE" }, { EDEADLK, "EDEADLK" },
	{ ENAMETOOLONG, "ENAMETOOLONG" }, { ENOLCK, "ENOLCK" }, { ENOSYS, "ENOSYS" },
	{ ENOTEMPTY, "ENOTEMPTY" }, { ELOOP, "ELOOP" }, { ENOMSG, "ENOMSG" },
	{ ENODATA, "ENODATA" }, { ENOTSOCK, "ENOTSOCK" }, { EPROTOTYPE, "EPROTOTYPE" },
	{ ENOPROTOOPT, "ENOPROTOOPT" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
	{ ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
	{ EAFNOSUPPORT, "EAFNOSUPPORT" }, { EADDRINUSE, "EADDRINUSE" },
	{ ENETUNREACH, "ENETUNREACH" }, { ECONNREFUSED, "ECONNREFUSED" },
	{ EUSERS, "EUSERS" }, { EDQUOT, "EDQUOT" }, { ENOKEY, "ENOKEY" },
	{ EKEYREJECTED, "EKEYREJECTED" }, { ENOMEDIUM, "ENOMEDIUM" },
};

static const char *errname(int e)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	return "?";
}

static void report(const char *name, long r, int e)
{
	if (r < 0)
		printf("%s errno=%d (%s)\n", name, e, errname(e));
	else
		printf("%s ok\n", name);
	fflush(stdout);     /* a filter may kill us on the next call */
}

/* Run fn in a child and report its result, for calls that touch the caller. */
static void in_child(const char *name, long (*fn)(void))
{
	int p[2];
	if (pipe(p) < 0) {
		report(name, -1, errno);
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		report(name, -1, errno);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		long r = fn();
		int res[2] = { r < 0 ? -1 : 0, errno };
		(void)!write(p[1], res, sizeof(res));
		_exit(0);
	}
	close(p[1]);
	int res[2] = { 0, 0 };
	ssize_t n = read(p[0], res, sizeof(res));
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(res)) {
		if (WIFSIGNALED(st))
			printf("%s killed by signal %d\n", name, WTERMSIG(st));
		else
			printf("%s lost (child exited %d)\n", name, WEXITSTATUS(st));
		fflush(stdout);
		return;
	}
	report(name, res[0], res[1]);
}

/* Without a controlling terminal (new session) vhangup has nothing to hang up. */
static long do_vhangup(void)
{
	if (setsid() < 0)
		return -1;
	return syscall(SYS_vhangup);
}

/* A raw clone that behaves like fork: the child leaves at once. */
static long raw_clone(unsigned long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	if (r > 0) {
		int e = errno;
		while (waitpid((pid_t)r, NULL, 0) < 0 && errno == EINTR)
			;
		errno = e;
	}
	return r;
}

static long do_clone(void) { return raw_clone(0); }

static long do_fork(void)
{
	pid_t r = fork();
	if (r == 0)
		_exit(0);
	if (r > 0)
		while (waitpid(r, NULL, 0) < 0 && errno == EINTR)
			;
	return r;
}

#define A6(a, b, c, d, e, f) { (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f) }

struct probe {
	const char *name;
	long nr;
	long args[6];
	long (*special)(void);  /* instead of syscall(nr, args) */
	int in_child;           /* run special in a child */
};

static const struct probe probes[] = {
	/* harmless baselines, expected to work everywhere */
	{ "getpid", SYS_getpid, A6(0, 0, 0, 0, 0, 0), NULL, 0 },
	{ "write", SYS_write, A6(-1, 0, 0, 0, 0, 0), NULL, 0 },
	{ "fork", -1, A6(0, 0, 0, 0, 0, 0), do_fork, 0 },
	{ "clone", -1, A6(0, 0, 0, 0, 0, 0), do_clone, 0 },
	{ "clone3", SYS_clone3, A6(0, 0, 0, 0, 0, 0), NULL, 0 },          /* size 0: EINVAL */
	{ "personality", SYS_personality, A6(0xffffffff, 0, 0, 0, 0, 0), NULL, 0 },  /* query */
	{ "socket", SYS_socket, A6(AF_INET, SOCK_STREAM, 0, 0, 0, 0), NULL, 0 },
	{ "ioctl", SYS_ioctl, A6(-1, 0x5412 /* TIOCSTI */, 0, 0, 0, 0), NULL, 0 },
	/* debugging other processes */
	{ "ptrace", SYS_ptrace, A6(2 /* PEEKDATA */, 0, 0, 0, 0, 0), NULL, 0 },   /* pid 0: ESRCH */
	{ "process_vm_readv", SYS_process_vm_readv, A6(0, 0, 0, 0, 0, 1), NULL, 0 },
	{ "process_vm_writev", SYS_process_vm_writev, A6(0, 0, 0, 0, 0, 1), NULL, 0 },
	{ "kcmp", SYS_kcmp, A6(0, 0, 0xffff, 0, 0, 0), NULL, 0 },
	{ "pidfd_getfd", SYS_pidfd_getfd, A6(-1, -1, BADFLAGS, 0, 0, 0), NULL, 0 },
	{ "process_madvise", SYS_process_madvise, A6(-1, 0, 0, 0, BADFLAGS, 0), NULL, 0 },
	/* kernel attack surface */
	{ "bpf", SYS_bpf, A6(-1, 0, 0, 0, 0, 0), NULL, 0 },
	{ "perf_event_open", SYS_perf_event_open, A6(0, 0, -1, -1, BADFLAGS, 0), NULL, 0 },
	{ "userfaultfd", SYS_userfaultfd, A6(BADFLAGS, 0, 0, 0, 0, 0), NULL, 0 },
	{ "io_uring_setup", SYS_io_uring_setup, A6(0, 0, 0, 0, 0, 0), NULL, 0 },
	{ "io_uring_enter", SYS_io_uring_enter, A6(-1, 0, 0, BADFLAGS, 0, 0), NULL, 0 },
	{ "io_uring_register", SYS_io_uring_register, A6(-1, 0, 0, 0, 0, 0), NULL, 0 },
	{ "lookup_dcookie", SYS_lookup_dcookie, A6(0, 0, 0, 0, 0, 0), NULL, 0 },
	/* keyrings */
	{ "add_key", SYS_add_key, A6(0, 0, 0, 0, 0, 0), NULL, 0 },
	{ "keyctl", SYS_keyctl, A6(0xdead, 0, 0, 0, 0, 0), NULL, 0 },
	{ "request_key", SYS_request_key, A6(0, 0, 0, 0, 0, 0), NULL, 0 },
	/* mounts and namespaces */
	{ "mount", SYS_mount, A6(BADPTR, BADPTR, BADPTR, 0, 0, 0), NULL, 0 },
	{ "umount2", SYS_umount2, A6(BADPTR, BADFLAGS, 0, 0, 0, 0), NULL, 0 },
	{ "fsopen", SYS_fsopen, A6(BADPTR, BADFLAGS, 0, 0, 0, 0), NULL, 0 },
	{ "fsconfig", SYS_fsconfig, A6(-1, 0xffff, 0, 0, 0, 0), NULL, 0 },
	{ "fsmount", SYS_fsmount, A6(-1, BADFLAGS, 0, 0, 0, 0), NULL, 0 },
	{ "fspick", SYS_fspick, A6(-1, BADPTR, BADFLAGS, 0, 0, 0), NULL, 0 },
	{ "move_mount", SYS_move_mount, A6(-1, BADPTR, -1, BADPTR, BADFLAGS, 0), NULL, 0 },
	{ "open_tree", SYS_open_tree, A6(-1, BADPTR, BADFLAGS, 0, 0, 0), NULL, 0 },
	{ "mount_setattr", SYS_mount_setattr, A6(-1, BADPTR, BADFLAGS, 0, 0, 0), NULL, 0 },
	{ "pivot_root", SYS_pivot_root, A6(BADPTR, BADPTR, 0, 0, 0, 0), NULL, 0 },
	{ "chroot", SYS_chroot, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },
	{ "unshare", SYS_unshare, A6(BADFLAGS, 0, 0, 0, 0, 0), NULL, 0 },  /* all bits: EINVAL */
	{ "setns", SYS_setns, A6(-1, 0, 0, 0, 0, 0), NULL, 0 },
	{ "name_to_handle_at", SYS_name_to_handle_at, A6(-1, BADPTR, BADPTR, BADPTR, BADFLAGS, 0), NULL, 0 },
	{ "open_by_handle_at", SYS_open_by_handle_at, A6(-1, BADPTR, 0, 0, 0, 0), NULL, 0 },
	{ "quotactl", SYS_quotactl, A6(0xdead, BADPTR, 0, BADPTR, 0, 0), NULL, 0 },
	{ "quotactl_fd", SYS_quotactl_fd, A6(-1, 0, 0, BADPTR, 0, 0), NULL, 0 },
	/* host-wide state */
	{ "reboot", SYS_reboot, A6(0, 0, 0, 0, 0, 0), NULL, 0 },          /* bad magic: EINVAL */
	{ "kexec_load", SYS_kexec_load, A6(0, 0, 0, 0xdead0000, 0, 0), NULL, 0 },
	{ "kexec_file_load", SYS_kexec_file_load, A6(-1, -1, 0, 0, BADFLAGS, 0), NULL, 0 },
	{ "init_module", SYS_init_module, A6(0, 0, 0, 0, 0, 0), NULL, 0 },  /* len 0: ENOEXEC */
	{ "finit_module", SYS_finit_module, A6(-1, 0, BADFLAGS, 0, 0, 0), NULL, 0 },
	{ "delete_module", SYS_delete_module, A6(0, 0, 0, 0, 0, 0), NULL, 0 },  /* NULL: EFAULT */
	{ "swapon", SYS_swapon, A6(BADPTR, BADFLAGS, 0, 0, 0, 0), NULL, 0 },
	{ "swapoff", SYS_swapoff, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },
	{ "acct", SYS_acct, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },       /* not NULL: that stops it */
	{ "settimeofday", SYS_settimeofday, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },
	{ "clock_settime", SYS_clock_settime, A6(0, BADPTR, 0, 0, 0, 0), NULL, 0 },
	{ "adjtimex", SYS_adjtimex, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },
	{ "clock_adjtime", SYS_clock_adjtime, A6(0, BADPTR, 0, 0, 0, 0), NULL, 0 },
	{ "sethostname", SYS_sethostname, A6(BADPTR, -1, 0, 0, 0, 0), NULL, 0 },
	{ "setdomainname", SYS_setdomainname, A6(BADPTR, -1, 0, 0, 0, 0), NULL, 0 },
	{ "syslog", SYS_syslog, A6(0xdead, 0, 0, 0, 0, 0), NULL, 0 },
	{ "vhangup", -1, A6(0, 0, 0, 0, 0, 0), do_vhangup, 1 },
	{ "fanotify_init", SYS_fanotify_init, A6(BADFLAGS, 0, 0, 0, 0, 0), NULL, 0 },
	/* NUMA policy */
	{ "mbind", SYS_mbind, A6(0, 0, 0, 0, 0, BADFLAGS), NULL, 0 },
	{ "set_mempolicy", SYS_set_mempolicy, A6(0xffff, 0, 0, 0, 0, 0), NULL, 0 },
	{ "migrate_pages", SYS_migrate_pages, A6(0, 1L << 40, BADPTR, BADPTR, 0, 0), NULL, 0 },
	{ "move_pages", SYS_move_pages, A6(0, 1, 0, 0, 0, BADFLAGS), NULL, 0 },
	/* obsolete */
	{ "uselib", SYS_uselib, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },
	{ "ustat", SYS_ustat, A6(0, BADPTR, 0, 0, 0, 0), NULL, 0 },
	{ "sysfs", SYS_sysfs, A6(0xdead, 0, 0, 0, 0, 0), NULL, 0 },
	{ "nfsservctl", SYS_nfsservctl, A6(0, 0, 0, 0, 0, 0), NULL, 0 },
#ifdef SYS__sysctl
	{ "_sysctl", SYS__sysctl, A6(BADPTR, 0, 0, 0, 0, 0), NULL, 0 },
#endif
#if defined(__x86_64__) || defined(__i386__)
	{ "iopl", SYS_iopl, A6(4, 0, 0, 0, 0, 0), NULL, 0 },              /* level > 3: EINVAL */
	{ "ioperm", SYS_ioperm, A6(0, 0, 0, 0, 0, 0), NULL, 0 },          /* num 0: EINVAL */
	{ "modify_ldt", SYS_modify_ldt, A6(0, BADPTR, 16, 0, 0, 0), NULL, 0 },
#endif
#ifdef SYS_vm86
	{ "vm86", SYS_vm86, A6(0xdead, 0, 0, 0, 0, 0), NULL, 0 },
#endif
};

#define N_PROBES (sizeof(probes) / sizeof(probes[0]))

static void run_probe(const struct probe *p)
{
	if (p->special && p->in_child) {
		in_child(p->name, p->special);
		return;
	}
	errno = 0;
	long r = p->special ? p->special()
			    : syscall(p->nr, p->args[0], p->args[1], p->args[2], p->args[3],
				      p->args[4], p->args[5]);
	int e = errno;
	/* A probe that unexpectedly succeeded and made an fd keeps nothing open. */
	if (r >= 0 && !p->special && p->nr != SYS_getpid && p->nr != SYS_personality)
		close((int)r);
	report(p->name, r, e);
}

#ifdef __x86_64__
/* getpid through the 32-bit ABI from a 64-bit process: audit arch i386. */
static long int80_getpid(void)
{
	long r = 20;    /* i386 __NR_getpid */
	__asm__ volatile("int $0x80" : "+a"(r) : : "memory", "r8", "r9", "r10", "r11");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
#endif

static long clone_newuser(void) { return raw_clone(CLONE_NEWUSER); }
static long unshare_newuser(void) { return syscall(SYS_unshare, CLONE_NEWUSER); }

static int parse_num(const char *s, long *ret)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || end == s || *end)
		return -1;
	*ret = (long)v;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: prober SYSCALL... | --all | --list | --clone-newuser |\n"
			"       --personality X | --socket FAMILY [TYPE [PROTO]] | --int80\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < N_PROBES; i++)
			printf("%s\n", probes[i].name);
		return 0;
	}
	if (strcmp(argv[1], "--all") == 0) {
		for (size_t i = 0; i < N_PROBES; i++)
			run_probe(&probes[i]);
		return 0;
	}
	if (strcmp(argv[1], "--clone-newuser") == 0) {
		/* Each in a child: a successful unshare must not change the prober. */
		in_child("clone(CLONE_NEWUSER)", clone_newuser);
		in_child("unshare(CLONE_NEWUSER)", unshare_newuser);
		return 0;
	}
	if (strcmp(argv[1], "--personality") == 0) {
		long v;
		if (argc != 3 || parse_num(argv[2], &v) < 0)
			return usage();
		char name[64];
		snprintf(name, sizeof(name), "personality(%s)", argv[2]);
		errno = 0;
		long r = syscall(SYS_personality, v);
		report(name, r, errno);
		return 0;
	}
	if (strcmp(argv[1], "--socket") == 0) {
		long f, t = SOCK_STREAM, pr = 0;
		if (argc < 3 || argc > 5 || parse_num(argv[2], &f) < 0 ||
		    (argc > 3 && parse_num(argv[3], &t) < 0) || (argc > 4 && parse_num(argv[4], &pr) < 0))
			return usage();
		char name[96];
		snprintf(name, sizeof(name), "socket(%ld,%ld,%ld)", f, t, pr);
		long r = syscall(SYS_socket, f, t, pr);
		int e = errno;
		if (r >= 0)
			close((int)r);
		report(name, r, e);
		return 0;
	}
	if (strcmp(argv[1], "--int80") == 0) {
#ifdef __x86_64__
		/* In a child: a filter without SCMP_ARCH_X86 kills it (SIGSYS), a kernel
		 * without IA32 emulation faults it (SIGSEGV). */
		in_child("int80_getpid", int80_getpid);
#else
		printf("int80_getpid skip (not x86_64)\n");
#endif
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		size_t k;
		for (k = 0; k < N_PROBES; k++)
			if (strcmp(probes[k].name, argv[i]) == 0)
				break;
		if (k == N_PROBES) {
			fprintf(stderr, "prober: unknown syscall \"%s\" (see --list)\n", argv[i]);
			return 2;
		}
	}
	for (int i = 1; i < argc; i++)
		for (size_t k = 0; k < N_PROBES; k++)
			if (strcmp(probes[k].name, argv[i]) == 0)
				run_probe(&probes[k]);
	return 0;
}
