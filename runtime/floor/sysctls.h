/* linux.sysctl, checked against the namespaces the container gets: a sysctl
 * names a namespace (net.* the network namespace, kernel.shm* the IPC one ...),
 * and writing it anywhere but in a namespace that is the container's to set
 * would change the host or another container. */
#ifndef AGENTBOX_SYSCTLS_H
#define AGENTBOX_SYSCTLS_H

#include "config.h"
#include "error.h"

struct agent_policy;

/* Each key must belong to a namespace the container has: a new one of its own,
 * or (net.* only) a network namespace it joins; a key of no namespace would
 * change the host. */
int sysctls_check_namespaces(const struct oci_config *c, struct ab_err *err);

/* net.* keys in a network namespace joined by path (Podman's, a pod's, kit
 * run's, --network container:X): allowed when the namespace is the
 * container's to police: no agentbox ruleset in it yet (it was made for the
 * container, whose firewall installs the first), or one of a container with
 * the same egress policy (a pod's members). Refused when that container's
 * policy differs, and always in the runtime's own (the host's) namespace. */
int sysctls_check_joined_netns(const struct oci_config *c, const struct agent_policy *p, const char *id,
			       int state_dirfd, struct ab_err *err);

#endif
