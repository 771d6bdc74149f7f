/* Giving back what a long-lived process inherited or touched once and can
 * fault in again: a process forked from the runtime (the DNS sentry, its
 * helper) or the runtime itself while it only waits for its container. */
#ifndef AGENTBOX_MEM_RELEASE_H
#define AGENTBOX_MEM_RELEASE_H

#include <stdint.h>

/* Free heap pages (malloc_trim), the resident pages of the code and read-only
 * data of the binary and every library (the files' pages: faulted in again
 * when used; page faults map up to 16 pages around each one, so a program
 * that ran much code keeps much), and the dead stack frames from STACK_CUT
 * down (0: from a little below the caller's frame). Never a writable
 * mapping's page but the heap's free ones and the stack below the cut. */
void mem_release_pages(uintptr_t stack_cut);

#endif
