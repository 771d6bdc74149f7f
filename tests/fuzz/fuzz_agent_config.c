/* /etc/agentbox/config.yaml (--config): agent_config_load on the input, then
 * the egress lists it holds as the runtime parses them. */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "agent_config.h"
#include "egress.h"

static int fz_agent_config_fd = -1;
static char fz_agent_config_path[64];

FUZZ_INIT(agent_config)
{
	/* one memfd, rewritten per input, opened by path through /proc */
	fz_agent_config_fd = memfd_create("agentbox-fuzz-config.yaml", 0);
	if (fz_agent_config_fd < 0)
		abort();
	snprintf(fz_agent_config_path, sizeof fz_agent_config_path, "/proc/self/fd/%d", fz_agent_config_fd);
	return 0;
}

FUZZ_TARGET(agent_config)
{
	if (ftruncate(fz_agent_config_fd, 0) < 0 || pwrite(fz_agent_config_fd, data, size, 0) != (ssize_t)size)
		abort();
	struct arena a = {0};
	struct agent_config c;
	struct ab_err err = {0};
	if (agent_config_load(fz_agent_config_path, &a, &c, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
	} else {
		FUZZ_CHECK(c.seccomp_profile != NULL, "no profile");
		for (size_t i = 0; i < c.n_masked_paths; i++)
			FUZZ_CHECK(c.masked_paths[i][0] == '/', "masked path %s", c.masked_paths[i]);
		struct egress_policy p = {0};
		if (egress_policy_add(&p, c.egress_allow, false, "egress.allow", &err) == 0)
			(void)egress_policy_add(&p, c.egress_deny, true, "egress.deny", &err);
		egress_policy_free(&p);
	}
	arena_free(&a);
	return 0;
}
