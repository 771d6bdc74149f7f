/* The hardening floor: what no engine config may lower. Privileged
 * capabilities, the host's namespaces and devices are refused (each error
 * names the setting of agentbox-config(5) that relaxes it), noNewPrivileges is
 * forced, extra masked paths are added, and CAP_NET_ADMIN and CAP_NET_RAW go
 * while the egress firewall is in force. */
#include <linux/capability.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

#include "log.h"
#include "policy.h"

/* Capabilities that make a container privileged: each hands over part of the host. */
static const int privileged_caps[] = {
	CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_SYS_RAWIO, CAP_NET_ADMIN, CAP_SYS_BOOT,
	CAP_SYS_TIME, CAP_MAC_ADMIN, CAP_MAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_AUDIT_CONTROL,
	CAP_SYSLOG, CAP_BPF, CAP_PERFMON,
};

static const char *config_name(const struct agent_policy *p)
{
	return p->config.path ? p->config.path : DEFAULT_AGENT_CONFIG;
}

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
					what, upper, config_name(p));
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

/* Is the namespace at path the host's own (that of pid 1)? */
static bool is_host_ns(const char *path, const char *name)
{
	char host[64];
	struct stat a, b;
	snprintf(host, sizeof host, "/proc/1/ns/%s", name);
	return stat(path, &a) == 0 && stat(host, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int policy_floor_config(const struct agent_policy *p, struct oci_config *c, struct ab_err *err)
{
	const struct agent_config *cfg = &p->config;
	const char *file = config_name(p);
	if (policy_floor_process(p, c->process, "process", err) < 0)
		return -1;
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	if (cfg->refuse_host_network && (!net || (net->path && is_host_ns(net->path, "net"))))
		return ab_error(err, 0, "floor: the host's network namespace is refused: give the container its own (or set floor.refuse_host_network: false in %s)", file);
	const struct oci_namespace *pid = oci_namespace_find(c, NS_PID);
	if (cfg->refuse_host_pid && (!pid || (pid->path && is_host_ns(pid->path, "pid"))))
		return ab_error(err, 0, "floor: the host's PID namespace is refused: give the container its own (or set floor.refuse_host_pid: false in %s)", file);
	if (cfg->refuse_host_devices) {
		const struct oci_resources *r = &c->linux_.resources;
		for (size_t i = 0; c->linux_.has_resources && i < r->n_devices; i++) {
			const struct oci_device_rule *d = &r->devices[i];
			bool reads_or_writes = strpbrk(d->access, "rw") != NULL;
			if (d->allow && reads_or_writes && (d->type == 'a' || d->major < 0))
				return ab_error(err, 0, "floor: host devices are refused: linux.resources.devices[%zu] allows every %s device (or set floor.refuse_host_devices: false in %s)",
						i, d->type == 'b' ? "block" : d->type == 'c' ? "character" : "", file);
		}
		for (size_t i = 0; i < c->linux_.n_devices; i++)
			if (c->linux_.devices[i].type == 'b')
				return ab_error(err, 0, "floor: host devices are refused: linux.devices[%zu] is the block device %s (or set floor.refuse_host_devices: false in %s)",
						i, c->linux_.devices[i].path, file);
	}
	/* extra masked paths on top of the engine's */
	if (cfg->n_masked_paths) {
		struct oci_linux *l = &c->linux_;
		char **paths = arena_alloc(&c->arena, sizeof(char *) * (l->n_masked_paths + cfg->n_masked_paths + 1));
		size_t n = 0;
		for (size_t i = 0; i < l->n_masked_paths; i++)
			paths[n++] = l->masked_paths[i];
		for (size_t i = 0; i < cfg->n_masked_paths; i++) {
			bool dup = false;
			for (size_t k = 0; k < l->n_masked_paths; k++)
				dup |= streq(l->masked_paths[k], cfg->masked_paths[i]);
			if (!dup)
				paths[n++] = cfg->masked_paths[i];
		}
		l->masked_paths = paths;
		l->n_masked_paths = n;
	}
	return 0;
}
