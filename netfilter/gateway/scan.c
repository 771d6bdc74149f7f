/* The secrets looked for in responses, and the streams that look (scan.h).
 *
 * The matcher is an Aho-Corasick automaton over the patterns: each state is
 * the longest suffix of what was read that begins some pattern, so its depth
 * is exactly how many bytes a stream must hold back, and reaching a state a
 * pattern ends in is a copy to mask. The root has a table of 256 entries;
 * the other states keep their few edges in sorted arrays and fall back along
 * their failure links. Bytes that start no pattern and no escape pass in a
 * tight loop without touching the automaton: the common case.
 *
 * The stream decodes escapes before the automaton sees the bytes, and
 * remembers where each decoded byte came from (its first raw offset and its
 * length), so that a copy written as "%2F" or "\u002f" is masked as it was
 * written. */
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "scan.h"
#include "util.h"

struct gw_canon_pos {
	uint64_t start : 56;            /* stream offset of its first raw byte */
	uint64_t len : 8;               /* raw bytes it was written with */
};

struct ac_state {
	uint32_t fail;
	uint32_t edge;                  /* its first edge in label[] and target[] */
	uint16_t n_edges;
	uint16_t depth;
	int16_t out;                    /* the longest pattern that ends here, or -1 */
};

struct pattern {
	uint8_t *b;
	uint32_t len;
	unsigned id;
};

struct gw_matcher {
	/* while it is built: the patterns, on the heap */
	struct pattern *pats;
	size_t n_pats, cap_pats;
	/* built: all in one block of locked memory */
	void *block;
	size_t block_len;
	uint32_t *root;                 /* [256]: the root's edges; 0 = stay at the root */
	uint8_t *slow;                  /* [256]: bytes that start a pattern or an escape */
	uint8_t *pair;                  /* [65536 bits]: two bytes that may begin a copy or an escape */
	struct ac_state *st;
	uint32_t n_st;
	uint8_t *label;
	uint32_t *target;
	uint16_t *pat_len;
	uint16_t *pat_id;
	uint32_t max_len;               /* the longest pattern: the depth bound */
	size_t hold_max;                /* raw bytes a stream may hold back */
};

/* ---- escapes: what an echo writes instead of a byte ---- */

enum tok_verdict { TOK_MORE, TOK_BYTE, TOK_DROP, TOK_BAD };

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* n hex digits of t, or -1 */
static long hexnum(const uint8_t *t, size_t n)
{
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		int h = hexval(t[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* %HH */
static enum tok_verdict tok_percent(const uint8_t *t, size_t n, uint8_t *out)
{
	if (n > 1 && hexval(t[n - 1]) < 0)
		return TOK_BAD;
	if (n < 3)
		return TOK_MORE;
	*out = (uint8_t)hexnum(t + 1, 2);
	return TOK_BYTE;
}

/* \/ \\ \" \' \t, \n and \r (line breaks: nothing), \uHHHH and \xHH below 256 */
static enum tok_verdict tok_backslash(const uint8_t *t, size_t n, uint8_t *out)
{
	if (n < 2)
		return TOK_MORE;
	uint8_t c = t[1];
	if (c == 'u' || c == 'x') {
		size_t digits = c == 'u' ? 4 : 2;
		if (hexval(t[n - 1]) < 0 && n > 2)
			return TOK_BAD;
		if (n < 2 + digits)
			return TOK_MORE;
		long v = hexnum(t + 2, digits);
		if (v < 0 || v > 0xff)
			return TOK_BAD;
		*out = (uint8_t)v;
		return TOK_BYTE;
	}
	if (c == 'n' || c == 'r')
		return TOK_DROP;
	if (c == '/' || c == '\\' || c == '"' || c == '\'' || c == 't') {
		*out = c == 't' ? '\t' : c;
		return TOK_BYTE;
	}
	return TOK_BAD;
}

/* &#DDD; &#xHH; &amp; &lt; &gt; &quot; &apos; */
static enum tok_verdict tok_entity(const uint8_t *t, size_t n, uint8_t *out)
{
	static const struct { const char *name; uint8_t c; } named[] = {
		{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''},
		/* HTML5's names for the characters of tokens and base64 */
		{"sol", '/'}, {"plus", '+'}, {"equals", '='}, {"lowbar", '_'}, {"colon", ':'}, {"percnt", '%'},
		{"period", '.'}, {"comma", ','}, {"num", '#'}, {"excl", '!'}, {"quest", '?'}, {"dollar", '$'},
		{"commat", '@'}, {"ast", '*'}, {"lpar", '('}, {"rpar", ')'}, {"lsqb", '['}, {"rsqb", ']'},
		{"tilde", '~'}, {"Hat", '^'}, {"grave", '`'}, {"verbar", '|'}, {"bsol", '\\'}, {"semi", ';'},
	};
	if (n < 2)
		return TOK_MORE;
	if (t[1] == '#') {
		bool hex = n > 2 && (t[2] | 0x20) == 'x';
		size_t first = hex ? 3 : 2, max_digits = hex ? 6 : 7;
		if (n == first)
			return n == 2 || hex ? TOK_MORE : TOK_BAD;
		size_t digits = n - first;
		if (t[n - 1] != ';') {
			bool digit = hex ? hexval(t[n - 1]) >= 0 : (t[n - 1] >= '0' && t[n - 1] <= '9');
			return digit && digits <= max_digits ? TOK_MORE : TOK_BAD;
		}
		if (digits < 2)
			return TOK_BAD;   /* "&#;" */
		long v = 0;
		for (size_t i = first; i < n - 1; i++)
			v = v * (hex ? 16 : 10) + (hex ? hexval(t[i]) : t[i] - '0');
		if (v > 0xff)
			return TOK_BAD;
		*out = (uint8_t)v;
		return TOK_BYTE;
	}
	for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
		size_t l = strlen(named[k].name);
		if (n - 1 <= l && memcmp(t + 1, named[k].name, n - 1) == 0)
			return TOK_MORE;
		if (n - 1 == l + 1 && memcmp(t + 1, named[k].name, l) == 0 && t[n - 1] == ';') {
			*out = named[k].c;
			return TOK_BYTE;
		}
	}
	return TOK_BAD;
}

static enum tok_verdict tok_read(const uint8_t *t, size_t n, uint8_t *out)
{
	switch (t[0]) {
	case '%': return tok_percent(t, n, out);
	case '\\': return tok_backslash(t, n, out);
	default: return tok_entity(t, n, out);
	}
}

static bool tok_start_byte(uint8_t c)
{
	return c == '%' || c == '\\' || c == '&';
}

/* ---- the patterns ---- */

struct gw_matcher *gw_matcher_new(void)
{
	return xcalloc(1, sizeof(struct gw_matcher));
}

static void add_pattern(struct gw_matcher *m, const uint8_t *b, size_t len, unsigned id, bool derived)
{
	if (!len || len > UINT16_MAX || (derived && len < GW_SCAN_MIN_DERIVED))
		return;
	for (size_t i = 0; i < m->n_pats; i++)
		if (m->pats[i].len == len && memcmp(m->pats[i].b, b, len) == 0)
			return;
	if (m->n_pats == m->cap_pats) {
		m->cap_pats = m->cap_pats ? 2 * m->cap_pats : 16;
		m->pats = xrealloc(m->pats, m->cap_pats * sizeof *m->pats);
	}
	struct pattern *p = &m->pats[m->n_pats++];
	p->b = xmalloc(len);
	memcpy(p->b, b, len);
	p->len = (uint32_t)len;
	p->id = id;
}

/* What the stream's decoder makes of s: its escapes undone, line breaks out */
static size_t decode_all(const uint8_t *s, size_t len, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		uint8_t b;
		if (s[i] == '\r' || s[i] == '\n') {
			i++;
			continue;
		}
		if (tok_start_byte(s[i])) {
			size_t n = 1;
			enum tok_verdict v = TOK_MORE;
			while (v == TOK_MORE && i + n < len)
				v = tok_read(s + i, ++n, &b);
			if (v == TOK_BYTE || v == TOK_DROP) {
				if (v == TOK_BYTE)
					out[o++] = b;
				i += n;
				continue;
			}
		}
		out[o++] = s[i++];
	}
	return o;
}

/* The secret and what its decoded form is, when the stream's decoder would
 * read it otherwise (a secret with "%41" in it) */
static void add_plain(struct gw_matcher *m, const uint8_t *s, size_t len, unsigned id, bool derived)
{
	add_pattern(m, s, len, id, derived);
	uint8_t *d = xmalloc(len + 1);
	size_t n = decode_all(s, len, d);
	add_pattern(m, d, n, id, true);
	explicit_bzero(d, len + 1);
	free(d);
}

/* The base64 of s inside a longer base64 text: s starts k bytes into a
 * group of three. Only the characters all of whose bits are s's are
 * certain; the one or two at each end also hold the neighbours' bits. */
static void add_base64(struct gw_matcher *m, const uint8_t *s, size_t len, unsigned id)
{
	static const char *const alphabets[] = {
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	};
	if (len < GW_SCAN_MIN_DERIVED)
		return;
	uint8_t *enc = xmalloc(len * 4 / 3 + 8);
	for (size_t a = 0; a < 2; a++)
		for (size_t k = 0; k < 3; k++) {
			size_t total = k + len, j0 = (8 * k + 5) / 6, j1 = 8 * total / 6, n = 0;
			for (size_t j = j0; j < j1; j++) {
				size_t bit = 6 * j, i = bit / 8;
				unsigned hi = i >= k && i < total ? s[i - k] : 0;
				unsigned lo = i + 1 >= k && i + 1 < total ? s[i + 1 - k] : 0;
				enc[n++] = (uint8_t)alphabets[a][((hi << 8 | lo) >> (10 - bit % 8)) & 63];
			}
			add_pattern(m, enc, n, id, true);
		}
	explicit_bzero(enc, len * 4 / 3 + 8);
	free(enc);
}

/* "Basic dXNlcjpwYXNz": the password of user:password, which an echo that
 * decodes the header shows alone */
static void add_basic_password(struct gw_matcher *m, const char *value, unsigned id)
{
	if (!value || strncasecmp(value, "Basic ", 6) != 0)
		return;
	const char *b = value + 6;
	size_t len = strlen(b);
	uint8_t *dec = xmalloc(len + 1);
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < len && b[i] != '='; i++) {
		const char *p = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", b[i]);
		if (!p)
			break;
		acc = acc << 6 | (uint32_t)(p - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dec[n++] = (uint8_t)(acc >> bits);
		}
	}
	const uint8_t *colon = memchr(dec, ':', n);
	if (colon)
		add_plain(m, colon + 1, n - (size_t)(colon + 1 - dec), id, true);
	explicit_bzero(dec, len + 1);
	free(dec);
}

/* The secret in hex (both cases), and percent-encoded (both cases): the
 * stream decodes one level of escapes, so this catches a second one
 * ("%252F" in a URL inside a URL) */
static void add_hex_forms(struct gw_matcher *m, const uint8_t *s, size_t len, unsigned id)
{
	static const char *const digits[] = {"0123456789abcdef", "0123456789ABCDEF"};
	if (len < GW_SCAN_MIN_DERIVED)
		return;
	uint8_t *b = xmalloc(3 * len + 1);
	for (size_t c = 0; c < 2; c++) {
		for (size_t i = 0; i < len; i++) {
			b[2 * i] = (uint8_t)digits[c][s[i] >> 4];
			b[2 * i + 1] = (uint8_t)digits[c][s[i] & 15];
		}
		add_pattern(m, b, 2 * len, id, true);
		size_t n = 0;
		for (size_t i = 0; i < len; i++) {
			bool plain = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
				     (s[i] >= '0' && s[i] <= '9') || (s[i] && strchr("-._~", s[i]));
			if (plain) {
				b[n++] = s[i];
			} else {
				b[n++] = '%';
				b[n++] = (uint8_t)digits[c][s[i] >> 4];
				b[n++] = (uint8_t)digits[c][s[i] & 15];
			}
		}
		add_pattern(m, b, n, id, true);
	}
	explicit_bzero(b, 3 * len + 1);
	free(b);
}

void gw_matcher_add_secret(struct gw_matcher *m, const uint8_t *secret, size_t len, const char *header_value,
			   unsigned id)
{
	add_plain(m, secret, len, id, false);
	add_base64(m, secret, len, id);
	add_hex_forms(m, secret, len, id);
	add_basic_password(m, header_value, id);
}

size_t gw_matcher_patterns(const struct gw_matcher *m)
{
	return m->n_pats;
}

/* ---- the automaton ---- */

struct bnode {
	uint32_t child, sibling;        /* first child; next child of the same parent */
	uint32_t fail;
	uint16_t depth;
	int16_t out;
	uint8_t label;
};

static uint32_t bchild(const struct bnode *t, uint32_t u, uint8_t c)
{
	for (uint32_t v = t[u].child; v; v = t[v].sibling)
		if (t[v].label == c)
			return v;
	return 0;
}

/* the trie of the patterns; its size in *n */
static struct bnode *build_trie(const struct gw_matcher *m, uint32_t *n)
{
	size_t total = 1;
	for (size_t i = 0; i < m->n_pats; i++)
		total += m->pats[i].len;
	struct bnode *t = xcalloc(total, sizeof *t);
	t[0].out = -1;
	*n = 1;
	for (size_t i = 0; i < m->n_pats; i++) {
		uint32_t u = 0;
		for (uint32_t j = 0; j < m->pats[i].len; j++) {
			uint8_t c = m->pats[i].b[j];
			uint32_t v = bchild(t, u, c);
			if (!v) {
				v = (*n)++;
				t[v] = (struct bnode){.sibling = t[u].child, .depth = (uint16_t)(j + 1), .out = -1, .label = c};
				t[u].child = v;
			}
			u = v;
		}
		if (t[u].out < 0)
			t[u].out = (int16_t)i;
	}
	return t;
}

/* failure links and outputs, breadth first */
static void link_trie(struct bnode *t, uint32_t n)
{
	uint32_t *queue = xmalloc(n * sizeof *queue);
	size_t head = 0, tail = 0;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t u = queue[head++];
		for (uint32_t v = t[u].child; v; v = t[v].sibling) {
			uint32_t f = 0;
			if (u) {
				f = t[u].fail;
				while (f && !bchild(t, f, t[v].label))
					f = t[f].fail;
				f = bchild(t, f, t[v].label);
			}
			t[v].fail = f;
			if (t[v].out < 0)
				t[v].out = t[f].out;
			queue[tail++] = v;
		}
	}
	free(queue);
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void pair_set(uint8_t *pair, uint8_t c, uint8_t n)
{
	pair[c << 5 | n >> 3] |= (uint8_t)(1u << (n & 7));
}

static bool pair_has(const uint8_t *pair, uint8_t c, uint8_t n)
{
	return pair[c << 5 | n >> 3] & (1u << (n & 7));
}

/* What the fast path of a stream looks at: the root's edges, the bytes that
 * start a pattern or an escape, and the pairs of bytes that may begin a
 * copy (a pattern's first two, or its first and what the decoder reads
 * again or drops: an escape, a line break). Most bytes that start a
 * pattern are followed by one that does not continue it. */
static void fill_filters(struct gw_matcher *m)
{
	for (uint32_t k = 0; k < m->st[0].n_edges; k++)
		m->root[m->label[k]] = m->target[k];
	for (unsigned c = 0; c < 256; c++) {
		m->slow[c] = m->root[c] || tok_start_byte((uint8_t)c);
		for (unsigned n = 0; tok_start_byte((uint8_t)c) && n < 256; n++)
			pair_set(m->pair, (uint8_t)c, (uint8_t)n);
	}
	static const uint8_t again[] = {'\r', '\n', '%', '\\', '&'};
	for (size_t i = 0; i < m->n_pats; i++) {
		const uint8_t *p = m->pats[i].b;
		for (unsigned n = 0; m->pats[i].len == 1 && n < 256; n++)
			pair_set(m->pair, p[0], (uint8_t)n);
		if (m->pats[i].len > 1)
			pair_set(m->pair, p[0], p[1]);
		for (size_t k = 0; k < sizeof again; k++)
			pair_set(m->pair, p[0], again[k]);
	}
}

/* the trie in its final form, in one block of locked memory */
static int flatten(struct gw_matcher *m, const struct bnode *t, uint32_t n)
{
	size_t edges = n - 1, np = m->n_pats ? m->n_pats : 1;
	size_t o_root = 0, o_slow = o_root + 256 * sizeof(uint32_t), o_pair = o_slow + 256, o_st = align8(o_pair + 8192),
	       o_target = align8(o_st + n * sizeof(struct ac_state)), o_label = o_target + edges * sizeof(uint32_t) + 4,
	       o_plen = align8(o_label + edges + 1), o_pid = o_plen + np * sizeof(uint16_t),
	       len = o_pid + np * sizeof(uint16_t);
	uint8_t *b = gw_secure_alloc(len);
	if (!b)
		return -1;
	m->block = b;
	m->block_len = len;
	m->root = (uint32_t *)(b + o_root);
	m->slow = b + o_slow;
	m->pair = b + o_pair;
	m->st = (struct ac_state *)(b + o_st);
	m->target = (uint32_t *)(b + o_target);
	m->label = b + o_label;
	m->pat_len = (uint16_t *)(b + o_plen);
	m->pat_id = (uint16_t *)(b + o_pid);
	m->n_st = n;
	uint32_t e = 0;
	for (uint32_t u = 0; u < n; u++) {
		m->st[u] = (struct ac_state){.fail = t[u].fail, .edge = e, .depth = t[u].depth, .out = t[u].out};
		/* children in label order: 256 passes would be slow, so sort by insertion */
		uint32_t first = e;
		for (uint32_t v = t[u].child; v; v = t[v].sibling) {
			uint32_t k = e++;
			while (k > first && m->label[k - 1] > t[v].label) {
				m->label[k] = m->label[k - 1];
				m->target[k] = m->target[k - 1];
				k--;
			}
			m->label[k] = t[v].label;
			m->target[k] = v;
		}
		m->st[u].n_edges = (uint16_t)(e - first);
	}
	fill_filters(m);
	for (size_t i = 0; i < m->n_pats; i++) {
		m->pat_len[i] = (uint16_t)m->pats[i].len;
		m->pat_id[i] = (uint16_t)m->pats[i].id;
		if (m->pats[i].len > m->max_len)
			m->max_len = m->pats[i].len;
	}
	/* every decoded byte of a partial match is at most an escape long, and
	 * line breaks may sit between them */
	m->hold_max = (size_t)m->max_len * 12 + 256;
	return 0;
}

/* the heap copies of the patterns (the count stays: the automaton has them) */
static void wipe_patterns(struct gw_matcher *m)
{
	for (size_t i = 0; m->pats && i < m->n_pats; i++) {
		explicit_bzero(m->pats[i].b, m->pats[i].len);
		free(m->pats[i].b);
	}
	free(m->pats);
	m->pats = NULL;
	m->cap_pats = 0;
}

int gw_matcher_build(struct gw_matcher *m)
{
	uint32_t n;
	struct bnode *t = build_trie(m, &n);
	link_trie(t, n);
	int r = flatten(m, t, n);
	explicit_bzero(t, n * sizeof *t);
	free(t);
	wipe_patterns(m);
	return r;
}

void gw_matcher_free(struct gw_matcher *m)
{
	if (!m)
		return;
	wipe_patterns(m);
	if (m->block)
		gw_secure_free(m->block, m->block_len);
	free(m);
}

static inline uint32_t ac_step(const struct gw_matcher *m, uint32_t s, uint8_t c)
{
	while (s) {
		const struct ac_state *st = &m->st[s];
		const uint8_t *l = m->label + st->edge;
		for (uint32_t i = 0; i < st->n_edges; i++)
			if (l[i] == c)
				return m->target[st->edge + i];
		s = st->fail;
	}
	return m->root[c];
}

/* ---- a stream ----
 *
 * The bytes not yet passed on live in a window: during gw_scan_feed, the end
 * of the output buffer (what was held, then the new bytes, copied in at
 * once), so the common case is one copy and a table lookup a byte; between
 * calls, s->held. Byte o of the stream is win[o - released]. At the end of
 * a feed what may still become a copy moves back to s->held. */

void gw_scan_init(struct gw_scan *s, const struct gw_matcher *m)
{
	*s = (struct gw_scan){.m = m && m->n_pats && m->block ? m : NULL};
}

void gw_scan_free(struct gw_scan *s)
{
	if (s->held) {
		explicit_bzero(s->held, s->held_cap);
		free(s->held);
	}
	if (s->ring) {
		explicit_bzero(s->ring, s->m->max_len * sizeof *s->ring);
		free(s->ring);
	}
	s->held = NULL;
	s->ring = NULL;
}

static uint32_t depth(const struct gw_scan *s)
{
	return s->state ? s->m->st[s->state].depth : 0;
}

static uint32_t raw_depth(const struct gw_scan *s)
{
	return s->raw_state ? s->m->st[s->raw_state].depth : 0;
}

static struct gw_canon_pos *canon_at(const struct gw_scan *s, uint64_t i)
{
	return &s->ring[i % s->m->max_len];
}

/* Stream bytes [from, to) masked; those gone already cut the stream;
 * *fresh when any was not masked before. */
static void mask_raw(struct gw_scan *s, uint64_t from, uint64_t to, bool *fresh)
{
	if (from < s->released) {
		s->cut = true;   /* gone already: only cutting the stream keeps the rest */
		from = s->released;
	}
	for (uint64_t i = from; i < to; i++) {
		uint8_t *b = &s->win[i - s->released];
		*fresh |= *b != GW_SCAN_MASK;
		*b = GW_SCAN_MASK;
	}
}

/* the last n decoded bytes masked where they were written */
static void mask_last(struct gw_scan *s, uint32_t n, unsigned id)
{
	bool fresh = false;
	for (uint32_t k = 1; k <= n; k++) {
		const struct gw_canon_pos *c = canon_at(s, s->n_canon - k);
		mask_raw(s, c->start, c->start + c->len, &fresh);
	}
	s->hits++;
	s->hit_ids |= 1ull << (id % 64);
}

/* the raw byte at `at` through the automaton too: a copy written as it is,
 * even where the decoder read its first byte as the end of an escape
 * ("%4" + "a1b2..."); one the decoded bytes found already is no new hit */
static void raw_step(struct gw_scan *s, uint8_t c, uint64_t at)
{
	s->raw_state = ac_step(s->m, s->raw_state, c);
	int16_t o = s->m->st[s->raw_state].out;
	if (o < 0)
		return;
	bool fresh = false;
	mask_raw(s, at + 1 - s->m->pat_len[o], at + 1, &fresh);
	if (fresh) {
		s->hits++;
		s->hit_ids |= 1ull << (s->m->pat_id[o] % 64);
	}
}

/* a decoded byte, written as len raw bytes from start */
static void canon(struct gw_scan *s, uint8_t b, uint64_t start, size_t len)
{
	*canon_at(s, s->n_canon++) = (struct gw_canon_pos){.start = start, .len = (uint8_t)len};
	s->state = ac_step(s->m, s->state, b);
	int16_t o = s->m->st[s->state].out;
	if (o >= 0)
		mask_last(s, s->m->pat_len[o], s->m->pat_id[o]);
}

static void decode(struct gw_scan *s, uint8_t c, uint64_t at);

/* the escape being read is none: its first byte is itself, the rest is read again */
static void tok_fail(struct gw_scan *s)
{
	uint8_t rest[sizeof s->tok];
	size_t n = s->tok_len - 1;
	uint64_t start = s->tok_start;
	memcpy(rest, s->tok + 1, n);
	s->tok_len = 0;
	canon(s, s->tok[0], start, 1);
	for (size_t i = 0; i < n; i++)
		decode(s, rest[i], start + 1 + i);
}

static void decode(struct gw_scan *s, uint8_t c, uint64_t at)
{
	if (!s->tok_len) {
		if (c == '\r' || c == '\n')
			return;
		if (!tok_start_byte(c)) {
			canon(s, c, at, 1);
			return;
		}
		s->tok_start = at;
	}
	s->tok[s->tok_len++] = c;
	uint8_t b;
	switch (tok_read(s->tok, s->tok_len, &b)) {
	case TOK_MORE:
		if (s->tok_len == sizeof s->tok)
			tok_fail(s);
		return;
	case TOK_BYTE:
		s->tok_len = 0;
		canon(s, b, s->tok_start, (size_t)(at + 1 - s->tok_start));
		return;
	case TOK_DROP:
		s->tok_len = 0;
		return;
	case TOK_BAD:
		tok_fail(s);
		return;
	}
}

/* where what may still become a copy begins */
static uint64_t hold_from(const struct gw_scan *s)
{
	uint32_t d = depth(s);
	uint64_t from = d ? canon_at(s, s->n_canon - d)->start : s->tok_len ? s->tok_start : s->pos;
	uint64_t raw = s->pos - raw_depth(s);
	return raw < from ? raw : from;
}

/* The window's bytes before upto stay in out (they go on); the rest moves
 * back to s->held. win_len: the window's bytes at the end of out. */
static void keep_back(struct gw_scan *s, struct gw_buf *out, size_t win_len, uint64_t upto)
{
	size_t n = (size_t)(s->pos - upto);
	if (n > s->held_cap) {
		uint8_t *b = xmalloc(n < 256 ? 256 : n);
		if (s->held) {
			explicit_bzero(s->held, s->held_cap);
			free(s->held);
		}
		s->held = b;
		s->held_cap = n < 256 ? 256 : n;
	}
	if (n)
		memcpy(s->held, s->win + (win_len - n), n);
	out->len -= n;
	s->released = upto;
	s->win = s->held;
}

/* one byte the slow way: decoded and matched, both ways */
static void slow_byte(struct gw_scan *s, uint8_t c, uint64_t at)
{
	if (!s->ring)
		s->ring = xcalloc(s->m->max_len, sizeof *s->ring);
	if (s->tok_len || s->state != s->raw_state || tok_start_byte(c) || c == '\r' || c == '\n') {
		decode(s, c, at);
		raw_step(s, c, at);
		return;
	}
	/* the same byte both ways from the same state: one step for both */
	*canon_at(s, s->n_canon++) = (struct gw_canon_pos){.start = at, .len = 1};
	s->state = s->raw_state = ac_step(s->m, s->state, c);
	int16_t o = s->m->st[s->state].out;
	if (o >= 0) {
		bool fresh = false;
		mask_last(s, s->m->pat_len[o], s->m->pat_id[o]);
		mask_raw(s, at + 1 - s->m->pat_len[o], at + 1, &fresh);
	}
}

int gw_scan_feed(struct gw_scan *s, const uint8_t *data, size_t len, struct gw_buf *out)
{
	if (!s->m) {
		s->pos += len;
		s->released = s->pos;
		return gw_buf_put(out, data, len) ? 0 : -1;
	}
	size_t held = gw_scan_held(s), base = out->len;
	if (!gw_buf_put(out, s->held, held) || !gw_buf_put(out, data, len)) {
		out->len = base;
		return -1;
	}
	s->win = gw_buf_data(out) + base;
	const uint8_t *slow = s->m->slow, *pair = s->m->pair, *w = s->win;
	for (size_t i = held, end = held + len; i < end; i++) {
		if (!s->state && !s->raw_state && !s->tok_len) {
			/* four at a time while none may start anything */
			while (i + 4 < end && !(slow[w[i]] | slow[w[i + 1]] | slow[w[i + 2]] | slow[w[i + 3]]))
				i += 4;
			while (i + 1 < end && (!slow[w[i]] || !pair_has(pair, w[i], w[i + 1])))
				i++;
			if (i + 1 == end && !slow[w[i]])
				break;   /* the last byte, whose next is not here yet: by itself */
		}
		slow_byte(s, w[i], s->released + i);
	}
	s->pos += len;
	if (s->cut) {
		/* nothing more of this stream goes on */
		out->len = base;
		s->released = s->pos;
		s->win = s->held;
		return -1;
	}
	/* what may still become a copy stays; a partial match padded out with
	 * line breaks past the bound goes, oldest first */
	uint64_t from = hold_from(s);
	if (s->pos - from > s->m->hold_max)
		from = s->pos - s->m->hold_max;
	keep_back(s, out, held + len, from < s->released ? s->released : from);
	return 0;
}

/* held bytes before upto go on */
static int release(struct gw_scan *s, struct gw_buf *out, uint64_t upto)
{
	if (upto <= s->released)
		return 0;
	size_t n = (size_t)(upto - s->released), held = gw_scan_held(s);
	if (!gw_buf_put(out, s->held, n))
		return -1;
	memmove(s->held, s->held + n, held - n);
	s->released = upto;
	return 0;
}

int gw_scan_drain(struct gw_scan *s, struct gw_buf *out)
{
	if (!s->m || s->released == s->pos || depth(s) >= GW_SCAN_DRAIN_KEEP || raw_depth(s) >= GW_SCAN_DRAIN_KEEP)
		return 0;
	return release(s, out, s->tok_len ? s->tok_start : s->pos);
}

int gw_scan_flush(struct gw_scan *s, struct gw_buf *out)
{
	if (!s->m)
		return 0;
	s->win = s->held;
	/* an escape that did not end is its bytes */
	while (s->tok_len)
		tok_fail(s);
	uint32_t d = depth(s);
	int16_t o = s->state ? s->m->st[s->state].out : -1;
	bool matched = o >= 0 && s->m->pat_len[o] == d;   /* masked already */
	bool fresh = false;
	if (d >= GW_SCAN_TAIL_MASK && !matched) {
		for (uint32_t k = 1; k <= d; k++) {
			const struct gw_canon_pos *c = canon_at(s, s->n_canon - k);
			if (c->start >= s->released)
				mask_raw(s, c->start, c->start + c->len, &fresh);
		}
	}
	uint32_t rd = raw_depth(s);
	o = s->raw_state ? s->m->st[s->raw_state].out : -1;
	if (rd >= GW_SCAN_TAIL_MASK && !(o >= 0 && s->m->pat_len[o] == rd)) {
		uint64_t from = s->pos - rd;
		mask_raw(s, from < s->released ? s->released : from, s->pos, &fresh);
	}
	s->hits += fresh;
	s->state = s->raw_state = 0;
	if (s->cut)
		return -1;
	return release(s, out, s->pos);
}

unsigned gw_scan_whole(const struct gw_matcher *m, uint8_t *data, size_t len)
{
	struct gw_scan s;
	gw_scan_init(&s, m);
	if (!s.m)
		return 0;
	/* in pieces: what comes out is never ahead of what went in, so it is
	 * written back in place behind the reading */
	struct gw_buf out = {0};
	size_t w = 0;
	int r = 0;
	for (size_t off = 0; r == 0 && off <= len; off += GW_BUF_SOFT) {
		size_t n = len - off < GW_BUF_SOFT ? len - off : GW_BUF_SOFT;
		r = n ? gw_scan_feed(&s, data + off, n, &out) : gw_scan_flush(&s, &out);
		if (out.len)
			memcpy(data + w, gw_buf_data(&out), out.len);
		w += out.len;
		gw_buf_drop(&out, out.len);
		if (n == 0)
			break;
	}
	if (r == 0 && w < len && (r = gw_scan_flush(&s, &out)) == 0 && out.len) {
		memcpy(data + w, gw_buf_data(&out), out.len);
		w += out.len;
	}
	unsigned hits = s.hits;
	if (w != len)
		memset(data, GW_SCAN_MASK, len);   /* cannot happen: masking keeps lengths */
	gw_buf_free(&out);
	gw_scan_free(&s);
	return hits + (w != len);
}

const struct gw_matcher *gw_secrets;

int gw_secrets_build(const struct gw_config *cfg)
{
	struct gw_matcher *m = gw_matcher_new();
	for (size_t i = 0; i < cfg->n_creds; i++)
		gw_matcher_add_secret(m, (const uint8_t *)cfg->creds[i].secret, cfg->creds[i].secret_len,
				      cfg->creds[i].value, (unsigned)i);
	if (gw_matcher_build(m) < 0) {
		gw_matcher_free(m);
		return -1;
	}
	gw_secrets = m;
	return 0;
}
