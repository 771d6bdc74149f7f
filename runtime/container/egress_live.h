/* egress allow/deny: a running container's egress policy changed at once
 * (agentbox-egress(8)). */
#ifndef AGENTBOX_EGRESS_LIVE_H
#define AGENTBOX_EGRESS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "options.h"

/* Allow (or deny) the entries in the container's policy: the same checks as
 * at create (a live allow stays within the admin's policy unless it may
 * widen), then the ruleset, the DNS sentry, the state and both deny logs.
 * Nothing changes on an error. */
int egress_live_change(const struct global_opts *g, const char *id, bool deny, char *const *entries, size_t n,
		       struct ab_err *err);

#endif
