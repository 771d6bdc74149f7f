/* config.json (OCI runtime-spec 1.2, Linux) as typed structs: the types alone,
 * shared by the parser's files (config*.c) and their users; no functions.
 * Everything a parsed config owns lives in its arena; free it with oci_config_free.
 * "has_x" flags mark optional scalars that were present. Arrays of strings
 * (char **x with size_t n_x) are also NULL-terminated, so args/env go straight
 * to execve. JSON null is taken as "absent", as the engines' Go encoders mean it. */
#ifndef AGENTBOX_OCI_CONFIG_TYPES_H
#define AGENTBOX_OCI_CONFIG_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "util.h"

struct oci_kv {
	char *key;
	char *value;
};

struct oci_user {
	uint32_t uid, gid;
	bool has_umask;
	uint32_t umask;
	uint32_t *additional_gids;
	size_t n_additional_gids;
	char *username;
};

struct oci_rlimit {
	int resource;           /* RLIMIT_* */
	char *type;             /* as written, e.g. "RLIMIT_NOFILE" */
	uint64_t soft, hard;
};

/* Capability sets as bit masks over CAP_* numbers (libcap's names). */
struct oci_capabilities {
	uint64_t bounding, effective, inheritable, permitted, ambient;
};

struct oci_io_priority {
	int class;              /* IOPRIO_CLASS_RT/BE/IDLE */
	int priority;
};

struct oci_scheduler {
	char *policy;           /* SCHED_OTHER, ... */
	int policy_num;
	int nice;
	int priority;
	char **flags;
	size_t n_flags;
	uint64_t runtime, deadline, period;
};

struct oci_process {
	bool terminal;
	bool has_console_size;
	unsigned console_height, console_width;
	struct oci_user user;
	char **args;
	size_t n_args;
	char **env;
	size_t n_env;
	char *cwd;
	bool has_capabilities;
	struct oci_capabilities caps;
	struct oci_rlimit *rlimits;
	size_t n_rlimits;
	bool no_new_privileges;
	char *apparmor_profile;
	char *selinux_label;
	bool has_oom_score_adj;
	int oom_score_adj;
	bool has_io_priority;
	struct oci_io_priority io_priority;
	bool has_scheduler;
	struct oci_scheduler scheduler;
	char *exec_cpu_affinity_initial, *exec_cpu_affinity_final;
};

struct oci_id_mapping {
	uint32_t container_id, host_id, size;
};

struct oci_mount {
	char *destination;
	char *source;
	char *type;
	char **options;
	size_t n_options;
	struct oci_id_mapping *uid_mappings, *gid_mappings;
	size_t n_uid_mappings, n_gid_mappings;
	/* Derived from options by oci_mount_parse_options: */
	unsigned long flags;        /* MS_* to set (MS_BIND, MS_RDONLY, ...) */
	unsigned long propagation;  /* MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE (| MS_REC) or 0 */
	bool recursive_bind;        /* rbind */
	bool tmpcopyup;
	uint64_t rec_attr_set, rec_attr_clr;   /* MOUNT_ATTR_* from rro, rnosuid, ... */
	char *data;                 /* remaining options joined by ',' for mount(2) data */
	bool idmap;                 /* "idmap" / "ridmap" (or uid/gid mappings given) */
	bool recursive_idmap;       /* "ridmap" */
};

struct oci_hook {
	char *path;
	char **args;
	size_t n_args;
	char **env;
	size_t n_env;
	bool has_timeout;
	int timeout;                /* seconds, > 0 */
};

enum oci_hook_kind {
	HOOK_PRESTART,
	HOOK_CREATE_RUNTIME,
	HOOK_CREATE_CONTAINER,
	HOOK_START_CONTAINER,
	HOOK_POSTSTART,
	HOOK_POSTSTOP,
	HOOK_KIND_COUNT
};

struct oci_hooks {
	struct oci_hook *hooks[HOOK_KIND_COUNT];
	size_t n_hooks[HOOK_KIND_COUNT];
};

enum oci_ns_kind { NS_PID, NS_NETWORK, NS_MOUNT, NS_IPC, NS_UTS, NS_USER, NS_CGROUP, NS_TIME, NS_KIND_COUNT };

struct oci_namespace {
	enum oci_ns_kind kind;
	int clone_flag;             /* CLONE_NEW* */
	char *path;                 /* NULL = create a new one */
};

struct oci_device {
	char *path;
	char type;                  /* 'c', 'b', 'u', 'p' */
	int64_t major, minor;
	bool has_file_mode;
	uint32_t file_mode;
	bool has_uid, has_gid;
	uint32_t uid, gid;
};

struct oci_device_rule {        /* linux.resources.devices[] */
	bool allow;
	char type;                  /* 'a', 'c', 'b' */
	int64_t major, minor;       /* -1 = wildcard */
	char access[4];             /* subset of "rwm" */
};

struct oci_weight_device {
	int64_t major, minor;
	bool has_weight, has_leaf_weight;
	uint16_t weight, leaf_weight;
};

struct oci_throttle_device {
	int64_t major, minor;
	uint64_t rate;
};

struct oci_hugepage_limit {
	char *page_size;            /* "2MB", "1GB" */
	uint64_t limit;
};

struct oci_resources {
	struct oci_device_rule *devices;
	size_t n_devices;
	struct {
		bool has_limit, has_reservation, has_swap, has_kernel, has_kernel_tcp, has_swappiness,
			has_disable_oom_killer, has_use_hierarchy, has_check_before_update;
		int64_t limit, reservation, swap, kernel, kernel_tcp;
		uint64_t swappiness;
		bool disable_oom_killer, use_hierarchy, check_before_update;
	} memory;
	struct {
		bool has_shares, has_quota, has_burst, has_period, has_realtime_runtime,
			has_realtime_period, has_idle;
		uint64_t shares, period, realtime_period, burst;
		int64_t quota, realtime_runtime, idle;
		char *cpus, *mems;
	} cpu;
	struct {
		bool has_limit;
		int64_t limit;              /* <= 0 = unlimited */
	} pids;
	struct {
		bool has_weight, has_leaf_weight;
		uint16_t weight, leaf_weight;
		struct oci_weight_device *weight_device;
		size_t n_weight_device;
		struct oci_throttle_device *throttle_read_bps, *throttle_write_bps,
			*throttle_read_iops, *throttle_write_iops;
		size_t n_throttle_read_bps, n_throttle_write_bps, n_throttle_read_iops,
			n_throttle_write_iops;
	} block_io;
	struct oci_hugepage_limit *hugepage_limits;
	size_t n_hugepage_limits;
	struct {
		bool has_class_id;
		uint32_t class_id;
		struct oci_kv *priorities;  /* name -> priority as decimal text */
		size_t n_priorities;
	} network;
	struct oci_kv *unified;
	size_t n_unified;
	struct oci_kv *rdma;            /* device -> "hca_handle=N hca_object=M" (rdma.max
					 * syntax; "max" where the spec field is absent) */
	size_t n_rdma;
};

enum oci_seccomp_action {
	SECCOMP_ACT_KILL_THREAD_,   /* SCMP_ACT_KILL and SCMP_ACT_KILL_THREAD */
	SECCOMP_ACT_KILL_PROCESS_,
	SECCOMP_ACT_TRAP_,
	SECCOMP_ACT_ERRNO_,
	SECCOMP_ACT_TRACE_,
	SECCOMP_ACT_ALLOW_,
	SECCOMP_ACT_LOG_,
	SECCOMP_ACT_NOTIFY_,
};

enum oci_seccomp_op {
	SECCOMP_OP_NE, SECCOMP_OP_LT, SECCOMP_OP_LE, SECCOMP_OP_EQ, SECCOMP_OP_GE, SECCOMP_OP_GT,
	SECCOMP_OP_MASKED_EQ,
};

struct oci_seccomp_arg {
	unsigned index;
	uint64_t value, value_two;
	enum oci_seccomp_op op;
};

struct oci_seccomp_syscall {
	char **names;
	size_t n_names;
	enum oci_seccomp_action action;
	bool has_errno_ret;
	unsigned errno_ret;
	struct oci_seccomp_arg *args;
	size_t n_args;
};

struct oci_seccomp {
	enum oci_seccomp_action default_action;
	bool has_default_errno_ret;
	unsigned default_errno_ret;
	char **architectures;       /* "SCMP_ARCH_X86_64", ... */
	size_t n_architectures;
	char **flags;               /* "SECCOMP_FILTER_FLAG_LOG", ... */
	size_t n_flags;
	char *listener_path;
	char *listener_metadata;
	struct oci_seccomp_syscall *syscalls;
	size_t n_syscalls;
};

/* linux.memoryPolicy (runtime-spec 1.3): set_mempolicy(2) for the container's
 * init, inherited by what it starts. */
#define OCI_NUMA_NODES_MAX 1024     /* the kernel's largest MAX_NUMNODES */
struct oci_memory_policy {
	char *mode;                 /* "MPOL_BIND", as written */
	int mode_num;               /* the kernel's MPOL_* number */
	unsigned flags;             /* MPOL_F_STATIC_NODES, ... */
	char *nodes;                /* "0-3,7" as written, or NULL */
	unsigned long nodemask[OCI_NUMA_NODES_MAX / (8 * sizeof(unsigned long))];
	unsigned long maxnode;      /* set_mempolicy's: highest node + 2, 0 without nodes */
};

struct oci_linux {
	struct oci_namespace *namespaces;
	size_t n_namespaces;
	struct oci_id_mapping *uid_mappings, *gid_mappings;
	size_t n_uid_mappings, n_gid_mappings;
	struct oci_device *devices;
	size_t n_devices;
	char *cgroups_path;
	bool has_resources;
	struct oci_resources resources;
	struct oci_kv *sysctl;
	size_t n_sysctl;
	char **masked_paths;
	size_t n_masked_paths;
	char **readonly_paths;
	size_t n_readonly_paths;
	char *rootfs_propagation;       /* "private", "shared", "slave", "unbindable" or NULL */
	unsigned long rootfs_propagation_flags;
	char *mount_label;
	struct oci_seccomp *seccomp;    /* NULL = none */
	bool has_personality;
	char *personality_domain;       /* "LINUX" or "LINUX32" */
	unsigned long personality;
	bool has_time_offsets;
	int64_t time_monotonic_secs, time_boottime_secs;
	uint32_t time_monotonic_nanosecs, time_boottime_nanosecs;
	struct oci_kv *net_devices;     /* linux.netDevices: host name -> name in the
					 * container (value NULL = same name) */
	size_t n_net_devices;
	bool has_memory_policy;
	struct oci_memory_policy memory_policy;
};

struct oci_config {
	struct arena arena;
	char *oci_version;
	struct oci_process *process;    /* NULL when absent (allowed by the spec for create) */
	char *root_path;                /* as written */
	bool root_readonly;
	char *hostname;
	char *domainname;
	struct oci_mount *mounts;
	size_t n_mounts;
	struct oci_hooks hooks;
	struct oci_kv *annotations;
	size_t n_annotations;
	struct oci_linux linux_;        /* zeroed when "linux" is absent */
	bool has_linux;
};

#endif
