/* Issue 25 item 3: a workspace the agent can always write, whoever owns it.
 * The box's user stays who the kit says (non-root by default); when that is
 * not the workspace's owner, the workspace is mounted id-mapped (the
 * runtime's idmap.c): the owner's files show as the user's, and what the
 * user writes lands on the host as the owner's. Where the workspace's file
 * system cannot be id-mapped, one warning says so and the box writes with
 * its own permissions. */
#ifndef AGENTBOX_KIT_IDMAP_H
#define AGENTBOX_KIT_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "kit.h"

/* Decide for workspace ws and the box user uid:gid; fills o->ws_idmap and
 * the owner's ids. */
int kit_idmap_workspace(const char *ws, uint32_t uid, uint32_t gid, struct kit_build_opts *o,
			struct ab_err *err);

#endif
