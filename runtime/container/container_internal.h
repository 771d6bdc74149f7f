/* Shared by the parent side of the lifecycle: container.c (create), container_run.c
 * (run), exec.c and container_ops.c (start, kill, delete, ...). container_run.c
 * calls into container.c and container_ops.c, container.c and exec.c into
 * container_ops.c, which calls none of them. */
#ifndef AGENTBOX_CONTAINER_INTERNAL_H
#define AGENTBOX_CONTAINER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "options.h"
#include "policy_types.h"
#include "seccomp.h"
#include "state.h"

/* Everything create has made so far, so a failure can undo exactly that. */
struct create_ctx {
	const struct global_opts *g;
	const struct create_opts *o;
	char bundle[PATH_MAX];
	struct oci_config *config;
	struct agent_policy policy;
	struct container_state st;
	int state_dirfd;
	bool state_created;
	bool cgroup_created;
	bool cgroup_skipped;            /* rootless without a delegated cgroup: said once made */
	pid_t pid;
	int sync_fd;
	int console_master;             /* kept for a foreground run with a terminal */
	struct seccomp_prog seccomp[POLICY_SECCOMP_MAX];
	size_t n_seccomp;
	unsigned netns_pool_refill;     /* pool size to top up once done, 0: none */
	const char *netns_pool_policy;  /* ... with firewalled entries of this policy */
};

/* create and run share everything up to the child saying READY (container.c). */
int create_common(struct create_ctx *cc, bool run_mode, struct ab_err *err);
/* Undo whatever create made; best effort with its own error. */
void create_cleanup(struct create_ctx *cc);
void create_ctx_free(struct create_ctx *cc);
/* Free it all and, if the container was made, top up the netns pool. */
void create_ctx_finish(struct create_ctx *cc, bool made);
/* Once the container is made: what the user should know about it (a rootless
 * container without a cgroup). */
void create_warn_made(const struct create_ctx *cc);

/* container_ops.c */
struct tty_proxy;
/* For a loop that forwards signals and the terminal to a process of the
 * container (run's, exec's): a signalfd of every signal, and the terminal's
 * proxy started when there is one (master >= 0). The signalfd, or < 0. */
int container_forward_start(int master, struct tty_proxy *proxy, struct ab_err *err);
/* A pidfd of pid if it is still the process that started at start_time, else -1. */
int container_pidfd_open_checked(pid_t pid, uint64_t start_time);
/* Signal the recorded init only if it is still the same process (pid + start time). */
int container_signal_init(const struct container_state *s, int sig);
/* poststart and poststop hooks (config may be NULL: read from the bundle).
 * poststop failures are warnings; a failing poststart hook (or its config gone)
 * is the caller's error. */
int container_run_late_hooks(const struct container_state *s, enum oci_hook_kind kind,
			     const struct oci_config *config, struct ab_err *err);
/* runtime-spec 1.3, lifecycle: after a failing poststart hook, destroy the
 * container as delete would (poststop hooks included). */
void container_destroy_after_poststart(const struct global_opts *g, struct container_state *s,
				       const struct oci_config *config);
/* Kill what is left, tear down the sentry, cgroup and state, run poststop hooks. */
int container_destroy(const struct global_opts *g, struct container_state *s,
		      const struct oci_config *config, struct ab_err *err);

#endif
