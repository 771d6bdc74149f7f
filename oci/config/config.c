/* config.json (OCI runtime-spec 1.2, Linux): the top level, process, root,
 * hooks and annotations, and the public entry points. linux.* lives in
 * config_linux.c, resources in config_resources.c, seccomp in
 * config_seccomp.c, mounts in config_mounts.c. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>

#include "config_walk.h"
#include "config_linux.h"
#include "config_mounts.h"
#include "config_resources.h"
#include "json.h"

#define CONFIG_MAX_SIZE (16u << 20)

/* ---- process ---- */

#define PROC struct oci_process

static int parse_additional_gids(struct walk *w, yajl_val v, void *at)
{
	struct oci_user *u = at;
	int r = walk_arr(w, v);
	if (r > 0) {
		u->additional_gids = arena_alloc(w->a, v->u.array.len * sizeof(uint32_t));
		u->n_additional_gids = v->u.array.len;
		yajl_val g;
		WALK_ITEMS(w, v, i, g) {
			r = walk_u32(w, g, &u->additional_gids[i]);
			if (r == 0)
				return walk_fail(w, "expected an integer, got null");
			if (r < 0)
				return r;
		}
	}
	return r;
}

static const struct walk_field user_fields[] = {
	{ "uid", WF_U32(struct oci_user, uid, UINT32_MAX), .required = true },
	{ "gid", WF_U32(struct oci_user, gid, UINT32_MAX), .required = true },
	{ "umask", WF_U32(struct oci_user, umask, 0777), WF_HAS(struct oci_user, has_umask) },
	{ "additionalGids", WF_PARSE(parse_additional_gids) },
	{ "username", WF_STR(struct oci_user, username) },
	{ 0 },
};

static int parse_cap_set(struct walk *w, yajl_val v, void *at)
{
	uint64_t *mask = at;
	char **names = NULL;
	size_t n = 0;
	int r = walk_str_array(w, v, &names, &n);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		cap_value_t cap;
		/* cap_from_name also takes lower case and bare numbers; the spec
		 * only knows the CAP_ names. */
		if (strncmp(names[i], "CAP_", 4) != 0 || cap_from_name(names[i], &cap) < 0 ||
		    cap < 0 || cap >= 64) {
			walk_push_index(w, i);
			return walk_fail(w, "unknown capability \"%.100s\"", names[i]);
		}
		*mask |= UINT64_C(1) << cap;
	}
	return 1;
}

static const struct walk_field capabilities_fields[] = {
	{ "bounding", WF_CUSTOM(struct oci_capabilities, bounding, parse_cap_set) },
	{ "effective", WF_CUSTOM(struct oci_capabilities, effective, parse_cap_set) },
	{ "inheritable", WF_CUSTOM(struct oci_capabilities, inheritable, parse_cap_set) },
	{ "permitted", WF_CUSTOM(struct oci_capabilities, permitted, parse_cap_set) },
	{ "ambient", WF_CUSTOM(struct oci_capabilities, ambient, parse_cap_set) },
	{ 0 },
};

static const struct walk_name rlimit_names[] = {
	{ "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

static int parse_rlimit_type(struct walk *w, yajl_val v, void *at)
{
	struct oci_rlimit *rl = at;
	return walk_name(w, v, rlimit_names, ARRAY_SIZE(rlimit_names), "rlimit", &rl->type, &rl->resource);
}

static const struct walk_field rlimit_fields[] = {
	{ "type", WF_PARSE(parse_rlimit_type), .required = true },
	{ "soft", WF_U64(struct oci_rlimit, soft, UINT64_MAX), .required = true },
	{ "hard", WF_U64(struct oci_rlimit, hard, UINT64_MAX), .required = true },
	{ 0 },
};

static int parse_rlimit(struct walk *w, yajl_val v, void *at)
{
	struct oci_rlimit *rl = at;
	int r = walk_fields(w, v, rlimit_fields, rl, NULL);
	if (r <= 0)
		return r;
	if (rl->soft > rl->hard)
		return walk_fail(w, "soft limit %llu is above the hard limit %llu",
				 (unsigned long long)rl->soft, (unsigned long long)rl->hard);
	return 1;
}

static int rlimit_unique(struct walk *w, const void *items, size_t i)
{
	const struct oci_rlimit *rl = items;
	for (size_t j = 0; j < i; j++)
		if (rl[j].resource == rl[i].resource)
			return walk_fail(w, "duplicate rlimit %s (also at index %zu)", rl[i].type, j);
	return 0;
}

static const struct walk_name sched_policies[] = {
	{ "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },     { "SCHED_BATCH", 3 },
	{ "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 },
};

static const char *const sched_flags[] = {
	"SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM",     "SCHED_FLAG_DL_OVERRUN",
	"SCHED_FLAG_KEEP_POLICY",   "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
	"SCHED_FLAG_UTIL_CLAMP_MAX",
};

static int parse_sched_policy(struct walk *w, yajl_val v, void *at)
{
	struct oci_scheduler *s = at;
	return walk_name(w, v, sched_policies, ARRAY_SIZE(sched_policies), "scheduler policy", &s->policy,
			 &s->policy_num);
}

static int parse_sched_flags(struct walk *w, yajl_val v, void *at)
{
	struct oci_scheduler *s = at;
	return walk_known_strs(w, v, sched_flags, ARRAY_SIZE(sched_flags), "scheduler flag", &s->flags,
			       &s->n_flags);
}

static const struct walk_field scheduler_fields[] = {
	{ "policy", WF_PARSE(parse_sched_policy), .required = true },
	{ "nice", WF_INT(struct oci_scheduler, nice, -20, 19) },
	{ "priority", WF_INT(struct oci_scheduler, priority, 0, 99) },
	{ "flags", WF_PARSE(parse_sched_flags) },
	{ "runtime", WF_U64(struct oci_scheduler, runtime, UINT64_MAX) },
	{ "deadline", WF_U64(struct oci_scheduler, deadline, UINT64_MAX) },
	{ "period", WF_U64(struct oci_scheduler, period, UINT64_MAX) },
	{ 0 },
};

/* The kernel's IOPRIO_CLASS_* numbers (linux/ioprio.h). */
static const struct walk_name io_classes[] = {
	{ "IOPRIO_CLASS_RT", 1 }, { "IOPRIO_CLASS_BE", 2 }, { "IOPRIO_CLASS_IDLE", 3 },
};

static int parse_io_class(struct walk *w, yajl_val v, void *at)
{
	return walk_name(w, v, io_classes, ARRAY_SIZE(io_classes), "I/O priority class", NULL, at);
}

/* priority may be left out (the schema requires only class; Go's encoder
 * sends 0 anyway): 0, the class's highest */
static const struct walk_field io_priority_fields[] = {
	{ "class", WF_CUSTOM(struct oci_io_priority, class, parse_io_class), .required = true },
	{ "priority", WF_INT(struct oci_io_priority, priority, 0, 7) },
	{ 0 },
};

#define CPU_LIST "a CPU list (like \"0-3,7\")"
static const struct walk_field cpu_affinity_fields[] = {
	{ "initial", WF_VALID_STR(PROC, exec_cpu_affinity_initial, cpu_list_valid, CPU_LIST) },
	{ "final", WF_VALID_STR(PROC, exec_cpu_affinity_final, cpu_list_valid, CPU_LIST) },
	{ 0 },
};
#undef CPU_LIST

static const struct walk_field console_size_fields[] = {
	{ "height", WF_U32(PROC, console_height, UINT16_MAX), .required = true },
	{ "width", WF_U32(PROC, console_width, UINT16_MAX), .required = true },
	{ 0 },
};

static int parse_args(struct walk *w, yajl_val v, void *at)
{
	PROC *p = at;
	if (!YAJL_IS_ARRAY(v) || !v->u.array.len)
		return walk_fail(w, "must be a non-empty array of strings");
	return walk_str_array(w, v, &p->args, &p->n_args);
}

static int parse_command_line(struct walk *w, yajl_val v, void *at)
{
	char *ignored;
	return walk_str(w, v, &ignored);   /* Windows only */
}

static int parse_env(struct walk *w, yajl_val v, void *at)
{
	PROC *p = at;
	int r = walk_str_array(w, v, &p->env, &p->n_env);
	for (size_t i = 0; r > 0 && i < p->n_env; i++) {
		const char *eq = strchr(p->env[i], '=');
		if (!eq || eq == p->env[i]) {
			walk_push_index(w, i);
			return walk_fail(w, "must be KEY=VALUE, got \"%.100s\"", p->env[i]);
		}
	}
	return r;
}

static const struct walk_field process_fields[] = {
	{ "terminal", WF_BOOL(PROC, terminal) },
	{ "consoleSize", WF_FLAT(console_size_fields), WF_HAS(PROC, has_console_size) },
	{ "user", WF_OBJECT(PROC, user, user_fields) },
	{ "args", WF_PARSE(parse_args) },
	{ "commandLine", WF_PARSE(parse_command_line) },
	{ "env", WF_PARSE(parse_env) },
	{ "cwd", WF_ABS_PATH(PROC, cwd) },
	{ "capabilities", WF_OBJECT(PROC, caps, capabilities_fields), WF_HAS(PROC, has_capabilities) },
	{ "rlimits", WF_LIST(PROC, rlimits, n_rlimits, struct oci_rlimit), .parse = parse_rlimit,
	  .check = rlimit_unique },
	{ "noNewPrivileges", WF_BOOL(PROC, no_new_privileges) },
	{ "apparmorProfile", WF_STR(PROC, apparmor_profile) },
	{ "selinuxLabel", WF_STR(PROC, selinux_label) },
	{ "oomScoreAdj", WF_INT(PROC, oom_score_adj, -1000, 1000), WF_HAS(PROC, has_oom_score_adj) },
	{ "scheduler", WF_OBJECT(PROC, scheduler, scheduler_fields), WF_HAS(PROC, has_scheduler) },
	{ "ioPriority", WF_OBJECT(PROC, io_priority, io_priority_fields), WF_HAS(PROC, has_io_priority) },
	{ "execCPUAffinity", WF_FLAT(cpu_affinity_fields) },
	{ 0 },
};

static int parse_process_obj(struct walk *w, yajl_val v, struct oci_process *p)
{
	int r = walk_fields(w, v, process_fields, p, NULL);
	if (r <= 0)
		return r;
	if (!p->args) {
		walk_push_key(w, "args");
		return walk_fail(w, "must be a non-empty array of strings");
	}
	if (!p->cwd)
		p->cwd = arena_strdup(w->a, "/");
	return 1;
}

/* ---- root, hooks ---- */

#define CFG struct oci_config

static const struct walk_field root_fields[] = {
	{ "path", WF_NONEMPTY_STR(CFG, root_path), .required = true },
	{ "readonly", WF_BOOL(CFG, root_readonly) },
	{ 0 },
};

static int parse_hook_timeout(struct walk *w, yajl_val v, void *at)
{
	int *timeout = at;
	int r = walk_int(w, v, INT_MIN, INT_MAX, timeout);
	if (r > 0 && *timeout <= 0)
		return walk_fail(w, "must be greater than zero, got %d", *timeout);
	return r;
}

static const struct walk_field hook_fields[] = {
	{ "path", WF_ABS_PATH(struct oci_hook, path), .required = true },
	{ "args", WF_STR_ARRAY(struct oci_hook, args, n_args) },
	{ "env", WF_STR_ARRAY(struct oci_hook, env, n_env) },
	{ "timeout", WF_CUSTOM(struct oci_hook, timeout, parse_hook_timeout), WF_HAS(struct oci_hook, has_timeout) },
	{ 0 },
};

#define HOOKS(kind) WF_LIST(struct oci_hooks, hooks[kind], n_hooks[kind], struct oci_hook), .fields = hook_fields

static const struct walk_field hooks_fields[] = {
	{ "prestart", HOOKS(HOOK_PRESTART) },
	{ "createRuntime", HOOKS(HOOK_CREATE_RUNTIME) },
	{ "createContainer", HOOKS(HOOK_CREATE_CONTAINER) },
	{ "startContainer", HOOKS(HOOK_START_CONTAINER) },
	{ "poststart", HOOKS(HOOK_POSTSTART) },
	{ "poststop", HOOKS(HOOK_POSTSTOP) },
	{ 0 },
};
#undef HOOKS

/* ---- top level ---- */

static int parse_oci_version(struct walk *w, yajl_val v, void *at)
{
	char **version = at;
	int r = walk_nonempty_str(w, v, version);
	/* Major versions are not compatible with each other (SemVer). */
	if (r > 0 && strncmp(*version, "1.", 2) != 0)
		return walk_fail(w, "unsupported version \"%.100s\" (want 1.x)", *version);
	return r;
}

static int parse_process(struct walk *w, yajl_val v, void *at)
{
	struct oci_process *p = arena_alloc(w->a, sizeof *p);
	int r = parse_process_obj(w, v, p);
	if (r > 0)
		*(struct oci_process **)at = p;
	return r;
}

/* hostname, domainname */
static int parse_uts_name(struct walk *w, yajl_val v, void *at)
{
	char **name = at;
	int r = walk_str(w, v, name);
	if (r > 0 && strlen(*name) > 64)
		return walk_fail(w, "longer than 64 bytes");
	return r;
}

static const struct walk_field config_fields[] = {
	{ "ociVersion", WF_CUSTOM(CFG, oci_version, parse_oci_version), .required = true },
	{ "process", WF_CUSTOM(CFG, process, parse_process) },
	{ "root", WF_FLAT(root_fields), .required = true },
	{ "hostname", WF_CUSTOM(CFG, hostname, parse_uts_name) },
	{ "domainname", WF_CUSTOM(CFG, domainname, parse_uts_name) },
	{ "mounts", WF_LIST(CFG, mounts, n_mounts, struct oci_mount), .parse = parse_mount },
	{ "hooks", WF_OBJECT(CFG, hooks, hooks_fields) },
	{ "annotations", WF_STR_MAP(CFG, annotations, n_annotations) },
	{ "linux", WF_CUSTOM(CFG, linux_, parse_linux), WF_HAS(CFG, has_linux) },
	/* other platforms: not ours to read */
	{ "windows", .kind = WALK_IGNORE },
	{ "solaris", .kind = WALK_IGNORE },
	{ "vm", .kind = WALK_IGNORE },
	{ "zos", .kind = WALK_IGNORE },
	{ 0 },
};

static int parse_config(struct walk *w, yajl_val v, struct oci_config *c)
{
	if (!YAJL_IS_OBJECT(v))
		return walk_fail(w, "expected a JSON object, got %s", walk_type_name(v));
	int r = walk_fields(w, v, config_fields, c, NULL);
	return r < 0 ? r : 0;
}

int oci_config_parse(const char *text, const char *what, struct oci_config **ret,
		     struct ab_err *err)
{
	yajl_val v;
	if (json_parse(text, what, &v, err) < 0)
		return -1;
	struct oci_config *c = xcalloc(1, sizeof *c);
	struct walk w;
	walk_init(&w, &c->arena, what, err);
	int r = parse_config(&w, v, c);
	json_free(v);
	if (r < 0) {
		oci_config_free(c);
		return -1;
	}
	*ret = c;
	return 0;
}

int oci_config_load(const char *path, struct oci_config **ret, struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file_at(AT_FDCWD, path, CONFIG_MAX_SIZE, &text, &len, err) < 0)
		return -1;
	/* errors say "config.json: linux.x: ...": the bundle is known to the caller */
	const char *what = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (strlen(text) != len)
		return ab_error(err, 0, "%s: invalid JSON: contains a NUL byte", what);
	return oci_config_parse(text, what, ret, err);
}

void oci_config_free(struct oci_config *c)
{
	if (!c)
		return;
	arena_free(&c->arena);
	free(c);
}

/* text as JSON, its top-level object read by parse into obj; errors say `what`. */
static int parse_document(const char *text, const char *what, struct arena *arena, struct ab_err *err,
			  int (*parse)(struct walk *w, yajl_val v, void *obj), void *obj)
{
	yajl_val v;
	if (json_parse(text, what, &v, err) < 0)
		return -1;
	struct walk w;
	walk_init(&w, arena, what, err);
	int r;
	if (!YAJL_IS_OBJECT(v))
		r = walk_fail(&w, "expected a JSON object, got %s", walk_type_name(v));
	else
		r = parse(&w, v, obj);
	json_free(v);
	return r < 0 ? -1 : 0;
}

int oci_process_parse(const char *text, const char *what, struct arena *arena,
		      struct oci_process **ret, struct ab_err *err)
{
	return parse_document(text, what, arena, err, parse_process, ret);
}

int oci_resources_parse(const char *text, const char *what, struct arena *arena,
			struct oci_resources *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	return parse_document(text, what, arena, err, parse_resources, ret);
}

/* ---- helpers over a parsed config ---- */

const char *oci_annotation(const struct oci_config *c, const char *key)
{
	for (size_t i = 0; i < c->n_annotations; i++)
		if (streq(c->annotations[i].key, key))
			return c->annotations[i].value;
	return NULL;
}
