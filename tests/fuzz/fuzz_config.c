/* config.json as the engine hands it over: oci_config_parse, then what create
 * does with a parsed config before anything touches the kernel — the agent
 * policy from its annotations (seccomp profile, egress allow/deny, which may
 * only narrow the admin's list), the hardening floor, and the seccomp program
 * compiled from linux.seccomp. */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "container.h"
#include "floor.h"
#include "policy.h"
#include "seccomp.h"

/* The admin's side: an allowlist for annotations to narrow, no agent profile
 * (compiling it for every input would only slow the fuzzer down; the
 * annotation may still ask for it). */
static char fz_config_agent_cfg[64];

/* The admin's allowlist (config.yaml above), and the same parsed here: the
 * oracle for "an annotation may only narrow it". One entry is as long as an
 * entry gets, so that its port and protocol sit past 255 characters. */
#define FZ_CONFIG_LONG "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa." \
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb." \
	"ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc." \
	"ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define FZ_CONFIG_ADMIN_ALLOW "example.com, '*.example.org:443', 198.51.100.0/24, '2001:db8::/32', " \
	"'*." FZ_CONFIG_LONG ":443/udp'"
static struct egress_policy fz_config_admin;

/* Is e inside admin entry x: same or narrower port/protocol, and the same name,
 * a name or subdomain wildcard under x's wildcard, or a CIDR inside x's? */
static bool fz_config_within(const struct egress_entry *x, const struct egress_entry *e)
{
	if ((x->port && x->port != e->port) || (x->proto && x->proto != e->proto))
		return false;
	if (x->kind == EGRESS_NAME)
		return e->kind == EGRESS_NAME && strcmp(x->name, e->name) == 0;
	if (x->kind == EGRESS_WILDCARD) {
		if (e->kind != EGRESS_NAME && e->kind != EGRESS_WILDCARD)
			return false;
		size_t le = strlen(e->name), lx = strlen(x->name);
		if (e->kind == EGRESS_WILDCARD && le == lx)
			return strcmp(e->name, x->name) == 0;
		return le > lx && e->name[le - lx - 1] == '.' && strcmp(e->name + le - lx, x->name) == 0;
	}
	if (x->kind != e->kind || e->prefix < x->prefix)
		return false;
	for (unsigned b = 0; b < x->prefix; b++)
		if ((x->addr[b / 8] ^ e->addr[b / 8]) & (0x80 >> (b % 8)))
			return false;
	return true;
}

FUZZ_INIT(config)
{
	static const char yaml[] =
		"seccomp:\n  profile: none\n"
		"egress:\n  allow: [" FZ_CONFIG_ADMIN_ALLOW "]\n"
		"  deny: [bad.example.com]\n"
		"floor:\n  refuse_privileged: true\n  masked_paths: [/proc/fuzz]\n";
	/* a memfd named through /proc: nothing left on disk */
	int fd = memfd_create("agentbox-fuzz-config.yaml", 0);
	if (fd < 0 || write(fd, yaml, sizeof yaml - 1) != (ssize_t)sizeof yaml - 1)
		abort();
	snprintf(fz_config_agent_cfg, sizeof fz_config_agent_cfg, "/proc/self/fd/%d", fd);
	char list[1024];
	size_t o = 0;
	for (const char *c = FZ_CONFIG_ADMIN_ALLOW; *c && o < sizeof list - 1; c++)
		if (*c != '\'')
			list[o++] = *c;
	list[o] = 0;
	struct ab_err err;
	if (egress_policy_add(&fz_config_admin, list, false, "admin", &err) < 0) {
		fprintf(stderr, "fuzz_config: admin list: %s\n", err.msg);
		abort();
	}
	/* the harness itself must let a plain config through to the policy */
	static const char plain[] = "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"r\"}, "
		"\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\"}]}}";
	struct oci_config *c = NULL;
	struct global_opts g = {.root = "/nonexistent", .config_path = fz_config_agent_cfg};
	struct agent_policy p;
	if (oci_config_parse(plain, "config.json", &c, &err) < 0 || policy_resolve(&g, c, &p, &err) < 0) {
		fprintf(stderr, "fuzz_config: the harness refuses a plain config: %s\n", err.msg);
		abort();
	}
	policy_free(&p);
	oci_config_free(c);
	return 0;
}

FUZZ_TARGET(config)
{
	char *text = fuzz_cstr(data, size);
	struct oci_config *c = NULL;
	struct ab_err err = {0};
	if (oci_config_parse(text, "config.json", &c, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
		FUZZ_CHECK(c == NULL, "config returned on error");
		free(text);
		return 0;
	}
	FUZZ_CHECK(c != NULL, "no config on success");
	/* the string arrays go straight to execve: NULL-terminated */
	if (c->process) {
		FUZZ_CHECK(!c->process->args || c->process->args[c->process->n_args] == NULL, "args not terminated");
		FUZZ_CHECK(!c->process->env || c->process->env[c->process->n_env] == NULL, "env not terminated");
	}
	struct global_opts g = {.root = "/nonexistent", .config_path = fz_config_agent_cfg};
	struct agent_policy p;
	int resolved = policy_resolve(&g, c, &p, &err);
	if (resolved == 0) {
		/* whatever the annotations asked for, it is within the admin's list */
		if (p.egress_enforced)
			for (size_t i = 0; i < p.egress.allow.n; i++) {
				bool ok = false;
				for (size_t k = 0; k < fz_config_admin.allow.n && !ok; k++)
					ok = fz_config_within(&fz_config_admin.allow.v[k], &p.egress.allow.v[i]);
				char buf[512];
				FUZZ_CHECK(ok, "allow entry %s is not within the admin's allowlist",
					   egress_entry_to_string(&p.egress.allow.v[i], buf, sizeof buf));
			}
	}
	if (resolved == 0 && policy_floor_config(&p, c, &err) == 0) {
		/* linux.seccomp compiled as create compiles it (without the on-disk
		 * cache, which would grow by one file per new profile) */
		struct seccomp_prog prog;
		if (c->linux_.seccomp && seccomp_compile(c->linux_.seccomp, &prog, &err) == 0)
			seccomp_prog_free(&prog);
		char *s = egress_policy_to_string(&p.egress);
		free(s);
	}
	policy_free(&p);
	oci_config_free(c);
	free(text);
	return 0;
}
