/* The container's init, child side: its entry point after clone. */
#ifndef AGENTBOX_INIT_H
#define AGENTBOX_INIT_H

#include "init_ctx.h"

/* Join the existing namespace at ns->path (open, setns): the init's own, and
 * the pid and time namespaces the parent joins before the clone (container.c). */
int init_join_namespace(const struct oci_namespace *ns, struct ab_err *err);

/* Child side (init.c): never returns; on failure reports over sync_fd and _exit(1). */
__attribute__((noreturn)) void init_main(struct init_ctx *ctx);

#endif
