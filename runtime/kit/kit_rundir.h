/* A kit run's temporary directory: the bundle it builds, the overlay that is
 * the box's root (merged, and for a throw-away box its upper and work
 * directories), slirp4netns' log. It lives under /run/agentbox-kits (root),
 * USER_RUNTIME_DIR/agentbox-kits (an unprivileged user's, set before the
 * user namespace is entered) or $TMPDIR (root of another user namespace),
 * named after the container, with an "owner" file saying which process made
 * it, so that the next kit command removes what a killed run left. */
#ifndef AGENTBOX_KIT_RUNDIR_H
#define AGENTBOX_KIT_RUNDIR_H

#include <limits.h>
#include <stdbool.h>

#include "container.h"
#include "error.h"

struct kit_rundir {
	char dir[PATH_MAX - 64];        /* "" until made */
	char bundle[PATH_MAX];
	char merged[PATH_MAX];
	bool mounted;
};

/* Where kit runs keep their temporary directories (made if need be). */
const char *kit_rundir_base(void);
/* Rootless: keep them in dir (made already) instead. */
void kit_rundir_set_base(const char *dir);
/* Make the directory for container `id` (owner file written first, then
 * renamed into place). */
int kit_rundir_make(struct kit_rundir *rd, const struct global_opts *g, const char *id,
		    struct ab_err *err);
/* Mount the overlay at rd->merged: lower (a colon-separated list for a box),
 * upper and work (NULL: fresh ones in the run directory, thrown away with it;
 * the box's / then takes its owner and mode from lower's). Relative paths are
 * from dirfd (-1: none). */
int kit_rundir_mount_overlay(struct kit_rundir *rd, const char *lower, const char *upper,
			     const char *work, int dirfd, struct ab_err *err);
/* Unmount and remove everything; leaves the directory (with a warning) where a
 * mount will not go. */
void kit_rundir_remove(struct kit_rundir *rd);
/* Clean up after kit runs that were killed (their box died with them). */
void kit_sweep_stale_runs(const struct global_opts *g);

#endif
