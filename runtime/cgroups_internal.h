/* The cgroup back ends: v1 (cgroups_v1.c), v2 and the unified half of hybrid
 * (cgroups_v2.c), the v2 device program (cgroups_bpf.c). The dispatcher (cgroups.c)
 * calls them; they call only down, into cgroups_base.h. Not for use outside the
 * cgroups module, except by its unit test. */
#ifndef AGENTBOX_CGROUPS_INTERNAL_H
#define AGENTBOX_CGROUPS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroups_base.h"

struct json_out;

/* ---- v1 ---- */
/* Apply resources for the controllers mounted as v1, except the groups in skip (left to
 * the unified hierarchy in hybrid mode). */
int cg_v1_apply(const char *path, const struct oci_resources *r, unsigned skip, struct ab_err *err);
/* cpuset dirs start empty in v1; give dir its parent's cpus/mems so tasks can join.
 * fresh: dir was just made (so it is not read first). 1 when the parent has none to
 * give (its own levels need filling first), 0 when done, -1 on error. */
int cg_v1_cpuset_inherit(const char *dir, bool fresh, struct ab_err *err);
int cg_v1_freeze(const char *path, bool frozen, struct ab_err *err);
int cg_v1_is_frozen(const char *path, struct ab_err *err);
void cg_v1_stats(const char *path, struct json_out *o, bool hugetlb);
int cg_v1_oom_watch(const char *path, struct ab_err *err);
int cg_v1_oom_count(const char *path, uint64_t *ret, struct ab_err *err);

/* ---- v2 (also the unified half of hybrid) ---- */
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

/* ---- v2 device controller: an eBPF program ---- */
struct bpf_insn;
/* Build the program for rules (last match wins; nothing matched = deny). */
int cg_bpf_devices_build(const struct oci_device_rule *rules, size_t n, struct bpf_insn **ret,
			 size_t *ret_n, struct ab_err *err);
/* Load it and attach it to the cgroup at dir, replacing programs attached before. */
int cg_bpf_devices_apply(const char *dir, const struct oci_device_rule *rules, size_t n,
			 struct ab_err *err);

#endif
