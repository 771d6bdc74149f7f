/* The agent policy of one container, as policy.c resolves it and the files
 * that act on it (floor, sentry process, gateway, the container's netns) read
 * it: types only, so none of them includes another's functions. */
#ifndef AGENTBOX_POLICY_TYPES_H
#define AGENTBOX_POLICY_TYPES_H

#include <stdbool.h>
#include <sys/types.h>

#include "agent_config.h"
#include "egress.h"
#include "gateway.h"
#include "netns_pool.h"
#include "util.h"

struct sentry_child;

/* seccomp programs a container loads at most: the engine's, the agent
 * profile, the file-privileges guard */
#define POLICY_SECCOMP_MAX 3

struct agent_policy {
	struct arena arena;
	struct agent_config config;         /* the admin's file, or the built-in defaults */
	const char *seccomp_profile;        /* "agent", "default" or "none" */
	bool refuse_file_privileges;        /* the file-privileges guard (seccomp_fileprivs.h) */
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
	char *egress_ceiling;               /* the admin's policy, before annotations narrowed it */
	bool egress_live;                   /* a live allow may widen it: the sentry starts able to */
	bool http_proxy;                    /* the sentry runs the box's HTTP proxy (agentbox.egress.proxy) */
	bool durable_made;                  /* this create began the container's durable log */
	/* the container's resolv.conf as the engine wrote it, before the hooks
	 * ran (Docker's prestart hook points it at the embedded resolver, and the
	 * servers that resolver forwards to are gone from it); NULL: not read */
	char *resolv_before_hooks;
	struct gateway_child gateway;       /* the credential gateway (policy_gateway.c) */
	bool gateway_started;
};

#endif
