/* Just enough of git's metadata to know where the host's git will look for
 * code to run in a workspace (kit_workspace.c): a config file's
 * core.hooksPath and include paths, a ".git" file's gitdir, the paths of
 * .gitmodules. Read with git's own rules where they matter (sections and keys
 * case-insensitive, quotes and escapes in values, "key" alone is true), never
 * following a symlink out of the directory given. */
#ifndef AGENTBOX_KIT_GIT_H
#define AGENTBOX_KIT_GIT_H

#include <stddef.h>

#include "util.h"

/* Called for each "key = value" of a config text; section lower-cased,
 * subsection as written (NULL when none), key lower-cased, value unquoted
 * (NULL for a key alone). */
typedef void (*kit_git_config_fn)(const char *section, const char *subsection, const char *key,
				  const char *value, void *data);
void kit_git_config_each(const char *text, size_t len, kit_git_config_fn fn, void *data);

struct kit_git_config_refs {
	char *hooks_path;       /* core.hooksPath (the last one), NULL when unset */
	char **includes;        /* include.path and includeIf.*.path, in order */
	size_t n_includes;
};
/* The references of the config file dirfd/name (absent or unreadable: none). */
void kit_git_config_refs(int dirfd, const char *name, struct arena *a, struct kit_git_config_refs *ret);

/* The gitdir a ".git" file names ("gitdir: PATH"), or NULL. */
char *kit_gitfile_target(int dirfd, const char *name, struct arena *a);

/* The submodule paths of a .gitmodules file (submodule.NAME.path), in order. */
size_t kit_gitmodules_paths(int dirfd, const char *name, struct arena *a, char ***ret);

#endif
