/* The one JSON module: yajl's stream parser into yajl's tree types for
 * reading, yajl_gen for writing. */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include "util.h"

/* yajl parses iteratively, but yajl_tree_free recurses once per level: a
 * document of a few MiB of '[' would blow the stack. No OCI document nests
 * anywhere near this deep. */
#define JSON_MAX_DEPTH 256

/* A cheap pre-scan over the raw text for what the tree API cannot report:
 * nesting depth, and \u0000 escapes (the tree hands out C strings, so an
 * embedded NUL would silently cut a path or an argument short). Comments are
 * skipped because yajl_tree_parse accepts them. */
static int prescan(const char *text, const char *what, struct ab_err *err)
{
	int depth = 0;
	/* strcspn jumps to the next byte that matters (a few instructions a
	 * byte less than looking at each) */
	for (const char *p = text + strcspn(text, "\"/[]{}"); *p; p++, p += strcspn(p, "\"/[]{}")) {
		switch (*p) {
		case '"':
			for (p++; *p && *p != '"'; p++) {
				p += strcspn(p, "\"\\");
				if (*p != '\\')
					break;
				if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0)
					return ab_error(err, 0, "%s: invalid JSON: a string contains \\u0000", what);
				if (p[1])
					p++;
			}
			if (!*p)
				return 0;   /* unterminated: let yajl report it */
			break;
		case '/':
			if (p[1] == '/') {
				p += strcspn(p, "\n");
			} else if (p[1] == '*') {
				const char *end = strstr(p + 2, "*/");
				if (!end)
					return 0;
				p = end + 1;
			}
			if (!*p)
				return 0;
			break;
		case '[':
		case '{':
			if (++depth > JSON_MAX_DEPTH)
				return ab_error(err, 0, "%s: invalid JSON: nested deeper than %d levels",
						what, JSON_MAX_DEPTH);
			break;
		case ']':
		case '}':
			depth--;
			break;
		}
	}
	return 0;
}

/* yajl_tree_parse only hands back a verbose multi-line message. Re-run the
 * stream parser (no callbacks, so no allocation per value) to get yajl's
 * one-line reason and the offset where it stopped. */
static void describe_parse_error(const char *text, const char *tree_msg, char *buf, size_t len)
{
	size_t n = strlen(text);
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	if (!h) {
		snprintf(buf, len, "%s", tree_msg);
		return;
	}
	yajl_config(h, yajl_allow_comments, 1);
	yajl_status st = yajl_parse(h, (const unsigned char *)text, n);
	/* Where it stopped: the last byte yajl took, or the end when the text
	 * ran out (yajl_complete_parse counts only its own call). */
	size_t off = yajl_get_bytes_consumed(h);
	off = off > 0 ? off - 1 : 0;
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(h);
		off = n;
	}
	if (st == yajl_status_ok) {
		/* Both disagree (should not happen): keep the tree's words. */
		snprintf(buf, len, "%.*s", (int)strcspn(tree_msg, "\n"), tree_msg);
		yajl_free(h);
		return;
	}
	unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)text, n);
	if (off > n)
		off = n;
	unsigned line = 1, col = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	const char *m = msg ? (const char *)msg : tree_msg;
	int mlen = (int)strcspn(m, "\n");
	while (mlen > 0 && (m[mlen - 1] == '.' || m[mlen - 1] == ' '))
		mlen--;
	snprintf(buf, len, "%.*s at line %u, column %u", mlen, m, line, col);
	if (msg)
		yajl_free_error(h, msg);
	yajl_free(h);
}

/* ---- the tree ----
 * yajl's own value types (yajl_tree.h), built from its stream parser's
 * callbacks into one arena per document: yajl_tree_parse mallocs every node,
 * key and string and reallocs an object's or array's arrays once per
 * member, and yajl_tree_free walks it all again; for a runc config.json that
 * was ~230,000 instructions of a create's ~1.1 million before its clone.
 * Same values as yajl_tree_parse gives: members in document order,
 * duplicate keys kept, numbers with their text and the same flags. */

struct json_doc {
	struct arena a;
	struct yajl_val_s root;         /* json_parse hands out &root */
};

/* an object's or array's members while it is open: all open containers
 * share one stack of them, a container's from its frame's first on */
struct json_member {
	const char *key;
	yajl_val value;
};

struct json_frame {
	yajl_val v;
	size_t first;                   /* its first member in members */
	const char *key;                /* an object's key awaiting its value */
};

struct json_builder {
	struct arena *a;
	yajl_val root;
	struct json_member *members;
	size_t n_members, cap_members;
	struct json_frame *frames;
	size_t n_frames, cap_frames;
};

static yajl_val node(struct json_builder *b, yajl_type type)
{
	yajl_val v = arena_alloc(b->a, sizeof *v);
	v->type = type;
	return v;
}

static int add_value(struct json_builder *b, yajl_val v)
{
	if (b->n_frames == 0) {
		b->root = v;
		return 1;
	}
	struct json_frame *f = &b->frames[b->n_frames - 1];
	const char *key = NULL;
	if (f->v->type == yajl_t_object) {
		if (!f->key) {
			/* the member's key (map_key comes through here too) */
			if (v->type != yajl_t_string)
				return 0;
			f->key = v->u.string;
			return 1;
		}
		key = f->key;
		f->key = NULL;
	}
	if (b->n_members == b->cap_members) {
		b->cap_members = b->cap_members ? 2 * b->cap_members : 64;
		b->members = xrealloc(b->members, b->cap_members * sizeof *b->members);
	}
	b->members[b->n_members++] = (struct json_member){.key = key, .value = v};
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct json_builder *b = ctx;
	yajl_val v = node(b, yajl_t_string);
	v->u.string = arena_strndup(b->a, (const char *)s, len);
	return add_value(b, v);
}

/* yajl's own reading of an integer (yajl_parse_integer, not exported): the
 * value it gives on overflow or for a number with a fraction or an exponent
 * is part of what the tree hands out */
static long long parse_integer(const char *s, size_t len, bool *ok)
{
	long long ret = 0;
	int sign = 1;
	const char *p = s, *end = s + len;
	*ok = true;
	if (p < end && *p == '-') {
		p++;
		sign = -1;
	}
	if (p < end && *p == '+')
		p++;
	for (; p < end; p++) {
		int d = *p - '0';
		/* yajl says ERANGE for a non-digit too; -2^63 overflows as well */
		if (d < 0 || d > 9 || ret > LLONG_MAX / 10 || (ret == LLONG_MAX / 10 && d > LLONG_MAX % 10)) {
			*ok = false;
			return sign == 1 ? LLONG_MAX : LLONG_MIN;
		}
		ret = ret * 10 + d;
	}
	return sign * ret;
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct json_builder *b = ctx;
	yajl_val v = node(b, yajl_t_number);
	v->u.number.r = arena_strndup(b->a, s, len);
	bool int_ok;
	v->u.number.i = parse_integer(v->u.number.r, len, &int_ok);
	v->u.number.flags = int_ok ? YAJL_NUMBER_INT_VALID : 0;
	char *end = NULL;
	errno = 0;
	v->u.number.d = strtod(v->u.number.r, &end);
	if (errno == 0 && end && *end == 0)
		v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
	return add_value(b, v);
}

static int on_boolean(void *ctx, int value)
{
	struct json_builder *b = ctx;
	return add_value(b, node(b, value ? yajl_t_true : yajl_t_false));
}

static int on_null(void *ctx)
{
	struct json_builder *b = ctx;
	return add_value(b, node(b, yajl_t_null));
}

static int open_container(struct json_builder *b, yajl_type type)
{
	if (b->n_frames == b->cap_frames) {
		b->cap_frames = b->cap_frames ? 2 * b->cap_frames : 16;
		b->frames = xrealloc(b->frames, b->cap_frames * sizeof *b->frames);
	}
	b->frames[b->n_frames++] = (struct json_frame){.v = node(b, type), .first = b->n_members};
	return 1;
}

static int on_start_map(void *ctx) { return open_container(ctx, yajl_t_object); }
static int on_start_array(void *ctx) { return open_container(ctx, yajl_t_array); }

/* its members, from the shared stack into arrays of their own */
static int close_container(void *ctx)
{
	struct json_builder *b = ctx;
	if (b->n_frames == 0)
		return 0;
	struct json_frame f = b->frames[--b->n_frames];
	size_t n = b->n_members - f.first;
	/* no members yet: members may still be NULL */
	const struct json_member *m = n ? b->members + f.first : NULL;
	yajl_val *values = n ? arena_alloc(b->a, n * sizeof *values) : NULL;
	for (size_t i = 0; i < n; i++)
		values[i] = m[i].value;
	if (f.v->type == yajl_t_object) {
		const char **keys = n ? arena_alloc(b->a, n * sizeof *keys) : NULL;
		for (size_t i = 0; i < n; i++)
			keys[i] = m[i].key;
		f.v->u.object.keys = keys;
		f.v->u.object.values = values;
		f.v->u.object.len = n;
	} else {
		f.v->u.array.values = values;
		f.v->u.array.len = n;
	}
	b->n_members = f.first;
	return add_value(b, f.v);
}

static const yajl_callbacks tree_callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_boolean,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_string,
	.yajl_end_map = close_container,
	.yajl_start_array = on_start_array,
	.yajl_end_array = close_container,
};

int json_parse(const char *text, const char *what, yajl_val *ret, struct ab_err *err)
{
	if (prescan(text, what, err) < 0)
		return -1;
	struct json_doc *doc = xcalloc(1, sizeof *doc);
	struct json_builder b = {.a = &doc->a};
	size_t n = strlen(text);
	yajl_handle h = yajl_alloc(&tree_callbacks, NULL, &b);
	if (!h)
		ab_fatal("out of memory (a JSON parser)");
	yajl_config(h, yajl_allow_comments, 1);
	yajl_status st = yajl_parse(h, (const unsigned char *)text, n);
	/* yajl_tree_parse's order: the end is taken in whatever state the text left */
	st = yajl_complete_parse(h);
	free(b.members);
	free(b.frames);
	if (st != yajl_status_ok || !b.root) {
		char tree_msg[512] = "";
		unsigned char *m = yajl_get_error(h, 1, (const unsigned char *)text, n);
		if (m) {
			snprintf(tree_msg, sizeof tree_msg, "%s", (const char *)m);
			yajl_free_error(h, m);
		}
		yajl_free(h);
		arena_free(&doc->a);
		free(doc);
		char reason[640];
		describe_parse_error(text, tree_msg, reason, sizeof reason);
		return ab_error(err, 0, "%s: invalid JSON: %s", what, reason);
	}
	yajl_free(h);
	doc->root = *b.root;
	*ret = &doc->root;
	return 0;
}

void json_free(yajl_val v)
{
	if (!v)
		return;
	struct json_doc *doc = (struct json_doc *)((char *)v - offsetof(struct json_doc, root));
	arena_free(&doc->a);
	free(doc);
}

yajl_val json_get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (streq(obj->u.object.keys[i], key))
			return obj->u.object.values[i];
	return NULL;
}

/* ---- writing ---- */

struct json_out {
	yajl_gen g;
};

struct json_out *json_out_new(bool pretty)
{
	struct json_out *o = xmalloc(sizeof *o);
	o->g = yajl_gen_alloc(NULL);
	if (!o->g)
		ab_fatal("out of memory (a JSON generator)");
	if (pretty) {
		yajl_gen_config(o->g, yajl_gen_beautify, 1);
		yajl_gen_config(o->g, yajl_gen_indent_string, "  ");
	}
	/* No yajl_gen_validate_utf8: an environment string or path that is not
	 * UTF-8 must still be written (as bytes), not make generation fail. */
	return o;
}

void json_out_free(struct json_out *o)
{
	if (!o)
		return;
	yajl_gen_free(o->g);
	free(o);
}

/* A yajl_gen failure means the caller nested keys and values wrongly: a bug,
 * not a runtime condition, so stop with one line. */
static void check(yajl_gen_status st)
{
	if (st != yajl_gen_status_ok)
		ab_fatal("JSON generator misuse (yajl_gen status %d)", (int)st);
}

void json_obj_begin(struct json_out *o) { check(yajl_gen_map_open(o->g)); }
void json_obj_end(struct json_out *o) { check(yajl_gen_map_close(o->g)); }
void json_arr_begin(struct json_out *o) { check(yajl_gen_array_open(o->g)); }
void json_arr_end(struct json_out *o) { check(yajl_gen_array_close(o->g)); }

void json_key(struct json_out *o, const char *key)
{
	check(yajl_gen_string(o->g, (const unsigned char *)key, strlen(key)));
}

void json_str(struct json_out *o, const char *s)
{
	if (!s)
		check(yajl_gen_null(o->g));
	else
		check(yajl_gen_string(o->g, (const unsigned char *)s, strlen(s)));
}

void json_int(struct json_out *o, int64_t v)
{
	check(yajl_gen_integer(o->g, (long long)v));
}

void json_uint(struct json_out *o, uint64_t v)
{
	/* yajl_gen_integer takes a long long; values above INT64_MAX (e.g.
	 * RLIM_INFINITY) go out as a preformatted number. */
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
	check(yajl_gen_number(o->g, buf, (size_t)n));
}

void json_bool(struct json_out *o, bool v) { check(yajl_gen_bool(o->g, v)); }
void json_null(struct json_out *o) { check(yajl_gen_null(o->g)); }

void json_kv_str(struct json_out *o, const char *key, const char *s)
{
	json_key(o, key);
	json_str(o, s);
}

void json_kv_int(struct json_out *o, const char *key, int64_t v)
{
	json_key(o, key);
	json_int(o, v);
}

void json_kv_uint(struct json_out *o, const char *key, uint64_t v)
{
	json_key(o, key);
	json_uint(o, v);
}

void json_kv_bool(struct json_out *o, const char *key, bool v)
{
	json_key(o, key);
	json_bool(o, v);
}

void json_kv_strs(struct json_out *o, const char *key, const char *const *v, size_t n)
{
	json_key(o, key);
	json_arr_begin(o);
	for (size_t i = 0; i < n; i++)
		json_str(o, v[i]);
	json_arr_end(o);
}

void json_value(struct json_out *o, yajl_val v)
{
	if (YAJL_IS_OBJECT(v)) {
		json_obj_begin(o);
		for (size_t i = 0; i < v->u.object.len; i++) {
			json_key(o, v->u.object.keys[i]);
			json_value(o, v->u.object.values[i]);
		}
		json_obj_end(o);
	} else if (YAJL_IS_ARRAY(v)) {
		json_arr_begin(o);
		for (size_t i = 0; i < v->u.array.len; i++)
			json_value(o, v->u.array.values[i]);
		json_arr_end(o);
	} else if (YAJL_IS_STRING(v)) {
		json_str(o, v->u.string);
	} else if (YAJL_IS_NUMBER(v)) {
		check(yajl_gen_number(o->g, v->u.number.r, strlen(v->u.number.r)));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		json_bool(o, YAJL_IS_TRUE(v));
	} else {
		json_null(o);
	}
}

const char *json_out_text(struct json_out *o, size_t *ret_len)
{
	const unsigned char *buf = NULL;
	size_t len = 0;
	check(yajl_gen_get_buf(o->g, &buf, &len));
	if (ret_len)
		*ret_len = len;
	/* yajl keeps its buffer NUL-terminated, but has none before output. */
	return buf ? (const char *)buf : "";
}
