/* The workspace guard's end of a run (runtime/kit/kit_sweep.c walks the
 * workspace; agentbox-kit(5), WORKSPACE, says what and why): the parts that
 * need no file system. Which paths the sweep may judge (not those the box
 * could not write, nor those the kit opened), which entries of a git
 * directory git runs, what was done, and how that is told.
 *
 * What it does, for each entry the box made or changed (its ctime not
 * before the run's start: the box can set a time, never the ctime):
 *   - a set-user-ID or set-group-ID bit (not on a directory) is cleared,
 *     security.capability removed, a device node or FIFO removed;
 *   - what a host tool would run is moved into the quarantine directory:
 *     in any git directory (a .git, a bare repository, a submodule's under
 *     .git/modules, a linked worktree's) its config, config.worktree,
 *     commondir and hooks, and the files and directories its config
 *     includes or names as core.hooksPath; a .git that is a file or a
 *     symlink below the top; .gitmodules; editors', agents' and direnv's
 *     settings (kit_workspace_tool_name) wherever they lie, except inside
 *     node_modules, where npm puts packages' own. */
#ifndef AGENTBOX_KIT_GUARD_H
#define AGENTBOX_KIT_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "kit.h"
#include "kit_workspace.h"
#include "util.h"

enum kit_guard_what {
	KIT_GUARD_SETID,        /* a set-user-ID or set-group-ID bit cleared */
	KIT_GUARD_FCAPS,        /* security.capability removed */
	KIT_GUARD_DEVICE,       /* a device node removed */
	KIT_GUARD_FIFO,         /* a FIFO removed */
	KIT_GUARD_GIT,          /* quarantined: what git runs, in a git directory */
	KIT_GUARD_GITLINK,      /* quarantined: a .git file or symlink below the top */
	KIT_GUARD_GITMODULES,   /* quarantined: a .gitmodules */
	KIT_GUARD_TOOL,         /* quarantined: editors', agents' or direnv's settings */
	KIT_GUARD_DEEP,         /* quarantined: a directory too deep to be looked into */
	KIT_GUARD_STUCK,        /* should have been held back, and could not be (why: in held) */
};

struct kit_guard_item {
	enum kit_guard_what what;
	char *rel;              /* where it was, relative to the workspace */
	char *held;             /* quarantined: where it is now, relative to the workspace */
	bool restored;          /* the start's .gitmodules was put back in its place */
};

struct kit_guard_report {
	struct arena a;
	struct kit_guard_item *v;
	size_t n, cap;
	char *qdir;             /* the run's quarantine directory (relative), once made */
};

/* The item, appended; strings copied. */
struct kit_guard_item *kit_guard_add(struct kit_guard_report *r, enum kit_guard_what what, const char *rel,
				     const char *held);
void kit_guard_report_free(struct kit_guard_report *r);

/* ---- where the sweep judges ---- */

enum kit_guard_scope {
	KIT_GUARD_ALL,          /* everything */
	KIT_GUARD_PRIVS,        /* set-id bits, capabilities, devices only: the kit opened it */
	KIT_GUARD_NONE,         /* nothing: the box could not write it (a protection's bind) */
};

/* Paths that change the scope below them: the plan's read-only entries
 * (NONE; the quarantine directory among them when it exists at the start),
 * the kit's workspace_writable and what they opened in the plan, such as
 * the directory core.hooksPath names (PRIVS). */
struct kit_guard_marks {
	const char **rel;
	enum kit_guard_scope *scope;
	size_t n;
};

void kit_guard_marks_make(const struct kit *k, const struct kit_ws_plan *plan, struct arena *a,
			  struct kit_guard_marks *ret);
/* Those strictly below the directory dir_rel ("" for the top). */
void kit_guard_marks_below(const struct kit_guard_marks *m, const char *dir_rel, struct arena *a,
			   struct kit_guard_marks *ret);
/* rel's own scope: a mark's, or inherit (the parent's). */
enum kit_guard_scope kit_guard_scope_of(const struct kit_guard_marks *m, const char *rel, enum kit_guard_scope inherit);

/* ---- names ---- */

enum kit_guard_member {
	KIT_GUARD_NOT_RUN,      /* git runs nothing from it */
	KIT_GUARD_RUN_FILE,     /* config, config.worktree, commondir: judged by its own change */
	KIT_GUARD_RUN_DIR,      /* hooks: by any change in it */
};
/* What git runs of the entry `name` of a git directory. */
enum kit_guard_member kit_guard_gitdir_member(const char *name);
/* A directory holding these is a git directory to git (HEAD, and objects
 * and refs, or a commondir that has them). */
bool kit_guard_is_gitdir(bool head, bool objects, bool refs, bool commondir);
/* A tool's settings, held back at rel (not inside node_modules). */
bool kit_guard_tool_at(const char *rel, const char *name);

/* A path a git config gives (absolute, or relative to base_rel) as one
 * relative to the workspace ws, or NULL when it leads outside. */
char *kit_guard_in_workspace(struct arena *a, const char *ws, const char *base_rel, const char *path);

/* ---- telling ---- */

/* The end-of-run summary for the workspace ws: a heading, one line per item
 * up to max_lines (then "and K more"), where the full list is and how to
 * look; NULL when there is nothing to tell. malloc'd. */
char *kit_guard_summary(const struct kit_guard_report *r, const char *ws, size_t max_lines);
/* The quarantine directory's list: "HELD<TAB>ORIGINAL<TAB>WHY" per item. malloc'd. */
char *kit_guard_manifest(const struct kit_guard_report *r);

#endif
