/* A kit's workspace is the host directory the box writes. Two guards keep it
 * from becoming a way back to the host (agentbox-kit(5), WORKSPACE):
 *
 * - the files the host later runs as the user without asking (git's hooks and
 *   config, direnv's .envrc, editors' and coding agents' project settings,
 *   shell start-up files) are read-only to the box, and those that do not
 *   exist yet cannot be created: kit_workspace_plan() lists, from what is on
 *   disk, the read-only binds, the directories pinned so that they cannot be
 *   renamed away, and the placeholders kit run creates for absent entries;
 * - a workspace that is "/", a home directory (or holds one), or holds
 *   ~/.ssh-like secrets is refused unless asked for explicitly
 *   (kit_workspace_check_sensitive()). */
#ifndef AGENTBOX_KIT_WORKSPACE_H
#define AGENTBOX_KIT_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "kit_sensitive.h"
#include "util.h"

struct kit;

enum kit_ws_action {
	KIT_WS_PIN,             /* a directory bound onto itself, writable: it cannot be renamed */
	KIT_WS_READONLY,        /* bound read-only onto itself */
};

struct kit_ws_entry {
	char *rel;              /* relative to the workspace, no leading or trailing "/" */
	const char *name;       /* the protected name it stands for (".git/hooks"), for messages */
	enum kit_ws_action action;
	bool absent;            /* not on disk: kit run creates a placeholder first */
	bool dir;               /* a directory (or, absent, a directory placeholder) */
	const char *content;    /* an absent file's placeholder text ("" for an empty file) */
};

struct kit_ws_plan {
	struct kit_ws_entry *v; /* parents before children */
	size_t n;
	bool home;              /* the workspace is a home directory (allowed explicitly) */
	const char **opened;    /* what workspace_writable opened, as paths here (a core.hooksPath...) */
	size_t n_opened;
};

/* The plan for workspace ws (absolute, real) under kit k (its
 * workspace_protect and workspace_writable). with_absent: include entries that
 * do not exist (kit run makes placeholders for them; kit build leaves them
 * out). A protected entry, or a directory above one, that is a symlink is an
 * error naming it: a bind cannot keep the box from replacing a symlink.
 * Strings in a. */
int kit_workspace_plan(const struct kit *k, const char *ws, bool with_absent, struct arena *a,
		       struct kit_ws_plan *ret, struct ab_err *err);


/* Where kit run holds back, at the workspace's top, what a box left that
 * the host would run (runtime/kit/kit_sweep.c). */
#define KIT_QUARANTINE_DIR ".agentbox-quarantine"

/* A name kit_workspace_plan protects by default, or a directory above one
 * (".git", ".config"), or a path below the top through a name the end of a
 * run holds back ("sub/.vscode", "vendor/lib/.git"): what workspace_writable
 * may open. */
bool kit_workspace_default_name(const char *rel);
/* One component that editors, agents or direnv run from wherever it lies
 * (".envrc", ".vscode", ".claude"...): the top's list, by name. */
bool kit_workspace_tool_name(const char *name);
/* A relative path as workspace_protect and workspace_writable take it:
 * normalised into buf (no "./", no trailing "/"), or -1 with why. */
int kit_workspace_rel_path(const char *text, char *buf, size_t len, const char **why);

#endif
