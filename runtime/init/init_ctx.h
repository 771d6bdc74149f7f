/* What the container's init child needs from the parent: a copy it reads after
 * clone (types only, so the child-side files share it without calling up into
 * init.c). */
#ifndef AGENTBOX_INIT_CTX_H
#define AGENTBOX_INIT_CTX_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cgroups.h"
#include "config.h"

struct seccomp_prog;

/* Where the box reads what its egress policy refused (agentbox-egress(7)). */
#define REFUSED_FILE_BOX "/run/agentbox/refused"

/* Everything the init child needs; it reads this copy after clone. */
struct init_ctx {
	const char *id;
	const char *bundle;
	char rootfs[PATH_MAX];
	const struct oci_config *config;
	const struct oci_process *process;
	int sync_fd;                    /* child's end */
	int exec_fifo_fd;               /* O_PATH fd of the exec fifo; -1 when run waits on sync */
	int preserve_fds;
	bool wait_on_sync;              /* run: SYNC_START instead of the fifo */
	bool exec_fifo_handover;        /* the fifo must be made process.user's first */
	bool console;                   /* create a pty and send its master */
	bool no_pivot;
	bool no_new_keyring;
	bool new_userns;
	/* No device cgroup (--cgroup-manager disabled) and the floor guards
	 * devices: every mount is made nodev but the container's devpts, and the
	 * device nodes are bound from the host's, so a node the container makes
	 * or finds opens nothing. */
	bool nodev_mounts;
	enum cgroup_mode cgroup_mode;
	const char *cgroup_path;
	struct cgroup_join cgroup_join; /* v1 hierarchies: the init joins them itself */
	struct seccomp_prog *seccomp;   /* programs to load, in order */
	size_t n_seccomp;
	const char *exec_path;          /* resolved program path */
	char *const *exec_env;          /* process.env, with HOME when it had none */
	int parent_pidfd;               /* die_with_parent: a pidfd of the runtime, else -1 */
	int netns_fd;                   /* a pooled network namespace to join, else -1 */
	int refused_fd;                 /* O_PATH fd of the state dir's refused file, bound
					 * read-only on REFUSED_FILE_BOX; -1: none */
	int *mount_trees;               /* per mount: its tree made by the runtime (mount_trees.h),
					 * -1; or NULL */
	/* The floor refuses binds of a procfs or sysfs, also the container's own
	 * (its /proc or /sys, mounted by an earlier mount): checked where the
	 * mount is made, on the source opened for it. */
	bool refuse_kernel_fs_binds;
	/* Opened by the init itself before the container's mounts exist, and
	 * used instead of any path inside the container (procfs.h): */
	int procfd;                     /* a procfs of its own */
	int devnull_fd;                 /* the null device (1:3), the source of every file mask */
	/* (both closed with the other fds in process_finish: no directory of
	 * ours is open while the init waits for start) */
};

#endif
