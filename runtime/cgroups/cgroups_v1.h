/* The cgroup v1 back end (cgroups_v1.c), called by the dispatcher (cgroups.c). */
#ifndef AGENTBOX_CGROUPS_V1_H
#define AGENTBOX_CGROUPS_V1_H

#include <stdbool.h>
#include <stdint.h>

#include "config_types.h"
#include "error.h"

struct json_out;

/* Apply resources for the controllers mounted as v1, except the groups in skip (left to
 * the unified hierarchy in hybrid mode). */
int cg_v1_apply(const char *path, const struct oci_resources *r, unsigned skip, struct ab_err *err);
/* cpuset dirs start empty in v1; give dir its parent's cpus/mems so tasks can join.
 * fresh: dir was just made (so it is not read first). 1 when the parent has none to
 * give (its own levels need filling first), 0 when done, -1 on error. */
int cg_v1_cpuset_inherit(const char *dir, bool fresh, struct ab_err *err);
/* After the cgroup at path is removed: the real-time CPU time given to the
 * levels of /agentbox above it for its realtimeRuntime goes back (best effort). */
void cg_v1_rt_release(const char *path);
int cg_v1_freeze(const char *path, bool frozen, struct ab_err *err);
int cg_v1_is_frozen(const char *path, struct ab_err *err);
void cg_v1_stats(const char *path, struct json_out *o, bool hugetlb);
int cg_v1_oom_watch(const char *path, struct ab_err *err);
int cg_v1_oom_count(const char *path, uint64_t *ret, struct ab_err *err);

#endif
