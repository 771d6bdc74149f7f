/* The hardening floor's namespace checks (floor_ns.c): the host's
 * namespaces, recognised by identity. Each refusal is one line naming the
 * config path and the setting of agentbox-config(5) that relaxes it. */
#ifndef AGENTBOX_FLOOR_NS_H
#define AGENTBOX_FLOOR_NS_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_config.h"
#include "config.h"
#include "error.h"

/* Refuse the host's network, PID, IPC and mount namespaces (a missing entry
 * means the host's). A joined namespace is opened and compared by identity,
 * and when that cannot be told the answer is "refused". */
int floor_namespaces(const struct agent_config *cfg, const struct oci_config *c, struct ab_err *err);

#endif
