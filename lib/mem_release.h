/* Giving back what a long-lived process inherited or touched once and can
 * fault in again: a process forked from the runtime (the DNS sentry, its
 * helper) or the runtime itself while it only waits for its container. */
#ifndef AGENTBOX_MEM_RELEASE_H
#define AGENTBOX_MEM_RELEASE_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "raw_syscall.h"

/* Free heap pages (malloc_trim), the resident pages of the code and read-only
 * data of the binary and every library (the files' pages: faulted in again
 * when used; page faults map up to 16 pages around each one, so a program
 * that ran much code keeps much), and the dead stack frames from STACK_CUT
 * down (0: from a little below the caller's frame). Never a writable
 * mapping's page but the heap's free ones and the stack below the cut. */
void mem_release_pages(uintptr_t stack_cut);

/* Code a long-lived process runs while it waits, after it gave its pages
 * back: its idle loop and what that loop calls each turn. Kept together
 * (the linker places .text.hot.* right after main, beside the PLT), so that
 * what such a process faults in again is one 64 KiB window of our code, not
 * one window for each file its loop passes through. */
#define IDLE_TEXT __attribute__((section(".text.hot.idle")))

/* poll(2) and the monotonic clock for that loop without a call into libc:
 * the first one after a release would fault a 64 KiB window of libc's code
 * back in before the process even goes to sleep. */
static inline int idle_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
#if RAW_SYSCALL && defined(SYS_poll)
	long r = raw_syscall3(SYS_poll, (long)fds, (long)n, timeout_ms);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
#else
	return poll(fds, n, timeout_ms);
#endif
}

static inline void idle_clock(struct timespec *ts)
{
#if RAW_SYSCALL && defined(SYS_clock_gettime)
	(void)raw_syscall3(SYS_clock_gettime, CLOCK_MONOTONIC, (long)ts, 0);
#else
	clock_gettime(CLOCK_MONOTONIC, ts);
#endif
}

#endif
