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
#include "policy.h"
#include "seccomp.h"

/* The admin's side: an allowlist for annotations to narrow, no agent profile
 * (compiling it for every input would only slow the fuzzer down; the
 * annotation may still ask for it). */
static char fz_config_agent_cfg[64];

FUZZ_INIT(config)
{
	static const char yaml[] =
		"seccomp:\n  profile: none\n"
		"egress:\n  allow: [example.com, '*.example.org:443', 198.51.100.0/24, '[2001:db8::]/32']\n"
		"  deny: [bad.example.com]\n"
		"floor:\n  refuse_privileged: true\n  masked_paths: [/proc/fuzz]\n";
	/* a memfd named through /proc: nothing left on disk */
	int fd = memfd_create("agentbox-fuzz-config.yaml", 0);
	if (fd < 0 || write(fd, yaml, sizeof yaml - 1) != (ssize_t)sizeof yaml - 1)
		abort();
	snprintf(fz_config_agent_cfg, sizeof fz_config_agent_cfg, "/proc/self/fd/%d", fd);
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
	if (policy_resolve(&g, c, &p, &err) == 0 && policy_floor_config(&p, c, &err) == 0) {
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
