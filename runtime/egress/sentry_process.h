/* The container's DNS sentry as a process of the runtime (sentry_process.c).
 * The sentry's body is netfilter's egress_sentry_run. */
#ifndef AGENTBOX_SENTRY_PROCESS_H
#define AGENTBOX_SENTRY_PROCESS_H

#include "config.h"
#include "error.h"
#include "policy_types.h"
#include "state.h"

/* Keep the container's resolv.conf as it is before the hooks run: where a
 * hook rewrites it for the engine's own resolver (Docker's prestart hook, for
 * 127.0.0.11), the servers named before are the ones that resolver forwards
 * to (forward_upstream in sentry_params.h). Nothing when it cannot be read. */
void policy_note_resolv_before_hooks(struct agent_policy *p, const struct oci_config *c,
				     const struct container_state *st);

/* The DNS sentry, forked (after the ruleset and the hooks: its upstream
 * resolvers come from the container's resolv.conf, which Docker's
 * libnetwork-setkey hook rewrites to its embedded 127.0.0.11) without waiting
 * for it, in two halves. policy_prepare_sentry makes its DNS listeners and log
 * socket, so the container's first lookups and refused packets queue until it
 * serves; policy_fork_sentry forks it and puts it into the state at once: create
 * right after, run only once the program runs, off its critical path.
 * policy_wait_sentry waits for it to say ready (or why not): run only after
 * the program started. create does not wait: with sentry_status_file set the
 * sentry writes its word to SENTRY_STATUS in the state directory, and start
 * waits for it there (policy_sentry_wait_started) before the program may run. */
int policy_prepare_sentry(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
			  int state_dirfd, struct ab_err *err);
int policy_fork_sentry(struct agent_policy *p, struct container_state *st, struct ab_err *err);
int policy_wait_sentry(struct agent_policy *p, struct ab_err *err);
/* start: 0 once the sentry of a created container says it serves (at once
 * when it did already, or when the container has no SENTRY_STATUS); -1 with its
 * error when it failed, exited first or took over SENTRY_START_MAX_MS. The
 * sentry is the recorded one: pid and start time. */
#define SENTRY_START_MAX_MS 30000
int policy_sentry_wait_started(int state_dirfd, pid_t sentry_pid, uint64_t sentry_start_time, struct ab_err *err);
/* A sentry prepared and not forked yet: the fds whose first input calls for it
 * (its DNS listeners, log socket and SNI listeners) into fds, their count; 0
 * when there is none to fork. */
#define POLICY_SENTRY_WAKE_MAX 10   /* 4 DNS listeners, the log socket, 2 SNI and 2 proxy listeners,
				     * learn's log socket */
size_t policy_sentry_wake_fds(const struct agent_policy *p, int fds[POLICY_SENTRY_WAKE_MAX]);
/* Forked and not yet reaped: wait (at most timeout_ms) for it to exit, which it
 * does once init has, after logging what init was refused last. */
void policy_sentry_finish(struct agent_policy *p, int timeout_ms);
/* What policy_wait_sentry reads, to poll on; -1 once waited for (or none). */
int policy_sentry_ready_fd(const struct agent_policy *p);
/* Kill and reap a sentry forked by this process, and drop one prepared but not
 * forked (a failed create). */
void policy_sentry_cleanup(struct agent_policy *p);
/* Stop the sentry the state records (delete). */
void policy_sentry_stop(const struct container_state *s);
/* What policy_free frees of the sentry's. */
void policy_sentry_free(struct agent_policy *p);

#endif
