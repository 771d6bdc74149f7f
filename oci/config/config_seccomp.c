/* linux.seccomp: the engine's filter, checked and turned into enums here;
 * compiled with libseccomp elsewhere (seccomp-profiles/). */
#include <string.h>

#include "config_walk.h"
#include "config_seccomp.h"

#define SECCOMP_MAX_ARGS 6

static const struct {
	const char *name;
	enum oci_seccomp_action action;
} actions[] = {
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

static const struct {
	const char *name;
	enum oci_seccomp_op op;
} ops[] = {
	{ "SCMP_CMP_NE", SECCOMP_OP_NE }, { "SCMP_CMP_LT", SECCOMP_OP_LT },
	{ "SCMP_CMP_LE", SECCOMP_OP_LE }, { "SCMP_CMP_EQ", SECCOMP_OP_EQ },
	{ "SCMP_CMP_GE", SECCOMP_OP_GE }, { "SCMP_CMP_GT", SECCOMP_OP_GT },
	{ "SCMP_CMP_MASKED_EQ", SECCOMP_OP_MASKED_EQ },
};

static const char *const filter_flags[] = {
	"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

static int parse_action(struct walk *w, yajl_val v, enum oci_seccomp_action *out)
{
	char *s = NULL;
	int r = walk_str(w, v, &s);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(actions); i++) {
		if (streq(s, actions[i].name)) {
			*out = actions[i].action;
			return 1;
		}
	}
	return walk_fail(w, "unknown seccomp action \"%.100s\"", s);
}

/* errno values go into the 16-bit SECCOMP_RET_DATA. */
static int parse_errno_ret(struct walk *w, yajl_val v, unsigned *out)
{
	uint64_t x = 0;
	int r = walk_u64(w, v, 0xffff, &x);
	if (r > 0)
		*out = (unsigned)x;
	return r;
}

static bool takes_errno(enum oci_seccomp_action a)
{
	return a == SECCOMP_ACT_ERRNO_ || a == SECCOMP_ACT_TRACE_;
}

static int parse_arg(struct walk *w, yajl_val v, struct oci_seccomp_arg *a)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_index = false, has_value = false, has_op = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "index")) {
			uint64_t x = 0;
			r = walk_u64(w, val, SECCOMP_MAX_ARGS - 1, &x), a->index = (unsigned)x;
			has_index = r > 0;
		} else if (streq(k, "value"))
			r = walk_u64(w, val, UINT64_MAX, &a->value), has_value = r > 0;
		else if (streq(k, "valueTwo"))
			r = walk_u64(w, val, UINT64_MAX, &a->value_two);
		else if (streq(k, "op")) {
			char *s = NULL;
			r = walk_str(w, val, &s);
			if (r > 0) {
				size_t i = 0;
				while (i < ARRAY_SIZE(ops) && !streq(s, ops[i].name))
					i++;
				if (i == ARRAY_SIZE(ops))
					return walk_fail(w, "unknown seccomp operator \"%.100s\"", s);
				a->op = ops[i].op;
				has_op = true;
			}
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_index)
		return walk_missing(w, "index");
	if (!has_value)
		return walk_missing(w, "value");
	if (!has_op)
		return walk_missing(w, "op");
	return 1;
}

static int parse_syscall(struct walk *w, yajl_val v, struct oci_seccomp_syscall *s)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_action = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "names")) {
			r = walk_str_array(w, val, &s->names, &s->n_names);
			for (size_t i = 0; r > 0 && i < s->n_names; i++) {
				if (!*s->names[i]) {
					walk_push_index(w, i);
					return walk_fail(w, "must not be empty");
				}
			}
		} else if (streq(k, "action"))
			r = parse_action(w, val, &s->action), has_action = r > 0;
		else if (streq(k, "errnoRet"))
			r = parse_errno_ret(w, val, &s->errno_ret), s->has_errno_ret = r > 0;
		else if (streq(k, "args")) {
			r = walk_arr(w, val);
			if (r > 0) {
				s->args = arena_alloc(w->a, val->u.array.len * sizeof *s->args);
				s->n_args = val->u.array.len;
				yajl_val item;
				WALK_ITEMS(w, val, i, item)
					if (parse_arg(w, item, &s->args[i]) < 0)
						return -1;
			}
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!s->n_names) {
		walk_push_key(w, "names");
		return walk_fail(w, "must be a non-empty array of strings");
	}
	if (!has_action)
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

static bool arch_known(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(architectures); i++)
		if (streq(name, architectures[i]))
			return true;
	return false;
}

int parse_seccomp(struct walk *w, yajl_val v, struct oci_seccomp **ret)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	struct oci_seccomp *sc = arena_alloc(w->a, sizeof *sc);
	bool has_default = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "defaultAction")) {
			r = parse_action(w, val, &sc->default_action), has_default = r > 0;
			/* A notify default would hand every syscall, including the
			 * ones the supervisor itself needs, to the listener. */
			if (r > 0 && sc->default_action == SECCOMP_ACT_NOTIFY_)
				return walk_fail(w, "SCMP_ACT_NOTIFY cannot be the default action");
		} else if (streq(k, "defaultErrnoRet"))
			r = parse_errno_ret(w, val, &sc->default_errno_ret),
			sc->has_default_errno_ret = r > 0;
		else if (streq(k, "architectures")) {
			r = walk_str_array(w, val, &sc->architectures, &sc->n_architectures);
			for (size_t i = 0; r > 0 && i < sc->n_architectures; i++) {
				if (!arch_known(sc->architectures[i])) {
					walk_push_index(w, i);
					return walk_fail(w, "unknown architecture \"%.100s\"", sc->architectures[i]);
				}
			}
		} else if (streq(k, "flags")) {
			r = walk_str_array(w, val, &sc->flags, &sc->n_flags);
			for (size_t i = 0; r > 0 && i < sc->n_flags; i++) {
				bool known = false;
				for (size_t j = 0; j < ARRAY_SIZE(filter_flags); j++)
					known |= streq(sc->flags[i], filter_flags[j]);
				if (!known) {
					walk_push_index(w, i);
					return walk_fail(w, "unknown seccomp flag \"%.100s\"", sc->flags[i]);
				}
			}
		} else if (streq(k, "listenerPath"))
			r = walk_abs_path(w, val, &sc->listener_path);
		else if (streq(k, "listenerMetadata"))
			r = walk_str(w, val, &sc->listener_metadata);
		else if (streq(k, "syscalls")) {
			r = walk_arr(w, val);
			if (r > 0) {
				sc->syscalls = arena_alloc(w->a, val->u.array.len * sizeof *sc->syscalls);
				sc->n_syscalls = val->u.array.len;
				yajl_val item;
				WALK_ITEMS(w, val, i, item)
					if (parse_syscall(w, item, &sc->syscalls[i]) < 0)
						return -1;
			}
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_default)
		return walk_missing(w, "defaultAction");
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
	*ret = sc;
	return 1;
}
