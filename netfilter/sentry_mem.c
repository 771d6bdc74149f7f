/* Memory: the sentry is forked from the runtime and would keep, for as long as the
 * container lives, what the runtime had touched: its heap, the deep part of
 * its stack, and every page of library code it ran (page faults map up to 16
 * pages around each one). None of that is needed to serve DNS. */
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry_internal.h"
#include "util.h"

/* How far below the serving frames the runtime's dead ones are looked for. The
 * kernel keeps other mappings at least stack_guard_gap (1 MiB by default) below
 * a stack, so this window only ever covers the stack; madvise skips the part
 * of it that is not mapped (and says ENOMEM, which is fine). Read no
 * /proc/self/maps for it: after the chroot there is no /proc, and before, it
 * costs more than the release itself. */
#define STACK_RELEASE_WINDOW (512 * 1024)

/* Code and read-only data of the binary and every library: dropping the
 * mappings' pages is safe (they are the files' pages, faulted in again when
 * used) and leaves only what the serving loop itself runs. Never a writable
 * segment: relocated data lives there. */
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
__attribute__((noinline)) void sentry_release_inherited(void)
{
	if (release_more)
		release_more();
	struct text_ranges t = { 0 };
	(void)malloc_trim(0);
	(void)dl_iterate_phdr(text_cb, &t);
	/* the runtime's dead stack frames, below ours (with room for this one) */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t cut = dead_stack_hi ? dead_stack_hi & ~(page - 1)
				      : ((uintptr_t)__builtin_frame_address(0) - 16384) & ~(page - 1);
	raw_dontneed(cut - STACK_RELEASE_WINDOW, STACK_RELEASE_WINDOW);
	for (size_t i = 0; i < t.n; i++)
		raw_dontneed(t.v[i].lo, t.v[i].hi - t.v[i].lo);
}

