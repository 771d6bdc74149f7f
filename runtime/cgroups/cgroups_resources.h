/* linux.resources as the cgroup back ends see it (cgroups_resources.c): which
 * groups a config sets, their checks, hugepage sizes, and the writers v1 and
 * v2 share. */
#ifndef AGENTBOX_CGROUPS_RESOURCES_H
#define AGENTBOX_CGROUPS_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config_types.h"
#include "error.h"

/* Resource groups, to say which hierarchy handles what in hybrid mode. */
enum {
	CG_RES_MEMORY = 1 << 0, CG_RES_CPU = 1 << 1, CG_RES_CPUSET = 1 << 2, CG_RES_PIDS = 1 << 3,
	CG_RES_IO = 1 << 4, CG_RES_HUGETLB = 1 << 5, CG_RES_DEVICES = 1 << 6, CG_RES_RDMA = 1 << 7,
	CG_RES_UNIFIED = 1 << 8, CG_RES_NET = 1 << 9,
	CG_RES_LAST = CG_RES_NET,
	CG_RES_ALL = (CG_RES_LAST << 1) - 1,   /* every group above */
};

bool cg_res_memory_set(const struct oci_resources *r);
bool cg_res_cpu_set(const struct oci_resources *r);
bool cg_res_cpuset_set(const struct oci_resources *r);
bool cg_res_pids_set(const struct oci_resources *r);
bool cg_res_blkio_set(const struct oci_resources *r);
/* blockIO's four throttle lists, in one order, each with what it is called
 * in config.json, in v1's files and in v2's io.max */
enum { CG_THROTTLE_LISTS = 4 };
struct cg_throttle_list {
	const struct oci_throttle_device *d;
	size_t n;
	const char *field;      /* linux.resources.blockIO.FIELD */
	const char *v1_file;    /* blkio.throttle.*_device */
	const char *v2_key;     /* io.max's "MAJ:MIN KEY=rate" */
};
void cg_throttle_lists(const struct oci_resources *r, struct cg_throttle_list th[CG_THROTTLE_LISTS]);
/* "2MB" from a hugepage directory size in kB. */
void cg_hugepage_name(uint64_t kb, char *buf, size_t len);
/* Page sizes the kernel offers ("2MB", "1GB"), from /sys/kernel/mm/hugepages. */
size_t cg_hugepage_sizes(char names[][16], size_t max);
int cg_validate(const struct oci_resources *r, struct ab_err *err);
/* The first resource group r asks a limit of ("memory", "cpu", "blockIO" ...,
 * as linux.resources names it), or NULL. Device rules do not count. */
const char *cg_res_requested(const struct oci_resources *r);
/* A name that can only be a file in the cgroup directory itself. */
bool cg_plain_file_name(const char *s);

/* ---- writers v1 and v2 share: the same files, the same values ---- */
/* cpuset.cpus and cpuset.mems, those set */
int cg_write_cpuset(const char *dir, const struct oci_resources *r, struct ab_err *err);
/* pids.max: the limit, "max" for none (<= 0) */
int cg_write_pids(const char *dir, const struct oci_resources *r, struct ab_err *err);
/* rdma.max: one "DEVICE LIMITS" line a device */
int cg_write_rdma(const char *dir, const struct oci_resources *r, struct ab_err *err);
/* hugetlb.SIZE.LIMIT and, where the kernel has it, hugetlb.SIZE.rsvd.LIMIT;
 * LIMIT is the version's file name: v1 "limit_in_bytes", v2 "max" */
int cg_write_hugetlb(const char *dir, const struct oci_resources *r, const char *limit, struct ab_err *err);

#endif
