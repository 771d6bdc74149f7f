/* The network namespace the egress firewall polices for a container. */
#ifndef AGENTBOX_EGRESS_NETNS_H
#define AGENTBOX_EGRESS_NETNS_H

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "policy_types.h"

/* The container's network namespace, opened: the one the config names by path
 * (init joins it only after SYNC_CONTINUE: Podman, CRI pods, --network
 * container:X), the pool's (p->netns_pooled), else the new one init PID was
 * cloned into. Never the runtime's own (an error says so). */
int egress_netns_open(const struct agent_policy *p, const struct oci_config *c, pid_t pid, struct ab_err *err);

#endif
