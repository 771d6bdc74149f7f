/* A profile lists the syscalls it knows; a program on a newer kernel, or a
 * libc that tries a new syscall first (clone3, faccessat2, openat2 ...),
 * calls ones it does not. With a default action that refuses, such a call
 * gets EPERM (or dies), and the program cannot tell "not allowed" from "not
 * there", so it never falls back to the older call. As runc does
 * (libcontainer/seccomp/patchbpf), a short classic-BPF stub in front of the
 * profile answers ENOSYS for every syscall number above the highest one the
 * profile's rules name, per architecture; all else goes on to the profile.
 *
 *	ld  arch
 *	jeq ARCH_1 ? next : skip		one block per architecture
 *	ld  nr
 *	[jset X32_BIT ? x32 : native]		x86-64 and x32 share one audit arch
 *	jgt MAX ? enosys : profile
 *	...
 *	ja  profile
 * enosys:
 *	ret ERRNO(ENOSYS)
 * profile: (libseccomp's program, which loads what it needs itself) */
#include <errno.h>
#include <libseccomp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>

#include "seccomp_enosys.h"
#include "util.h"

#define X32_SYSCALL_BIT 0x40000000u
#define STUB_ARCHES 8

bool seccomp_enosys_wanted(const struct oci_seccomp *s)
{
	switch (s->default_action) {
	case SECCOMP_ACT_ALLOW_:
	case SECCOMP_ACT_LOG_:
	case SECCOMP_ACT_NOTIFY_:
		return false;
	case SECCOMP_ACT_ERRNO_:
		return !(s->has_default_errno_ret && s->default_errno_ret == ENOSYS);
	default:
		return true;
	}
}

/* The highest syscall number s's rules name for arch, or -1. */
static int64_t highest_named(const struct oci_seccomp *s, uint32_t arch)
{
	int64_t max = -1;
	for (size_t i = 0; i < s->n_syscalls; i++)
		for (size_t j = 0; j < s->syscalls[i].n_names; j++) {
			int nr = seccomp_syscall_resolve_name_arch(arch, s->syscalls[i].names[j]);
			if (nr >= 0 && nr > max)
				max = nr;
		}
	return max;
}

struct stub_arch {
	uint32_t audit;             /* what the kernel reports in seccomp_data.arch */
	int64_t native_max, x32_max;   /* -1: none */
};

int seccomp_enosys_prepend(const struct oci_seccomp *s, const uint32_t *arches, size_t n_arches,
			   struct seccomp_prog *prog, struct ab_err *err)
{
	struct stub_arch a[STUB_ARCHES];
	size_t na = 0;
	for (size_t i = 0; i < n_arches; i++) {
		bool x32 = arches[i] == SCMP_ARCH_X32;
		uint32_t audit = x32 ? AUDIT_ARCH_X86_64 : arches[i];
		int64_t max = highest_named(s, arches[i]);
		if (max < 0)
			continue;
		size_t k = 0;
		while (k < na && a[k].audit != audit)
			k++;
		if (k == na) {
			if (na == STUB_ARCHES)
				break;
			a[na++] = (struct stub_arch){audit, -1, -1};
		}
		if (x32)
			a[k].x32_max = max;
		else
			a[k].native_max = max;
	}
	if (!na)
		return 0;

	struct sock_filter stub[1 + STUB_ARCHES * 6 + 2];
	size_t n = 0;
	stub[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	/* jump targets are patched once the stub's length is known: an index
	 * here, RET_ENOSYS or PROFILE stand for the two ends */
	enum { RET_ENOSYS = 1000, PROFILE = 1001 };
	size_t target[ARRAY_SIZE(stub)][2];
	memset(target, 0, sizeof target);
	for (size_t k = 0; k < na; k++) {
		bool both = a[k].native_max >= 0 && a[k].x32_max >= 0;
		bool x32_only = a[k].native_max < 0;
		size_t len = 2 + (a[k].audit == AUDIT_ARCH_X86_64 ? 1 : 0) + 1 + both;
		size_t next_block = n + len;
		target[n][0] = n + 1, target[n][1] = next_block;
		stub[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a[k].audit, 0, 0);
		stub[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
		if (a[k].audit == AUDIT_ARCH_X86_64) {
			/* x32 numbers have the bit set: to their own compare, or, where
			 * the profile names no x32 syscall, on to the profile */
			size_t x32_at = both ? n + 2 : x32_only ? n + 1 : PROFILE;
			size_t native_at = x32_only ? PROFILE : n + 1;
			target[n][0] = x32_at, target[n][1] = native_at;
			stub[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, 0, 0);
		}
		if (!x32_only) {
			target[n][0] = RET_ENOSYS, target[n][1] = PROFILE;
			stub[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)a[k].native_max, 0, 0);
		}
		if (a[k].x32_max >= 0) {
			target[n][0] = RET_ENOSYS, target[n][1] = PROFILE;
			stub[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)a[k].x32_max, 0, 0);
		}
		if (n != next_block)
			return ab_error(err, 0, "seccomp: the ENOSYS stub's block for arch %#x is %zu long, not %zu",
					a[k].audit, n - (next_block - len), len);
	}
	size_t ja_at = n;
	stub[n++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 1);
	size_t enosys_at = n;
	stub[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
	size_t profile_at = n;
	for (size_t i = 0; i < ja_at; i++) {
		if (BPF_CLASS(stub[i].code) != BPF_JMP)
			continue;
		for (int t = 0; t < 2; t++) {
			size_t to = target[i][t] == RET_ENOSYS ? enosys_at : target[i][t] == PROFILE ? profile_at : target[i][t];
			size_t off = to - (i + 1);
			if (to <= i || off > 255)
				return ab_error(err, 0, "seccomp: the ENOSYS stub cannot jump from %zu to %zu", i, to);
			if (t == 0)
				stub[i].jt = (uint8_t)off;
			else
				stub[i].jf = (uint8_t)off;
		}
	}
	if (prog->len + n > BPF_MAXINSNS)
		return ab_error(err, 0, "seccomp program has %zu instructions with the ENOSYS stub, the kernel takes at most %d",
				prog->len + n, BPF_MAXINSNS);
	struct sock_filter *both = xmalloc((prog->len + n) * sizeof *both);
	memcpy(both, stub, n * sizeof *stub);
	memcpy(both + n, prog->filter, prog->len * sizeof *prog->filter);
	free(prog->filter);
	prog->filter = both;
	prog->len = (unsigned short)(prog->len + n);
	return 0;
}
