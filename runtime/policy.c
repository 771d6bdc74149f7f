#include "policy.h"
#include "log.h"
#include "seccomp.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#define ANNOTATION_SECCOMP "agentbox.seccomp.profile"

static bool profile_name_valid(const char *n)
{
	return streq(n, "agent") || streq(n, "default") || streq(n, "none");
}

int policy_resolve(const struct global_opts *g, const struct oci_config *c,
		   struct agent_policy *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	/* with nothing selected anywhere every container gets the agent profile */
	const char *profile = "agent";
	if (g->seccomp_profile) {
		if (!profile_name_valid(g->seccomp_profile))
			return ab_error(err, 0, "--seccomp-profile: unknown profile \"%s\" (agent, default, none)", g->seccomp_profile);
		profile = g->seccomp_profile;
	}
	const char *ann = oci_annotation(c, ANNOTATION_SECCOMP);
	if (ann) {
		if (!profile_name_valid(ann))
			return ab_error(err, 0, "annotation %s: unknown profile \"%s\" (agent, default, none)", ANNOTATION_SECCOMP, ann);
		/* annotations come from the workload's side: they may only tighten */
		bool widens = streq(ann, "none") || (streq(ann, "default") && streq(profile, "agent"));
		if (widens)
			return ab_error(err, 0, "annotation %s=%s would weaken the runtime's profile \"%s\": refused (set it with --seccomp-profile)",
					ANNOTATION_SECCOMP, ann, profile);
		profile = ann;
	}
	ret->seccomp_profile = profile;
	if (!streq(profile, "none") &&
	    seccomp_builtin_profile(profile, &ret->arena, &ret->agent_seccomp, err) < 0)
		return -1;
	return 0;
}

int policy_seccomp_programs(struct agent_policy *p, const struct oci_config *c,
			    struct seccomp_prog *progs, size_t *ret_n, struct ab_err *err)
{
	size_t n = 0;
	if (c->linux_.seccomp) {
		if (seccomp_compile(c->linux_.seccomp, &progs[n], err) < 0)
			return ab_wrap(err, "config.json: linux.seccomp");
		n++;
	}
	if (p->agent_seccomp) {
		if (seccomp_compile(p->agent_seccomp, &progs[n], err) < 0) {
			for (size_t i = 0; i < n; i++)
				seccomp_prog_free(&progs[i]);
			return ab_wrap(err, "seccomp profile \"%s\"", p->seccomp_profile);
		}
		n++;
	}
	*ret_n = n;
	return 0;
}

int policy_install(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
		   int state_dirfd, struct ab_err *err)
{
	return 0;
}

void policy_cleanup(struct agent_policy *p, struct container_state *st)
{
}

void policy_teardown(const struct container_state *s)
{
	uint64_t t;
	if (s->sentry_pid > 0 && proc_start_time(s->sentry_pid, &t) == 0 && t == s->sentry_start_time)
		kill(s->sentry_pid, SIGKILL);
}

void policy_free(struct agent_policy *p)
{
	arena_free(&p->arena);
}
