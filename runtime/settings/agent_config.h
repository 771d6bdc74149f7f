/* /etc/agentbox/config.yaml (or --config): the administrator's agent policy —
 * default seccomp profile, egress allow/deny lists, and the hardening floor.
 * Documented in agentbox-config(5). */
#ifndef AGENTBOX_AGENT_CONFIG_H
#define AGENTBOX_AGENT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_credentials.h"
#include "error.h"
#include "util.h"

#define DEFAULT_AGENT_CONFIG "/etc/agentbox/config.yaml"

/* runtime.netns_pool: network namespaces made ahead (runtime/egress/netns_pool.h) */
#define NETNS_POOL_DEFAULT_SIZE 2
#define NETNS_POOL_MAX_SIZE 16

/* A device the floor lets a config reach: type 'c' or 'b', -1 = any number. */
struct floor_device {
	char type;
	int64_t major, minor;
};

struct agent_config {
	const char *path;                 /* where it came from, NULL = built-in */
	/* seccomp */
	const char *seccomp_profile;      /* agent | default | none */
	/* egress */
	bool egress_enforce;
	const char *egress_allow;         /* comma-joined, NULL = none */
	const char *egress_deny;
	const char *egress_internal;      /* ranges allowed names may point into */
	bool egress_annotations_may_widen;
	bool egress_live_may_widen;       /* egress allow may go beyond egress.allow and the flags */
	bool egress_hook_anchor;          /* pin the netfilter hook anchor (netfilter/ruleset/anchor.c) */
	bool egress_proxy;                /* the box's HTTP proxy for every container (off: by annotation) */
	bool egress_learn_allowed;        /* annotation agentbox.egress.mode=learn may turn learn mode on */
	/* floor */
	bool refuse_privileged;
	uint64_t allowed_capabilities;    /* exempt from refuse_privileged */
	bool refuse_host_devices;
	bool refuse_host_network;
	bool refuse_host_pid;
	bool refuse_host_ipc;
	bool refuse_no_pivot;             /* --no-pivot leaves the host's mounts reachable */
	bool force_no_new_privileges;
	char **masked_paths;              /* added to every container's maskedPaths */
	size_t n_masked_paths;
	char **readonly_paths;            /* added to every container's readonlyPaths */
	size_t n_readonly_paths;
	struct floor_device *allow_devices;   /* beyond the standard set (floor_devices.c) */
	size_t n_allow_devices;
	/* log: the durable egress log (deny_log.h) */
	const char *log_dir;              /* NULL = /var/log/agentbox (root's runtime) */
	uint64_t log_max_bytes;           /* per file, a container keeps two; 0 = default */
	uint64_t log_max_total;           /* the whole directory; 0 = default */
	/* runtime */
	unsigned netns_pool;              /* network namespaces made ahead (runtime/egress/netns_pool.h) */
	/* header credentials and their gateway (agent_credentials.h) */
	struct agent_credentials credentials;
};

/* Built-in defaults, then the file on top. path NULL: the default path, which may
 * be absent; a path given explicitly must exist. */
/* The admin's file as errors name it ("set X in FILE"). */
static inline const char *agent_config_name(const struct agent_config *cfg)
{
	return cfg->path ? cfg->path : DEFAULT_AGENT_CONFIG;
}

int agent_config_load(const char *path, struct arena *a, struct agent_config *ret, struct ab_err *err);

#endif
