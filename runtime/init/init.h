/* The container's init, child side: its entry point after clone. */
#ifndef AGENTBOX_INIT_H
#define AGENTBOX_INIT_H

#include "init_ctx.h"

/* Child side (init.c): never returns; on failure reports over sync_fd and _exit(1). */
__attribute__((noreturn)) void init_main(struct init_ctx *ctx);

#endif
