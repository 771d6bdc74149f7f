/* The file-privileges guard (seccomp_fileprivs.h), as classic BPF:
 *
 *	ld  arch
 *	jeq ARCH_1 ? next : skip; ja block_1	one entry per architecture
 *	...
 *	ret ALLOW
 * block_N:
 *	ld  nr  [and ~X32_BIT on x86-64: x32 numbers are x86-64's with that bit]
 *	jeq NR_1 ? next : skip; <check>		one per syscall, each ends in a ret
 *	...
 *	ret ALLOW
 *
 * The arguments checked are ints and mode_t: the low 32 bits of each 64-bit
 * slot are what the kernel reads. */
#include <endian.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "seccomp_fileprivs.h"
#include "util.h"

#define X32_SYSCALL_BIT 0x40000000u
#define SETID_BITS 06000u               /* S_ISUID | S_ISGID */
#define OPEN_CREATES 020000100u         /* __O_TMPFILE (020000000) | O_CREAT (0100) */
#define WHITEOUT 4u                     /* RENAME_WHITEOUT */
#define MAX_INSNS 512

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

enum check {
	MODE,           /* a: the mode argument */
	OPEN,           /* a: the flags, b: the mode */
	MKNOD,          /* a: the mode */
	FLAG,           /* a: the flags; refused when `bit` is set */
	ALWAYS,         /* refused with `bit` as the errno */
	XATTR,          /* refused with SECCOMP_FILEPRIVS_XATTRS */
};

struct rule {
	int nr;
	enum check check;
	unsigned char a, b;
	unsigned int bit;
};

/* The calls every table has, by their numbers there. */
#define COMMON(chmod_, fchmod_, fchmodat_, openat_, mknodat_, renameat2_, setx, lsetx, fsetx) \
	{chmod_, MODE, 1, 0, 0}, {fchmod_, MODE, 1, 0, 0}, {fchmodat_, MODE, 2, 0, 0},           \
	{452, MODE, 2, 0, 0},                   /* fchmodat2, the same number everywhere */       \
	{openat_, OPEN, 2, 3, 0}, {mknodat_, MKNOD, 2, 0, 0},                                     \
	{renameat2_, FLAG, 4, 0, WHITEOUT},                                                       \
	{437, ALWAYS, 0, 0, ENOSYS},            /* openat2 */                                     \
	{425, ALWAYS, 0, 0, EPERM},             /* io_uring_setup */                              \
	{setx, XATTR, 0, 0, 0}, {lsetx, XATTR, 0, 0, 0}, {fsetx, XATTR, 0, 0, 0},               \
	{463, XATTR, 0, 0, 0}                   /* setxattrat */

/* The legacy calls of the older tables: open, creat, mknod. */
#define LEGACY(open_, creat_, mknod_) \
	{open_, OPEN, 1, 2, 0}, {creat_, MODE, 1, 0, 0}, {mknod_, MKNOD, 1, 0, 0}

static const struct rule x86_64[] = {
	COMMON(90, 91, 268, 257, 259, 316, 188, 189, 190), LEGACY(2, 85, 133),
};
static const struct rule i386[] = {
	COMMON(15, 94, 306, 295, 297, 353, 226, 227, 228), LEGACY(5, 8, 14),
};
static const struct rule arm[] = {
	COMMON(15, 94, 333, 322, 324, 382, 226, 227, 228), LEGACY(5, 8, 14),
};
/* AArch64 and RISC-V 64: the generic table, without chmod (-1: none) */
static const struct rule generic[] = {
	COMMON(-1, 52, 53, 56, 33, 276, 5, 6, 7),
};

static const struct {
	unsigned int audit_arch;
	const struct rule *rules;
	size_t n;
} arches[] = {
	{AUDIT_ARCH_X86_64, x86_64, ARRAY_SIZE(x86_64)},
	{AUDIT_ARCH_I386, i386, ARRAY_SIZE(i386)},
	{AUDIT_ARCH_AARCH64, generic, ARRAY_SIZE(generic)},
	{AUDIT_ARCH_ARM, arm, ARRAY_SIZE(arm)},
	{AUDIT_ARCH_RISCV64, generic, ARRAY_SIZE(generic)},
};

struct prog {
	struct sock_filter v[MAX_INSNS];
	size_t n;
	bool full;
};

static void emit(struct prog *p, struct sock_filter f)
{
	if (p->n == MAX_INSNS) {
		p->full = true;
		return;
	}
	p->v[p->n++] = f;
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define RET(k) STMT(BPF_RET | BPF_K, k)
#define REFUSE(e) RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define LOAD(off) STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned int)(off))

/* The instructions that judge one call (ending in a ret). */
static size_t check_insns(const struct rule *r, unsigned int flags, struct sock_filter out[8])
{
	size_t n = 0;
	switch (r->check) {
	case MODE:
		out[n++] = LOAD(ARG_LO(r->a));
		out[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID_BITS, 0, 1);
		break;
	case OPEN:
		out[n++] = LOAD(ARG_LO(r->a));
		out[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, OPEN_CREATES, 0, 3);
		out[n++] = LOAD(ARG_LO(r->b));
		out[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID_BITS, 0, 1);
		break;
	case MKNOD:
		out[n++] = LOAD(ARG_LO(r->a));
		out[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID_BITS, 3, 0);
		out[n++] = STMT(BPF_ALU | BPF_AND | BPF_K, S_IFMT);
		out[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, S_IFCHR, 1, 0);
		out[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, S_IFBLK, 0, 1);
		break;
	case FLAG:
		out[n++] = LOAD(ARG_LO(r->a));
		out[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, r->bit, 0, 1);
		break;
	case ALWAYS:
		out[n++] = REFUSE(r->bit);
		return n;
	case XATTR:
		out[n++] = (flags & SECCOMP_FILEPRIVS_XATTRS) ? REFUSE(EPERM) : RET(SECCOMP_RET_ALLOW);
		return n;
	}
	out[n++] = REFUSE(EPERM);
	out[n++] = RET(SECCOMP_RET_ALLOW);
	return n;
}

/* One architecture's block: its syscall number, then a check per rule. */
static void arch_block(struct prog *p, unsigned int audit_arch, const struct rule *rules, size_t n,
		       unsigned int flags)
{
	emit(p, LOAD(offsetof(struct seccomp_data, nr)));
	if (audit_arch == AUDIT_ARCH_X86_64)
		emit(p, STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT));
	for (size_t i = 0; i < n; i++) {
		if (rules[i].nr < 0)
			continue;
		struct sock_filter c[8];
		size_t len = check_insns(&rules[i], flags, c);
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)rules[i].nr, 0, (unsigned char)len));
		for (size_t j = 0; j < len; j++)
			emit(p, c[j]);
	}
	emit(p, RET(SECCOMP_RET_ALLOW));
}

int seccomp_fileprivs_program(unsigned int flags, struct seccomp_prog *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	_cleanup_free_ struct prog *blocks = xcalloc(1, sizeof *blocks);
	size_t start[ARRAY_SIZE(arches)];
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++) {
		start[i] = blocks->n;
		arch_block(blocks, arches[i].audit_arch, arches[i].rules, arches[i].n, flags);
	}
	_cleanup_free_ struct prog *p = xcalloc(1, sizeof *p);
	size_t head = 1 + 2 * ARRAY_SIZE(arches) + 1;
	emit(p, LOAD(offsetof(struct seccomp_data, arch)));
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++) {
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, arches[i].audit_arch, 0, 1));
		/* from the instruction after this ja to the block */
		emit(p, STMT(BPF_JMP | BPF_JA, (unsigned int)(head - p->n - 1 + start[i])));
	}
	emit(p, RET(SECCOMP_RET_ALLOW));
	for (size_t i = 0; i < blocks->n; i++)
		emit(p, blocks->v[i]);
	if (p->full || blocks->full)
		return ab_error(err, 0, "the file-privileges seccomp program needs more than %d instructions", MAX_INSNS);
	ret->filter = xmalloc(p->n * sizeof *ret->filter);
	memcpy(ret->filter, p->v, p->n * sizeof *ret->filter);
	ret->len = (unsigned short)p->n;
	return 0;
}
