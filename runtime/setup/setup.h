/* agentbox setup: registering the runtime with an engine (agentbox-setup(8)).
 *
 * Each engine's edit is text in, text out (setup_docker.c, setup_podman.c,
 * setup_containerd.c; tests/unit/test_setup.c); setup_engines.c reads the
 * engine's file, shows the edit as a diff and writes it. Uses lib only. */
#ifndef AGENTBOX_SETUP_H
#define AGENTBOX_SETUP_H

#include "error.h"

#include <stdbool.h>

/* An edit of an engine's file. text NULL: no file. Returns 1 with *ret the
 * change (before/after NULL: no file before/after), 0 when there is nothing
 * to change, or a negative error naming `what`. */
struct setup_change {
	char *before;       /* what the preview shows as the old text */
	char *after;
	const char *note;   /* said before the preview, or NULL */
};
typedef int (*setup_edit_fn)(const char *text, const char *what, const char *bin, bool undo,
			     struct setup_change *ret, struct ab_err *err);
int setup_edit_docker(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err);
int setup_edit_podman(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err);
int setup_edit_containerd(const char *text, const char *what, const char *bin, bool undo,
			  struct setup_change *ret, struct ab_err *err);
void setup_change_free(struct setup_change *c);

/* What `agentbox setup` was asked. */
struct setup_request {
	const char *engine;     /* docker, podman or containerd */
	const char *bin;        /* --path, or NULL: the running agentbox */
	const char *config;     /* --config, or NULL: the engine's own file */
	bool undo;
	bool dry_run;
};
/* Registers agentbox with the engine (or takes it back): the change shown on
 * stdout as a diff, then written unless dry_run. */
int setup_engine(const struct setup_request *r, struct ab_err *err);

#endif
