/* Rewriting a compiled seccomp program into a shorter one with the same
 * behaviour (bpf_shorten.h says why).
 *
 * The program only ever compares the syscall number and the architecture with
 * constants (jeq, jgt, jge), so over each range of numbers between two of
 * those constants it takes the same path. So:
 *  1. A first pass finds, for each instruction, whether the accumulator may
 *     hold the number, the architecture, a constant or an argument there, and
 *     collects the constants compared with the number and with the
 *     architecture. Each constant K splits the 32-bit range at K and K+1.
 *  2. For one value from each (architecture range, number range) pair the
 *     program is run symbolically: loads of the number and the architecture
 *     and jumps on them are decided there and then; what depends on the
 *     arguments or the instruction pointer is kept as residual code (nodes,
 *     shared between all pairs that end the same way).
 *  3. Neighbouring ranges with the same residual merge, and a binary search
 *     over the ranges (jge on the first number of each) leads to them.
 *  4. The resulting graph is laid out with only forward jumps, long ones
 *     through `ja`, and the rewrite is run against the original on the edges
 *     of every range, with sampled arguments for the ranges that look at
 *     them. Any difference, or an instruction this file does not model
 *     (anything libseccomp does not emit), and the original is kept. */
#include "bpf_shorten.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* the instructions libseccomp emits: the only ones modelled */
#define OP_LD_ABS (BPF_LD | BPF_W | BPF_ABS)
#define OP_JA     (BPF_JMP | BPF_JA)
#define OP_JEQ    (BPF_JMP | BPF_JEQ | BPF_K)
#define OP_JGT    (BPF_JMP | BPF_JGT | BPF_K)
#define OP_JGE    (BPF_JMP | BPF_JGE | BPF_K)
#define OP_JSET   (BPF_JMP | BPF_JSET | BPF_K)
#define OP_AND    (BPF_ALU | BPF_AND | BPF_K)
#define OP_RET    (BPF_RET | BPF_K)

enum { OFF_NR = 0, OFF_ARCH = 4, DATA_BYTES = 64 };

/* beyond these the rewrite is not attempted (a profile of a few hundred
 * syscalls needs ~1000 ranges and a few hundred nodes) */
#define MAX_NODES 16384
#define MAX_PAIRS (1u << 20)
#define ARG_SAMPLES 48

static bool is_cond(uint16_t code)
{
	return code == OP_JEQ || code == OP_JGT || code == OP_JGE || code == OP_JSET;
}

static bool cond_true(uint16_t code, uint32_t a, uint32_t k)
{
	switch (code) {
	case OP_JEQ:
		return a == k;
	case OP_JGT:
		return a > k;
	case OP_JGE:
		return a >= k;
	default:
		return (a & k) != 0;
	}
}

uint32_t bpf_run(const struct sock_filter *prog, size_t n, const uint32_t data[16])
{
	uint32_t a = 0;
	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &prog[pc];
		size_t left = n - pc - 1;       /* instructions after this one */
		if (i->code == OP_LD_ABS) {
			if (i->k % 4 || i->k >= DATA_BYTES)
				return UINT32_MAX;
			a = data[i->k / 4];
		} else if (i->code == OP_JA) {
			if (i->k >= left)
				return UINT32_MAX;
			pc += i->k;
		} else if (is_cond(i->code)) {
			unsigned off = cond_true(i->code, a, i->k) ? i->jt : i->jf;
			if (off >= left)
				return UINT32_MAX;
			pc += off;
		} else if (i->code == OP_AND) {
			a &= i->k;
		} else if (i->code == OP_RET) {
			return i->k;
		} else {
			return UINT32_MAX;
		}
	}
	return UINT32_MAX;
}

/* ------------------------------------------------ 1. what the accumulator holds */

enum { HOLDS_CONST = 1, HOLDS_NR = 2, HOLDS_ARCH = 4, HOLDS_ARG = 8 };

struct u32_set {
	uint32_t *v;
	size_t n;
};

/* the 32-bit range splits at k and at k+1 */
static void add_split(struct u32_set *s, uint32_t k)
{
	s->v[s->n++] = k;
	if (k != UINT32_MAX)
		s->v[s->n++] = k + 1;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void sort_unique(struct u32_set *s)
{
	qsort(s->v, s->n, sizeof *s->v, cmp_u32);
	size_t w = 0;
	for (size_t r = 0; r < s->n; r++)
		if (w == 0 || s->v[w - 1] != s->v[r])
			s->v[w++] = s->v[r];
	s->n = w;
}

/* Fills nr_splits and arch_splits (each with room for 2n+1, 0 included);
 * false when the program is outside the model. */
static bool find_splits(const struct sock_filter *prog, size_t n, struct u32_set *nr_splits,
			struct u32_set *arch_splits)
{
	uint8_t *holds = calloc(n, 1);
	if (!holds)
		return false;
	bool ok = true;
	holds[0] = HOLDS_CONST;         /* the accumulator starts at 0 */
	nr_splits->v[nr_splits->n++] = 0;
	arch_splits->v[arch_splits->n++] = 0;
	for (size_t pc = 0; pc < n && ok; pc++) {
		const struct sock_filter *i = &prog[pc];
		uint8_t h = holds[pc];
		size_t left = n - pc - 1;
		if (!h)
			continue;       /* unreachable */
		if (i->code == OP_LD_ABS) {
			ok = i->k % 4 == 0 && i->k < DATA_BYTES && left > 0;
			if (ok)
				holds[pc + 1] |= i->k == OFF_NR ? HOLDS_NR : i->k == OFF_ARCH ? HOLDS_ARCH : HOLDS_ARG;
		} else if (i->code == OP_JA) {
			ok = i->k < left;
			if (ok)
				holds[pc + 1 + i->k] |= h;
		} else if (is_cond(i->code)) {
			/* a bit test does not split the numbers into ranges */
			ok = i->jt < left && i->jf < left &&
			     !(i->code == OP_JSET && (h & (HOLDS_NR | HOLDS_ARCH)));
			if (!ok)
				break;
			if (h & HOLDS_NR)
				add_split(nr_splits, i->k);
			if (h & HOLDS_ARCH)
				add_split(arch_splits, i->k);
			holds[pc + 1 + i->jt] |= h;
			holds[pc + 1 + i->jf] |= h;
		} else if (i->code == OP_AND) {
			/* arithmetic on the number would move the ranges' edges */
			ok = left > 0 && !(h & (HOLDS_NR | HOLDS_ARCH));
			if (ok)
				holds[pc + 1] |= h;
		} else {
			ok = i->code == OP_RET;
		}
	}
	free(holds);
	if (ok) {
		sort_unique(nr_splits);
		sort_unique(arch_splits);
	}
	return ok;
}

/* ------------------------------------------------ 2. residual code as shared nodes */

struct node {
	uint16_t code;  /* OP_RET, OP_LD_ABS, OP_AND or a conditional jump */
	uint32_t k;
	int32_t next;   /* the following node, or where a jump goes when true */
	int32_t other;  /* where a jump goes when false; -1 otherwise */
};

struct shortener {
	const struct sock_filter *prog;
	size_t n;
	struct node *nodes;
	size_t n_nodes;
	int32_t *table;                 /* open addressing over nodes, -1 empty */
	size_t table_size;
	int32_t *memo;                  /* per instruction, for the current pair */
	uint32_t *memo_pair;
	uint32_t pair;
	uint32_t nr, arch;              /* the pair's values */
};

static uint32_t node_hash(uint16_t code, uint32_t k, int32_t next, int32_t other)
{
	uint32_t h = 2166136261u;
	uint32_t w[4] = {code, k, (uint32_t)next, (uint32_t)other};
	for (int i = 0; i < 4; i++)
		h = (h ^ w[i]) * 16777619u;
	return h;
}

/* The node (code, k, next, other), made once; -1 when there are too many. */
static int32_t node_get(struct shortener *s, uint16_t code, uint32_t k, int32_t next, int32_t other)
{
	size_t mask = s->table_size - 1;
	for (size_t slot = node_hash(code, k, next, other) & mask;; slot = (slot + 1) & mask) {
		int32_t id = s->table[slot];
		if (id < 0) {
			if (s->n_nodes == MAX_NODES)
				return -1;
			id = (int32_t)s->n_nodes++;
			s->nodes[id] = (struct node){code, k, next, other};
			s->table[slot] = id;
			return id;
		}
		const struct node *x = &s->nodes[id];
		if (x->code == code && x->k == k && x->next == next && x->other == other)
			return id;
	}
}

/* The residual of the program from pc on, for the current pair; the
 * accumulator holds `a` when known. -1: too many nodes. */
static int32_t residual(struct shortener *s, size_t pc, bool known, uint32_t a)
{
	for (;;) {
		const struct sock_filter *i = &s->prog[pc];
		/* from here the result does not depend on a known accumulator */
		bool shared = !known || i->code == OP_LD_ABS || i->code == OP_RET;
		if (shared && s->memo_pair[pc] == s->pair)
			return s->memo[pc];
		int32_t r;
		if (i->code == OP_LD_ABS && (i->k == OFF_NR || i->k == OFF_ARCH)) {
			a = i->k == OFF_NR ? s->nr : s->arch;
			known = true;
			pc++;
			continue;
		} else if (i->code == OP_JA) {
			pc += 1 + i->k;
			continue;
		} else if (is_cond(i->code) && known) {
			pc += 1 + (cond_true(i->code, a, i->k) ? i->jt : i->jf);
			continue;
		} else if (i->code == OP_AND && known) {
			a &= i->k;      /* a constant: find_splits refused it on the number */
			pc++;
			continue;
		} else if (i->code == OP_LD_ABS || i->code == OP_AND) {
			int32_t next = residual(s, pc + 1, false, 0);
			r = next < 0 ? -1 : node_get(s, i->code, i->k, next, -1);
		} else if (is_cond(i->code)) {
			int32_t t = residual(s, pc + 1 + i->jt, false, 0);
			int32_t f = t < 0 ? -1 : residual(s, pc + 1 + i->jf, false, 0);
			r = f < 0 ? -1 : t == f ? t : node_get(s, i->code, i->k, t, f);
		} else {
			r = node_get(s, OP_RET, i->k, -1, -1);
		}
		if (r >= 0 && shared) {
			s->memo_pair[pc] = s->pair;
			s->memo[pc] = r;
		}
		return r;
	}
}

/* ------------------------------------------------ 3. ranges and the search over them */

struct range {
	uint32_t lo;
	int32_t node;
};

/* Merges neighbours with the same node; returns the new count. */
static size_t merge_ranges(struct range *r, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (w == 0 || r[w - 1].node != r[i].node)
			r[w++] = r[i];
	return w;
}

/* A binary search over r[0..n) for the value in the accumulator. */
static int32_t search_tree(struct shortener *s, const struct range *r, size_t n)
{
	if (n == 1)
		return r[0].node;
	/* one value between two ranges that end alike: a single jeq */
	if (n == 3 && r[0].node == r[2].node && r[2].lo == r[1].lo + 1)
		return node_get(s, OP_JEQ, r[1].lo, r[1].node, r[0].node);
	size_t mid = n / 2;
	int32_t hi = search_tree(s, r + mid, n - mid);
	int32_t lo = hi < 0 ? -1 : search_tree(s, r, mid);
	return lo < 0 ? -1 : node_get(s, OP_JGE, r[mid].lo, hi, lo);
}

/* Code that loads the word at `offset` (the number or the architecture) and
 * goes to the node of its range; r[0..n) merged first. With one answer for
 * every value, the word is not even loaded. -1: too many nodes. */
static int32_t dispatch(struct shortener *s, struct range *r, size_t n, uint32_t offset)
{
	size_t k = merge_ranges(r, n);
	int32_t tree = search_tree(s, r, k);
	return k == 1 || tree < 0 ? tree : node_get(s, OP_LD_ABS, offset, tree, -1);
}

/* ------------------------------------------------ 4. layout */

/* Instructions are placed from the end of the program backwards, each node
 * after everything it jumps to, so every jump goes forward; a node's `pos` is
 * its distance from the end. */
struct layout {
	const struct node *nodes;
	int64_t *pos;           /* -1: not placed yet */
	struct sock_filter *buf;
	size_t len;
};

static void put(struct layout *l, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	l->buf[l->len++] = (struct sock_filter){.code = code, .jt = jt, .jf = jf, .k = k};
}

/* Jumps to a target placed at distance-from-end p: its offset from the next
 * instruction placed. */
static size_t offset_to(const struct layout *l, int64_t p)
{
	return l->len - (size_t)p - 1;
}

static void place(struct layout *l, int32_t id)
{
	if (l->pos[id] >= 0)
		return;
	const struct node *nd = &l->nodes[id];
	if (nd->code == OP_RET) {
		/* nothing to jump to */
	} else if (!is_cond(nd->code)) {
		place(l, nd->next);
		size_t off = offset_to(l, l->pos[nd->next]);
		if (off > 0)
			put(l, OP_JA, 0, 0, (uint32_t)off);
	} else {
		place(l, nd->next);
		place(l, nd->other);    /* last: usually right behind the jump */
		int64_t pt = l->pos[nd->next], pf = l->pos[nd->other];
		/* jt and jf reach 255 instructions; further goes through a ja */
		if (offset_to(l, pt) > 255) {
			put(l, OP_JA, 0, 0, (uint32_t)offset_to(l, pt));
			pt = (int64_t)l->len - 1;
		}
		if (offset_to(l, pf) > 255) {
			put(l, OP_JA, 0, 0, (uint32_t)offset_to(l, pf));
			pf = (int64_t)l->len - 1;
		}
		if (offset_to(l, pt) > 255) {
			put(l, OP_JA, 0, 0, (uint32_t)offset_to(l, pt));
			pt = (int64_t)l->len - 1;
		}
		l->pos[id] = (int64_t)l->len;
		put(l, nd->code, (uint8_t)offset_to(l, pt), (uint8_t)offset_to(l, pf), nd->k);
		return;
	}
	l->pos[id] = (int64_t)l->len;
	put(l, nd->code, 0, 0, nd->k);
}

/* ------------------------------------------------ the check */

static uint32_t next_random(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Do a and b answer alike on the first and last value of every range pair,
 * with arguments sampled from the program's constants where the range looks
 * at them? */
static bool same_answers(const struct sock_filter *a, size_t na, const struct sock_filter *b, size_t nb,
			 const struct u32_set *nr_splits, const struct u32_set *arch_splits,
			 const struct shortener *s, const int32_t *pair_node)
{
	/* argument words: the program's constants, their neighbours, 0 and ~0 */
	uint32_t *pool = malloc((3 * na + 2) * sizeof *pool);
	if (!pool)
		return false;
	size_t n_pool = 0;
	pool[n_pool++] = 0;
	pool[n_pool++] = UINT32_MAX;
	for (size_t i = 0; i < na; i++)
		if (is_cond(a[i].code) || a[i].code == OP_AND) {
			pool[n_pool++] = a[i].k;
			pool[n_pool++] = a[i].k + 1;
			pool[n_pool++] = a[i].k - 1;
		}
	uint32_t seed = 0x9e3779b9u;
	bool same = true;
	for (size_t ai = 0; ai < arch_splits->n && same; ai++) {
		uint32_t arch_end = ai + 1 < arch_splits->n ? arch_splits->v[ai + 1] - 1 : UINT32_MAX;
		for (size_t ni = 0; ni < nr_splits->n && same; ni++) {
			uint32_t nr_end = ni + 1 < nr_splits->n ? nr_splits->v[ni + 1] - 1 : UINT32_MAX;
			const struct node *first = &s->nodes[pair_node[ai * nr_splits->n + ni]];
			int samples = first->code == OP_RET ? 2 : ARG_SAMPLES;
			for (int edge = 0; edge < 4 && same; edge++) {
				uint32_t d[16];
				d[0] = edge & 1 ? nr_end : nr_splits->v[ni];
				d[1] = edge & 2 ? arch_end : arch_splits->v[ai];
				for (int t = 0; t < samples && same; t++) {
					for (int w = 2; w < 16; w++)
						d[w] = t == 0 ? 0 : t == 1 ? UINT32_MAX
						     : t % 4 == 3 ? next_random(&seed)
						     : pool[next_random(&seed) % n_pool];
					same = bpf_run(a, na, d) == bpf_run(b, nb, d);
				}
			}
		}
	}
	free(pool);
	return same;
}

/* ------------------------------------------------ all together */

int bpf_shorten(const struct sock_filter *prog, size_t n, struct sock_filter **ret, size_t *ret_n)
{
	if (n == 0 || n > BPF_MAXINSNS)
		return 0;
	int done = 0;
	struct u32_set nr_splits = {calloc(2 * n + 1, sizeof(uint32_t)), 0};
	struct u32_set arch_splits = {calloc(2 * n + 1, sizeof(uint32_t)), 0};
	struct shortener s = {.prog = prog, .n = n, .table_size = 2 * MAX_NODES};
	s.nodes = calloc(MAX_NODES, sizeof *s.nodes);
	s.table = malloc(s.table_size * sizeof *s.table);
	s.memo = calloc(n, sizeof *s.memo);
	s.memo_pair = calloc(n, sizeof *s.memo_pair);
	int32_t *pair_node = NULL, *arch_node = NULL;
	struct range *ranges = NULL;
	struct layout l = {0};
	if (!nr_splits.v || !arch_splits.v || !s.nodes || !s.table || !s.memo || !s.memo_pair)
		goto out;
	memset(s.table, 0xff, s.table_size * sizeof *s.table);
	if (!find_splits(prog, n, &nr_splits, &arch_splits))
		goto out;
	size_t pairs = nr_splits.n * arch_splits.n;
	if (pairs > MAX_PAIRS)
		goto out;

	pair_node = malloc(pairs * sizeof *pair_node);
	arch_node = malloc(arch_splits.n * sizeof *arch_node);
	size_t most = nr_splits.n > arch_splits.n ? nr_splits.n : arch_splits.n;
	ranges = malloc(most * sizeof *ranges);
	if (!pair_node || !arch_node || !ranges)
		goto out;
	for (size_t ai = 0; ai < arch_splits.n; ai++) {
		for (size_t ni = 0; ni < nr_splits.n; ni++) {
			s.pair++;       /* pairs start at 1: memo_pair is zeroed */
			s.arch = arch_splits.v[ai];
			s.nr = nr_splits.v[ni];
			int32_t r = residual(&s, 0, true, 0);
			if (r < 0)
				goto out;
			pair_node[ai * nr_splits.n + ni] = r;
			ranges[ni] = (struct range){nr_splits.v[ni], r};
		}
		arch_node[ai] = dispatch(&s, ranges, nr_splits.n, OFF_NR);
		if (arch_node[ai] < 0)
			goto out;
	}
	for (size_t ai = 0; ai < arch_splits.n; ai++)
		ranges[ai] = (struct range){arch_splits.v[ai], arch_node[ai]};
	int32_t root = dispatch(&s, ranges, arch_splits.n, OFF_ARCH);
	if (root < 0)
		goto out;

	/* each node takes one instruction and at most two ja */
	l.nodes = s.nodes;
	l.pos = malloc(s.n_nodes * sizeof *l.pos);
	l.buf = malloc((3 * s.n_nodes + 1) * sizeof *l.buf);
	if (!l.pos || !l.buf)
		goto out;
	for (size_t i = 0; i < s.n_nodes; i++)
		l.pos[i] = -1;
	place(&l, root);
	if (l.len >= n)
		goto out;
	for (size_t i = 0; i < l.len / 2; i++) {
		struct sock_filter t = l.buf[i];
		l.buf[i] = l.buf[l.len - 1 - i];
		l.buf[l.len - 1 - i] = t;
	}
	if (!same_answers(prog, n, l.buf, l.len, &nr_splits, &arch_splits, &s, pair_node))
		goto out;
	*ret = l.buf;
	*ret_n = l.len;
	l.buf = NULL;
	done = 1;
out:
	free(l.pos);
	free(l.buf);
	free(ranges);
	free(arch_node);
	free(pair_node);
	free(s.memo_pair);
	free(s.memo);
	free(s.table);
	free(s.nodes);
	free(arch_splits.v);
	free(nr_splits.v);
	return done;
}
