/* The hardening floor (floor.c; its parts floor_ns.c and floor_devices.c):
 * what no engine config may lower. */
#ifndef AGENTBOX_FLOOR_H
#define AGENTBOX_FLOOR_H

#include <stdbool.h>

#include "config.h"
#include "error.h"
#include "policy_types.h"

/* The hardening floor (floor.c) on a whole config: privileged capabilities, the
 * host's network, PID, IPC and mount namespaces, host devices and unmasked
 * kernel file systems are refused (each naming the config key that relaxes it),
 * noNewPrivileges forced, the floor's masked and read-only paths added, and
 * CAP_NET_ADMIN and CAP_NET_RAW dropped while the egress firewall is in force. */
int policy_floor_config(const struct agent_policy *p, struct oci_config *c, struct ab_err *err);
/* The floor on create's options: --no-pivot (floor.refuse_no_pivot). (Under
 * --cgroup-manager disabled, which leaves no device cgroup, the floor guards
 * devices by the mounts: init_ctx.nodev_mounts.) */
int policy_floor_create(const struct agent_policy *p, const struct oci_config *c, bool no_pivot,
			struct ab_err *err);
/* The same for one process (exec); `what` names it in errors ("process"). */
int policy_floor_process(const struct agent_policy *p, struct oci_process *proc, const char *what,
			 struct ab_err *err);

#endif
