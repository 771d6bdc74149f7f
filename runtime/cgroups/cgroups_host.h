/* The host's cgroup layout (cgroups_host.c): which hierarchies are mounted where,
 * detected once and cached, and the directory of a cgroup in each. Calls nothing
 * else of the cgroups module but its file helpers. */
#ifndef AGENTBOX_CGROUPS_HOST_H
#define AGENTBOX_CGROUPS_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroups_types.h"

/* Layout of this host (detected once, cached). Test builds honour AGENTBOX_CGROUP_ROOT (test_hooks.h). */
enum cgroup_mode cgroup_host_mode(void);
/* Drop the cached host layout's memory (a long-lived child that needs no cgroups). */
void cgroup_host_release(void);
const char *cgroup_mode_name(enum cgroup_mode m);   /* "v1", "hybrid", "v2", "disabled" */
int cgroup_mode_from_name(const char *name, enum cgroup_mode *ret);

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

#endif
