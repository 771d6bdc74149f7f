/* Run from an unwritable view or copy of ourselves (CVE-2019-5736); see sealed_exe.c. */
#ifndef AGENTBOX_SEALED_EXE_H
#define AGENTBOX_SEALED_EXE_H

#include "error.h"

/* Where the host's read-only copy of the binary lives (one file per build, each
 * bind-mounted read-only onto itself); scripts/host-pins.sh removes it after a test run. */
#define EXE_CACHE_DIR "/run/agentbox-exe"

/* Chooses how: returns 0 when nothing is needed or children will detach
 * themselves; otherwise re-executes from a sealed copy (does not return) or fails. */
int sealed_exe_ensure(char **argv, struct ab_err *err);

/* In a child about to enter a container, when sealed_exe_ensure chose not to
 * re-execute: afterwards no page of this process and not /proc/self/exe is the
 * host's binary. Call before anything in the container can see the process. */
int sealed_exe_detach(struct ab_err *err);
/* In the parent, just before cloning a child that will call sealed_exe_detach:
 * reads what the child would otherwise read itself, on its critical path, and
 * opens (first making, where it may) the host's read-only copy of the binary. */
int sealed_exe_prepare(struct ab_err *err);

struct stat;
/* A name for a build of the binary, from its stat: "agentbox-DEV-INO-SIZE-MTIME-CTIME".
 * A new build (or the same bytes written again) gets another. */
void exe_identity(const struct stat *st, char *buf, size_t len);

#endif
