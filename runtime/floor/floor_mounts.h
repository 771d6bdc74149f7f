/* Mounts inside /proc (floor_mounts.c): refused whatever the agent policy,
 * as runc refuses them, since a mount there redirects what the runtime
 * writes by a /proc path (issue 34, the CVE-2025-52881 class). The init
 * checks the same where it mounts, on the target it opened (mount_checks.h):
 * a destination that reaches into /proc through a symlink is caught there. */
#ifndef AGENTBOX_FLOOR_MOUNTS_H
#define AGENTBOX_FLOOR_MOUNTS_H

#include "config.h"
#include "error.h"

/* Each mount of c whose destination is inside /proc, but for the files
 * lxcfs emulates (oci_mount_proc_dest), is an error naming it; at /proc
 * itself only a proc file system or a bind of one is taken. */
int floor_proc_mounts(const struct oci_config *c, struct ab_err *err);

#endif
