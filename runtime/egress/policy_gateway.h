/* The box's credential gateway in the lifecycle (policy_gateway.c); the
 * process itself is gateway.h's. */
#ifndef AGENTBOX_POLICY_GATEWAY_H
#define AGENTBOX_POLICY_GATEWAY_H

#include "config.h"
#include "error.h"
#include "options.h"
#include "policy_types.h"
#include "state.h"

/* Started (before the clone) when the container gets header credentials
 * (config.yaml's chosen ones, and o->gateway_creds of a kit): secrets read,
 * the gateway running, its CA in the box's trust store (bind mounts and
 * variables added to c), its pid in st. Nothing to do without credentials. */
int policy_gateway_start(struct agent_policy *p, const struct global_opts *g, const struct create_opts *o,
			 struct oci_config *c, struct container_state *st, int state_dirfd, struct ab_err *err);
/* a failed create: stop it */
void policy_gateway_stop(struct agent_policy *p);
/* a created container: it lives on with the box, the runtime forgets it */
void policy_gateway_forget(struct agent_policy *p);
/* delete: stop the recorded one */
void policy_gateway_teardown(const struct container_state *s);

#endif
