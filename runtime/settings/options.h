/* The options of the commands as parsed: the global flags every command sees
 * (main.c), create/run's and exec's (cmd_*.c, kit run). */
#ifndef AGENTBOX_OPTIONS_H
#define AGENTBOX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct oci_config;
struct oci_process;
struct gateway_cred;

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
	bool egress_live;               /* kit run: the box's user may widen its policy live (egress allow) */
	bool egress_learn;              /* --egress-mode learn, kit run --learn: egress open and recorded */
};

struct create_opts {
	const char *id;
	const char *bundle;             /* as given; made absolute */
	const char *pid_file;
	const char *console_socket;
	int preserve_fds;
	bool no_pivot;
	bool no_new_keyring;
	bool detach;                    /* run --detach */
	bool keep;                      /* run --keep: do not delete after exit */
	/* run only: called once the init is set up and blocked, before it is started
	 * (e.g. to attach slirp4netns to its network namespace). */
	int (*on_created)(pid_t init_pid, void *data, struct ab_err *err);
	void *on_created_data;
	/* run only, optional: called with the same data as soon as the init's new
	 * network namespace exists (cloned, id maps written), while the init is
	 * still setting up: NETNS_FD is the pooled namespace the init joins
	 * (valid during the call only), or -1 when /proc/INIT_PID/ns/net is it.
	 * Not called when the init gets no new network namespace. Whatever it
	 * starts must not let the program run before on_created. */
	int (*on_netns)(pid_t init_pid, int netns_fd, void *data, struct ab_err *err);
	int timeout_ms;                 /* run only: SIGKILL the container after this, 0 = none */
	bool report_egress;             /* run only: print refused egress to stderr at the end */
	bool report_learn;              /* run only: learn mode's summary on stderr at the end */
	/* Use this parsed config instead of loading BUNDLE/config.json (kit run: a config
	 * holding credentials that must never be on disk). Taken: create/run free it. */
	struct oci_config *config;
	/* run only (kit run): the init gets SIGKILL when this process dies, so a
	 * killed runtime leaves no box running. Not for create/run of engines, whose
	 * runtime process exits while the container lives on. */
	bool die_with_parent;
	/* kit run: the kit's header credentials (secrets in memory) and its
	 * upstream_ca, for the box's credential gateway (policy_gateway.c) */
	const struct gateway_cred *gateway_creds;
	size_t n_gateway_creds;
	const char *gateway_upstream_ca;
};

struct exec_opts {
	const char *id;
	const char *process_path;       /* --process */
	struct oci_process *process;    /* built from flags when no --process */
	const char *console_socket;
	const char *pid_file;
	int preserve_fds;
	bool detach;
	bool tty;
	const char *cwd;
	char **env;
	size_t n_env;
	const char *user;
	uint32_t *additional_gids;      /* --additional-gids: added to the process' own */
	size_t n_additional_gids;
	char **caps;
	size_t n_caps;
	bool no_new_privs;
	const char *apparmor;           /* --apparmor: overrides the container's profile */
	const char *process_label;      /* --process-label */
	char **args;
	size_t n_args;
};

#endif
