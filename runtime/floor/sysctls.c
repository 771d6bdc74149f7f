/* linux.sysctl against the container's namespaces (sysctls.h). */
#include "sysctls.h"
#include "config_linux.h"
#include "policy.h"
#include "util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
	const char *prefix;
	enum oci_ns_kind kind;
} sysctl_ns[] = {
	{"net.", NS_NETWORK}, {"kernel.shm", NS_IPC}, {"kernel.msg", NS_IPC},
	{"kernel.sem", NS_IPC}, {"fs.mqueue.", NS_IPC}, {"kernel.hostname", NS_UTS},
	{"kernel.domainname", NS_UTS},
};

int sysctls_check_namespaces(const struct oci_config *c, struct ab_err *err)
{
	for (size_t i = 0; i < c->linux_.n_sysctl; i++) {
		const char *key = c->linux_.sysctl[i].key, *value = c->linux_.sysctl[i].value;
		/* as runc: the OCI fields say these, and two sources could disagree */
		if (streq(key, "kernel.hostname"))
			return ab_error(err, 0, "config.json: linux.sysctl: \"kernel.hostname\" conflicts with the hostname field: set hostname instead");
		if (streq(key, "kernel.domainname") && c->domainname && !streq(c->domainname, value ? value : ""))
			return ab_error(err, 0, "config.json: linux.sysctl: \"kernel.domainname\" conflicts with the domainname field (\"%s\" and \"%s\")",
					value ? value : "", c->domainname);
		bool known = false;
		for (size_t j = 0; j < ARRAY_SIZE(sysctl_ns); j++) {
			if (strncmp(key, sysctl_ns[j].prefix, strlen(sysctl_ns[j].prefix)) != 0)
				continue;
			known = true;
			const struct oci_namespace *ns = oci_namespace_find(c, sysctl_ns[j].kind);
			/* a joined network namespace is decided once the policy is known */
			if (!ns || (ns->path && sysctl_ns[j].kind != NS_NETWORK))
				return ab_error(err, 0, "config.json: linux.sysctl: \"%s\" needs a new %s namespace of the container's own",
						key, oci_ns_kind_name(sysctl_ns[j].kind));
		}
		if (!known)
			return ab_error(err, 0, "config.json: linux.sysctl: \"%s\" is not namespaced: it would change the host", key);
	}
	return 0;
}

int sysctls_check_joined_netns(const struct oci_config *c, const struct agent_policy *p, const char *id,
			       int state_dirfd, struct ab_err *err)
{
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	if (!net || !net->path)
		return 0;
	const char *key = NULL;
	for (size_t i = 0; i < c->linux_.n_sysctl && !key; i++)
		if (strncmp(c->linux_.sysctl[i].key, "net.", 4) == 0)
			key = c->linux_.sysctl[i].key;
	if (!key)
		return 0;
	struct stat ns, own;
	if (stat(net->path, &ns) < 0)
		return ab_error(err, errno, "config.json: linux.sysctl: \"%s\": the network namespace %s", key, net->path);
	if (stat("/proc/self/ns/net", &own) < 0)
		return ab_error(err, errno, "config.json: linux.sysctl: \"%s\": stat the runtime's network namespace", key);
	if (ns.st_dev == own.st_dev && ns.st_ino == own.st_ino)
		return ab_error(err, 0, "config.json: linux.sysctl: \"%s\": the network namespace %s is the runtime's own (the host's): refused",
				key, net->path);
	char owner[256];
	bool same;
	int r = policy_netns_owner(p, net->path, id, state_dirfd, owner, sizeof owner, &same, err);
	if (r < 0)
		return ab_wrap(err, "config.json: linux.sysctl: \"%s\"", key);
	if (r == 1 && !same)
		return ab_error(err, 0, "config.json: linux.sysctl: \"%s\" would change the network namespace %s, which container %s polices with another egress policy: refused (containers sharing a network namespace share its sysctls)",
				key, net->path, owner);
	return 0;
}
