/* The DNS sentry process: its body. The public face of netfilter/sentry,
 * with sentry_params.h (what it is given) and sentry_sockets.h (its sockets,
 * made before the container's program runs). */
#ifndef AGENTBOX_SENTRY_H
#define AGENTBOX_SENTRY_H

#include "error.h"
#include "sentry_params.h"

/* Body of the sentry process (the runtime forks, the child calls this and
 * _exits with its result). Forks a helper that stays in the runtime's netns
 * (sockets to the upstream resolvers), enters the box's netns, binds its
 * sockets, forks a helper that alone keeps CAP_NET_ADMIN (set elements), drops
 * every capability, and serves until the container init exits (the helpers
 * only when the policy allows a name). Returns 0 when init exited, negative on
 * a setup error. Closes every fd but 0-2 and its own. */
int egress_sentry_run(const struct egress_sentry_params *sp, struct ab_err *err);

#endif
