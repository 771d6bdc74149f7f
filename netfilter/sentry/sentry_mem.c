/* Memory: the sentry is forked from the runtime and would keep, for as long as the
 * container lives, what the runtime had touched: its heap, the deep part of
 * its stack, and every page of library code it ran (page faults map up to 16
 * pages around each one). None of that is needed to serve DNS. */
#include <sys/mman.h>

#include "mem_release.h"
#include "sentry_mem.h"

/* Zeroed memory straight from the kernel: pages nobody touches cost nothing,
 * where calloc on the inherited heap would write every byte. */
void *sentry_zpages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void (*release_more)(void);
static uintptr_t dead_stack_hi;

void sentry_mem_init(void (*more)(void), uintptr_t stack_hi)
{
	release_more = more;
	dead_stack_hi = stack_hi;
}

/* noinline: its frame must lie below the caller's for the stack cut */
IDLE_TEXT __attribute__((noinline)) void sentry_release_inherited(void)
{
	if (release_more)
		release_more();
	/* the runtime's dead stack frames, below ours (with room for this one) */
	mem_release_pages(dead_stack_hi);
}
