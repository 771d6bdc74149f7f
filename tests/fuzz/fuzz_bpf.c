/* seccomp-profiles/bpf_shorten.c on made-up programs: every 8 bytes of the
 * input become one instruction of the kinds libseccomp emits (loads of the
 * number, the architecture or an argument word, jumps on constants, `and`,
 * `ret`), with constants drawn mostly from a small set so that comparisons
 * meet. When the rewriter accepts a program, the rewrite must be shorter and
 * answer like the program on inputs it did not choose itself: the edges of
 * the ranges of every constant, and words from the input's tail. */
#include "fuzz.h"

#include <linux/filter.h>

#include "bpf_shorten.h"

#define FZ_BPF_MAX 96

static const uint32_t fz_bpf_consts[] = {0, 1, 2, 3, 41, 56, 0x40000000, 0xc000003e, 0x40000003,
					 0xffffffff, 0x7fffffff, 0x80000000, 0x10, 0xff};

static uint32_t fz_bpf_const(uint8_t sel, const uint8_t *raw)
{
	if (sel < 0xc0)
		return fz_bpf_consts[sel % (sizeof fz_bpf_consts / sizeof fz_bpf_consts[0])];
	uint32_t v;
	memcpy(&v, raw, sizeof v);
	return v;
}

/* instruction i of the input's 8-byte record */
static struct sock_filter fz_bpf_insn(const uint8_t *r)
{
	static const uint16_t jumps[] = {BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JGT | BPF_K,
					 BPF_JMP | BPF_JGE | BPF_K, BPF_JMP | BPF_JSET | BPF_K};
	struct sock_filter f = {0};
	uint32_t k = fz_bpf_const(r[1], r + 4);
	switch (r[0] % 8) {
	case 0:
		f = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
		break;
	case 1:
		f = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4);
		break;
	case 2:
		f = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 8 + 4 * (r[2] % 14));
		break;
	case 3:
	case 4:
		f = (struct sock_filter)BPF_JUMP(jumps[r[0] / 8 % 4], k, r[2] % 8, r[3] % 8);
		break;
	case 5:
		f = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, k);
		break;
	case 6:
		f = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x50000 | r[2]);
		break;
	default:
		f = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, r[2] % 4);
		break;
	}
	return f;
}

FUZZ_TARGET(bpf)
{
	size_t n = size / 8;
	if (n == 0)
		return 0;
	if (n > FZ_BPF_MAX)
		n = FZ_BPF_MAX;
	struct sock_filter prog[FZ_BPF_MAX + 1];
	for (size_t i = 0; i < n; i++)
		prog[i] = fz_bpf_insn(data + 8 * i);
	size_t used = 8 * n;
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x7fff0000);

	struct sock_filter *shorter = NULL;
	size_t len = 0;
	if (bpf_shorten(prog, n, &shorter, &len) != 1) {
		FUZZ_CHECK(shorter == NULL, "a refusal that allocated");
		return 0;
	}
	FUZZ_CHECK(len > 0 && len < n, "%zu instructions rewritten in %zu", n, len);

	/* values to try in each word: every constant of the program, one either
	 * side, and words of the input's tail */
	uint32_t vals[3 * (FZ_BPF_MAX + 1) + 16];
	size_t nv = 0;
	for (size_t i = 0; i < n; i++) {
		vals[nv++] = prog[i].k;
		vals[nv++] = prog[i].k + 1;
		vals[nv++] = prog[i].k - 1;
	}
	for (size_t off = used; off + 4 <= size && nv < sizeof vals / sizeof vals[0]; off += 4)
		memcpy(&vals[nv++], data + off, 4);
	uint32_t x = 2463534242u;
	for (size_t t = 0; t < 4000; t++) {
		uint32_t d[16];
		for (int w = 0; w < 16; w++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			d[w] = vals[x % nv];
		}
		uint32_t a = bpf_run(prog, n, d), b = bpf_run(shorter, len, d);
		FUZZ_CHECK(a == b, "nr %#x arch %#x: %#x, rewritten %#x", d[0], d[1], a, b);
	}
	free(shorter);
	return 0;
}
