/* Container state on disk: ROOT/ID/state.json (written atomically), beside it
 * the cleanup record (state_record.h), a lock on the directory, and the status
 * computed from the live process (pid + start time, so a recycled pid is never
 * mistaken for the container). */
#ifndef AGENTBOX_STATE_H
#define AGENTBOX_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroups_types.h"
#include "config.h"
#include "error.h"
#include "util.h"

#define DEFAULT_STATE_ROOT "/run/agentbox"
#define STATE_FILE "state.json"
#define EXEC_FIFO "exec.fifo"
#define CONFIG_COPY "config.json"
#define EGRESS_LOG "egress.log"
#define EGRESS_POLICY_FILE "egress.policy"   /* a live policy change for the sentry (egress_live.c) */
#define EGRESS_LEARN "egress.learn"          /* learn mode's records (netfilter/sentry/sentry_learn.h) */
/* What the box may read about its refusals: the sentry writes it in the state
 * dir, the box sees it read-only at REFUSED_FILE_BOX (init_ctx.h). */
#define EGRESS_REFUSED "refused"
#define SENTRY_STATUS "sentry.status"   /* after create: "1" once the DNS sentry serves, or why not */
#define STATE_FILE_MAX (1 << 20)

enum container_status { STATUS_CREATING, STATUS_CREATED, STATUS_RUNNING, STATUS_PAUSED, STATUS_STOPPED };

struct container_state {
	struct arena arena;
	char *id;
	pid_t pid;
	uint64_t pid_start_time;
	char *bundle;
	char *rootfs;
	char *created;                /* RFC 3339 */
	bool started;                 /* start was called (exec fifo consumed) */
	struct cgroup_ref cgroup;
	struct oci_kv *annotations;
	size_t n_annotations;
	pid_t sentry_pid;             /* DNS sentry, 0 if none */
	uint64_t sentry_start_time;
	pid_t gateway_pid;            /* credential gateway, 0 if none */
	uint64_t gateway_start_time;
	char *egress_policy;          /* canonical policy text, NULL if none */
	char *egress_token;           /* the pool token its ruleset's table names (netns_pool.h) */
	char *egress_ceiling;         /* the admin's policy (config, flags) a live allow must stay within */
	bool egress_may_widen;        /* a live allow may go beyond it (kit run, egress.live_may_widen) */
	bool egress_proxy;            /* its sentry runs the HTTP proxy (exec gets its variables too) */
	char *seccomp_profile;        /* agent profile in force ("agent", "default", "none") */
	bool systemd_cgroup;
	bool own_pidns;               /* a new pid namespace: killing init kills all */
	bool poststart_hooks, poststop_hooks;   /* the config has some: load it then */
};

const char *status_name(enum container_status s);

/* Create ROOT (0700) and ROOT/ID; refuses an existing id. Returns a locked dirfd. */
int state_dir_create(const char *root, const char *id, int *ret_dirfd, struct ab_err *err);
/* Open ROOT/ID and lock it (shared or exclusive). "container \"ID\" does not exist". */
int state_dir_open(const char *root, const char *id, bool exclusive, int *ret_dirfd,
		   struct ab_err *err);
/* Drop the lock taken by state_dir_open (readers that stay around, like follow). */
int flock_release(int dirfd);
int state_write(int dirfd, const struct container_state *s, struct ab_err *err);
int state_read(int dirfd, const char *id, struct container_state *ret, struct ab_err *err);
/* For delete --force of a damaged state: state_read, or else what the members
 * before a truncation still say (id must match; missing fields are zero). */
int state_read_salvage(int dirfd, const char *id, struct container_state *ret, struct ab_err *err);
/* For delete --force of a damaged state.json: the members the cleanup
 * record (state_record.h) names replace those of s (the init, the pid
 * namespace, the cgroup, sentry and gateway; s->id set if unset); -1 with
 * err when the record is missing, damaged or another container's. */
int state_apply_record(int dirfd, const char *id, struct container_state *s, struct ab_err *err);
void state_free(struct container_state *s);
/* Remove ROOT/ID entirely. */
int state_dir_remove(const char *root, const char *id, struct ab_err *err);
/* Ids of every container under root (malloc'd, sorted). */
int state_list_ids(const char *root, char ***ret_ids, size_t *ret_n, struct ab_err *err);
void state_free_ids(char **ids, size_t n);

/* True if the init process recorded in s is still the same live process. */
bool state_init_alive(const struct container_state *s);
/* created / running / paused / stopped, from the live process and the cgroup. */
enum container_status state_status(const struct container_state *s);

struct json_out;
/* The OCI state document (ociVersion, id, status, pid, bundle, rootfs, created, owner,
 * annotations). */
void state_oci_json(struct json_out *o, const struct container_state *s, enum container_status st);
/* The same document as one line into buf: what hooks get on stdin. */
void state_json_for_hooks(const struct container_state *s, enum container_status st, char *buf, size_t len);

#endif
