/* The placeholders kit run puts in a workspace for protected entries that do
 * not exist yet (kit_workspace.h): made before the box starts, bound
 * read-only into it, removed from the host when the last box on that
 * workspace has ended.
 *
 * Removing one while another box still binds it would take that box's
 * protection away (the kernel detaches mounts on a removed entry in every
 * namespace), so the boxes of one workspace share a registry entry under the
 * kit run directory, keyed by the workspace's device and inode:
 *   ID.users  each running box holds a read lock on it (fcntl: its own
 *             process's, never inherited by a child it forks);
 *   ID.list   what was made (written before it is made), NUL-separated;
 *   ID.mutex  an exclusive flock while making or removing.
 * Whoever finds no other user (a write lock that succeeds) removes
 * everything listed that still looks as it was made: the 0:0 device node,
 * an empty directory, or a file holding exactly its placeholder text. A killed run's entries go at
 * the next kit command (kit_placeholders_sweep). */
#ifndef AGENTBOX_KIT_PLACEHOLDERS_H
#define AGENTBOX_KIT_PLACEHOLDERS_H

#include <limits.h>
#include <sys/types.h>

#include "error.h"
#include "kit_workspace.h"

struct kit_placeholders {
	int users_fd;           /* -1 when nothing is held */
	char key[PATH_MAX];     /* the registry path without its suffix */
};

#define KIT_PLACEHOLDERS_INIT {.users_fd = -1}

/* Make the placeholders of plan's absent entries in ws (owned by ws's owner),
 * and hold the workspace's registry entry until kit_placeholders_release. */
int kit_placeholders_make(struct kit_placeholders *ph, const char *ws, const struct kit_ws_plan *plan,
			  struct ab_err *err);
/* Let go; remove the placeholders when no other box uses them. */
void kit_placeholders_release(struct kit_placeholders *ph);
/* Remove the placeholders of workspaces no running box uses any more. */
void kit_placeholders_sweep(void);

#endif
