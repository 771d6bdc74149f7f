/* The container lifecycle, parent side: create, start, run, exec, kill, delete,
 * pause/resume, update. Each cmd_<name>.c parses its arguments and calls one of these. */
#ifndef AGENTBOX_CONTAINER_H
#define AGENTBOX_CONTAINER_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cgroups.h"
#include "config.h"
#include "error.h"
#include "init.h"
#include "gateway.h"
#include "options.h"
#include "state.h"

struct agent_policy;

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
	int timeout_ms;                 /* run only: SIGKILL the container after this, 0 = none */
	bool report_egress;             /* run only: print refused egress to stderr at the end */
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

int container_create(const struct global_opts *g, const struct create_opts *o, struct ab_err *err);
int container_start(const struct global_opts *g, const char *id, struct ab_err *err);
/* Foreground run: returns the exit status (>= 0) or a negative error. */
int container_run(const struct global_opts *g, const struct create_opts *o, struct ab_err *err);
int container_kill(const struct global_opts *g, const char *id, int sig, bool all, struct ab_err *err);
int container_delete(const struct global_opts *g, const char *id, bool force, struct ab_err *err);
int container_pause(const struct global_opts *g, const char *id, bool pause, struct ab_err *err);
int container_print_state(const struct global_opts *g, const char *id, struct ab_err *err);

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
int container_exec(const struct global_opts *g, struct exec_opts *o, struct ab_err *err);

/* Load state of ID, locked (exclusive or shared). */
int container_load(const struct global_opts *g, const char *id, bool exclusive, int *ret_dirfd,
		   struct container_state *ret, struct ab_err *err);

#endif
