/* The agent policy: what agentbox adds on top of the engine's config — the stacked
 * seccomp profile, the hardening floor and the egress firewall — resolved from
 * built-in defaults, the config file, runtime flags and annotations. */
#ifndef AGENTBOX_POLICY_H
#define AGENTBOX_POLICY_H

#include <stdbool.h>

#include "config.h"
#include "error.h"
#include "options.h"
#include "policy_types.h"
#include "seccomp.h"
#include "state.h"

int policy_resolve(const struct global_opts *g, const struct oci_config *c,
		   struct agent_policy *ret, struct ab_err *err);
/* The box's HTTP proxy's variables into proc's environment (in a), when
 * the container has the proxy and the environment names no proxy itself. */
void policy_proxy_env(const struct agent_policy *p, struct oci_process *proc, struct arena *a);
/* What those variables name: the box's HTTP proxy's URL, "http://127.0.0.1:PORT" */
const char *policy_proxy_url(void);
/* The programs init loads, in order: the engine's own profile, then ours,
 * then the file-privileges guard when asked for (POLICY_SECCOMP_MAX in all);
 * proc: the process they are for (the container's, or exec's). */
int policy_seccomp_programs(struct agent_policy *p, const struct oci_config *c, const struct oci_process *proc,
			    const char *state_root, struct seccomp_prog *progs, size_t *ret_n, struct ab_err *err);
/* The canonical text of the container's egress policy (what its state records,
 * and what names the pool's firewalled network namespaces for it), or NULL
 * when it gets no ruleset of its own. Made once. */
const char *policy_egress_text(struct agent_policy *p);
/* Who polices the network namespace at path (one the container joins): 0 when
 * no agentbox ruleset is in it (a namespace made for the container, whose
 * firewall installs the first), 1 when container *owner does, with *ret_same
 * telling whether that container's egress policy is this one's. */
int policy_netns_owner(const struct agent_policy *p, const char *path, const char *id, int state_dirfd,
		       char *owner, size_t owner_len, bool *ret_same, struct ab_err *err);
/* Parent side, after clone and before the init goes on: the egress rules. */
int policy_install(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
		   int state_dirfd, struct ab_err *err);
/* Undo policy_install and the sentry after a failed create. */
void policy_cleanup(struct agent_policy *p, struct container_state *st);
/* On delete: stop the sentry. */
void policy_teardown(const struct container_state *s);
void policy_free(struct agent_policy *p);

#endif
