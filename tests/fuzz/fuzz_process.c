/* process.json of `exec --process` (oci_process_parse), then the floor exec
 * applies to it. */
#include "fuzz.h"

#include "config.h"
#include "container.h"
#include "floor.h"
#include "policy.h"

FUZZ_TARGET(process)
{
	char *text = fuzz_cstr(data, size);
	struct arena a = {0};
	struct oci_process *p = NULL;
	struct ab_err err = {0};
	if (oci_process_parse(text, "process.json", &a, &p, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
	} else {
		FUZZ_CHECK(p != NULL, "no process on success");
		FUZZ_CHECK(!p->args || p->args[p->n_args] == NULL, "args not terminated");
		FUZZ_CHECK(!p->env || p->env[p->n_env] == NULL, "env not terminated");
		/* the built-in floor (no config file) with the firewall in force */
		struct agent_policy pol = {0};
		pol.config.refuse_privileged = true;
		pol.config.force_no_new_privileges = true;
		pol.egress_enforced = true;
		(void)policy_floor_process(&pol, p, "process", &err);
	}
	arena_free(&a);
	free(text);
	return 0;
}
