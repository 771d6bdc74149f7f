/* System calls without libc, for the child of a clone(CLONE_VM): it shares
 * our memory, thread-local storage included, so a failing libc call there
 * would set *our* errno while we run on. Where we know how (RAW_SYSCALL), the
 * child's calls are made with raw_syscall3; elsewhere a caller must wait for
 * the child (CLONE_VFORK) or give it a copy of our memory. */
#ifndef AGENTBOX_RAW_SYSCALL_H
#define AGENTBOX_RAW_SYSCALL_H

#if defined(__x86_64__)
#define RAW_SYSCALL 1
static inline long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define RAW_SYSCALL 1
static inline long raw_syscall3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
#else
#define RAW_SYSCALL 0
#include <unistd.h>
static inline long raw_syscall3(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}
#endif

#endif
