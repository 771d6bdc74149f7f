/* OCI hooks: run a hook with the container state on its stdin, bounded by its timeout. */
#ifndef AGENTBOX_HOOKS_H
#define AGENTBOX_HOOKS_H

#include "config.h"
#include "error.h"

const char *hook_kind_name(enum oci_hook_kind kind);   /* "prestart", ... */
/* Run every hook of one kind in order; the first failure stops and names the hook.
 * poststop failures only warn (log) and the rest still run. A hook without "env"
 * gets the runtime's environment, except createContainer and startContainer
 * hooks (the container's namespaces), which get an empty one. */
int hooks_run(const struct oci_hooks *hooks, enum oci_hook_kind kind, const char *state_json,
	      struct ab_err *err);

#endif
