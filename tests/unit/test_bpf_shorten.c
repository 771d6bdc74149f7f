/* seccomp-profiles/bpf_shorten.c: the rewrite of libseccomp's programs is
 * shorter and answers every input it is tried on the way libseccomp's program
 * does — the shipped profiles, the engines' profiles, and hand-made programs
 * for the corners (far jumps, arguments, instructions outside the model).
 * That the shortened programs also behave right in the kernel is
 * test_seccomp's part: it loads them. */
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdint.h>

#include "tap.h"

#include "bpf_shorten.h"
#include "config.h"
#include "seccomp.h"
#include "util.h"

#define ALLOW SECCOMP_RET_ALLOW
#define ERRNO(e) (SECCOMP_RET_ERRNO | (e))
#define X32_BIT 0x40000000u

static const char *fixtures;

static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Runs a and b on many inputs chosen without looking at either program:
 * every number below 1100 and around the x32 bit, the edges of 32 bits and
 * random ones, under the architectures x86-64 and i386, a made-up one and a
 * random one; arguments zero, all ones, small, and random. Returns the
 * number of inputs that differed (and prints the first). */
static int differences(const struct sock_filter *a, size_t na, const struct sock_filter *b, size_t nb)
{
	static const uint32_t arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0, 0x12345678};
	uint32_t nrs[1100 + 600 + 8 + 200];
	size_t n_nrs = 0;
	uint32_t seed = 12345;
	for (uint32_t i = 0; i < 1100; i++)
		nrs[n_nrs++] = i;
	for (uint32_t i = 0; i < 600; i++)
		nrs[n_nrs++] = X32_BIT + i;
	uint32_t edges[] = {X32_BIT - 1, UINT32_MAX, UINT32_MAX - 1, 0x7fffffff, 0x80000000, 0xbfffffff, 0xc0000000, 65535};
	for (size_t i = 0; i < 8; i++)
		nrs[n_nrs++] = edges[i];
	for (int i = 0; i < 200; i++)
		nrs[n_nrs++] = rnd(&seed);
	int diffs = 0;
	for (size_t ai = 0; ai < sizeof arches / sizeof arches[0]; ai++)
		for (size_t ni = 0; ni < n_nrs; ni++)
			for (int t = 0; t < 12; t++) {
				uint32_t d[16] = {nrs[ni], arches[ai]};
				for (int w = 2; w < 16; w++)
					d[w] = t == 0 ? 0 : t == 1 ? UINT32_MAX : t < 6 ? rnd(&seed) % 40 : rnd(&seed);
				uint32_t ra = bpf_run(a, na, d), rb = bpf_run(b, nb, d);
				if (ra != rb && diffs++ == 0)
					printf("#   nr %#x arch %#x arg0 %#x: %#x against %#x\n", d[0], d[1], d[4], ra, rb);
			}
	return diffs;
}

/* libseccomp's program for s, its rewrite, and the two compared */
static void check_profile(const char *what, const struct oci_seccomp *s, double at_most)
{
	struct seccomp_prog orig, full;
	struct ab_err err;
	ok(seccomp_compile_libseccomp(s, &orig, &err) == 0, "%s: libseccomp compiles it", what);
	struct sock_filter *shorter = NULL;
	size_t len = 0;
	ok(bpf_shorten(orig.filter, orig.len, &shorter, &len) == 1, "%s: rewritten", what);
	ok(shorter && len <= at_most * orig.len, "%s: %zu instructions instead of %u (at most %.0f%%)",
	   what, len, orig.len, at_most * 100);
	ok(shorter && differences(orig.filter, orig.len, shorter, len) == 0, "%s: answers like libseccomp's", what);
	/* what seccomp_compile hands out is that rewrite, behind the ENOSYS
	 * stub where the default action refuses (seccomp_enosys.c) */
	ok(seccomp_compile(s, &full, &err) == 0 && full.len >= len &&
	   memcmp(full.filter + (full.len - len), shorter, len * sizeof *shorter) == 0 && full.flags == orig.flags &&
	   full.notify == orig.notify, "%s: seccomp_compile returns the rewrite", what);
	free(shorter);
	seccomp_prog_free(&orig);
	seccomp_prog_free(&full);
}

static void test_shipped_profiles(void)
{
	static const char *names[] = {"agent", "default"};
	for (size_t i = 0; i < 2; i++) {
		struct arena a = {0};
		struct oci_seccomp *s;
		struct ab_err err;
		ok(seccomp_builtin_profile(names[i], &a, &s, &err) == 0, "profile %s parses", names[i]);
		/* the agent profile: 530 instructions from libseccomp, ~130 rewritten */
		check_profile(names[i], s, 0.4);
		arena_free(&a);
	}
}

static void test_engine_profiles(void)
{
	static const char *files[] = {"docker-create-config.json", "podman-create-config.json"};
	for (size_t i = 0; i < 2; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", fixtures, files[i]);
		struct oci_config *c = NULL;
		struct ab_err err;
		ok(oci_config_load(path, &c, &err) == 0 && c->linux_.seccomp, "%s has a seccomp profile", files[i]);
		/* three ABIs (x86-64, x32, i386): the rewrite keeps all three */
		if (c && c->linux_.seccomp)
			check_profile(files[i], c->linux_.seccomp, 0.6);
		oci_config_free(c);
	}
}

/* A program with far jumps: an action per four numbers (375 of them) tested
 * one number at a time, 3000 instructions; its rewrite's search has to reach
 * past 255 instructions, which takes a ja. */
static void test_far_jumps(void)
{
	enum { NRS = 1500 };
	struct sock_filter *p = calloc(2 * NRS + 3, sizeof *p);
	size_t n = 0;
	p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (uint32_t nr = 0; nr < NRS; nr++) {
		p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
		p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ERRNO(1 + nr / 4));
	}
	p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ALLOW);
	struct sock_filter *s = NULL;
	size_t len = 0;
	ok(bpf_shorten(p, n, &s, &len) == 1 && len < n / 2, "far jumps: %zu instructions rewritten in %zu", n, len);
	bool has_ja = false;
	for (size_t i = 0; s && i < len; i++)
		has_ja |= s[i].code == (BPF_JMP | BPF_JA);
	ok(has_ja, "far jumps: the rewrite jumps far through ja");
	ok(s && differences(p, n, s, len) == 0, "far jumps: the rewrite answers alike");
	uint32_t d[16] = {1234, AUDIT_ARCH_X86_64};
	ok(s && bpf_run(s, len, d) == ERRNO(1 + 1234 / 4) && (d[0] = NRS, bpf_run(s, len, d) == ALLOW),
	   "far jumps: spot checks of the rewrite");
	free(s);
	free(p);
}

/* Arguments: the residual checks survive, the syscall tests around them go. */
static void test_arguments(void)
{
	struct sock_filter p[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 4, 0, 6),
		/* 4: allowed when the low word of arg 1 masked with 0xf0 is 0x20 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 24),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),       /* the number again */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 4, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(13)),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(38)),
	};
	size_t n = sizeof p / sizeof p[0];
	struct sock_filter *s = NULL;
	size_t len = 0;
	ok(bpf_shorten(p, n, &s, &len) == 1 && len < n, "arguments: %zu instructions rewritten in %zu", n, len);
	ok(s && differences(p, n, s, len) == 0, "arguments: the rewrite answers alike");
	uint32_t d[16] = {4, AUDIT_ARCH_X86_64};
	d[6] = 0x123;
	uint32_t allowed = s ? bpf_run(s, len, d) : 0;
	d[6] = 0x133;
	ok(s && allowed == ALLOW && bpf_run(s, len, d) == ERRNO(13), "arguments: the argument still decides");
	free(s);
}

/* Programs outside the model are left as they are. */
static void test_refusals(void)
{
	struct sock_filter jset_on_nr[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_BIT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(1)),
	};
	struct sock_filter arithmetic_on_nr[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(1)),
	};
	struct sock_filter index_register[] = {
		BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(1)),
	};
	struct sock_filter jump_out[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 9),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
	};
	struct sock_filter falls_off[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	};
	struct sock_filter odd_offset[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
	};
	struct sock_filter already_short[] = {
		BPF_STMT(BPF_RET | BPF_K, ALLOW),
	};
	struct {
		const char *what;
		const struct sock_filter *p;
		size_t n;
	} cases[] = {
		{"a bit test on the number", jset_on_nr, sizeof jset_on_nr / sizeof jset_on_nr[0]},
		{"arithmetic on the number", arithmetic_on_nr, sizeof arithmetic_on_nr / sizeof arithmetic_on_nr[0]},
		{"the index register", index_register, sizeof index_register / sizeof index_register[0]},
		{"a jump out of the program", jump_out, sizeof jump_out / sizeof jump_out[0]},
		{"a fall off the end", falls_off, sizeof falls_off / sizeof falls_off[0]},
		{"a load between words", odd_offset, sizeof odd_offset / sizeof odd_offset[0]},
		{"a program that cannot be shorter", already_short, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sock_filter *s = NULL;
		size_t len = 0;
		ok(bpf_shorten(cases[i].p, cases[i].n, &s, &len) == 0 && !s, "left alone: %s", cases[i].what);
	}
}

int main(void)
{
	fixtures = getenv("AGENTBOX_FIXTURES");
	if (!fixtures)
		fixtures = "tests/data/engine-fixtures";
	test_shipped_profiles();
	test_engine_profiles();
	test_far_jumps();
	test_arguments();
	test_refusals();
	return tap_done();
}
