/* seccomp-profiles/: the shipped profiles parse and compile, and, loaded into a
 * forked child, answer every syscall the way seccomp-profiles/README.md says;
 * the compiler's corner cases (MASKED_EQ, ORed conditions, flags, NOTIFY, bad
 * input); and real programs (shell, git, python3, gcc, make, node) still run
 * under them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#include "config.h"
#include "json.h"
#include "log.h"
#include "seccomp.h"
#include "util.h"

#define BADPTR 1L
#define BADFLAGS 0xffffffffL

/* ---- running code under a filter ---- */

struct result {
	long ret;
	int err;
	int sig;        /* the child died of this signal */
	int load_err;   /* seccomp_prog_load failed with this errno */
};

typedef long (*probe_fn)(const long *args);

/* Fork; in the child set no_new_privs, load progs[0..n) in order (stacked), run fn
 * and send back what it returned. */
static struct result run_under(const struct seccomp_prog *const *progs, size_t n, probe_fn fn,
			       const long *args)
{
	struct result res = { .ret = -1 };
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		struct result r = { 0 };
		struct ab_err err;
		close(p[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(120);
		for (size_t i = 0; i < n; i++) {
			if (seccomp_prog_load(progs[i], NULL, &err) < 0) {
				r.load_err = err.code ? err.code : -1;
				(void)!write(p[1], &r, sizeof(r));
				_exit(0);
			}
		}
		errno = 0;
		r.ret = fn(args);
		r.err = errno;
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	ssize_t got = read(p[0], &res, sizeof(res));
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(res)) {
		res = (struct result){ .ret = -1 };
		res.sig = WIFSIGNALED(st) ? WTERMSIG(st) : -1;
	}
	return res;
}

static long call_syscall(const long *a)
{
	return syscall(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
}

/* clone(flags) like fork: the child leaves at once. */
static long call_clone(const long *a)
{
	long r = syscall(SYS_clone, a[1] | SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	if (r > 0) {
		int e = errno;
		waitpid((pid_t)r, NULL, 0);
		errno = e;
	}
	return r;
}

/* vhangup() without a controlling terminal has nothing to hang up, should the
 * filter ever let it through. */
static long call_vhangup(const long *a)
{
	(void)a;
	if (setsid() < 0)
		return -1;
	return syscall(SYS_vhangup);
}

/* A successful socket() leaves an fd behind in a child that exits anyway. */

static void *thread_fn(void *arg) { return arg; }

static long call_thread(const long *a)
{
	(void)a;
	pthread_t t;
	int e = pthread_create(&t, NULL, thread_fn, NULL);
	if (e) {
		errno = e;
		return -1;
	}
	pthread_join(t, NULL);
	return 0;
}

static long call_fork(const long *a)
{
	(void)a;
	pid_t r = fork();
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid(r, NULL, 0);
	return r;
}

/* getpid through the i386 ABI from a 64-bit process. */
#ifdef __x86_64__
static long call_int80(const long *a)
{
	(void)a;
	long r = 20;
	__asm__ volatile("int $0x80" : "+a"(r) : : "memory", "r8", "r9", "r10", "r11");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
#endif

/* expected: 0 = succeeds, else the errno */
struct expect {
	const char *what;
	probe_fn fn;
	long args[7];   /* args[0] = syscall number for call_syscall */
	int want;
};

#define SC(nr, want, ...) { #nr, call_syscall, { SYS_##nr, __VA_ARGS__ }, want }
#define CL(what, flags, want) { what, call_clone, { 0, flags }, want }

static void check_expect(const char *profile, const struct seccomp_prog *const *progs, size_t n,
			 const struct expect *e)
{
	struct result r = run_under(progs, n, e->fn, e->args);
	if (r.sig || r.load_err) {
		ok(0, "%s: %s (child signal %d, load errno %d)", profile, e->what, r.sig, r.load_err);
		return;
	}
	char what[80];
	if (e->fn == call_syscall)
		snprintf(what, sizeof(what), "%s(%#lx, ...)", e->what, e->args[1]);
	else
		snprintf(what, sizeof(what), "%s", e->what);
	if (e->want == 0)
		ok(r.ret >= 0, "%s: %s works (ret %ld errno %d)", profile, what, r.ret, r.err);
	else
		ok(r.ret == -1 && r.err == e->want, "%s: %s -> %s (got ret %ld, %s)", profile,
		   what, strerror(e->want), r.ret, strerror(r.err));
}

/* ---- profiles ---- */

/* Parse a bare seccomp object through the config parser, as the builtin ones are. */
static struct oci_config *parse_seccomp(const char *json, struct ab_err *err)
{
	_cleanup_free_ char *doc = xasprintf("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},"
					     "\"linux\":{\"seccomp\":%s}}", json);
	struct oci_config *c = NULL;
	if (oci_config_parse(doc, "test", &c, err) < 0)
		return NULL;
	return c;
}

static int compile_json(const char *json, struct seccomp_prog *prog, struct ab_err *err)
{
	ab_err_clear(err);
	struct oci_config *c = parse_seccomp(json, err);
	if (!c)
		return -1;
	int r = seccomp_compile(c->linux_.seccomp, prog, err);
	oci_config_free(c);
	return r;
}

static const struct expect common_denied[] = {
	SC(mount, EPERM, BADPTR, BADPTR, BADPTR, 0, 0, 0),
	SC(umount2, EPERM, BADPTR, BADFLAGS),
	SC(fsopen, EPERM, BADPTR, BADFLAGS),
	SC(fsmount, EPERM, -1, BADFLAGS),
	SC(fspick, EPERM, -1, BADPTR, BADFLAGS),
	SC(fsconfig, EPERM, -1, 0xffff),
	SC(move_mount, EPERM, -1, BADPTR, -1, BADPTR, BADFLAGS),
	SC(open_tree, EPERM, -1, BADPTR, BADFLAGS),
	SC(mount_setattr, EPERM, -1, BADPTR, BADFLAGS),
	SC(pivot_root, EPERM, BADPTR, BADPTR),
	SC(setns, EPERM, -1, 0),
	SC(unshare, EPERM, CLONE_NEWUSER),
	SC(unshare, EPERM, CLONE_NEWNET),
	SC(unshare, EPERM, CLONE_NEWNS | CLONE_FILES),
	CL("clone(CLONE_NEWUSER)", CLONE_NEWUSER, EPERM),
	CL("clone(CLONE_NEWNET)", CLONE_NEWNET, EPERM),
	CL("clone(CLONE_NEWPID|CLONE_NEWNS)", CLONE_NEWPID | CLONE_NEWNS, EPERM),
	SC(clone3, ENOSYS, 0, 0),
	SC(keyctl, EPERM, 0xdead),
	SC(add_key, EPERM, 0, 0, 0, 0, 0),
	SC(request_key, EPERM, 0, 0, 0, 0),
	SC(bpf, EPERM, -1, 0, 0),
	SC(perf_event_open, EPERM, 0, 0, -1, -1, BADFLAGS),
	SC(userfaultfd, EPERM, BADFLAGS),
	SC(io_uring_setup, EPERM, 0, 0),
	SC(io_uring_enter, EPERM, -1, 0, 0, BADFLAGS, 0, 0),
	SC(io_uring_register, EPERM, -1, 0, 0, 0),
	SC(init_module, EPERM, 0, 0, 0),
	SC(finit_module, EPERM, -1, 0, BADFLAGS),
	SC(delete_module, EPERM, 0, 0),
	SC(kexec_load, EPERM, 0, 0, 0, 0xdead0000),
	SC(kexec_file_load, EPERM, -1, -1, 0, 0, BADFLAGS),
	SC(reboot, EPERM, 0, 0, 0, 0),
	SC(settimeofday, EPERM, BADPTR, 0),
	SC(clock_settime, EPERM, 0, BADPTR),
	SC(swapon, EPERM, BADPTR, BADFLAGS),
	SC(swapoff, EPERM, BADPTR),
	SC(acct, EPERM, BADPTR),
	SC(lookup_dcookie, EPERM, 0, 0, 0),
	SC(quotactl, EPERM, 0xdead, BADPTR, 0, BADPTR),
	SC(nfsservctl, EPERM, 0, 0, 0),
	SC(uselib, EPERM, BADPTR),
	SC(ustat, EPERM, 0, BADPTR),
	SC(sysfs, EPERM, 0xdead, 0, 0),
	SC(open_by_handle_at, EPERM, -1, BADPTR, 0),
	SC(sethostname, EPERM, BADPTR, -1),
	SC(setdomainname, EPERM, BADPTR, -1),
	SC(syslog, EPERM, 0xdead, 0, 0),
	{ "vhangup", call_vhangup, { 0 }, EPERM },
	SC(kcmp, EPERM, 0, 0, 0xffff, 0, 0),
	SC(pidfd_getfd, EPERM, -1, -1, BADFLAGS),
	SC(process_madvise, EPERM, -1, 0, 0, 0, BADFLAGS),
	SC(mbind, EPERM, 0, 0, 0, 0, 0, BADFLAGS),
	SC(set_mempolicy, EPERM, 0xffff, 0, 0),
	SC(migrate_pages, EPERM, 0, 1L << 40, BADPTR, BADPTR),
	SC(move_pages, EPERM, 0, 1, 0, 0, 0, BADFLAGS),
	SC(fanotify_init, EPERM, BADFLAGS, 0),
#if defined(__x86_64__) || defined(__i386__)
	SC(iopl, EPERM, 4),
	SC(ioperm, EPERM, 0, 0, 0),
#endif
	/* a syscall number no kernel has: the ENOSYS default */
	{ "syscall(1000)", call_syscall, { 1000 }, ENOSYS },
	SC(personality, ENOSYS, 0x0040000 /* ADDR_NO_RANDOMIZE */),
	/* everyday calls */
	SC(getpid, 0, 0),
	SC(write, EBADF, -1, 0, 0),
	SC(personality, 0, 0xffffffff),
	SC(personality, 0, 0),
	SC(socket, 0, AF_INET, SOCK_STREAM, 0),
	SC(socket, 0, AF_INET6, SOCK_DGRAM, 0),
	SC(socket, 0, AF_UNIX, SOCK_STREAM, 0),
	SC(socket, 0, AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */),
	SC(ioctl, EBADF, -1, 0x5401 /* TCGETS */, 0),
	SC(prctl, 0, PR_GET_DUMPABLE),
	SC(umask, 0, 022),
	CL("clone(SIGCHLD)", 0, 0),
	CL("clone(CLONE_FS|CLONE_FILES)", CLONE_FS | CLONE_FILES, 0),
	{ "fork()", call_fork, { 0 }, 0 },
	{ "pthread_create", call_thread, { 0 }, 0 },
};

static const struct expect default_only[] = {
	/* Docker's default keeps these */
	SC(ptrace, ESRCH, 2 /* PEEKDATA */, 0, 0, 0),
	SC(process_vm_readv, EINVAL, 0, 0, 0, 0, 0, 1),
	SC(process_vm_writev, EINVAL, 0, 0, 0, 0, 0, 1),
	SC(chroot, EFAULT, BADPTR),
	SC(adjtimex, EFAULT, BADPTR),
	SC(name_to_handle_at, EINVAL, -1, BADPTR, BADPTR, BADPTR, BADFLAGS),
	SC(unshare, 0, 0),
	SC(unshare, 0, CLONE_FILES),
	SC(personality, 0, 0x20000 /* UNAME26 */),
	SC(socket, EPERM, 40 /* AF_VSOCK */, SOCK_STREAM, 0),
	SC(socket, 0, AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */),
	/* the family is an int: high bits must not sneak AF_VSOCK past the rule */
	SC(socket, EAFNOSUPPORT, (long)(0x100000000ULL | 40), SOCK_STREAM, 0),
};

static const struct expect agent_only[] = {
	SC(ptrace, EPERM, 2, 0, 0, 0),
	SC(process_vm_readv, EPERM, 0, 0, 0, 0, 0, 1),
	SC(process_vm_writev, EPERM, 0, 0, 0, 0, 0, 1),
	SC(chroot, EPERM, BADPTR),
	SC(adjtimex, EPERM, BADPTR),
	SC(clock_adjtime, EPERM, 0, BADPTR),
	SC(name_to_handle_at, EPERM, -1, BADPTR, BADPTR, BADPTR, BADFLAGS),
	SC(unshare, EPERM, 0),
	SC(unshare, EPERM, CLONE_FILES),
	SC(personality, ENOSYS, 0x20000),
	SC(personality, 0, 0x0008 /* PER_LINUX32 */),
#if defined(__x86_64__) || defined(__i386__)
	SC(modify_ldt, EPERM, 0, BADPTR, 16),
#endif
	SC(socket, EAFNOSUPPORT, 40, SOCK_STREAM, 0),
	SC(socket, EAFNOSUPPORT, 17 /* AF_PACKET */, SOCK_DGRAM, 0),
	SC(socket, EAFNOSUPPORT, 38 /* AF_ALG */, SOCK_SEQPACKET, 0),
	SC(socket, EAFNOSUPPORT, (long)(0x100000000ULL | 2), SOCK_STREAM, 0),
	SC(socket, EPROTONOSUPPORT, AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */),
};

static void test_builtin(const char *name, const struct expect *only, size_t n_only,
			 struct seccomp_prog *ret_prog)
{
	struct arena a = { 0 };
	struct oci_seccomp *s = NULL;
	struct ab_err err = { 0 };

	int r = seccomp_builtin_profile(name, &a, &s, &err);
	ok(r == 0 && s, "builtin profile %s parses (%s)", name, err.msg);
	if (r < 0)
		return;
	r = seccomp_compile(s, ret_prog, &err);
	ok(r == 0 && ret_prog->len > 0 && !ret_prog->notify, "profile %s compiles: %u instructions (%s)",
	   name, ret_prog->len, err.msg);
	arena_free(&a);
	if (r < 0)
		return;

	const struct seccomp_prog *progs[] = { ret_prog };
	for (size_t i = 0; i < ARRAY_SIZE(common_denied); i++)
		check_expect(name, progs, 1, &common_denied[i]);
	for (size_t i = 0; i < n_only; i++)
		check_expect(name, progs, 1, &only[i]);
}

/* ---- compiler corner cases ---- */

static void test_compile_errors(void)
{
	struct seccomp_prog prog = { 0 };
	struct ab_err err;

	ok(seccomp_builtin_profile("nope", &(struct arena){ 0 }, &(struct oci_seccomp *){ NULL },
				   &err) < 0, "unknown builtin profile is an error");
	has_substr(err.msg, "\"nope\"", "  ... naming it");
	has_substr(err.msg, "default, agent", "  ... and listing the valid ones");

	size_t len = 0;
	const char *text = seccomp_builtin_profile_text("agent", &len);
	ok(text && len > 100 && strlen(text) == len && strstr(text, "SCMP_ACT_ERRNO"),
	   "embedded agent.json text is there, NUL-terminated");

	/* Through the parser: an action name it does not know. */
	ab_err_clear(&err);
	ok(compile_json("{\"defaultAction\":\"SCMP_ACT_BOGUS\"}", &prog, &err) < 0,
	   "bad defaultAction is refused");
	has_substr(err.msg, "SCMP_ACT_BOGUS", "  ... naming it");

	/* Structs built by hand reach the compiler's own checks. */
	char *archs[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_VAX", NULL };
	struct oci_seccomp s = { .default_action = SECCOMP_ACT_ALLOW_, .architectures = archs,
				 .n_architectures = 2 };
	ab_err_clear(&err);
	ok(seccomp_compile(&s, &prog, &err) < 0, "unknown architecture is refused");
	has_substr(err.msg, "SCMP_ARCH_VAX", "  ... naming it");
	has_substr(err.msg, "architectures[1]", "  ... and where it is");

	char *names[] = { "getpid", NULL };
	struct oci_seccomp_syscall sc = { .names = names, .n_names = 1,
					  .action = (enum oci_seccomp_action)99 };
	s = (struct oci_seccomp){ .default_action = SECCOMP_ACT_ALLOW_, .syscalls = &sc,
				  .n_syscalls = 1 };
	ab_err_clear(&err);
	ok(seccomp_compile(&s, &prog, &err) < 0, "unknown action value is refused");
	has_substr(err.msg, "syscalls[0]", "  ... naming the rule");

	sc.action = SECCOMP_ACT_ALLOW_;
	sc.has_errno_ret = true;
	sc.errno_ret = 1;
	s.default_action = SECCOMP_ACT_ERRNO_;
	ab_err_clear(&err);
	ok(seccomp_compile(&s, &prog, &err) < 0, "errnoRet on SCMP_ACT_ALLOW is refused");
	has_substr(err.msg, "errnoRet", "  ... saying why");

	sc = (struct oci_seccomp_syscall){ .names = names, .n_names = 1,
					   .action = SECCOMP_ACT_ERRNO_ };
	struct oci_seccomp_arg bad_arg = { .index = 6, .op = SECCOMP_OP_EQ };
	sc.args = &bad_arg;
	sc.n_args = 1;
	ab_err_clear(&err);
	ok(seccomp_compile(&s, &prog, &err) < 0, "argument index 6 is refused");
	has_substr(err.msg, "args[0].index", "  ... naming it");

	s = (struct oci_seccomp){ .default_action = SECCOMP_ACT_NOTIFY_ };
	ab_err_clear(&err);
	ok(seccomp_compile(&s, &prog, &err) < 0, "SCMP_ACT_NOTIFY as default action is refused");

	char *flags[] = { "SECCOMP_FILTER_FLAG_BOGUS", NULL };
	s = (struct oci_seccomp){ .default_action = SECCOMP_ACT_ALLOW_, .flags = flags, .n_flags = 1 };
	ab_err_clear(&err);
	ok(seccomp_compile(&s, &prog, &err) < 0, "unknown flag is refused");
	has_substr(err.msg, "SECCOMP_FILTER_FLAG_BOGUS", "  ... naming it");

	/* Unknown to libseccomp → skipped; same action as the default → skipped. */
	ab_err_clear(&err);
	int r = compile_json("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
			     "\"syscalls\":[{\"names\":[\"no_such_syscall_xyz\",\"getpid\"],"
			     "\"action\":\"SCMP_ACT_ALLOW\"},{\"names\":[\"getppid\"],"
			     "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38}]}", &prog, &err);
	ok(r == 0, "unknown syscall names and rules repeating the default are skipped (%s)", err.msg);
	seccomp_prog_free(&prog);

	/* Architectures of other families are left out, not refused. */
	ab_err_clear(&err);
	r = compile_json("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\","
			 "\"SCMP_ARCH_AARCH64\",\"SCMP_ARCH_PPC64LE\",\"SCMP_ARCH_S390X\"],"
			 "\"syscalls\":[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
			 &prog, &err);
	ok(r == 0, "a multi-architecture profile compiles (%s)", err.msg);
	seccomp_prog_free(&prog);
}

static long call_umask(const long *a)
{
	return syscall(SYS_umask, a[0]);
}

static void test_conditions(void)
{
	struct seccomp_prog prog = { 0 };
	struct ab_err err;

	/* MASKED_EQ: value is the mask, valueTwo the datum (runc's reading). */
	int r = compile_json("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"umask\"],"
			     "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,\"args\":[{\"index\":0,"
			     "\"value\":1792,\"valueTwo\":1280,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}",
			     &prog, &err);
	ok(r == 0, "MASKED_EQ profile compiles (%s)", err.msg);
	if (r == 0) {
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_umask, (long[]){ 0x500 });
		ok(x.ret == -1 && x.err == EACCES, "MASKED_EQ: 0x500 & 0x700 == 0x500 -> EACCES");
		x = run_under(p, 1, call_umask, (long[]){ 0x700 });
		ok(x.ret >= 0, "MASKED_EQ: 0x700 & 0x700 != 0x500 -> allowed");
		x = run_under(p, 1, call_umask, (long[]){ 0x522 });
		ok(x.ret == -1 && x.err == EACCES, "MASKED_EQ: bits outside the mask do not matter");
	}
	seccomp_prog_free(&prog);

	/* One index twice: each condition is its own rule (OR), as in runc. */
	r = compile_json("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"umask\"],"
			 "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,\"args\":["
			 "{\"index\":0,\"value\":17,\"op\":\"SCMP_CMP_EQ\"},"
			 "{\"index\":0,\"value\":34,\"op\":\"SCMP_CMP_EQ\"}]}]}", &prog, &err);
	ok(r == 0, "repeated argument index compiles (%s)", err.msg);
	if (r == 0) {
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_umask, (long[]){ 17 });
		struct result y = run_under(p, 1, call_umask, (long[]){ 34 });
		struct result z = run_under(p, 1, call_umask, (long[]){ 51 });
		ok(x.err == EACCES && y.err == EACCES && z.ret >= 0,
		   "repeated index: conditions are ORed");
	}
	seccomp_prog_free(&prog);

	/* Distinct indices in one rule are ANDed. */
	r = compile_json("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"socket\"],"
			 "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,\"args\":["
			 "{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
			 "{\"index\":1,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]}]}", &prog, &err);
	ok(r == 0, "two-argument rule compiles (%s)", err.msg);
	if (r == 0) {
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_syscall,
					    (long[7]){ SYS_socket, AF_UNIX, SOCK_DGRAM, 0 });
		struct result y = run_under(p, 1, call_syscall,
					    (long[7]){ SYS_socket, AF_UNIX, SOCK_STREAM, 0 });
		ok(x.err == EACCES && y.ret >= 0, "distinct indices: conditions are ANDed");
	}
	seccomp_prog_free(&prog);

	/* Every operator compiles and orders 64-bit values. */
	static const struct {
		const char *op;
		long v, arg;
		bool hit;
	} ops[] = {
		{ "SCMP_CMP_NE", 5, 6, true }, { "SCMP_CMP_NE", 5, 5, false },
		{ "SCMP_CMP_LT", 5, 4, true }, { "SCMP_CMP_LT", 5, 5, false },
		{ "SCMP_CMP_LE", 5, 5, true }, { "SCMP_CMP_LE", 5, 6, false },
		{ "SCMP_CMP_EQ", 5, 5, true }, { "SCMP_CMP_EQ", 5, 4, false },
		{ "SCMP_CMP_GE", 5, 5, true }, { "SCMP_CMP_GE", 5, 4, false },
		{ "SCMP_CMP_GT", 5, 6, true }, { "SCMP_CMP_GT", 5, 5, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		_cleanup_free_ char *json = xasprintf(
			"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"umask\"],"
			"\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,\"args\":[{\"index\":0,"
			"\"value\":%ld,\"op\":\"%s\"}]}]}", ops[i].v, ops[i].op);
		r = compile_json(json, &prog, &err);
		if (r < 0) {
			ok(0, "%s compiles (%s)", ops[i].op, err.msg);
			continue;
		}
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_umask, (long[]){ ops[i].arg });
		ok(ops[i].hit ? (x.ret == -1 && x.err == EACCES) : x.ret >= 0, "%s %ld vs %ld: %s",
		   ops[i].op, ops[i].v, ops[i].arg, ops[i].hit ? "matches" : "does not match");
		seccomp_prog_free(&prog);
	}

	/* Other actions: TRAP kills with SIGSYS, KILL_PROCESS with SIGSYS, LOG allows. */
	static const struct {
		const char *action;
		int sig;
	} acts[] = {
		{ "SCMP_ACT_TRAP", SIGSYS }, { "SCMP_ACT_KILL_PROCESS", SIGSYS },
		{ "SCMP_ACT_KILL", SIGSYS }, { "SCMP_ACT_LOG", 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(acts); i++) {
		_cleanup_free_ char *json = xasprintf(
			"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"umask\"],"
			"\"action\":\"%s\"}]}", acts[i].action);
		r = compile_json(json, &prog, &err);
		if (r < 0) {
			ok(0, "%s compiles (%s)", acts[i].action, err.msg);
			continue;
		}
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_umask, (long[]){ 022 });
		ok(x.sig == acts[i].sig && (acts[i].sig || x.ret >= 0), "%s: %s", acts[i].action,
		   acts[i].sig ? "child dies of SIGSYS" : "call goes through");
		seccomp_prog_free(&prog);
	}
}

/* A refusing default answers ENOSYS, not the refusal, for a syscall newer
 * than any the profile names (runc's "seccomp -ENOSYS handling"): a program
 * then falls back to the older call it knows. */
static void test_enosys_stub(void)
{
	struct seccomp_prog prog = { 0 };
	struct ab_err err;
	static const char json[] = "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":[\"SCMP_ARCH_X86_64\","
		"\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\",\"SCMP_ARCH_AARCH64\"],\"syscalls\":[{\"names\":"
		"[\"getpid\",\"exit\",\"exit_group\",\"write\",\"read\",\"close\",\"umask\"],"
		"\"action\":\"SCMP_ACT_ALLOW\"}]}";
	int r = compile_json(json, &prog, &err);
	ok(r == 0, "refusing default compiles (%s)", err.msg);
	struct seccomp_prog raw = { 0 };
	struct oci_config *c = parse_seccomp(json, &err);
	ok(c && seccomp_compile_libseccomp(c->linux_.seccomp, &raw, &err) == 0, "libseccomp's program alone");
	oci_config_free(c);
	if (r == 0) {
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_syscall, (long[]){ 1000 });
		ok(x.ret == -1 && x.err == ENOSYS, "a number above every named one: ENOSYS (got %ld, %d)", x.ret, x.err);
		x = run_under(p, 1, call_syscall, (long[]){ SYS_clone3, 0, 0 });
		ok(x.ret == -1 && x.err == ENOSYS, "clone3, newer than the profile: ENOSYS, so libc falls back");
		x = run_under(p, 1, call_syscall, (long[]){ SYS_mkdir, (long)"/nonexistent/x", 0700 });
		ok(x.ret == -1 && x.err == EPERM, "an older syscall it does not name: the default, EPERM");
		x = run_under(p, 1, call_syscall, (long[]){ SYS_getpid });
		ok(x.ret > 0, "a named one: its action");
	}
	/* the stub is in front of libseccomp's program, and only for refusing defaults */
	ok(prog.len > raw.len, "the stub adds instructions (%u over %u)", prog.len, raw.len);
	seccomp_prog_free(&prog);
	seccomp_prog_free(&raw);
	static const char *const no_stub[] = {
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"syscalls\":[{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ALLOW\"}]}",
	};
	for (size_t i = 0; i < ARRAY_SIZE(no_stub); i++) {
		struct seccomp_prog a = { 0 }, b = { 0 };
		c = parse_seccomp(no_stub[i], &err);
		ok(c && seccomp_compile_unshortened(c->linux_.seccomp, &a, &err) == 0 &&
		   seccomp_compile_libseccomp(c->linux_.seccomp, &b, &err) == 0 && a.len == b.len,
		   "no stub where unknown syscalls get ENOSYS anyway (%zu)", i);
		oci_config_free(c);
		seccomp_prog_free(&a);
		seccomp_prog_free(&b);
	}
}

static void test_flags(void)
{
	struct seccomp_prog prog = { 0 };
	struct ab_err err;
	int r = compile_json("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":["
			     "\"SECCOMP_FILTER_FLAG_LOG\",\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\","
			     "\"SECCOMP_FILTER_FLAG_TSYNC\",\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],"
			     "\"syscalls\":[{\"names\":[\"umask\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
			     &prog, &err);
	ok(r == 0, "profile with flags compiles (%s)", err.msg);
	ok((prog.flags & SECCOMP_FILTER_FLAG_LOG) && (prog.flags & SECCOMP_FILTER_FLAG_SPEC_ALLOW) &&
	   (prog.flags & SECCOMP_FILTER_FLAG_TSYNC), "LOG, SPEC_ALLOW and TSYNC reach prog->flags (%#x)",
	   prog.flags);
	ok(!(prog.flags & (1u << 5)), "WAIT_KILLABLE_RECV is dropped without a listener");
	if (r == 0) {
		const struct seccomp_prog *p[] = { &prog };
		struct result x = run_under(p, 1, call_umask, (long[]){ 022 });
		ok(x.ret == -1 && x.err == EPERM && !x.load_err, "filter with flags loads and works");
	}
	seccomp_prog_free(&prog);
}

static bool str_is(yajl_val v, const char *s)
{
	return v && YAJL_IS_STRING(v) && strcmp(v->u.string, s) == 0;
}

/* ---- NOTIFY: listener fd, the state message, and a full round trip ---- */

static int listen_at(const char *path)
{
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 4) < 0)
		abort();
	return ls;
}

/* Accept one connection; return the received fd (or -1) and the text until EOF. */
static int recv_listener(int ls, char *buf, size_t size)
{
	int cs = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			      .msg_controllen = sizeof(ctl.b) };
	ssize_t n = cs >= 0 ? recvmsg(cs, &msg, MSG_CMSG_CLOEXEC) : -1;
	int fd = -1;
	struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	size_t total = n > 0 ? (size_t)n : 0;
	while (n > 0 && total < size - 1) {
		n = read(cs, buf + total, size - 1 - total);
		if (n > 0)
			total += (size_t)n;
	}
	buf[total] = 0;
	if (cs >= 0)
		close(cs);
	return fd;
}

/* The message a listener gets, without any filter: sent to a socket of our own. */
static void test_listener_message(const char *dir)
{
	_cleanup_free_ char *path = xasprintf("%s/msg.sock", dir);
	int ls = listen_at(path);
	char buf[4096] = "";
	struct ab_err err = { 0 };
	yajl_val doc = NULL;

	int r = seccomp_send_notify_fd(path, "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":"
				       "\"creating\",\"pid\":4321,\"bundle\":\"/b\"}", 0, &err);
	int fd = r == 0 ? recv_listener(ls, buf, sizeof(buf)) : -1;
	ok(r == 0 && fd >= 0, "container state goes out with an fd (%s)", err.msg);
	if (fd >= 0)
		close(fd);
	if (r == 0 && json_parse(buf, "msg", &doc, &err) == 0) {
		yajl_val pid = json_get(doc, "pid");
		ok(YAJL_IS_INTEGER(pid) && YAJL_GET_INTEGER(pid) == 4321 &&
		   str_is(json_get(doc, "ociVersion"), "1.2.0") && !json_get(doc, "metadata") &&
		   str_is(json_get(json_get(doc, "state"), "id"), "c1"),
		   "... wrapped as a container process state: %s", buf);
		json_free(doc);
	} else {
		ok(0, "... wrapped as a container process state: %s", buf);
	}

	_cleanup_free_ char *ready = seccomp_process_state_json("1.2.0", 7, "m", "{\"id\":\"c2\"}");
	r = seccomp_send_notify_fd(path, ready, 0, &err);
	fd = r == 0 ? recv_listener(ls, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	is_str(buf, ready, "a ready container process state goes out as is");

	ab_err_clear(&err);
	ok(seccomp_send_notify_fd(NULL, "{}", 0, &err) < 0, "no listenerPath is an error");
	has_substr(err.msg, "listenerPath", "  ... saying so");
	ab_err_clear(&err);
	ok(seccomp_send_notify_fd(path, "not json", 0, &err) < 0, "a broken state is an error");
	ab_err_clear(&err);
	ok(seccomp_send_notify_fd("/nonexistent/agentbox.sock", "{}", 0, &err) < 0,
	   "send to a missing listener fails");
	has_substr(err.msg, "/nonexistent/agentbox.sock", "  ... naming the path");
	close(ls);
	unlink(path);
}

static void test_notify(void)
{
	char dir[] = "/tmp/ab-seccomp-XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	test_listener_message(dir);

	_cleanup_free_ char *path = xasprintf("%s/listener.sock", dir);
	_cleanup_free_ char *json = xasprintf(
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"%s\","
		"\"listenerMetadata\":\"hello\",\"flags\":[\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],"
		"\"syscalls\":[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}", path);
	struct seccomp_prog prog = { 0 };
	struct ab_err err = { 0 };
	struct oci_config *c = parse_seccomp(json, &err);
	int r = c ? seccomp_compile(c->linux_.seccomp, &prog, &err) : -1;
	ok(r == 0 && prog.notify, "NOTIFY profile compiles and sets prog->notify (%s)", err.msg);
	if (r < 0)
		goto out;

	int ls = listen_at(path);
	pid_t pid = fork();
	if (pid == 0) {
		int nfd = -1;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_prog_load(&prog, &nfd, &err) < 0)
			_exit(10);
		if (nfd < 0)
			_exit(11);
		_cleanup_free_ char *state = xasprintf(
			"{\"ociVersion\":\"1.2.0\",\"id\":\"t1\",\"status\":\"creating\",\"pid\":%d,"
			"\"bundle\":\"/b\"}", getpid());
		if (seccomp_send_listener(c->linux_.seccomp, state, nfd, &err) < 0)
			_exit(12);
		close(nfd);
		/* The listener answers 4242 for us. */
		_exit(syscall(SYS_getppid) == 4242 ? 0 : 13);
	}
	alarm(30);  /* a broken round trip must fail the test, not hang it */
	char buf[4096];
	int lfd = recv_listener(ls, buf, sizeof(buf));
	ok(lfd >= 0, "listener receives the seccomp fd over SCM_RIGHTS");
	yajl_val doc = NULL;
	ok(json_parse(buf, "state", &doc, &err) == 0, "container process state is JSON: %s", buf);
	if (doc) {
		yajl_val fds = json_get(doc, "fds");
		yajl_val st = json_get(doc, "state");
		ok(YAJL_IS_ARRAY(fds) && fds->u.array.len == 1 &&
		   str_is(fds->u.array.values[0], "seccompFd"), "fds is [\"seccompFd\"]");
		ok(YAJL_IS_OBJECT(st) && str_is(json_get(st, "id"), "t1"),
		   "state carries the container state");
		ok(str_is(json_get(doc, "metadata"), "hello"), "listenerMetadata goes out as metadata");
		ok(YAJL_IS_INTEGER(json_get(doc, "pid")) && YAJL_GET_INTEGER(json_get(doc, "pid")) == pid,
		   "pid is the process's");
		json_free(doc);
	}

	if (lfd >= 0) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		memset(&req, 0, sizeof(req));
		r = ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req);
		ok(r == 0 && req.data.nr == SYS_getppid, "listener gets the getppid notification");
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.val = 4242;
		r = ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		ok(r == 0, "listener answers it (%s)", r < 0 ? strerror(errno) : "ok");
		close(lfd);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	alarm(0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the process sees the listener's answer (status %#x)",
	   st);
	close(ls);
out:
	oci_config_free(c);
	seccomp_prog_free(&prog);
	unlink(path);
	rmdir(dir);
}

static void test_features(void)
{
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_key(o, "seccomp");
	json_obj_begin(o);
	seccomp_features_json(o);
	json_obj_end(o);
	json_obj_end(o);
	const char *text = json_out_text(o, NULL);
	struct ab_err err;
	yajl_val doc = NULL;
	ok(json_parse(text, "features", &doc, &err) == 0, "features seccomp object is JSON");
	yajl_val s = doc ? json_get(doc, "seccomp") : NULL;
	ok(s && YAJL_IS_TRUE(json_get(s, "enabled")), "seccomp is enabled");
	has_substr(text, "\"SCMP_ACT_NOTIFY\"", "actions list SCMP_ACT_NOTIFY");
	has_substr(text, "\"SCMP_CMP_MASKED_EQ\"", "operators list SCMP_CMP_MASKED_EQ");
	has_substr(text, "\"SCMP_ARCH_X86_64\"", "archs list SCMP_ARCH_X86_64");
	has_substr(text, "\"supportedFlags\":[\"SECCOMP_FILTER_FLAG_TSYNC\"", "supportedFlags probed");
	has_substr(text, "\"knownFlags\":[\"SECCOMP_FILTER_FLAG_TSYNC\",\"SECCOMP_FILTER_FLAG_LOG\","
		   "\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\",\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"]",
		   "knownFlags lists all four");
	json_free(doc);
	json_out_free(o);
}

/* ---- real programs under the profiles ---- */

static int run_exec(const struct seccomp_prog *const *progs, size_t n, const char *script)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct ab_err err;
		/* Their output goes to stderr, out of the TAP stream. */
		dup2(2, 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(120);
		for (size_t i = 0; i < n; i++)
			if (seccomp_prog_load(progs[i], NULL, &err) < 0)
				_exit(121);
		execl("/bin/sh", "sh", "-ec", script, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static bool have(const char *tool)
{
	_cleanup_free_ char *cmd = xasprintf("command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static void test_real_world(const char *profile, const struct seccomp_prog *const *progs, size_t n)
{
	char dir[] = "/tmp/ab-seccomp-rw-XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	static const struct {
		const char *tool;
		const char *script;
	} jobs[] = {
		{ "sh", "echo hi | cat >/dev/null; x=$(ls /); test -n \"$x\"" },
		{ "git", "git --version; python3 -c 'import threading,subprocess; print(1)'" },
		{ "git", "cd \"$D\" && git init -q r && cd r && echo x > f && git add f && "
			 "git -c user.email=a@b -c user.name=n commit -qm x && git log --oneline | grep -q x" },
		{ "python3", "python3 -c 'import threading, subprocess, multiprocessing, socket, os\n"
			     "t = threading.Thread(target=print, args=(1,)); t.start(); t.join()\n"
			     "subprocess.run([\"true\"], check=True)\n"
			     "with multiprocessing.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]\n"
			     "s = socket.socket(socket.AF_INET6); s.close()\n"
			     "r, w = os.pipe(); os.write(w, b\"x\"); assert os.read(r, 1) == b\"x\"'" },
		{ "python3", "python3 -m pip --version" },
		{ "gcc", "gcc --version" },
		{ "gcc", "cd \"$D\" && printf '#include <stdio.h>\\n#include <pthread.h>\\n"
			 "static void *f(void *a) { return a; }\\n"
			 "int main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0);"
			 " puts(\"ok\"); return 0; }\\n' > t.c && gcc -O2 -pthread -o t t.c && ./t" },
		{ "make", "cd \"$D\" && printf 'all:\\n\\t@echo made\\n' > Makefile && make -s" },
		{ "node", "node -e 'require(\"child_process\").execFileSync(\"true\");"
			  "require(\"fs\").readdirSync(\"/\"); new (require(\"worker_threads\").Worker)"
			  "(\"1\", {eval: true}).on(\"exit\", c => process.exit(c))'" },
		{ "npm", "npm --version" },
	};
	setenv("D", dir, 1);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		if (!have(jobs[i].tool) || (strstr(jobs[i].script, "python3") && !have("python3"))) {
			printf("ok %d - # SKIP %s: %s not installed\n", ++tap_n, profile, jobs[i].tool);
			continue;
		}
		int st = run_exec(progs, n, jobs[i].script);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s runs (%.60s...) status %#x", profile,
		   jobs[i].tool, jobs[i].script, st);
	}
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	(void)!system(rm);
}

/* tests/helper/prober, built or not: its answers under each profile must match the
 * tables above, or the integration tests that use it would test nothing. */
static const char *const prober_allowed_everywhere[] = {
	"getpid", "write", "fork", "clone", "personality", "socket", "ioctl",
};
static const char *const prober_allowed_default[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "chroot", "adjtimex", "clock_adjtime",
	"name_to_handle_at", "modify_ldt",
};

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (streq(name, list[i]))
			return true;
	return false;
}

static void test_prober(const char *profile, const struct seccomp_prog *prog, bool is_default)
{
	const char *prober = "tests/helper/prober";
	if (access(prober, X_OK) < 0) {
		printf("ok %d - # SKIP %s: %s not built (gcc -static -O2 -o %s %s.c)\n", ++tap_n,
		       profile, prober, prober, prober);
		return;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		struct ab_err err;
		dup2(p[1], 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_prog_load(prog, NULL, &err) < 0)
			_exit(120);
		execl(prober, "prober", "--all", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char out[16384];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(out) - 1 && (n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: prober --all runs", profile);

	int bad = 0, lines = 0;
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		int e = 0;
		lines++;
		if (sscanf(line, "%63s errno=%d", name, &e) < 1)
			continue;
		bool allowed = in_list(name, prober_allowed_everywhere, ARRAY_SIZE(prober_allowed_everywhere)) ||
			  (is_default && in_list(name, prober_allowed_default,
						 ARRAY_SIZE(prober_allowed_default)));
		bool refused = strstr(line, "errno=1 (") || strstr(line, "errno=38 (");
		/* clone3 is refused with ENOSYS in both profiles. */
		if (streq(name, "clone3"))
			allowed = false;
		if (allowed == refused) {
			printf("#   %s: unexpected: %s\n", profile, line);
			bad++;
		}
	}
	ok(bad == 0 && lines > 50, "%s: prober sees every refusal and nothing else (%d lines)", profile,
	   lines);
}

/* The i386 ABI is outside the agent profile: the process dies, it does not get
 * to try 32-bit syscalls. Skipped where the kernel has no working int $0x80. */
static void test_compat_abi(const struct seccomp_prog *def, const struct seccomp_prog *agent)
{
#ifdef __x86_64__
	struct result bare = run_under(NULL, 0, call_int80, NULL);
	if (bare.sig || bare.ret < 0) {
		printf("ok %d - # SKIP int $0x80 does not work on this kernel (signal %d)\n", ++tap_n,
		       bare.sig);
		printf("ok %d - # SKIP ditto\n", ++tap_n);
		return;
	}
	const struct seccomp_prog *pa[] = { agent }, *pd[] = { def };
	struct result a = run_under(pa, 1, call_int80, NULL);
	ok(a.sig == SIGSYS, "agent: i386 getpid via int $0x80 kills the process (signal %d)", a.sig);
	struct result d = run_under(pd, 1, call_int80, NULL);
	ok(d.sig == 0 && d.ret > 0, "default: i386 getpid via int $0x80 works");
#else
	(void)def;
	(void)agent;
#endif
}

int main(void)
{
	log_init(NULL, false, false);
	if (access("/proc/self/status", R_OK) == 0) {
		/* Already under a filter that refuses what we probe? Say so. */
		FILE *f = fopen("/proc/self/status", "r");
		char line[256];
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "Seccomp:", 8) == 0 && atoi(line + 8) != 0)
				printf("# note: this test already runs under seccomp mode %d\n",
				       atoi(line + 8));
		if (f)
			fclose(f);
	}

	struct seccomp_prog def = { 0 }, agent = { 0 };
	test_builtin("default", default_only, ARRAY_SIZE(default_only), &def);
	test_builtin("agent", agent_only, ARRAY_SIZE(agent_only), &agent);

	test_compile_errors();
	test_conditions();
	test_enosys_stub();
	test_flags();
	test_notify();
	test_features();

	if (def.len && agent.len) {
		test_compat_abi(&def, &agent);
		test_prober("default", &def, true);
		test_prober("agent", &agent, false);
		const struct seccomp_prog *pd[] = { &def }, *pa[] = { &agent },
					  *stacked[] = { &def, &agent };
		test_real_world("default", pd, 1);
		test_real_world("agent", pa, 1);
		test_real_world("default+agent", stacked, 2);
	}
	seccomp_prog_free(&def);
	seccomp_prog_free(&agent);
	return tap_done();
}
