/* The global flags every command sees (main.c parses them). */
#ifndef AGENTBOX_OPTIONS_H
#define AGENTBOX_OPTIONS_H

#include <stdbool.h>

/* Global flags every command sees. */
struct global_opts {
	const char *root;               /* state root */
	bool rootless;                  /* not root of the host (--rootless): cgroups
					 * only where delegated (rootless.h) */
	bool systemd_cgroup;
	bool cgroups_disabled;          /* --cgroup-manager disabled */
	const char *config_path;        /* --config (agent policy) */
	const char *egress_allow;       /* --egress-allow LIST */
	const char *egress_deny;        /* --egress-deny LIST */
	const char *egress_internal;    /* --egress-internal LIST */
	const char *seccomp_profile;    /* --seccomp-profile NAME */
	const char *credentials;        /* --credentials LIST (config.yaml's header credentials) */
};

#endif
