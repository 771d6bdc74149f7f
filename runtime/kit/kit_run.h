/* `agentbox kit run` and what the kit commands share: the lifecycle of a box
 * built from a kit (agentbox-kit(8)). cmd_kit.c parses the command line and
 * calls in here. */
#ifndef AGENTBOX_KIT_RUN_H
#define AGENTBOX_KIT_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "container.h"
#include "error.h"
#include "kit.h"

struct kit_run_opts {
	const char *kit_path;           /* NULL: the built-in default kit */
	const char *workspace;          /* --workspace, or NULL */
	char **allow;                   /* --allow entries, checked already */
	size_t n_allow;
	char **command;                 /* after "--"; none: the kit's */
	size_t n_command;
	bool tty;
	bool allow_sensitive_workspace; /* --allow-sensitive-workspace */
	const char *name;               /* --name: a box that persists (kit_box.h) */
	bool ws_guard_set;              /* --workspace-guard: over the kit's workspace_guard */
	enum kit_ws_guard ws_guard;
	bool learn;                     /* --learn: egress open, what it reaches recorded */
};

/* Build the kit into a temporary bundle and run it in the foreground: returns
 * the box's exit status (>= 0), or a negative error. */
int kit_run(struct global_opts *g, const struct kit_run_opts *o, struct ab_err *err);

/* For an image rootfs: unpack it into (or find it in) the cache under the
 * state root. Nothing to do for other rootfs kinds. */
int kit_resolve_image_cached(const struct global_opts *g, struct kit *k, struct ab_err *err);

#endif
