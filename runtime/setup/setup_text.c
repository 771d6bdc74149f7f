/* The preview of an edit: one unified diff hunk, since an edit changes one run
 * of lines; and what the engines' edits share. */
#include "setup_text.h"
#include "setup.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool setup_blank_text(const char *s)
{
	return !s || !s[strspn(s, " \t\r\n")];
}

void setup_change_free(struct setup_change *c)
{
	free(c->before);
	free(c->after);
	c->before = c->after = NULL;
	c->note = NULL;
}

struct lines {
	const char **at;
	int *len;
	size_t n;
};

static void lines_split(const char *text, struct lines *l)
{
	*l = (struct lines){0};
	for (const char *p = text ? text : ""; *p; l->n++) {
		l->at = xrealloc(l->at, (l->n + 1) * sizeof *l->at);
		l->len = xrealloc(l->len, (l->n + 1) * sizeof *l->len);
		l->at[l->n] = p;
		l->len[l->n] = (int)strcspn(p, "\n");
		p += l->len[l->n] + (p[l->len[l->n]] == '\n');
	}
}

static void lines_free(struct lines *l)
{
	free(l->at);
	free(l->len);
}

static bool lines_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->at[i], b->at[j], (size_t)a->len[i]) == 0;
}

static void print_lines(const struct lines *l, size_t from, size_t to, char mark)
{
	for (size_t i = from; i < to; i++)
		printf("%c%.*s\n", mark, l->len[i], l->at[i]);
}

/* The common head and tail around the changed run are the context (3 lines
 * of each at most). */
void setup_print_diff(const char *path, const char *before, const char *after)
{
	struct lines a, b;
	lines_split(before, &a);
	lines_split(after, &b);
	size_t pre = 0, suf = 0;
	while (pre < a.n && pre < b.n && lines_eq(&a, pre, &b, pre))
		pre++;
	while (suf < a.n - pre && suf < b.n - pre && lines_eq(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	size_t c0 = pre < 3 ? pre : 3, c1 = suf < 3 ? suf : 3;
	size_t start = pre - c0;
	size_t na = c0 + (a.n - pre - suf) + c1, nb = c0 + (b.n - pre - suf) + c1;
	printf("--- %s\n+++ %s\n", before ? path : "/dev/null", after ? path : "/dev/null");
	printf("@@ -%zu,%zu +%zu,%zu @@\n", na ? start + 1 : start, na, nb ? start + 1 : start, nb);
	print_lines(&a, start, pre, ' ');
	print_lines(&a, pre, a.n - suf, '-');
	print_lines(&b, pre, b.n - suf, '+');
	print_lines(&a, a.n - suf, a.n - suf + c1, ' ');
	lines_free(&a);
	lines_free(&b);
}
