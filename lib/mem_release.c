#include "mem_release.h"
#include "util.h"

#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How far below the cut dead frames are looked for. The kernel keeps other
 * mappings at least stack_guard_gap (1 MiB by default) below a stack, so this
 * window only ever covers the stack; madvise skips the part of it that is not
 * mapped (and says ENOMEM, which is fine). No /proc/self/maps is read for it:
 * a process in a chroot may have no /proc, and reading costs more than the
 * release itself. */
#define STACK_RELEASE_WINDOW (512 * 1024)

struct text_ranges {
	size_t n;
	struct { uintptr_t lo, hi; } v[64];
};

static int text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct text_ranges *t = data;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (info->dlpi_name && strncmp(info->dlpi_name, "linux-vdso", 10) == 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && t->n < ARRAY_SIZE(t->v); i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		t->v[t->n].lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		t->v[t->n].hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
		t->n++;
	}
	return 0;
}

/* madvise without a call into libc: once libc's own code is dropped, every
 * further libc function would fault its 64 KiB neighbourhood back in */
static inline void raw_dontneed(uintptr_t lo, uintptr_t len)
{
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_madvise), "D"(lo), "S"(len), "d"((long)MADV_DONTNEED)
			 : "rcx", "r11", "memory");
	(void)ret;
#else
	(void)madvise((void *)lo, len, MADV_DONTNEED);
#endif
}

/* noinline: its frame must lie below the caller's for the stack cut */
IDLE_TEXT __attribute__((noinline)) void mem_release_pages(uintptr_t stack_cut)
{
	struct text_ranges t = { 0 };
	(void)malloc_trim(0);
	(void)dl_iterate_phdr(text_cb, &t);
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t cut = stack_cut ? stack_cut & ~(page - 1)
				  : ((uintptr_t)__builtin_frame_address(0) - 16384) & ~(page - 1);
	raw_dontneed(cut - STACK_RELEASE_WINDOW, STACK_RELEASE_WINDOW);
	for (size_t i = 0; i < t.n; i++)
		raw_dontneed(t.v[i].lo, t.v[i].hi - t.v[i].lo);
}
