/* The workspace guard's end of a run: once the box's processes are gone,
 * one walk of the workspace clears set-id bits and file capabilities,
 * removes device nodes and FIFOs, and moves into
 * WS/.agentbox-quarantine/RUN/ what a host tool would run, of all the box
 * made or changed (oci/kit/kit_guard.h says what, agentbox-kit(5) why);
 * then one line per item (at most KIT_SWEEP_LINES) on stderr, and the full
 * list in RUN/MANIFEST.
 *
 * A run killed before its end (SIGKILL) leaves its start recorded under the
 * kit run directory (.sweeps-UID/DEV-INO: the start and the workspace's
 * path, each run holding a read lock on it): the next run on that workspace
 * sweeps from there. The last run to end removes the record; a run on any
 * workspace removes those no run holds whose workspace is gone.
 *
 * The walk never follows a symlink: each directory is opened from its
 * parent's fd with O_NOFOLLOW, each entry judged by fstatat without
 * following, and a mode changed through an O_PATH fd of what was judged:
 * another box on the same workspace may still run. It does not descend
 * into what the box could not write (the protections' binds), nor into
 * another file system mounted below the workspace (the host's own). */
#ifndef AGENTBOX_KIT_SWEEP_H
#define AGENTBOX_KIT_SWEEP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "kit.h"
#include "kit_workspace.h"

#define KIT_SWEEP_LINES 10

struct kit_sweep {
	bool on;
	struct timespec since;          /* what changed from then on is the box's */
	char ws[PATH_MAX];
	const struct kit *k;
	const struct kit_ws_plan *plan;
	char *gitmodules;               /* the top .gitmodules at the start, or NULL */
	size_t gitmodules_len;
	struct stat gitmodules_st;
	int pending_fd;                 /* the workspace's record, read-locked; -1: none */
	char pending[PATH_MAX];
};

/* Before the box starts (the plan made): note the time (or an earlier
 * run's that never ended) and what must be put back. Nothing when the
 * kit's workspace_guard is off or the workspace is read-only. */
void kit_sweep_begin(struct kit_sweep *s, const struct kit *k, const char *ws, const struct kit_ws_plan *plan);
/* After the box's processes are gone: the sweep and its report (stderr).
 * run_id names the run's quarantine directory. Nothing when not begun. */
void kit_sweep_end(struct kit_sweep *s, const char *run_id);

#endif
