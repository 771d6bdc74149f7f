/* The cleanup record (state_record.c): what `delete --force` needs to end a
 * container and remove its cgroups, kept apart from state.json in a small
 * file of fixed format (ROOT/ID/cleanup): the init's and the helpers' pids
 * with their start times, the pid namespace, the cgroup's layout and path,
 * under a SHA-256 of the rest. state_write writes it when what it says
 * changed (replaced whole by a rename, without an fsync: it names live
 * processes, which a crash ends anyway); state_dir_create writes its first
 * form, which names
 * nothing, before anything of the container exists. A state.json that
 * cannot be read (garbage, empty, cut short, missing) no longer hides the
 * processes and cgroups of the container: the record still names them. */
#ifndef AGENTBOX_STATE_RECORD_H
#define AGENTBOX_STATE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroups_types.h"
#include "error.h"

#define CLEANUP_RECORD "cleanup"

/* What the record says. */
struct cleanup_record {
	const char *id;                 /* written; checked when read (not filled) */
	pid_t pid;                      /* the init, 0 before it exists */
	uint64_t pid_start_time;
	bool own_pidns;
	struct cgroup_ref cgroup;
	pid_t sentry_pid, gateway_pid;  /* 0: none */
	uint64_t sentry_start_time, gateway_start_time;
};

/* The record's text, into buf; 0 when it does not fit. */
size_t state_record_text(const struct cleanup_record *r, char *buf, size_t len);
/* Write the record into the state dir (a rename); nothing when the file
 * already says it. */
int state_record_write(int dirfd, const struct cleanup_record *r, struct ab_err *err);
/* Parse a record's text for container id into r: -1 with err when the text
 * is not a whole, unaltered record of that id. */
int state_record_parse(const char *text, const char *id, struct cleanup_record *r, struct ab_err *err);
/* The same from the state dir's file. */
int state_record_read(int dirfd, const char *id, struct cleanup_record *r, struct ab_err *err);

#endif
