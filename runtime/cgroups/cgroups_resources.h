/* linux.resources as the cgroup back ends see it (cgroups_resources.c): which
 * groups a config sets, their checks, and hugepage sizes. */
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

#endif
