/* The shipped seccomp profiles, embedded in the binary so the runtime needs no data
 * files. The JSON is included byte for byte with .incbin (paths are relative to the
 * repository root, where make runs) and NUL-terminated so it can be parsed in place. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "seccomp.h"
#include "util.h"

#define EMBED(sym, file)                                                        \
	__asm__(".pushsection .rodata." #sym ",\"a\",@progbits\n"               \
		".balign 16\n"                                                  \
		#sym "_start:\n"                                                \
		".incbin \"" file "\"\n"                                        \
		#sym "_end:\n"                                                  \
		".byte 0\n"                                                     \
		".popsection\n");                                               \
	extern const char sym##_start[], sym##_end[]

EMBED(ab_profile_default, "seccomp-profiles/default.json");
EMBED(ab_profile_agent, "seccomp-profiles/agent.json");

static const struct {
	const char *name;
	const char *start, *end;
} profiles[] = {
	{ "default", ab_profile_default_start, ab_profile_default_end },
	{ "agent", ab_profile_agent_start, ab_profile_agent_end },
};

const char *seccomp_builtin_profile_text(const char *name, size_t *ret_len)
{
	for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
		if (streq(profiles[i].name, name)) {
			if (ret_len)
				*ret_len = (size_t)(profiles[i].end - profiles[i].start);
			return profiles[i].start;
		}
	}
	return NULL;
}

static char **copy_strv(struct arena *a, char **v, size_t n)
{
	/* NULL-terminated, like every string array the parser hands out. */
	char **out = arena_alloc(a, (n + 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = arena_strdup(a, v[i]);
	return out;
}

static char *copy_str(struct arena *a, const char *s)
{
	return s ? arena_strdup(a, s) : NULL;
}

/* Deep copy into the caller's arena, so the parsed wrapper config can go. */
static struct oci_seccomp *copy_seccomp(struct arena *a, const struct oci_seccomp *s)
{
	struct oci_seccomp *d = arena_alloc(a, sizeof(*d));
	*d = *s;
	d->architectures = copy_strv(a, s->architectures, s->n_architectures);
	d->flags = copy_strv(a, s->flags, s->n_flags);
	d->listener_path = copy_str(a, s->listener_path);
	d->listener_metadata = copy_str(a, s->listener_metadata);
	d->syscalls = arena_alloc(a, (s->n_syscalls + 1) * sizeof(*d->syscalls));
	for (size_t i = 0; i < s->n_syscalls; i++) {
		const struct oci_seccomp_syscall *from = &s->syscalls[i];
		struct oci_seccomp_syscall *to = &d->syscalls[i];
		*to = *from;
		to->names = copy_strv(a, from->names, from->n_names);
		to->args = arena_alloc(a, (from->n_args + 1) * sizeof(*to->args));
		if (from->n_args)
			memcpy(to->args, from->args, from->n_args * sizeof(*to->args));
	}
	return d;
}

int seccomp_builtin_profile(const char *name, struct arena *arena, struct oci_seccomp **ret,
			    struct ab_err *err)
{
	const char *text = seccomp_builtin_profile_text(name, NULL);
	if (!text) {
		char valid[128] = "";
		for (size_t i = 0; i < ARRAY_SIZE(profiles); i++)
			snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "%s%s",
				 i ? ", " : "", profiles[i].name);
		return ab_error(err, 0, "unknown seccomp profile \"%s\" (valid: %s)", name,
				valid);
	}

	/* The config parser owns the seccomp grammar; hand it a minimal config around
	 * the profile, so errors read "profile agent: linux.seccomp.syscalls[3]...". */
	_cleanup_free_ char *doc = xasprintf("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},"
					     "\"linux\":{\"seccomp\":%s}}", text);
	_cleanup_free_ char *what = xasprintf("seccomp profile %s", name);
	struct oci_config *c = NULL;
	int r = oci_config_parse(doc, what, &c, err);
	if (r < 0)
		return r;
	if (!c->linux_.seccomp) {
		oci_config_free(c);
		return ab_error(err, 0, "%s: no seccomp object", what);
	}
	*ret = copy_seccomp(arena, c->linux_.seccomp);
	oci_config_free(c);
	return 0;
}
