/* The floor of the cgroups module, which everything else in it calls down into and
 * which calls none of it: the host's layout and a cgroup's directories
 * (cgroups_host.c), cgroup file and stats helpers (cgroups_files.c), the checks and
 * questions on linux.resources (cgroups_resources.c); cgroupsPath resolution
 * (cgroups_path.c) sits on it too. Not for use outside the cgroups module, except by
 * its unit test. */
#ifndef AGENTBOX_CGROUPS_BASE_H
#define AGENTBOX_CGROUPS_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroups.h"

struct json_out;

#define CG_MAX_HIER 32

/* One mounted v1 hierarchy (deduplicated by superblock: a hierarchy bind-mounted twice
 * appears once). */
struct cg_hier {
	dev_t dev;
	const char *mnt;            /* mount point, e.g. /sys/fs/cgroup/cpu,cpuacct */
	const char *root;           /* cgroup at the mount's root ("/" unless bind-mounted) */
	char ctrls[256];            /* "cpu,cpuacct" or "name=systemd" */
};

/* The paths live packed in strs: a PATH_MAX array each spread a dozen
 * hierarchies over two dozen pages, each a page fault when first written. */
struct cg_host {
	enum cgroup_mode mode;
	char base[PATH_MAX];        /* /sys/fs/cgroup or $AGENTBOX_CGROUP_ROOT */
	char unified[PATH_MAX];     /* cgroup2 mount: base (v2), base/unified (hybrid), "" */
	struct cg_hier hier[CG_MAX_HIER];
	size_t n_hier;
	size_t strs_used;
	char strs[8 * PATH_MAX];
	/* cgroup.controllers of the unified root, read when first asked */
	bool root_controllers_read;
	char root_controllers[512];
};

/* Detected once and cached. */
const struct cg_host *cg_host_get(void);
/* Forget the cached layout, so a test can change AGENTBOX_CGROUP_ROOT. */
void cg_host_reset(void);

bool cg_hier_has(const struct cg_hier *h, const char *ctrl);
/* Hierarchies a container joins: those with a known controller, and name=systemd. */
bool cg_hier_used(const struct cg_hier *h);
/* The v1 hierarchy carrying ctrl ("memory", "name=systemd"), or NULL. */
const struct cg_hier *cg_v1_hier(const char *ctrl);
/* Directory of cgroup path in a hierarchy / in the v2 mount. -ENAMETOOLONG or 0. */
int cg_hier_dir(const struct cg_hier *h, const char *path, char *buf, size_t len);
int cg_v1_dir(const char *ctrl, const char *path, char *buf, size_t len); /* -ENOENT unmounted */
int cg_v2_dir(const char *path, char *buf, size_t len);
/* Is ctrl listed in the cgroup.controllers of the v2 mount's root? */
bool cg_v2_root_has(const char *ctrl);
/* That file's words (read once per process), or NULL when it cannot be read. */
const char *cg_v2_root_controllers(void);

/* Lists of words as cgroup files hold them (controllers, split at white space):
 * the next word at or after *p (its length in *n; *p moves past it), or NULL;
 * and whether the n bytes at w are one of list's words. */
const char *cg_next_word(const char **p, size_t *n);
bool cg_has_word(const char *list, const char *w, size_t n);

/* ---- file helpers: errors name the file and the value ---- */
bool cg_exists(const char *dir, const char *file);
int cg_write(const char *dir, const char *file, const char *val, struct ab_err *err);
/* The same through *fd, opened on first use and left open for the next value
 * (devices.allow takes one rule per write(2)); the caller closes it. */
int cg_write_keep(const char *dir, const char *file, int *fd, const char *val, struct ab_err *err);
int cg_writef(const char *dir, const char *file, struct ab_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Whole file, NUL-terminated; -errno on failure (-ENOENT when absent). */
int cg_read(const char *dir, const char *file, char **ret, struct ab_err *err);
/* First line as a number; "max" reads as UINT64_MAX. -errno when absent or not a number. */
int cg_read_u64(const char *dir, const char *file, uint64_t *ret);
/* Value of "key N" in a flat-keyed text (memory.stat, cgroup.events, ...). */
int cg_kv(const char *text, const char *key, uint64_t *ret);
/* Read dir/file and look up key in it. */
int cg_read_kv(const char *dir, const char *file, const char *key, uint64_t *ret);

/* ---- stats helpers shared by v1 and v2 ---- */
/* "key": N from a one-number file, when it exists ("max" = UINT64_MAX). */
void cg_json_file(struct json_out *o, const char *key, const char *dir, const char *file);
/* "key": {k: N, ...} from "k N" lines (memory.stat). */
void cg_stats_raw(struct json_out *o, const char *key, const char *text);
/* "pids": {current, limit} */
void cg_stats_pids(struct json_out *o, const char *dir);

/* ---- resource helpers shared by v1 and v2 ---- */
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

/* Resource groups, to say which hierarchy handles what in hybrid mode. */
enum {
	CG_RES_MEMORY = 1 << 0, CG_RES_CPU = 1 << 1, CG_RES_CPUSET = 1 << 2, CG_RES_PIDS = 1 << 3,
	CG_RES_IO = 1 << 4, CG_RES_HUGETLB = 1 << 5, CG_RES_DEVICES = 1 << 6, CG_RES_RDMA = 1 << 7,
	CG_RES_UNIFIED = 1 << 8, CG_RES_NET = 1 << 9, CG_RES_ALL = 0x3ff,
};

#endif
