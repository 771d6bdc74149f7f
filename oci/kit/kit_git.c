#include "kit_git.h"

#include <ctype.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define GIT_META_MAX (1u << 20)
#define GIT_LINE_MAX 4096

/* The file dirfd/name, a regular file (not a symlink, never blocking on a
 * fifo), at most GIT_META_MAX bytes; NULL otherwise. */
static char *read_meta(int dirfd, const char *name, size_t *ret_len)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > GIT_META_MAX)
		return NULL;
	size_t cap = (size_t)st.st_size + 1;
	char *buf = xmalloc(cap + 1);
	ssize_t n = read_all(fd, buf, cap);
	if (n < 0 || (size_t)n == cap) {        /* unreadable, or growing under us */
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*ret_len = (size_t)n;
	return buf;
}

/* ---------------------------------------------------------------- config */

struct cursor {
	const char *p, *end;
};

static int peek(const struct cursor *c)
{
	return c->p < c->end ? (unsigned char)*c->p : -1;
}

static void skip_blank(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static void skip_line(struct cursor *c)
{
	while (c->p < c->end && *c->p != '\n')
		c->p++;
	if (c->p < c->end)
		c->p++;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* "[section]", "[section \"sub\"]" or the old "[section.sub]"; false when the
 * header is malformed (git stops reading there: so do we). */
static bool parse_header(struct cursor *c, char *section, char *sub, bool *has_sub)
{
	size_t n = 0;
	c->p++;         /* '[' */
	*has_sub = false;
	while (c->p < c->end && (isalnum((unsigned char)*c->p) || *c->p == '-' || *c->p == '.')) {
		if (n + 1 >= GIT_LINE_MAX)
			return false;
		section[n++] = *c->p++;
	}
	section[n] = 0;
	if (!n)
		return false;
	char *dot = strchr(section, '.');
	if (dot) {
		/* the old "[section.sub]": the subsection is case-insensitive too */
		*dot = 0;
		snprintf(sub, GIT_LINE_MAX, "%s", dot + 1);
		lower(sub);
		*has_sub = true;
		if (!*section)
			return false;
	}
	lower(section);
	if (peek(c) == ' ' || peek(c) == '\t') {
		skip_blank(c);
		if (peek(c) != '"' || *has_sub)
			return false;
		c->p++;
		size_t m = 0;
		while (c->p < c->end && *c->p != '"' && *c->p != '\n') {
			if (*c->p == '\\' && c->p + 1 < c->end)
				c->p++;
			if (m + 1 >= GIT_LINE_MAX)
				return false;
			sub[m++] = *c->p++;
		}
		sub[m] = 0;
		if (peek(c) != '"')
			return false;
		c->p++;
		*has_sub = true;
	}
	if (peek(c) != ']')
		return false;
	c->p++;
	return true;
}

/* A value up to the end of its line: quotes joined, escapes applied, comments
 * and surrounding blanks dropped, "\" + newline continues it. */
static void parse_value(struct cursor *c, char *out)
{
	size_t n = 0, keep = 0;         /* keep: length without trailing blanks */
	bool quoted = false;
	skip_blank(c);
	while (c->p < c->end) {
		char ch = *c->p++;
		if (ch == '\n')
			break;
		if (!quoted && (ch == '#' || ch == ';')) {
			skip_line(c);
			break;
		}
		if (ch == '"') {
			quoted = !quoted;
			keep = n;
			continue;
		}
		if (ch == '\\' && c->p < c->end) {
			char e = *c->p++;
			if (e == '\n')
				continue;
			ch = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
			if (n + 1 < GIT_LINE_MAX)
				out[n++] = ch;
			keep = n;
			continue;
		}
		if (n + 1 < GIT_LINE_MAX)
			out[n++] = ch;
		if (quoted || (ch != ' ' && ch != '\t' && ch != '\r'))
			keep = n;
	}
	out[keep] = 0;
}

void kit_git_config_each(const char *text, size_t len, kit_git_config_fn fn, void *data)
{
	struct cursor c = {text, text + len};
	char *section = xcalloc(3, GIT_LINE_MAX), *sub = section + GIT_LINE_MAX, *buf = sub + GIT_LINE_MAX;
	bool has_sub = false, in_section = false;
	char key[256];
	while (c.p < c.end) {
		skip_blank(&c);
		int ch = peek(&c);
		if (ch == '\n' || ch == '\r' || ch == '#' || ch == ';') {
			skip_line(&c);
			continue;
		}
		if (ch == '[') {
			in_section = parse_header(&c, section, sub, &has_sub);
			if (!in_section)
				break;
			continue;       /* a key may follow on the same line */
		}
		if (!isalpha(ch) || !in_section)
			break;          /* git rejects the file here */
		size_t n = 0;
		while (c.p < c.end && (isalnum((unsigned char)*c.p) || *c.p == '-')) {
			if (n + 1 < sizeof key)
				key[n++] = *c.p;
			c.p++;
		}
		key[n] = 0;
		lower(key);
		skip_blank(&c);
		if (peek(&c) == '=') {
			c.p++;
			parse_value(&c, buf);
			fn(section, has_sub ? sub : NULL, key, buf, data);
		} else {
			fn(section, has_sub ? sub : NULL, key, NULL, data);
			skip_line(&c);
		}
	}
	free(section);
}

struct refs_ctx {
	struct arena *a;
	struct kit_git_config_refs *r;
	size_t cap;
};

static void collect_refs(const char *section, const char *sub, const char *key, const char *value, void *data)
{
	struct refs_ctx *x = data;
	if (!value || !*value)
		return;
	if (streq(section, "core") && !sub && streq(key, "hookspath")) {
		x->r->hooks_path = arena_strdup(x->a, value);
	} else if ((streq(section, "include") || (streq(section, "includeif") && sub)) && streq(key, "path")) {
		if (x->r->n_includes == x->cap) {
			size_t cap = x->cap ? 2 * x->cap : 4;
			char **v = arena_alloc(x->a, cap * sizeof *v);
			if (x->r->n_includes)
				memcpy(v, x->r->includes, x->r->n_includes * sizeof *v);
			x->r->includes = v;
			x->cap = cap;
		}
		x->r->includes[x->r->n_includes++] = arena_strdup(x->a, value);
	}
}

void kit_git_config_refs(int dirfd, const char *name, struct arena *a, struct kit_git_config_refs *ret)
{
	memset(ret, 0, sizeof *ret);
	size_t len;
	_cleanup_free_ char *text = read_meta(dirfd, name, &len);
	if (!text)
		return;
	struct refs_ctx x = {.a = a, .r = ret};
	kit_git_config_each(text, len, collect_refs, &x);
}

/* ---------------------------------------------------------------- .git file, .gitmodules */

char *kit_gitfile_target(int dirfd, const char *name, struct arena *a)
{
	size_t len;
	_cleanup_free_ char *text = read_meta(dirfd, name, &len);
	/* git takes "gitdir: " at the start, the rest up to trailing CR/LF as the path */
	if (!text || strncmp(text, "gitdir: ", 8) != 0)
		return NULL;
	while (len > 8 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = 0;
	if (len == 8 || strlen(text) != len)
		return NULL;
	return arena_strdup(a, text + 8);
}

struct modules_ctx {
	struct arena *a;
	char **v;
	size_t n, cap;
};

static void collect_module(const char *section, const char *sub, const char *key, const char *value, void *data)
{
	struct modules_ctx *x = data;
	if (!value || !*value || !sub || !streq(section, "submodule") || !streq(key, "path"))
		return;
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 8;
		char **v = arena_alloc(x->a, cap * sizeof *v);
		if (x->n)
			memcpy(v, x->v, x->n * sizeof *v);
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = arena_strdup(x->a, value);
}

size_t kit_gitmodules_paths(int dirfd, const char *name, struct arena *a, char ***ret)
{
	size_t len;
	_cleanup_free_ char *text = read_meta(dirfd, name, &len);
	*ret = NULL;
	if (!text)
		return 0;
	struct modules_ctx x = {.a = a};
	kit_git_config_each(text, len, collect_module, &x);
	*ret = x.v;
	return x.n;
}
