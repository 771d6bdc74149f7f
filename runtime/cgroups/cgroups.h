/* cgroups behind one interface (cgroups.c): v1, v2 and the hybrid layout (v1
 * controllers plus a cgroup2 mount at /sys/fs/cgroup/unified), or none at all.
 * The host's layout is in cgroups_host.h, cgroupsPath resolution in
 * cgroups_path.h; the back ends below this file call only down. */
#ifndef AGENTBOX_CGROUPS_H
#define AGENTBOX_CGROUPS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cgroups_types.h"
#include "config_types.h"
#include "error.h"

struct json_out;

/* Create the cgroup in every hierarchy and apply resources (may be NULL).
 * On failure nothing created is left behind. */
int cgroup_create(const struct cgroup_ref *cg, const struct oci_resources *res, struct ab_err *err);
/* Move pid into the cgroup (every hierarchy). */
int cgroup_enter(const struct cgroup_ref *cg, pid_t pid, struct ab_err *err);
/* Move pid into the cgroup's unified (v2) directory only: where a child could not
 * be cloned into it; its v1 hierarchies it joins itself (cgroup_join_self). */
int cgroup_enter_v2(const struct cgroup_ref *cg, pid_t pid, struct ab_err *err);

/* A new process joins the cgroup's v1 hierarchies by itself, through `tasks`
 * files its parent opened: "0" written to `tasks` moves the writing thread, which
 * the kernel does without its global threadgroup lock. A pid written to
 * cgroup.procs takes that lock, and its first taker in a while waits for an RCU
 * grace period: 2-2.7 ms per run measured on this 6.18 hybrid host, almost all of
 * what the nine v1 moves cost. The joining process must be single-threaded. */
#define CGROUP_JOIN_MAX 32
struct cgroup_join {
	size_t n;
	int fd[CGROUP_JOIN_MAX];
	const char *hier[CGROUP_JOIN_MAX];   /* its mount point, for messages */
};
/* Open the `tasks` file of each v1 hierarchy (none on cgroup v2); the directories
 * must exist. On failure none stays open. */
int cgroup_join_open(const struct cgroup_ref *cg, struct cgroup_join *j, struct ab_err *err);
/* In the child: move the calling process into each, then close them all. */
int cgroup_join_self(struct cgroup_join *j, const char *cgroup_path, struct ab_err *err);
void cgroup_join_close(struct cgroup_join *j);
/* An O_DIRECTORY fd of the unified (cgroup2) directory for clone3(CLONE_INTO_CGROUP),
 * on pure v2 and hybrid layouts; -1 otherwise. A hybrid host pays most of a cgroup
 * move in the cgroup2 write (~0.3-0.6 ms here): cloning into it avoids that. */
int cgroup_v2_dirfd(const struct cgroup_ref *cg);
/* The directory of cgroup path in the cgroup2 hierarchy (/sys/fs/cgroup/PATH
 * on pure v2, /sys/fs/cgroup/unified/PATH on a hybrid host); -ENOENT without a
 * cgroup2 mount, -ENAMETOOLONG. */
int cgroup_v2_path(const char *path, char *buf, size_t len);
/* Apply (or update) resources on an existing cgroup. */
int cgroup_apply(const struct cgroup_ref *cg, const struct oci_resources *res, struct ab_err *err);
/* Freeze/thaw every process (v1 freezer, v2 cgroup.freeze); waits until done. */
int cgroup_freeze(const struct cgroup_ref *cg, bool frozen, struct ab_err *err);
/* 1 when frozen, 0 when not. */
int cgroup_is_frozen(const struct cgroup_ref *cg, struct ab_err *err);
/* The pids in the cgroup (malloc'd array). */
int cgroup_pids(const struct cgroup_ref *cg, pid_t **ret, size_t *ret_n, struct ab_err *err);
/* Signal every process in the cgroup (v2 cgroup.kill for SIGKILL where present). */
int cgroup_kill_all(const struct cgroup_ref *cg, int sig, struct ab_err *err);
/* Remove the cgroup from every hierarchy (kills stragglers, bounded retries). */
int cgroup_destroy(const struct cgroup_ref *cg, struct ab_err *err);
/* Write the "data" object of `events --stats` ({cpu,memory,pids,blkio,hugetlb}). */
int cgroup_stats(const struct cgroup_ref *cg, struct json_out *o, struct ab_err *err);
/* An fd that becomes readable when the OOM killer fires in the cgroup
 * (v1: eventfd on memory.oom_control; v2: inotify on memory.events). -1 if none. */
int cgroup_oom_watch(const struct cgroup_ref *cg, struct ab_err *err);
/* Number of OOM kills so far (v2 memory.events oom_kill; v1 memory.oom_control). */
int cgroup_oom_count(const struct cgroup_ref *cg, uint64_t *ret, struct ab_err *err);

#endif
