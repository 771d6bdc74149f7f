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

static int parse_user(struct walk *w, yajl_val v, struct oci_user *u)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	bool has_uid = false, has_gid = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "uid"))
			r = walk_u32(w, val, &u->uid), has_uid = r > 0;
		else if (streq(k, "gid"))
			r = walk_u32(w, val, &u->gid), has_gid = r > 0;
		else if (streq(k, "umask")) {
			uint64_t m = 0;
			r = walk_u64(w, val, 0777, &m);
			u->has_umask = r > 0;
			u->umask = (uint32_t)m;
		} else if (streq(k, "additionalGids")) {
			r = walk_arr(w, val);
			if (r > 0) {
				u->additional_gids = arena_alloc(w->a, val->u.array.len * sizeof(uint32_t));
				u->n_additional_gids = val->u.array.len;
				yajl_val g;
				WALK_ITEMS(w, val, i, g) {
					r = walk_u32(w, g, &u->additional_gids[i]);
					if (r == 0)
						return walk_fail(w, "expected an integer, got null");
					if (r < 0)
						return r;
				}
			}
		} else if (streq(k, "username"))
			r = walk_str(w, val, &u->username);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_uid)
		return walk_missing(w, "uid");
	if (!has_gid)
		return walk_missing(w, "gid");
	return 1;
}

static int parse_cap_set(struct walk *w, yajl_val v, uint64_t *mask)
{
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

static int parse_capabilities(struct walk *w, yajl_val v, struct oci_capabilities *c)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "bounding"))
			r = parse_cap_set(w, val, &c->bounding);
		else if (streq(k, "effective"))
			r = parse_cap_set(w, val, &c->effective);
		else if (streq(k, "inheritable"))
			r = parse_cap_set(w, val, &c->inheritable);
		else if (streq(k, "permitted"))
			r = parse_cap_set(w, val, &c->permitted);
		else if (streq(k, "ambient"))
			r = parse_cap_set(w, val, &c->ambient);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	return 1;
}

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
	{ "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

static int parse_rlimit(struct walk *w, yajl_val v, struct oci_rlimit *rl)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	bool has_soft = false, has_hard = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "type")) {
			r = walk_str(w, val, &rl->type);
			if (r > 0) {
				rl->resource = -1;
				for (size_t i = 0; i < ARRAY_SIZE(rlimit_names); i++)
					if (streq(rl->type, rlimit_names[i].name))
						rl->resource = rlimit_names[i].resource;
				if (rl->resource < 0)
					return walk_fail(w, "unknown rlimit \"%.100s\"", rl->type);
			}
		} else if (streq(k, "soft"))
			r = walk_u64(w, val, UINT64_MAX, &rl->soft), has_soft = r > 0;
		else if (streq(k, "hard"))
			r = walk_u64(w, val, UINT64_MAX, &rl->hard), has_hard = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!rl->type)
		return walk_missing(w, "type");
	if (!has_soft)
		return walk_missing(w, "soft");
	if (!has_hard)
		return walk_missing(w, "hard");
	if (rl->soft > rl->hard)
		return walk_fail(w, "soft limit %llu is above the hard limit %llu",
				 (unsigned long long)rl->soft, (unsigned long long)rl->hard);
	return 1;
}

static int parse_rlimits(struct walk *w, yajl_val v, struct oci_process *p)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	p->rlimits = arena_alloc(w->a, v->u.array.len * sizeof *p->rlimits);
	yajl_val item;
	WALK_ITEMS(w, v, i, item) {
		struct oci_rlimit *rl = &p->rlimits[i];
		if (parse_rlimit(w, item, rl) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (p->rlimits[j].resource == rl->resource)
				return walk_fail(w, "duplicate rlimit %s (also at index %zu)", rl->type, j);
	}
	p->n_rlimits = v->u.array.len;
	return 1;
}

static const struct {
	const char *name;
	int policy;
} sched_policies[] = {
	{ "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },     { "SCHED_BATCH", 3 },
	{ "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 },
};

static const char *const sched_flags[] = {
	"SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM",     "SCHED_FLAG_DL_OVERRUN",
	"SCHED_FLAG_KEEP_POLICY",   "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
	"SCHED_FLAG_UTIL_CLAMP_MAX",
};

static int parse_scheduler(struct walk *w, yajl_val v, struct oci_scheduler *s)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "policy")) {
			r = walk_str(w, val, &s->policy);
			if (r > 0) {
				s->policy_num = -1;
				for (size_t i = 0; i < ARRAY_SIZE(sched_policies); i++)
					if (streq(s->policy, sched_policies[i].name))
						s->policy_num = sched_policies[i].policy;
				if (s->policy_num < 0)
					return walk_fail(w, "unknown scheduler policy \"%.100s\"", s->policy);
			}
		} else if (streq(k, "nice"))
			r = walk_int(w, val, -20, 19, &s->nice);
		else if (streq(k, "priority"))
			r = walk_int(w, val, 0, 99, &s->priority);
		else if (streq(k, "flags")) {
			r = walk_str_array(w, val, &s->flags, &s->n_flags);
			for (size_t i = 0; r > 0 && i < s->n_flags; i++) {
				bool known = false;
				for (size_t j = 0; j < ARRAY_SIZE(sched_flags); j++)
					known |= streq(s->flags[i], sched_flags[j]);
				if (!known) {
					walk_push_index(w, i);
					return walk_fail(w, "unknown scheduler flag \"%.100s\"", s->flags[i]);
				}
			}
		} else if (streq(k, "runtime"))
			r = walk_u64(w, val, UINT64_MAX, &s->runtime);
		else if (streq(k, "deadline"))
			r = walk_u64(w, val, UINT64_MAX, &s->deadline);
		else if (streq(k, "period"))
			r = walk_u64(w, val, UINT64_MAX, &s->period);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!s->policy)
		return walk_missing(w, "policy");
	return 1;
}

static int parse_io_priority(struct walk *w, yajl_val v, struct oci_io_priority *io)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	/* priority may be left out (the schema requires only class; Go's
	 * encoder sends 0 anyway): 0, the class's highest */
	io->class = 0;
	io->priority = 0;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "class")) {
			char *c = NULL;
			r = walk_str(w, val, &c);
			/* The kernel's IOPRIO_CLASS_* numbers (linux/ioprio.h). */
			if (r > 0 && streq(c, "IOPRIO_CLASS_RT"))
				io->class = 1;
			else if (r > 0 && streq(c, "IOPRIO_CLASS_BE"))
				io->class = 2;
			else if (r > 0 && streq(c, "IOPRIO_CLASS_IDLE"))
				io->class = 3;
			else if (r > 0)
				return walk_fail(w, "unknown I/O priority class \"%.100s\"", c);
		} else if (streq(k, "priority"))
			r = walk_int(w, val, 0, 7, &io->priority);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!io->class)
		return walk_missing(w, "class");
	return 1;
}

static int parse_cpu_affinity(struct walk *w, yajl_val v, struct oci_process *p)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		char **dst;
		if (streq(k, "initial"))
			dst = &p->exec_cpu_affinity_initial;
		else if (streq(k, "final"))
			dst = &p->exec_cpu_affinity_final;
		else
			return walk_unknown(w);
		r = walk_str(w, val, dst);
		if (r < 0)
			return r;
		if (r > 0 && !cpu_list_valid(*dst))
			return walk_fail(w, "not a CPU list (like \"0-3,7\"): \"%.100s\"", *dst);
	}
	return 1;
}

static int parse_console_size(struct walk *w, yajl_val v, struct oci_process *p)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	bool has_h = false, has_w = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		uint64_t x = 0;
		if (streq(k, "height"))
			r = walk_u64(w, val, UINT16_MAX, &x), p->console_height = (unsigned)x, has_h = r > 0;
		else if (streq(k, "width"))
			r = walk_u64(w, val, UINT16_MAX, &x), p->console_width = (unsigned)x, has_w = r > 0;
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_h)
		return walk_missing(w, "height");
	if (!has_w)
		return walk_missing(w, "width");
	p->has_console_size = true;
	return 1;
}

static int parse_process_obj(struct walk *w, yajl_val v, struct oci_process *p)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	bool has_args = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "terminal"))
			r = walk_bool(w, val, &p->terminal);
		else if (streq(k, "consoleSize"))
			r = parse_console_size(w, val, p);
		else if (streq(k, "user"))
			r = parse_user(w, val, &p->user);
		else if (streq(k, "args")) {
			has_args = true;
			if (!YAJL_IS_ARRAY(val) || !val->u.array.len)
				return walk_fail(w, "must be a non-empty array of strings");
			r = walk_str_array(w, val, &p->args, &p->n_args);
		} else if (streq(k, "commandLine")) {
			char *ignored;
			r = walk_str(w, val, &ignored);   /* Windows only */
		} else if (streq(k, "env")) {
			r = walk_str_array(w, val, &p->env, &p->n_env);
			for (size_t i = 0; r > 0 && i < p->n_env; i++) {
				const char *eq = strchr(p->env[i], '=');
				if (!eq || eq == p->env[i]) {
					walk_push_index(w, i);
					return walk_fail(w, "must be KEY=VALUE, got \"%.100s\"", p->env[i]);
				}
			}
		} else if (streq(k, "cwd"))
			r = walk_abs_path(w, val, &p->cwd);
		else if (streq(k, "capabilities"))
			r = parse_capabilities(w, val, &p->caps), p->has_capabilities = r > 0;
		else if (streq(k, "rlimits"))
			r = parse_rlimits(w, val, p);
		else if (streq(k, "noNewPrivileges"))
			r = walk_bool(w, val, &p->no_new_privileges);
		else if (streq(k, "apparmorProfile"))
			r = walk_str(w, val, &p->apparmor_profile);
		else if (streq(k, "selinuxLabel"))
			r = walk_str(w, val, &p->selinux_label);
		else if (streq(k, "oomScoreAdj"))
			r = walk_int(w, val, -1000, 1000, &p->oom_score_adj), p->has_oom_score_adj = r > 0;
		else if (streq(k, "scheduler"))
			r = parse_scheduler(w, val, &p->scheduler), p->has_scheduler = r > 0;
		else if (streq(k, "ioPriority"))
			r = parse_io_priority(w, val, &p->io_priority), p->has_io_priority = r > 0;
		else if (streq(k, "execCPUAffinity"))
			r = parse_cpu_affinity(w, val, p);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!has_args) {
		walk_push_key(w, "args");
		return walk_fail(w, "must be a non-empty array of strings");
	}
	if (!p->cwd)
		p->cwd = arena_strdup(w->a, "/");
	return 1;
}

/* ---- root, hooks ---- */

static int parse_root(struct walk *w, yajl_val v, struct oci_config *c)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "path"))
			r = walk_nonempty_str(w, val, &c->root_path);
		else if (streq(k, "readonly"))
			r = walk_bool(w, val, &c->root_readonly);
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!c->root_path)
		return walk_missing(w, "path");
	return 1;
}

static int parse_hook(struct walk *w, yajl_val v, struct oci_hook *h)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r < 0 ? r : walk_fail(w, "expected an object, got null");
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "path"))
			r = walk_abs_path(w, val, &h->path);
		else if (streq(k, "args"))
			r = walk_str_array(w, val, &h->args, &h->n_args);
		else if (streq(k, "env"))
			r = walk_str_array(w, val, &h->env, &h->n_env);
		else if (streq(k, "timeout")) {
			r = walk_int(w, val, INT_MIN, INT_MAX, &h->timeout);
			if (r > 0 && h->timeout <= 0)
				return walk_fail(w, "must be greater than zero, got %d", h->timeout);
			h->has_timeout = r > 0;
		} else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!h->path)
		return walk_missing(w, "path");
	return 1;
}

static const char *const hook_names[HOOK_KIND_COUNT] = {
	[HOOK_PRESTART] = "prestart",
	[HOOK_CREATE_RUNTIME] = "createRuntime",
	[HOOK_CREATE_CONTAINER] = "createContainer",
	[HOOK_START_CONTAINER] = "startContainer",
	[HOOK_POSTSTART] = "poststart",
	[HOOK_POSTSTOP] = "poststop",
};

static int parse_hooks(struct walk *w, yajl_val v, struct oci_hooks *hooks)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		int kind = -1;
		for (int i = 0; i < HOOK_KIND_COUNT; i++)
			if (streq(k, hook_names[i]))
				kind = i;
		if (kind < 0)
			return walk_unknown(w);
		r = walk_arr(w, val);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		hooks->hooks[kind] = arena_alloc(w->a, val->u.array.len * sizeof(struct oci_hook));
		hooks->n_hooks[kind] = val->u.array.len;
		yajl_val item;
		WALK_ITEMS(w, val, i, item)
			if (parse_hook(w, item, &hooks->hooks[kind][i]) < 0)
				return -1;
	}
	return 1;
}

/* ---- top level ---- */

static int parse_config(struct walk *w, yajl_val v, struct oci_config *c)
{
	if (!YAJL_IS_OBJECT(v))
		return walk_fail(w, "expected a JSON object, got %s", walk_type_name(v));
	int r = walk_obj(w, v);
	if (r < 0)
		return r;
	bool has_root = false;
	const char *k;
	yajl_val val;
	WALK_FIELDS(w, v, k, val) {
		if (streq(k, "ociVersion")) {
			r = walk_nonempty_str(w, val, &c->oci_version);
			/* Major versions are not compatible with each other (SemVer). */
			if (r > 0 && strncmp(c->oci_version, "1.", 2) != 0)
				return walk_fail(w, "unsupported version \"%.100s\" (want 1.x)", c->oci_version);
		} else if (streq(k, "process")) {
			struct oci_process *p = arena_alloc(w->a, sizeof *p);
			r = parse_process_obj(w, val, p);
			if (r > 0)
				c->process = p;
		} else if (streq(k, "root"))
			r = parse_root(w, val, c), has_root = r > 0;
		else if (streq(k, "hostname")) {
			r = walk_str(w, val, &c->hostname);
			if (r > 0 && strlen(c->hostname) > 64)
				return walk_fail(w, "longer than 64 bytes");
		} else if (streq(k, "domainname")) {
			r = walk_str(w, val, &c->domainname);
			if (r > 0 && strlen(c->domainname) > 64)
				return walk_fail(w, "longer than 64 bytes");
		} else if (streq(k, "mounts"))
			r = parse_mounts(w, val, &c->mounts, &c->n_mounts);
		else if (streq(k, "hooks"))
			r = parse_hooks(w, val, &c->hooks);
		else if (streq(k, "annotations"))
			r = walk_str_map(w, val, &c->annotations, &c->n_annotations);
		else if (streq(k, "linux"))
			r = parse_linux(w, val, &c->linux_), c->has_linux = r > 0;
		else if (streq(k, "windows") || streq(k, "solaris") || streq(k, "vm") || streq(k, "zos"))
			r = 0;  /* other platforms: not ours to read */
		else
			r = walk_unknown(w);
		if (r < 0)
			return r;
	}
	if (!c->oci_version)
		return walk_missing(w, "ociVersion");
	if (!has_root)
		return walk_missing(w, "root");
	return 0;
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

int oci_process_parse(const char *text, const char *what, struct arena *arena,
		      struct oci_process **ret, struct ab_err *err)
{
	yajl_val v;
	if (json_parse(text, what, &v, err) < 0)
		return -1;
	struct walk w;
	walk_init(&w, arena, what, err);
	struct oci_process *p = arena_alloc(arena, sizeof *p);
	int r;
	if (!YAJL_IS_OBJECT(v))
		r = walk_fail(&w, "expected a JSON object, got %s", walk_type_name(v));
	else
		r = parse_process_obj(&w, v, p);
	json_free(v);
	if (r < 0)
		return -1;
	*ret = p;
	return 0;
}

int oci_resources_parse(const char *text, const char *what, struct arena *arena,
			struct oci_resources *ret, struct ab_err *err)
{
	yajl_val v;
	if (json_parse(text, what, &v, err) < 0)
		return -1;
	struct walk w;
	walk_init(&w, arena, what, err);
	memset(ret, 0, sizeof *ret);
	int r;
	if (!YAJL_IS_OBJECT(v))
		r = walk_fail(&w, "expected a JSON object, got %s", walk_type_name(v));
	else
		r = parse_resources(&w, v, ret);
	json_free(v);
	return r < 0 ? -1 : 0;
}

/* ---- helpers over a parsed config ---- */

const char *oci_annotation(const struct oci_config *c, const char *key)
{
	for (size_t i = 0; i < c->n_annotations; i++)
		if (streq(c->annotations[i].key, key))
			return c->annotations[i].value;
	return NULL;
}
