/* The agent policy: what agentbox adds on top of the engine's config — the stacked
 * seccomp profile, the hardening floor and the egress firewall — resolved from
 * built-in defaults, the config file, runtime flags and annotations. */
#ifndef AGENTBOX_POLICY_H
#define AGENTBOX_POLICY_H

#include <stdbool.h>

#include "agent_config.h"
#include "config.h"
#include "egress.h"
#include "gateway.h"
#include "netns_pool.h"
#include "options.h"
#include "error.h"
#include "state.h"

#include "seccomp.h"

struct agent_policy {
	struct arena arena;
	struct agent_config config;         /* the admin's file, or the built-in defaults */
	const char *seccomp_profile;        /* "agent", "default" or "none" */
	bool egress_enforced;               /* false only when an admin turned it off */
	struct egress_policy egress;
	struct sentry_child *sentry_prep;   /* policy_prepare_sentry made it ready to fork */
	pid_t sentry_pid;                   /* started by policy_spawn_sentry */
	bool sentry_status_file;            /* create: the sentry's word goes to SENTRY_STATUS */
	bool sentry_pending;                /* spawned, policy_wait_sentry not yet called */
	int sentry_ready_fd;                /* its "ready" pipe while pending */
	int sentry_pidfd;                   /* of the forked sentry, -1: none */
	bool egress_shared;                 /* joined netns already policed: no sentry of ours */
	const char *egress_installed_path;  /* a joined netns we put our ruleset in (undone on failure) */
	bool netns_pooled;                  /* the init joins netns_fd, taken from the pool */
	int netns_fd;
	bool ruleset_pooled;                /* ... with our ruleset in it already (netns_pool.h) */
	char pool_token[NETNS_POOL_TOKEN_LEN + 1];   /* then the token its table's comment names */
	char *egress_text;                  /* policy_egress_text's answer, cached */
	struct gateway_child gateway;       /* the credential gateway (policy_gateway.c) */
	bool gateway_started;
};

int policy_resolve(const struct global_opts *g, const struct oci_config *c,
		   struct agent_policy *ret, struct ab_err *err);
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
/* The programs init loads, in order: the engine's own profile, then ours. */
int policy_seccomp_programs(struct agent_policy *p, const struct oci_config *c, const char *state_root,
			    struct seccomp_prog *progs, size_t *ret_n, struct ab_err *err);
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
