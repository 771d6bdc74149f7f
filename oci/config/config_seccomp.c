/* linux.seccomp: the engine's filter, checked and turned into enums here;
 * compiled with libseccomp elsewhere (seccomp-profiles/). */
#include <string.h>

#include "config_walk.h"
#include "config_seccomp.h"

#define SECCOMP_MAX_ARGS 6

static const struct walk_name actions[] = {
	{ "SCMP_ACT_KILL", SECCOMP_ACT_KILL_THREAD_ },  /* the old name of KILL_THREAD */
	{ "SCMP_ACT_KILL_THREAD", SECCOMP_ACT_KILL_THREAD_ },
	{ "SCMP_ACT_KILL_PROCESS", SECCOMP_ACT_KILL_PROCESS_ },
	{ "SCMP_ACT_TRAP", SECCOMP_ACT_TRAP_ },
	{ "SCMP_ACT_ERRNO", SECCOMP_ACT_ERRNO_ },
	{ "SCMP_ACT_TRACE", SECCOMP_ACT_TRACE_ },
	{ "SCMP_ACT_ALLOW", SECCOMP_ACT_ALLOW_ },
	{ "SCMP_ACT_LOG", SECCOMP_ACT_LOG_ },
	{ "SCMP_ACT_NOTIFY", SECCOMP_ACT_NOTIFY_ },
};

static const struct walk_name ops[] = {
	{ "SCMP_CMP_NE", SECCOMP_OP_NE }, { "SCMP_CMP_LT", SECCOMP_OP_LT },
	{ "SCMP_CMP_LE", SECCOMP_OP_LE }, { "SCMP_CMP_EQ", SECCOMP_OP_EQ },
	{ "SCMP_CMP_GE", SECCOMP_OP_GE }, { "SCMP_CMP_GT", SECCOMP_OP_GT },
	{ "SCMP_CMP_MASKED_EQ", SECCOMP_OP_MASKED_EQ },
};

static const char *const filter_flags[] = {
	"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

static int parse_action(struct walk *w, yajl_val v, void *at)
{
	int action;
	int r = walk_name(w, v, actions, ARRAY_SIZE(actions), "seccomp action", NULL, &action);
	if (r > 0)
		*(enum oci_seccomp_action *)at = action;
	return r;
}

static bool takes_errno(enum oci_seccomp_action a)
{
	return a == SECCOMP_ACT_ERRNO_ || a == SECCOMP_ACT_TRACE_;
}

static int parse_op(struct walk *w, yajl_val v, void *at)
{
	int op;
	int r = walk_name(w, v, ops, ARRAY_SIZE(ops), "seccomp operator", NULL, &op);
	if (r > 0)
		*(enum oci_seccomp_op *)at = op;
	return r;
}

#define ARG struct oci_seccomp_arg
static const struct walk_field arg_fields[] = {
	{ "index", WF_U32(ARG, index, SECCOMP_MAX_ARGS - 1), .required = true },
	{ "value", WF_U64(ARG, value, UINT64_MAX), .required = true },
	{ "valueTwo", WF_U64(ARG, value_two, UINT64_MAX) },
	{ "op", WF_CUSTOM(ARG, op, parse_op), .required = true },
	{ 0 },
};
#undef ARG

static int parse_syscall_names(struct walk *w, yajl_val v, void *at)
{
	struct oci_seccomp_syscall *s = at;
	int r = walk_str_array(w, v, &s->names, &s->n_names);
	for (size_t i = 0; r > 0 && i < s->n_names; i++) {
		if (!*s->names[i]) {
			walk_push_index(w, i);
			return walk_fail(w, "must not be empty");
		}
	}
	return r;
}

#define SYSCALL struct oci_seccomp_syscall
enum { SYSCALL_ACTION = 1 };    /* its place in syscall_fields */
/* errno values go into the 16-bit SECCOMP_RET_DATA. */
static const struct walk_field syscall_fields[] = {
	{ "names", WF_PARSE(parse_syscall_names) },
	[SYSCALL_ACTION] = { "action", WF_CUSTOM(SYSCALL, action, parse_action) },
	{ "errnoRet", WF_U32(SYSCALL, errno_ret, 0xffff), WF_HAS(SYSCALL, has_errno_ret) },
	{ "args", WF_LIST(SYSCALL, args, n_args, struct oci_seccomp_arg), .fields = arg_fields },
	{ 0 },
};
#undef SYSCALL

static int parse_syscall(struct walk *w, yajl_val v, void *at)
{
	struct oci_seccomp_syscall *s = at;
	uint64_t seen;
	int r = walk_fields(w, v, syscall_fields, s, &seen);
	if (r <= 0)
		return r;
	if (!s->n_names) {
		walk_push_key(w, "names");
		return walk_fail(w, "must be a non-empty array of strings");
	}
	if (!WF_SEEN(seen, SYSCALL_ACTION))
		return walk_missing(w, "action");
	if (s->has_errno_ret && !takes_errno(s->action)) {
		walk_push_key(w, "errnoRet");
		return walk_fail(w, "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE");
	}
	/* The runtime writes after the filter is in (its messages to the parent,
	 * the log) and before a listener may answer: write must not wait on one,
	 * as runc refuses too. */
	for (size_t i = 0; s->action == SECCOMP_ACT_NOTIFY_ && i < s->n_names; i++) {
		if (streq(s->names[i], "write")) {
			walk_push_key(w, "names");
			walk_push_index(w, i);
			return walk_fail(w, "SCMP_ACT_NOTIFY cannot be used for the write syscall");
		}
	}
	return 1;
}

/* The spec's architectures plus the ones libseccomp added since. Checked by
 * name here (<seccomp.h> is shadowed by our seccomp-profiles/seccomp.h on the
 * include path, and the compiler resolves them for real anyway). */
static const char *const architectures[] = {
	"SCMP_ARCH_X86",      "SCMP_ARCH_X86_64",    "SCMP_ARCH_X32",      "SCMP_ARCH_ARM",
	"SCMP_ARCH_AARCH64",  "SCMP_ARCH_MIPS",      "SCMP_ARCH_MIPS64",   "SCMP_ARCH_MIPS64N32",
	"SCMP_ARCH_MIPSEL",   "SCMP_ARCH_MIPSEL64",  "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
	"SCMP_ARCH_PPC64",    "SCMP_ARCH_PPC64LE",   "SCMP_ARCH_S390",     "SCMP_ARCH_S390X",
	"SCMP_ARCH_PARISC",   "SCMP_ARCH_PARISC64",  "SCMP_ARCH_RISCV64",  "SCMP_ARCH_LOONGARCH64",
	"SCMP_ARCH_M68K",     "SCMP_ARCH_SH",        "SCMP_ARCH_SHEB",
};

/* A notify default would hand every syscall, including the ones the
 * supervisor itself needs, to the listener. */
static int parse_default_action(struct walk *w, yajl_val v, void *at)
{
	int r = parse_action(w, v, at);
	if (r > 0 && *(enum oci_seccomp_action *)at == SECCOMP_ACT_NOTIFY_)
		return walk_fail(w, "SCMP_ACT_NOTIFY cannot be the default action");
	return r;
}

static int parse_architectures(struct walk *w, yajl_val v, void *at)
{
	struct oci_seccomp *sc = at;
	return walk_known_strs(w, v, architectures, ARRAY_SIZE(architectures), "architecture",
			       &sc->architectures, &sc->n_architectures);
}

static int parse_filter_flags(struct walk *w, yajl_val v, void *at)
{
	struct oci_seccomp *sc = at;
	return walk_known_strs(w, v, filter_flags, ARRAY_SIZE(filter_flags), "seccomp flag", &sc->flags,
			       &sc->n_flags);
}

#define SC struct oci_seccomp
static const struct walk_field seccomp_fields[] = {
	{ "defaultAction", WF_CUSTOM(SC, default_action, parse_default_action), .required = true },
	{ "defaultErrnoRet", WF_U32(SC, default_errno_ret, 0xffff), WF_HAS(SC, has_default_errno_ret) },
	{ "architectures", WF_PARSE(parse_architectures) },
	{ "flags", WF_PARSE(parse_filter_flags) },
	{ "listenerPath", WF_ABS_PATH(SC, listener_path) },
	{ "listenerMetadata", WF_STR(SC, listener_metadata) },
	{ "syscalls", WF_LIST(SC, syscalls, n_syscalls, struct oci_seccomp_syscall), .parse = parse_syscall },
	{ 0 },
};
#undef SC

int parse_seccomp(struct walk *w, yajl_val v, void *at)
{
	if (YAJL_IS_NULL(v))
		return 0;
	struct oci_seccomp *sc = arena_alloc(w->a, sizeof *sc);
	int r = walk_fields(w, v, seccomp_fields, sc, NULL);
	if (r < 0)
		return r;
	if (sc->has_default_errno_ret && !takes_errno(sc->default_action)) {
		walk_push_key(w, "defaultErrnoRet");
		return walk_fail(w, "only valid with a defaultAction of SCMP_ACT_ERRNO or SCMP_ACT_TRACE");
	}
	if (!sc->listener_path) {
		for (size_t i = 0; i < sc->n_syscalls; i++) {
			if (sc->syscalls[i].action == SECCOMP_ACT_NOTIFY_) {
				walk_push_key(w, "listenerPath");
				return walk_fail(w, "missing (syscalls[%zu] uses SCMP_ACT_NOTIFY)", i);
			}
		}
	}
	*(struct oci_seccomp **)at = sc;
	return 1;
}
