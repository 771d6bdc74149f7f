/* The cgroup v2 back end, also the unified half of a hybrid host (cgroups_v2.c),
 * called by the dispatcher (cgroups.c). */
#ifndef AGENTBOX_CGROUPS_V2_H
#define AGENTBOX_CGROUPS_V2_H

#include <stdbool.h>
#include <stdint.h>

#include "config_types.h"
#include "error.h"

struct json_out;

/* Enable every available controller in the subtree_control of each ancestor of path. */
void cg_v2_enable_controllers(const char *path);
/* Apply the resource groups in what (CG_RES_*) to the cgroup at dir. */
int cg_v2_apply(const char *dir, const struct oci_resources *r, unsigned what, struct ab_err *err);
int cg_v2_freeze(const char *dir, bool frozen, struct ab_err *err);
int cg_v2_is_frozen(const char *dir, struct ab_err *err);
/* Write the sections of the stats object; hugetlb_only for hybrid. */
void cg_v2_stats(const char *dir, struct json_out *o, bool hugetlb_only);
int cg_v2_oom_watch(const char *dir, struct ab_err *err);
int cg_v2_oom_count(const char *dir, uint64_t *ret, struct ab_err *err);
/* cgroup v2 cpu.weight (1..10000) from v1 cpu.shares (2..262144). */
uint64_t cg_shares_to_weight(uint64_t shares);
/* io.weight (1..10000) from blkio weight (10..1000). */
uint64_t cg_blkio_to_io_weight(uint64_t w);
/* memory.swap.max from OCI's memory+swap figure; -1 = "max", 0 = leave alone. */
int cg_v2_swap_value(int64_t swap, int64_t limit, int64_t *ret, struct ab_err *err);

#endif
