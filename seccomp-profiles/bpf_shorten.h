/* A shorter seccomp program with the same behaviour: libseccomp compares the
 * syscall number with each syscall of the profile in turn (530 instructions for
 * the agent profile), while most neighbouring syscall numbers share an action,
 * so a binary search over ranges of numbers does with a fraction of that. The
 * kernel's cost of loading a filter (checking, converting and JIT-compiling it,
 * then walking it once per syscall number for its action cache) grows with its
 * length, and that load is on every container's start. See bpf_shorten.c. */
#ifndef AGENTBOX_BPF_SHORTEN_H
#define AGENTBOX_BPF_SHORTEN_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

/* When prog (n instructions) can be rewritten shorter, *ret receives the
 * malloc'd rewrite and *ret_n its length, and 1 is returned. Otherwise 0 and
 * nothing is allocated: a program using an instruction the rewriter does not
 * model, one whose rewrite is not shorter, or one whose rewrite answered any
 * of the checked inputs differently. */
int bpf_shorten(const struct sock_filter *prog, size_t n, struct sock_filter **ret, size_t *ret_n);

/* Run a seccomp program on the 64 bytes of a struct seccomp_data, as 16
 * 32-bit words in host order (nr, arch, instruction pointer, arguments).
 * Returns its SECCOMP_RET_* value; an instruction the rewriter does not model,
 * a jump out of the program or a fall off its end gives UINT32_MAX. */
uint32_t bpf_run(const struct sock_filter *prog, size_t n, const uint32_t data[16]);

#endif
