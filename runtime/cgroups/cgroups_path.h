/* linux.cgroupsPath to a container's cgroup (cgroups_path.c). */
#ifndef AGENTBOX_CGROUPS_PATH_H
#define AGENTBOX_CGROUPS_PATH_H

#include <stdbool.h>

#include "cgroups_types.h"
#include "config_types.h"
#include "error.h"

/* Resolve linux.cgroupsPath: absolute ("/a/b"), relative ("a/b", below the runtime's
 * own cgroup), systemd "slice:prefix:name" when systemd is set (mapped to the
 * cgroupfs path when systemd is not PID 1, logged at debug), NULL/empty = the default
 * "/agentbox/<id>". disabled yields mode DISABLED. */
int cgroup_resolve(const char *cgroups_path, const char *id, bool systemd, bool disabled,
		   struct cgroup_ref *ret, struct ab_err *err);

/* cgroup_resolve for a rootless runtime (rootless.h), as runc does it: only the
 * cgroup v2 hierarchy, and only where the user may write (a subtree delegated to
 * it); without cgroupsPath, beside the runtime (below the parent of its own
 * cgroup). Where the user may not: an error when the config names a cgroupsPath
 * or asks for a resource limit (res, may be NULL; device rules do not count),
 * else mode DISABLED and *ret_skipped set: the container runs without a cgroup,
 * and the caller says so once. */
int cgroup_resolve_rootless(const char *cgroups_path, const char *id, bool systemd, bool disabled,
			    const struct oci_resources *res, struct cgroup_ref *ret, bool *ret_skipped,
			    struct ab_err *err);

#endif
