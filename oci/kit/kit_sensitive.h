/* Workspaces that must not be handed to a box without being asked for
 * (kit_sensitive.c): "/", a home directory or one above it, and directories
 * holding ~/.ssh-like secrets. */
#ifndef AGENTBOX_KIT_SENSITIVE_H
#define AGENTBOX_KIT_SENSITIVE_H

#include <stdbool.h>

#include "error.h"

/* Refuse a workspace that is "/", the home directory of a user (or a directory
 * above one), or that holds secrets such as .ssh, .aws or a .npmrc with a
 * token, naming what was found and how to allow it. */
int kit_workspace_check_sensitive(const char *ws, struct ab_err *err);
/* ws is a user's home directory (for the shell start-up files' placeholders). */
bool kit_workspace_is_home(const char *ws);

#endif
