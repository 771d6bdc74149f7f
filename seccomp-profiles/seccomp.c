/* OCI linux.seccomp → classic BPF through libseccomp, and loading it with the raw
 * seccomp(2) syscall.
 *
 * libseccomp only compiles here: the program is exported to memory at create time
 * (and shortened by bpf_shorten.c), so the child that loads it right before execve
 * needs neither libseccomp nor malloc, and a NOTIFY filter hands its listener fd back
 * straight from seccomp(2). */
#include <errno.h>
#include <linux/seccomp.h>
#include <libseccomp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "bpf_shorten.h"
#include "json.h"
#include "log.h"
#include "seccomp.h"
#include "seccomp_enosys.h"
#include "util.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif

/* Architectures that can share one kernel: a filter only needs the ones in the
 * native family, the kernel never reports any other. */
enum arch_family { FAM_X86, FAM_ARM, FAM_MIPS, FAM_PPC, FAM_S390, FAM_PARISC, FAM_RISCV, FAM_OTHER };

static const struct {
	const char *name;
	uint32_t token;
	enum arch_family family;
} arch_table[] = {
	{ "SCMP_ARCH_X86", SCMP_ARCH_X86, FAM_X86 },
	{ "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64, FAM_X86 },
	{ "SCMP_ARCH_X32", SCMP_ARCH_X32, FAM_X86 },
	{ "SCMP_ARCH_ARM", SCMP_ARCH_ARM, FAM_ARM },
	{ "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64, FAM_ARM },
	{ "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS, FAM_MIPS },
	{ "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64, FAM_MIPS },
	{ "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32, FAM_MIPS },
	{ "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL, FAM_MIPS },
	{ "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64, FAM_MIPS },
	{ "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32, FAM_MIPS },
	{ "SCMP_ARCH_PPC", SCMP_ARCH_PPC, FAM_PPC },
	{ "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64, FAM_PPC },
	{ "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE, FAM_PPC },
	{ "SCMP_ARCH_S390", SCMP_ARCH_S390, FAM_S390 },
	{ "SCMP_ARCH_S390X", SCMP_ARCH_S390X, FAM_S390 },
	{ "SCMP_ARCH_PARISC", SCMP_ARCH_PARISC, FAM_PARISC },
	{ "SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64, FAM_PARISC },
	{ "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64, FAM_RISCV },
	/* In the runtime-spec but newer than some libseccomp: token 0 = "not in this
	 * libseccomp", which also means it is not the native architecture here. */
#ifdef SCMP_ARCH_LOONGARCH64
	{ "SCMP_ARCH_LOONGARCH64", SCMP_ARCH_LOONGARCH64, FAM_OTHER },
#else
	{ "SCMP_ARCH_LOONGARCH64", 0, FAM_OTHER },
#endif
#ifdef SCMP_ARCH_M68K
	{ "SCMP_ARCH_M68K", SCMP_ARCH_M68K, FAM_OTHER },
#else
	{ "SCMP_ARCH_M68K", 0, FAM_OTHER },
#endif
#ifdef SCMP_ARCH_SH
	{ "SCMP_ARCH_SH", SCMP_ARCH_SH, FAM_OTHER },
	{ "SCMP_ARCH_SHEB", SCMP_ARCH_SHEB, FAM_OTHER },
#else
	{ "SCMP_ARCH_SH", 0, FAM_OTHER },
	{ "SCMP_ARCH_SHEB", 0, FAM_OTHER },
#endif
};

/* Indexed by enum oci_seccomp_action. */
static const char *const action_names[] = {
	[SECCOMP_ACT_KILL_THREAD_] = "SCMP_ACT_KILL_THREAD",
	[SECCOMP_ACT_KILL_PROCESS_] = "SCMP_ACT_KILL_PROCESS",
	[SECCOMP_ACT_TRAP_] = "SCMP_ACT_TRAP",
	[SECCOMP_ACT_ERRNO_] = "SCMP_ACT_ERRNO",
	[SECCOMP_ACT_TRACE_] = "SCMP_ACT_TRACE",
	[SECCOMP_ACT_ALLOW_] = "SCMP_ACT_ALLOW",
	[SECCOMP_ACT_LOG_] = "SCMP_ACT_LOG",
	[SECCOMP_ACT_NOTIFY_] = "SCMP_ACT_NOTIFY",
};

/* Indexed by enum oci_seccomp_op. */
static const struct {
	const char *name;
	enum scmp_compare op;
} op_table[] = {
	[SECCOMP_OP_NE] = { "SCMP_CMP_NE", SCMP_CMP_NE },
	[SECCOMP_OP_LT] = { "SCMP_CMP_LT", SCMP_CMP_LT },
	[SECCOMP_OP_LE] = { "SCMP_CMP_LE", SCMP_CMP_LE },
	[SECCOMP_OP_EQ] = { "SCMP_CMP_EQ", SCMP_CMP_EQ },
	[SECCOMP_OP_GE] = { "SCMP_CMP_GE", SCMP_CMP_GE },
	[SECCOMP_OP_GT] = { "SCMP_CMP_GT", SCMP_CMP_GT },
	[SECCOMP_OP_MASKED_EQ] = { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static const struct {
	const char *name;
	unsigned int flag;
} flag_table[] = {
	{ "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
	{ "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
	{ "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

static inline void cleanup_seccomp_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}
#define _cleanup_seccomp_ __attribute__((cleanup(cleanup_seccomp_ctx)))

static long sys_seccomp(unsigned int op, unsigned int flags, void *args)
{
	return syscall(SYS_seccomp, op, flags, args);
}

/* The kernel validates flags before it reads the (here NULL) program: EFAULT means
 * it took the flags. WAIT_KILLABLE_RECV is only valid together with NEW_LISTENER. */
static bool kernel_has_flag(unsigned int flag)
{
	if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
		flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
	if (flag == SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
		flag |= SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_NEW_LISTENER;
	return sys_seccomp(SECCOMP_SET_MODE_FILTER, flag, NULL) < 0 && errno == EFAULT;
}

static bool kernel_has_action(uint32_t ret_action)
{
	return sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &ret_action) == 0;
}

static bool kernel_has_seccomp_filter(void)
{
	/* PR_GET_SECCOMP fails with EINVAL only when the kernel lacks seccomp. */
	return (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 || errno != EINVAL) &&
	       !(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, NULL) < 0 && errno == ENOSYS);
}

static int arch_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(arch_table); i++)
		if (streq(arch_table[i].name, name))
			return (int)i;
	return -1;
}

static enum arch_family native_family(void)
{
	uint32_t native = seccomp_arch_native();
	for (size_t i = 0; i < ARRAY_SIZE(arch_table); i++)
		if (arch_table[i].token == native)
			return arch_table[i].family;
	return FAM_OTHER;
}

/* The libseccomp action value for an OCI action (+ errnoRet); `where` names the
 * JSON field in errors. */
static int action_value(enum oci_seccomp_action act, bool has_errno, unsigned errno_ret,
			const char *where, uint32_t *ret, struct ab_err *err)
{
	if ((unsigned)act >= ARRAY_SIZE(action_names) || !action_names[act])
		return ab_error(err, 0, "%s: unknown seccomp action %d", where, (int)act);
	if (has_errno && act != SECCOMP_ACT_ERRNO_ && act != SECCOMP_ACT_TRACE_)
		return ab_error(err, 0, "%s: errnoRet is only valid with SCMP_ACT_ERRNO or "
				"SCMP_ACT_TRACE, not %s", where, action_names[act]);
	/* The kernel caps errno values at MAX_ERRNO. */
	if (has_errno && errno_ret > 4095)
		return ab_error(err, 0, "%s: errnoRet %u out of range (0-4095)", where, errno_ret);
	unsigned e = has_errno ? errno_ret : EPERM;

	switch (act) {
	case SECCOMP_ACT_KILL_THREAD_: *ret = SCMP_ACT_KILL_THREAD; break;
	case SECCOMP_ACT_KILL_PROCESS_: *ret = SCMP_ACT_KILL_PROCESS; break;
	case SECCOMP_ACT_TRAP_: *ret = SCMP_ACT_TRAP; break;
	case SECCOMP_ACT_ERRNO_: *ret = SCMP_ACT_ERRNO(e); break;
	case SECCOMP_ACT_TRACE_: *ret = SCMP_ACT_TRACE(e); break;
	case SECCOMP_ACT_ALLOW_: *ret = SCMP_ACT_ALLOW; break;
	case SECCOMP_ACT_LOG_: *ret = SCMP_ACT_LOG; break;
	case SECCOMP_ACT_NOTIFY_: *ret = SCMP_ACT_NOTIFY; break;
	}
	/* Say which action the kernel lacks, rather than libseccomp's bare EOPNOTSUPP. */
	uint32_t kact = *ret & SECCOMP_RET_ACTION_FULL;
	if (!kernel_has_action(kact) && errno == EOPNOTSUPP)
		return ab_error(err, 0, "%s: %s is not supported by this kernel",
				where, action_names[act]);
	return 0;
}

/* The filter's architectures: the native one, and the listed ones that run here
 * (each added to ctx and to arches, which holds ARRAY_SIZE(arch_table) + 1). */
static int add_architectures(scmp_filter_ctx ctx, const struct oci_seccomp *s, uint32_t *arches,
			     size_t *n_arches, struct ab_err *err)
{
	enum arch_family fam = native_family();
	arches[0] = seccomp_arch_native();
	*n_arches = 1;
	for (size_t i = 0; i < s->n_architectures; i++) {
		int k = arch_lookup(s->architectures[i]);
		if (k < 0)
			return ab_error(err, 0, "linux.seccomp.architectures[%zu]: unknown architecture \"%s\"",
					i, s->architectures[i]);
		bool runs_here = arch_table[k].token == seccomp_arch_native() ||
				 (arch_table[k].token != 0 &&
				  fam != FAM_OTHER && arch_table[k].family == fam);
		if (!runs_here) {
			log_debug("seccomp: %s cannot run on this kernel, left out of the filter",
				  arch_table[k].name);
			continue;
		}
		int r = seccomp_arch_add(ctx, arch_table[k].token);
		if (r < 0 && r != -EEXIST)
			return ab_error(err, -r, "linux.seccomp.architectures[%zu]: add %s",
					i, arch_table[k].name);
		if (r == 0)
			arches[(*n_arches)++] = arch_table[k].token;
	}
	return 0;
}

static int resolve_flags(const struct oci_seccomp *s, bool notify, unsigned int *ret,
			 struct ab_err *err)
{
	unsigned int flags = 0;
	for (size_t i = 0; i < s->n_flags; i++) {
		size_t k;
		for (k = 0; k < ARRAY_SIZE(flag_table); k++)
			if (streq(flag_table[k].name, s->flags[i]))
				break;
		if (k == ARRAY_SIZE(flag_table))
			return ab_error(err, 0, "linux.seccomp.flags[%zu]: unknown flag \"%s\"",
					i, s->flags[i]);
		if (!kernel_has_flag(flag_table[k].flag)) {
			log_debug("seccomp: %s not supported by this kernel, ignored", s->flags[i]);
			continue;
		}
		flags |= flag_table[k].flag;
	}
	/* WAIT_KILLABLE_RECV only means something for a listener. */
	if ((flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !notify)
		flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	/* TSYNC with a listener needs TSYNC_ESRCH; we load from a single thread, so
	 * TSYNC alone has nothing to do and can go when ESRCH is unknown. */
	if ((flags & SECCOMP_FILTER_FLAG_TSYNC) && notify) {
		if (kernel_has_flag(SECCOMP_FILTER_FLAG_TSYNC_ESRCH))
			flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
		else
			flags &= ~SECCOMP_FILTER_FLAG_TSYNC;
	}
	*ret = flags;
	return 0;
}

/* Add one OCI syscalls[] entry. Conditions on distinct arguments are ANDed in one
 * rule; when an argument index repeats, each condition becomes its own rule (ORed),
 * as runc and crun do, since libseccomp refuses two conditions on one argument. */
static int add_rule(scmp_filter_ctx ctx, const struct oci_seccomp_syscall *sc, size_t idx,
		    uint32_t def_action, bool *notify, struct ab_err *err)
{
	char where[64];
	snprintf(where, sizeof(where), "linux.seccomp.syscalls[%zu]", idx);

	uint32_t act;
	int r = action_value(sc->action, sc->has_errno_ret, sc->errno_ret, where, &act, err);
	if (r < 0)
		return r;
	if (sc->n_names == 0)
		return ab_error(err, 0, "%s.names: must list at least one syscall", where);
	/* Bounded by the config's own size; compiling runs in the parent. */
	_cleanup_free_ struct scmp_arg_cmp *cmp = xcalloc(sc->n_args + 1, sizeof(*cmp));
	bool repeated = false;
	unsigned seen = 0;
	for (size_t i = 0; i < sc->n_args; i++) {
		const struct oci_seccomp_arg *a = &sc->args[i];
		if (a->index >= 6)
			return ab_error(err, 0, "%s.args[%zu].index: %u out of range (0-5)", where, i,
					a->index);
		if ((unsigned)a->op >= ARRAY_SIZE(op_table))
			return ab_error(err, 0, "%s.args[%zu].op: unknown operator %d", where, i,
					(int)a->op);
		if (seen & (1u << a->index))
			repeated = true;
		seen |= 1u << a->index;
		/* For MASKED_EQ, value is the mask and valueTwo the datum, as in runc. */
		cmp[i] = (struct scmp_arg_cmp){
			.arg = a->index, .op = op_table[a->op].op,
			.datum_a = a->value, .datum_b = a->value_two,
		};
	}

	/* libseccomp rejects rules that repeat the default action; they change nothing. */
	if (act == def_action)
		return 0;

	bool used = false;
	for (size_t n = 0; n < sc->n_names; n++) {
		const char *name = sc->names[n];
		int nr = seccomp_syscall_resolve_name(name);
		if (nr == __NR_SCMP_ERROR) {
			log_debug("seccomp: syscall \"%s\" unknown to libseccomp %u.%u.%u, skipped", name,
				  seccomp_version()->major, seccomp_version()->minor,
				  seccomp_version()->micro);
			continue;
		}
		if (!repeated) {
			r = seccomp_rule_add_array(ctx, act, nr, (unsigned)sc->n_args, cmp);
		} else {
			r = 0;
			for (size_t i = 0; i < sc->n_args && r == 0; i++)
				r = seccomp_rule_add_array(ctx, act, nr, 1, &cmp[i]);
		}
		if (r < 0)
			return ab_error(err, -r, "%s: add rule %s for \"%s\"", where,
					action_names[sc->action], name);
		used = true;
	}
	if (used && sc->action == SECCOMP_ACT_NOTIFY_)
		*notify = true;
	return 0;
}

/* Read the exported program back: libseccomp 2.5 only exports to an fd. */
static int export_bpf(scmp_filter_ctx ctx, struct seccomp_prog *ret, struct ab_err *err)
{
	_cleanup_close_ int fd = memfd_create("agentbox-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "memfd_create for the seccomp program");
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return ab_error(err, -r, "export seccomp program");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ab_error(err, errno, "stat exported seccomp program");
	size_t len = (size_t)st.st_size;
	if (len == 0 || len % sizeof(struct sock_filter))
		return ab_error(err, 0, "exported seccomp program has odd size %zu", len);
	size_t n = len / sizeof(struct sock_filter);
	if (n > BPF_MAXINSNS)
		return ab_error(err, 0, "seccomp program has %zu instructions, the kernel takes "
				"at most %d", n, BPF_MAXINSNS);
	_cleanup_free_ struct sock_filter *filter = xmalloc(len);
	ssize_t got = pread(fd, filter, len, 0);
	if (got != (ssize_t)len)
		return ab_error(err, got < 0 ? errno : EIO, "read exported seccomp program");
	ret->filter = TAKE_PTR(filter);
	ret->len = (unsigned short)n;
	return 0;
}

/* libseccomp's program for s; arches receives the filter's architectures. */
static int compile_raw(const struct oci_seccomp *s, struct seccomp_prog *ret, uint32_t *arches,
		       size_t *n_arches, struct ab_err *err)
{
	memset(ret, 0, sizeof(*ret));
	if (!kernel_has_seccomp_filter())
		return ab_error(err, 0, "linux.seccomp: this kernel has no seccomp filter support");

	uint32_t def;
	int r = action_value(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
			     "linux.seccomp.defaultAction", &def, err);
	if (r < 0)
		return r;
	/* The runtime still makes syscalls between loading and execve; none may wait on
	 * a listener that is not even connected yet. */
	if (s->default_action == SECCOMP_ACT_NOTIFY_)
		return ab_error(err, 0, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be "
				"the default action");

	_cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(def);
	if (!ctx)
		return ab_error(err, 0, "linux.seccomp: libseccomp refused default action %s",
				action_names[s->default_action]);
	/* Binary search over syscall numbers: a few compares per syscall, not hundreds. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	/* A syscall from an ABI the profile leaves out ends the whole process, not one
	 * thread of it (which would leave the rest hanging). */
	if (kernel_has_action(SECCOMP_RET_KILL_PROCESS))
		(void)seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

	r = add_architectures(ctx, s, arches, n_arches, err);
	if (r < 0)
		return r;

	bool notify = false;
	for (size_t i = 0; i < s->n_syscalls; i++) {
		r = add_rule(ctx, &s->syscalls[i], i, def, &notify, err);
		if (r < 0)
			return r;
	}

	unsigned int flags = 0;
	r = resolve_flags(s, notify, &flags, err);
	if (r < 0)
		return r;

	r = export_bpf(ctx, ret, err);
	if (r < 0)
		return r;
	ret->flags = flags;
	ret->notify = notify;
	return 0;
}

/* The ENOSYS stub (seccomp_enosys.c) goes in front last: bpf_shorten models
 * libseccomp's programs. */
static int add_enosys_stub(const struct oci_seccomp *s, const uint32_t *arches, size_t n_arches,
			   struct seccomp_prog *ret, struct ab_err *err)
{
	if (!seccomp_enosys_wanted(s) || seccomp_enosys_prepend(s, arches, n_arches, ret, err) == 0)
		return 0;
	seccomp_prog_free(ret);
	return -1;
}

int seccomp_compile_libseccomp(const struct oci_seccomp *s, struct seccomp_prog *ret, struct ab_err *err)
{
	uint32_t arches[ARRAY_SIZE(arch_table) + 1];
	size_t n_arches = 0;
	return compile_raw(s, ret, arches, &n_arches, err);
}

int seccomp_compile_unshortened(const struct oci_seccomp *s, struct seccomp_prog *ret, struct ab_err *err)
{
	uint32_t arches[ARRAY_SIZE(arch_table) + 1];
	size_t n_arches = 0;
	if (compile_raw(s, ret, arches, &n_arches, err) < 0)
		return -1;
	return add_enosys_stub(s, arches, n_arches, ret, err);
}

int seccomp_compile(const struct oci_seccomp *s, struct seccomp_prog *ret, struct ab_err *err)
{
	uint32_t arches[ARRAY_SIZE(arch_table) + 1];
	size_t n_arches = 0;
	int r = compile_raw(s, ret, arches, &n_arches, err);
	if (r < 0)
		return r;
	struct sock_filter *shorter;
	size_t shorter_len;
	if (bpf_shorten(ret->filter, ret->len, &shorter, &shorter_len)) {
		log_debug("seccomp: %u instructions from libseccomp, %zu after bpf_shorten",
			  ret->len, shorter_len);
		free(ret->filter);
		ret->filter = shorter;
		ret->len = (unsigned short)shorter_len;
	}
	return add_enosys_stub(s, arches, n_arches, ret, err);
}

int seccomp_prog_load(const struct seccomp_prog *prog, int *ret_notify_fd, struct ab_err *err)
{
	struct sock_fprog fprog = { .len = prog->len, .filter = prog->filter };
	unsigned int flags = prog->flags | (prog->notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0);

	if (ret_notify_fd)
		*ret_notify_fd = -1;
	long r = sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &fprog);
	if (r < 0 && errno == ENOSYS && flags == 0)
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);  /* before 3.17 */
	if (r < 0)
		return ab_error(err, errno, "load seccomp filter (%u instructions, flags %#x)",
				prog->len, flags);
	/* Without a listener, TSYNC reports the thread it could not move as r > 0. */
	if (!prog->notify && (flags & SECCOMP_FILTER_FLAG_TSYNC) && r > 0)
		return ab_error(err, 0, "load seccomp filter: thread %ld could not be synchronized", r);
	if (prog->notify) {
		if (!ret_notify_fd) {
			close((int)r);
			return ab_error(err, 0, "load seccomp filter: a NOTIFY filter needs "
					"somewhere to put its listener fd");
		}
		*ret_notify_fd = (int)r;
	}
	return 0;
}

void seccomp_prog_free(struct seccomp_prog *prog)
{
	if (!prog)
		return;
	free(prog->filter);
	memset(prog, 0, sizeof(*prog));
}

/* The message for the listener: state_json wrapped as a container process state,
 * unless it already is one. */
static char *listener_message(const char *state_json, const char *metadata, struct ab_err *err)
{
	yajl_val doc = NULL;
	if (json_parse(state_json, "container state", &doc, err) < 0)
		return NULL;
	if (!YAJL_IS_OBJECT(doc)) {
		json_free(doc);
		ab_error(err, 0, "container state: not a JSON object");
		return NULL;
	}
	if (json_get(doc, "fds") && json_get(doc, "state")) {
		json_free(doc);
		return xstrdup(state_json);
	}
	yajl_val v = json_get(doc, "ociVersion");
	yajl_val pid = json_get(doc, "pid");
	char *msg = seccomp_process_state_json(YAJL_IS_STRING(v) ? v->u.string : "1.2.0",
					       YAJL_IS_INTEGER(pid) ? (pid_t)YAJL_GET_INTEGER(pid) : 0,
					       metadata, state_json);
	json_free(doc);
	return msg;
}

static int send_listener(const char *listener_path, const char *metadata, const char *state_json,
			 int notify_fd, struct ab_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!listener_path || !*listener_path)
		return ab_error(err, 0, "SCMP_ACT_NOTIFY is used but linux.seccomp.listenerPath is not set");
	if (strlen(listener_path) >= sizeof(sa.sun_path))
		return ab_error(err, ENAMETOOLONG, "seccomp listener %s", listener_path);
	strcpy(sa.sun_path, listener_path);
	_cleanup_free_ char *text = listener_message(state_json, metadata, err);
	if (!text)
		return ab_wrap(err, "seccomp listener %s", listener_path);
	size_t len = strlen(text);

	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ab_error(err, errno, "seccomp listener %s: socket", listener_path);
	int r;
	do
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return ab_error(err, errno, "connect to seccomp listener %s", listener_path);

	/* The fd rides on the first sendmsg only, as the spec asks. */
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec iov = { .iov_base = text, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &notify_fd, sizeof(int));

	ssize_t n;
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ab_error(err, errno, "send seccomp state to %s", listener_path);
	for (size_t off = (size_t)n; off < len; off += (size_t)n) {
		n = send(fd, text + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0)
			return ab_error(err, n < 0 ? errno : EPIPE, "send seccomp state to %s",
					listener_path);
	}
	return 0;
}

int seccomp_send_notify_fd(const char *listener_path, const char *state_json, int notify_fd,
			   struct ab_err *err)
{
	return send_listener(listener_path, NULL, state_json, notify_fd, err);
}

int seccomp_send_listener(const struct oci_seccomp *s, const char *state_json, int notify_fd,
			  struct ab_err *err)
{
	return send_listener(s ? s->listener_path : NULL, s ? s->listener_metadata : NULL,
			     state_json, notify_fd, err);
}

char *seccomp_process_state_json(const char *oci_version, pid_t pid, const char *metadata,
				 const char *state_json)
{
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "ociVersion", oci_version);
	json_key(o, "fds");
	json_arr_begin(o);
	json_str(o, "seccompFd");
	json_arr_end(o);
	json_kv_int(o, "pid", pid);
	if (metadata)
		json_kv_str(o, "metadata", metadata);
	json_kv_int(o, "state", 0);     /* placeholder, replaced by state_json below */
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	/* Compact output ends in `"state":0}`: splice the ready state document in. */
	char *out = xasprintf("%.*s%s}", (int)(len - 2), text, state_json);
	json_out_free(o);
	return out;
}

/* What `features` lists as actions: the spec's names and the kernel's. */
static const struct {
	const char *name;
	uint32_t ret;
} feature_actions[] = {
	{ "SCMP_ACT_KILL", SECCOMP_RET_KILL_THREAD },
	{ "SCMP_ACT_KILL_PROCESS", SECCOMP_RET_KILL_PROCESS },
	{ "SCMP_ACT_KILL_THREAD", SECCOMP_RET_KILL_THREAD },
	{ "SCMP_ACT_TRAP", SECCOMP_RET_TRAP },
	{ "SCMP_ACT_ERRNO", SECCOMP_RET_ERRNO },
	{ "SCMP_ACT_TRACE", SECCOMP_RET_TRACE },
	{ "SCMP_ACT_ALLOW", SECCOMP_RET_ALLOW },
	{ "SCMP_ACT_LOG", SECCOMP_RET_LOG },
	{ "SCMP_ACT_NOTIFY", SECCOMP_RET_USER_NOTIF },
};

/* Only what compiles and loads here: an action the kernel lacks is refused. */
static const char *available_action(size_t i, bool enabled)
{
	return enabled && kernel_has_action(feature_actions[i].ret) ? feature_actions[i].name : NULL;
}

static const char *operator_name(size_t i, bool enabled)
{
	return op_table[i].name;
}

static const char *arch_name(size_t i, bool enabled)
{
	return arch_table[i].token ? arch_table[i].name : NULL;
}

static const char *known_flag(size_t i, bool enabled)
{
	return flag_table[i].name;
}

static const char *supported_flag(size_t i, bool enabled)
{
	return enabled && kernel_has_flag(flag_table[i].flag) ? flag_table[i].name : NULL;
}

/* key: an array of name_at(i) for i < n, those that are not NULL. */
static void name_list(struct json_out *o, const char *key, size_t n, bool enabled,
		      const char *(*name_at)(size_t i, bool enabled))
{
	json_key(o, key);
	json_arr_begin(o);
	for (size_t i = 0; i < n; i++) {
		const char *name = name_at(i, enabled);
		if (name)
			json_str(o, name);
	}
	json_arr_end(o);
}

void seccomp_features_json(struct json_out *o)
{
	bool enabled = kernel_has_seccomp_filter();
	/* The caller has opened the "seccomp" object; these are its members. */
	json_kv_bool(o, "enabled", enabled);
	name_list(o, "actions", ARRAY_SIZE(feature_actions), enabled, available_action);
	name_list(o, "operators", ARRAY_SIZE(op_table), enabled, operator_name);
	name_list(o, "archs", ARRAY_SIZE(arch_table), enabled, arch_name);
	name_list(o, "knownFlags", ARRAY_SIZE(flag_table), enabled, known_flag);
	name_list(o, "supportedFlags", ARRAY_SIZE(flag_table), enabled, supported_flag);
}
