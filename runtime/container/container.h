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


int container_create(const struct global_opts *g, const struct create_opts *o, struct ab_err *err);
int container_start(const struct global_opts *g, const char *id, struct ab_err *err);
/* Foreground run: returns the exit status (>= 0) or a negative error. */
int container_run(const struct global_opts *g, const struct create_opts *o, struct ab_err *err);
int container_kill(const struct global_opts *g, const char *id, int sig, bool all, struct ab_err *err);
int container_delete(const struct global_opts *g, const char *id, bool force, struct ab_err *err);
int container_pause(const struct global_opts *g, const char *id, bool pause, struct ab_err *err);
int container_print_state(const struct global_opts *g, const char *id, struct ab_err *err);

int container_exec(const struct global_opts *g, struct exec_opts *o, struct ab_err *err);

/* Load state of ID, locked (exclusive or shared). An ID that does not exist
 * while the named box ID does (its container is BOX_ID_PREFIX ID) says so in
 * its error. */
int container_load(const struct global_opts *g, const char *id, bool exclusive, int *ret_dirfd,
		   struct container_state *ret, struct ab_err *err);

/* `kit run --name NAME` runs its box as the container BOX_ID_PREFIX NAME. */
#define BOX_ID_PREFIX "box-"
/* The container a person means by id: id itself when it exists; else, when
 * the named box id's container does, that one (written into buf); else id.
 * For the commands a person uses on a running box (exec, ps, events, egress);
 * those that change or end a container, and state, which engines poll, take
 * ids only: an engine's id that is gone must never find a box. */
const char *container_id_or_box(const struct global_opts *g, const char *id, char *buf, size_t len);

#endif
