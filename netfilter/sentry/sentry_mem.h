/* The sentry's memory (sentry_mem.c): fresh pages, and what the runtime left
 * behind given back. */
#ifndef AGENTBOX_SENTRY_MEM_H
#define AGENTBOX_SENTRY_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed anonymous pages, or NULL. */
void *sentry_zpages(size_t len);
/* What to give back besides the inherited heap, stack and code: the caller's
 * hook and where its dead stack begins (egress_sentry_params). */
void sentry_mem_init(void (*release_more)(void), uintptr_t dead_stack_hi);
void sentry_release_inherited(void);

#endif
