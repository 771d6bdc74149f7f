/* The hardening floor: what no engine config may lower. Privileged
 * capabilities, the host's namespaces (floor_ns.c) and devices
 * (floor_devices.c), and mounts of the kernel's file systems that would undo
 * the masks are refused (each error names the setting of agentbox-config(5)
 * that relaxes it); noNewPrivileges is forced, the floor's masked and
 * read-only paths are added to the engine's, /sys is read-only, and
 * CAP_NET_ADMIN and CAP_NET_RAW go while the egress firewall is in force. */
#include <linux/capability.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "floor_devices.h"
#include "floor_mounts.h"
#include "floor_ns.h"
#include "log.h"
#include "floor.h"

/* Capabilities that make a container privileged: each hands over part of the host. */
static const int privileged_caps[] = {
	CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_SYS_RAWIO, CAP_NET_ADMIN, CAP_SYS_BOOT,
	CAP_SYS_TIME, CAP_MAC_ADMIN, CAP_MAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_AUDIT_CONTROL,
	CAP_SYSLOG, CAP_BPF, CAP_PERFMON,
};

int policy_floor_process(const struct agent_policy *p, struct oci_process *proc, const char *what,
			 struct ab_err *err)
{
	if (!proc)
		return 0;
	const struct agent_config *cfg = &p->config;
	struct oci_capabilities *caps = &proc->caps;
	uint64_t all = caps->bounding | caps->effective | caps->permitted | caps->inheritable | caps->ambient;
	if (cfg->refuse_privileged) {
		for (size_t i = 0; i < ARRAY_SIZE(privileged_caps); i++) {
			uint64_t bit = 1ULL << privileged_caps[i];
			if (!(all & bit) || (cfg->allowed_capabilities & bit))
				continue;
			char *name = cap_to_name(privileged_caps[i]);
			char upper[64] = "";
			for (size_t k = 0; name && name[k] && k < sizeof upper - 1; k++)
				upper[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32 : name[k]);
			if (name)
				cap_free(name);
			return ab_error(err, 0, "floor: privileged containers are refused: %s.capabilities has %s (allow it with floor.allow_capabilities, or floor.refuse_privileged: false, in %s)",
					what, upper, agent_config_name(&p->config));
		}
	}
	if (cfg->force_no_new_privileges && !proc->no_new_privileges) {
		log_debug("floor: forcing noNewPrivileges");
		proc->no_new_privileges = true;
	}
	if (p->egress_enforced) {
		/* with its firewall in force the container must not hold CAP_NET_ADMIN (it
		 * could rewrite the rules) nor CAP_NET_RAW (packet sockets pass beneath them) */
		uint64_t drop = (1ULL << CAP_NET_ADMIN) | (1ULL << CAP_NET_RAW);
		if (all & drop)
			log_debug("egress policy in force: dropping CAP_NET_ADMIN and CAP_NET_RAW");
		caps->bounding &= ~drop;
		caps->effective &= ~drop;
		caps->permitted &= ~drop;
		caps->inheritable &= ~drop;
		caps->ambient &= ~drop;
	}
	return 0;
}

/* paths + extra, without duplicates, in the config's arena */
static void add_paths(struct arena *a, char ***paths, size_t *n, char *const *extra, size_t n_extra)
{
	char **all = arena_alloc(a, sizeof(char *) * (*n + n_extra + 1));
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		all[k++] = (*paths)[i];
	for (size_t i = 0; i < n_extra; i++) {
		bool dup = false;
		for (size_t j = 0; j < *n && !dup; j++)
			dup = streq((*paths)[j], extra[i]);
		if (!dup)
			all[k++] = extra[i];
	}
	*paths = all;
	*n = k;
}

/* A procfs or sysfs anywhere but at /proc and /sys, or a bind of the host's,
 * would show what the floor masks and keeps read-only, unmasked and writable. */
static int kernel_mounts(const struct agent_config *cfg, struct oci_config *c, struct ab_err *err)
{
	const char *file = agent_config_name(cfg);
	for (size_t i = 0; i < c->n_mounts; i++) {
		struct oci_mount *m = &c->mounts[i];
		const char *type = m->type ? m->type : "";
		bool bind = (m->flags & MS_BIND) || streq(type, "bind");
		struct statfs sf;
		if (bind && m->source && statfs(m->source, &sf) == 0 &&
		    (sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC))
			return ab_error(err, 0, "floor: mounts[%zu] binds %s, the host's %s, which would show what the floor masks: refused (or set floor.refuse_privileged: false in %s)",
					i, m->source, sf.f_type == PROC_SUPER_MAGIC ? "/proc" : "/sys", file);
		if (bind)
			continue;
		bool proc = streq(type, "proc"), sys = streq(type, "sysfs");
		if ((proc && !streq(m->destination, "/proc")) || (sys && !streq(m->destination, "/sys")))
			return ab_error(err, 0, "floor: mounts[%zu]: a %s file system at %s would be unmasked (only %s is masked): refused (or set floor.refuse_privileged: false in %s)",
					i, type, m->destination, proc ? "/proc" : "/sys", file);
		/* root writes to sysfs reach the host's devices and power */
		if (sys && !(m->flags & MS_RDONLY)) {
			log_debug("floor: mounting /sys read-only");
			m->flags |= MS_RDONLY;
		}
	}
	return 0;
}

int policy_floor_config(const struct agent_policy *p, struct oci_config *c, struct ab_err *err)
{
	const struct agent_config *cfg = &p->config;
	if (policy_floor_process(p, c->process, "process", err) < 0)
		return -1;
	if (floor_namespaces(cfg, c, err) < 0 || floor_devices(cfg, c, err) < 0)
		return -1;
	/* whatever the policy, as runc */
	if (floor_proc_mounts(c, err) < 0)
		return -1;
	if (cfg->refuse_privileged && kernel_mounts(cfg, c, err) < 0)
		return -1;
	/* what the engine's lists leave out (docker --security-opt
	 * systempaths=unconfined sends none) */
	struct oci_linux *l = &c->linux_;
	add_paths(&c->arena, &l->masked_paths, &l->n_masked_paths, cfg->masked_paths, cfg->n_masked_paths);
	add_paths(&c->arena, &l->readonly_paths, &l->n_readonly_paths, cfg->readonly_paths, cfg->n_readonly_paths);
	return 0;
}

int policy_floor_create(const struct agent_policy *p, const struct oci_config *c, bool no_pivot,
			struct ab_err *err)
{
	const struct agent_config *cfg = &p->config;
	if (no_pivot && cfg->refuse_no_pivot)
		return ab_error(err, 0, "floor: --no-pivot is refused: without pivot_root the host's mounts stay in the container's mount namespace, behind a chroot (or set floor.refuse_no_pivot: false in %s)",
				agent_config_name(cfg));
	return 0;
}
