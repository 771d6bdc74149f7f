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
#include "state.h"

struct seccomp_prog;
struct agent_policy;

/* Global flags every command sees. */
struct global_opts {
	const char *root;               /* state root */
	bool systemd_cgroup;
	bool cgroups_disabled;          /* --cgroup-manager disabled */
	const char *config_path;        /* --config (agent policy) */
	const char *egress_allow;       /* --egress-allow LIST */
	const char *egress_deny;        /* --egress-deny LIST */
	const char *seccomp_profile;    /* --seccomp-profile NAME */
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
	int timeout_ms;                 /* run only: SIGKILL the container after this, 0 = none */
	bool report_egress;             /* run only: print refused egress to stderr at the end */
	/* Use this parsed config instead of loading BUNDLE/config.json (kit run: a config
	 * holding credentials that must never be on disk). Taken: create/run free it. */
	struct oci_config *config;
	/* run only (kit run): the init gets SIGKILL when this process dies, so a
	 * killed runtime leaves no box running. Not for create/run of engines, whose
	 * runtime process exits while the container lives on. */
	bool die_with_parent;
};

/* Everything the init child needs; it reads this copy after clone. */
struct init_ctx {
	const char *id;
	const char *bundle;
	char rootfs[PATH_MAX];
	const struct oci_config *config;
	const struct oci_process *process;
	int sync_fd;                    /* child's end */
	int exec_fifo_fd;               /* O_PATH fd of the exec fifo; -1 when run waits on sync */
	int preserve_fds;
	bool wait_on_sync;              /* run: SYNC_START instead of the fifo */
	bool console;                   /* create a pty and send its master */
	bool no_pivot;
	bool no_new_keyring;
	bool new_userns;
	enum cgroup_mode cgroup_mode;
	const char *cgroup_path;
	struct cgroup_join cgroup_join; /* v1 hierarchies: the init joins them itself */
	struct seccomp_prog *seccomp;   /* programs to load, in order */
	size_t n_seccomp;
	const char *exec_path;          /* resolved program path */
	char *const *exec_env;          /* process.env, with HOME when it had none */
	int parent_pidfd;               /* die_with_parent: a pidfd of the runtime, else -1 */
	int netns_fd;                   /* a pooled network namespace to join, else -1 */
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

/* Child side (init.c): never returns; on failure reports over sync_fd and _exit(1). */
__attribute__((noreturn)) void init_main(struct init_ctx *ctx);

#endif
