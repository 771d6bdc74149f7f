/* The one YAML module: libyaml's event parser builds a small tree with positions;
 * libyaml's emitter writes trees built in memory. */
#include "yml.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- reading */

struct yml_reader {
	yaml_parser_t parser;
	struct arena *a;
	const char *file;
	size_t nodes;
	struct ab_err *err;
};

/* libyaml marks are 0-based */
static int loc_error(struct yml_reader *r, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int loc_error(struct yml_reader *r, yaml_mark_t m, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ab_error(r->err, 0, "%s:%zu:%zu: %s", r->file, m.line + 1, m.column + 1, msg);
}

static int next_event(struct yml_reader *r, yaml_event_t *ev)
{
	if (yaml_parser_parse(&r->parser, ev))
		return 0;
	yaml_parser_t *p = &r->parser;
	const char *problem = p->problem ? p->problem : "syntax error";
	if (p->context)
		return loc_error(r, p->problem_mark, "invalid YAML: %s %s (line %zu)", problem, p->context,
				 p->context_mark.line + 1);
	return loc_error(r, p->problem_mark, "invalid YAML: %s", problem);
}

static struct yml_node *new_node(struct yml_reader *r, enum yml_kind kind, yaml_mark_t m)
{
	struct yml_node *n = arena_alloc(r->a, sizeof *n);
	n->kind = kind;
	n->file = r->file;
	n->line = (unsigned)m.line + 1;
	n->col = (unsigned)m.column + 1;
	return n;
}

/* Tags: only the core schema's own, which change nothing we care about except
 * that !!str makes a plain scalar a string. */
static int check_tag(struct yml_reader *r, const yaml_char_t *tag, yaml_mark_t m, bool *ret_str)
{
	*ret_str = false;
	if (!tag)
		return 0;
	const char *t = (const char *)tag;
	static const char core[] = "tag:yaml.org,2002:";
	if (strncmp(t, core, sizeof core - 1) == 0) {
		const char *k = t + sizeof core - 1;
		if (streq(k, "str")) {
			*ret_str = true;
			return 0;
		}
		if (streq(k, "map") || streq(k, "seq") || streq(k, "int") || streq(k, "bool") ||
		    streq(k, "null") || streq(k, "float"))
			return 0;
	}
	if (streq(t, "!"))
		return 0;
	return loc_error(r, m, "YAML tag \"%s\" is not supported", t);
}

static int parse_node(struct yml_reader *r, yaml_event_t *ev, int depth, struct yml_node **ret);

/* After a *_START event: children until the matching *_END. */
static int parse_collection(struct yml_reader *r, struct yml_node *n, int depth)
{
	struct yml_node **v = NULL;
	size_t len = 0, cap = 0;
	int ret = -1;
	for (;;) {
		yaml_event_t ev;
		if (next_event(r, &ev) < 0)
			goto out;
		if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		struct yml_node *child = NULL;
		int rc = parse_node(r, &ev, depth + 1, &child);
		yaml_event_delete(&ev);
		if (rc < 0)
			goto out;
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[len++] = child;
	}
	if (n->kind == YML_SEQ) {
		n->n_items = len;
		n->cap_ = len ? len : 1;
		n->items = arena_alloc(r->a, (len ? len : 1) * sizeof *n->items);
		if (len)
			memcpy(n->items, v, len * sizeof *v);
	} else {
		n->n_pairs = len / 2;
		n->cap_ = len ? len / 2 : 1;
		n->pairs = arena_alloc(r->a, (len ? len / 2 : 1) * sizeof *n->pairs);
		for (size_t i = 0; i + 1 < len; i += 2) {
			struct yml_node *k = v[i];
			if (k->kind != YML_SCALAR) {
				ab_error(r->err, 0, "%s:%u:%u: mapping keys must be scalars, not %s", r->file,
					 k->line, k->col, yml_describe(k));
				goto out;
			}
			for (size_t j = 0; j < i / 2; j++)
				if (streq(n->pairs[j].key->str, k->str)) {
					ab_error(r->err, 0, "%s:%u:%u: duplicate key \"%s\" (first at line %u)",
						 r->file, k->line, k->col, k->str, n->pairs[j].key->line);
					goto out;
				}
			n->pairs[i / 2].key = k;
			n->pairs[i / 2].value = v[i + 1];
		}
	}
	ret = 0;
out:
	free(v);
	return ret;
}

static int parse_node(struct yml_reader *r, yaml_event_t *ev, int depth, struct yml_node **ret)
{
	if (depth > YML_MAX_DEPTH)
		return loc_error(r, ev->start_mark, "invalid YAML: nested deeper than %d levels", YML_MAX_DEPTH);
	if (++r->nodes > YML_MAX_NODES)
		return loc_error(r, ev->start_mark, "invalid YAML: more than %d nodes", YML_MAX_NODES);
	bool force_str;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return loc_error(r, ev->start_mark, "YAML aliases (*%s) are not supported",
				 (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT: {
		if (ev->data.scalar.anchor)
			return loc_error(r, ev->start_mark, "YAML anchors (&%s) are not supported",
					 (const char *)ev->data.scalar.anchor);
		if (check_tag(r, ev->data.scalar.tag, ev->start_mark, &force_str) < 0)
			return -1;
		size_t len = ev->data.scalar.length;
		const char *val = (const char *)ev->data.scalar.value;
		if (memchr(val, 0, len))
			return loc_error(r, ev->start_mark, "a scalar contains a NUL character");
		struct yml_node *n = new_node(r, YML_SCALAR, ev->start_mark);
		n->str = arena_strndup(r->a, val, len);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !force_str;
		*ret = n;
		return 0;
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
		const yaml_char_t *anchor = seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
		const yaml_char_t *tag = seq ? ev->data.sequence_start.tag : ev->data.mapping_start.tag;
		if (anchor)
			return loc_error(r, ev->start_mark, "YAML anchors (&%s) are not supported", (const char *)anchor);
		if (check_tag(r, tag, ev->start_mark, &force_str) < 0)
			return -1;
		if (force_str)
			return loc_error(r, ev->start_mark, "a %s cannot be tagged !!str", seq ? "sequence" : "mapping");
		struct yml_node *n = new_node(r, seq ? YML_SEQ : YML_MAP, ev->start_mark);
		if (parse_collection(r, n, depth) < 0)
			return -1;
		*ret = n;
		return 0;
	}
	default:
		return loc_error(r, ev->start_mark, "invalid YAML: unexpected event %d", ev->type);
	}
}

int yml_parse(struct arena *a, const char *text, size_t len, const char *file,
	      struct yml_node **ret, struct ab_err *err)
{
	struct yml_reader r = {.a = a, .file = arena_strdup(a, file ? file : "<yaml>"), .err = err};
	*ret = NULL;
	if (!yaml_parser_initialize(&r.parser))
		return ab_error(err, ENOMEM, "%s: YAML parser", r.file);
	yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
	int rc = -1;
	bool have_doc = false;
	struct yml_node *root = NULL;
	for (;;) {
		yaml_event_t ev;
		if (next_event(&r, &ev) < 0)
			goto out;
		yaml_event_type_t t = ev.type;
		yaml_mark_t m = ev.start_mark;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&ev);
			if (have_doc) {
				loc_error(&r, m, "more than one YAML document");
				goto out;
			}
			have_doc = true;
			continue;
		}
		int prc = parse_node(&r, &ev, 0, &root);
		yaml_event_delete(&ev);
		if (prc < 0)
			goto out;
	}
	/* an empty document gives a plain empty scalar: take it as no document */
	if (root && root->kind == YML_SCALAR && yml_is_null(root))
		root = NULL;
	*ret = root;
	rc = 0;
out:
	yaml_parser_delete(&r.parser);
	return rc;
}

int yml_load(struct arena *a, const char *path, const char *shown, struct yml_node **ret,
	     struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (!shown)
		shown = path;
	if (read_file_at(AT_FDCWD, path, YML_MAX_FILE, &text, &len, err) < 0)
		return ab_wrap(err, "%s", shown);
	return yml_parse(a, text, len, shown, ret, err);
}

/* ---------------------------------------------------------------- strict walks */

int yml_error(struct ab_err *err, const struct yml_node *n, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char loc[PATH_MAX + 64] = "";
	if (n && n->file && n->line)
		snprintf(loc, sizeof loc, "%s:%u:%u: ", n->file, n->line, n->col);
	else if (n && n->file)
		snprintf(loc, sizeof loc, "%s: ", n->file);
	if (path && *path)
		ab_error(err, 0, "%s%s: %s", loc, path, msg);
	else
		ab_error(err, 0, "%s%s", loc, msg);
	return -1;
}

static bool str_in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (streq(s, *set))
			return true;
	return false;
}

bool yml_is_null(const struct yml_node *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	return !n || (n->kind == YML_SCALAR && n->plain && str_in(n->str, nulls));
}

bool yml_is_bool(const struct yml_node *n)
{
	static const char *const bools[] = {"true", "True", "TRUE", "false", "False", "FALSE", NULL};
	return n && n->kind == YML_SCALAR && n->plain && str_in(n->str, bools);
}

/* The core schema's int and float forms, plus the YAML 1.1 ones (0o17, 1_000,
 * 1:20) a 1.1 reader would take as numbers. */
static bool looks_numeric(const char *s)
{
	if (!*s)
		return false;
	static const char *const special[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
					      "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", NULL};
	if (str_in(s, special))
		return true;
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o' || p[1] == 'b') && p[2])
		return strspn(p + 2, "0123456789abcdefABCDEF_") == strlen(p + 2);
	bool digits = false, dot = false, exp = false;
	for (; *p; p++) {
		if (isdigit((unsigned char)*p)) {
			digits = true;
		} else if (*p == '_' || *p == ':') {
			if (!digits)
				return false;
		} else if (*p == '.' && !dot && !exp) {
			dot = true;
		} else if ((*p == 'e' || *p == 'E') && digits && !exp) {
			exp = true;
			if (p[1] == '+' || p[1] == '-')
				p++;
			if (!isdigit((unsigned char)p[1]))
				return false;
		} else {
			return false;
		}
	}
	return digits;
}

bool yml_is_number(const struct yml_node *n)
{
	return n && n->kind == YML_SCALAR && n->plain && looks_numeric(n->str);
}

const char *yml_describe(const struct yml_node *n)
{
	if (!n || yml_is_null(n))
		return "null";
	switch (n->kind) {
	case YML_MAP: return "a mapping";
	case YML_SEQ: return "a sequence";
	case YML_SCALAR:
		if (yml_is_bool(n))
			return "a boolean";
		if (yml_is_number(n))
			return "a number";
		return "a string";
	}
	return "a node";
}

const struct yml_pair *yml_map_pair(const struct yml_node *map, const char *key)
{
	if (!map || map->kind != YML_MAP)
		return NULL;
	for (size_t i = 0; i < map->n_pairs; i++)
		if (streq(map->pairs[i].key->str, key))
			return &map->pairs[i];
	return NULL;
}

struct yml_node *yml_map_get(const struct yml_node *map, const char *key)
{
	const struct yml_pair *p = yml_map_pair(map, key);
	return p ? p->value : NULL;
}

static const char *kind_name(enum yml_kind k)
{
	return k == YML_MAP ? "a mapping" : k == YML_SEQ ? "a sequence" : "a scalar";
}

int yml_expect(const struct yml_node *n, enum yml_kind kind, const char *path, struct ab_err *err)
{
	if (n && n->kind == kind && !(kind == YML_SCALAR && yml_is_null(n)))
		return 0;
	return yml_error(err, n, path, "expected %s, got %s", kind == YML_SCALAR ? "a string" : kind_name(kind),
			 yml_describe(n));
}

int yml_check_map(const struct yml_node *n, const char *path, const char *const *allowed,
		  struct ab_err *err)
{
	if (yml_expect(n, YML_MAP, path, err) < 0)
		return -1;
	for (size_t i = 0; i < n->n_pairs; i++) {
		const struct yml_node *k = n->pairs[i].key;
		if (str_in(k->str, allowed))
			continue;
		char list[512];
		size_t off = 0;
		list[0] = 0;
		for (const char *const *a = allowed; *a && off < sizeof list - 1; a++)
			off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", a == allowed ? "" : ", ", *a);
		char kp[512];
		snprintf(kp, sizeof kp, "%s%s%s", path && *path ? path : "", path && *path ? "." : "", k->str);
		return yml_error(err, k, kp, "unknown field (expected one of: %s)", list);
	}
	return 0;
}

int yml_get_str(const struct yml_node *n, const char *path, const char **ret, struct ab_err *err)
{
	if (yml_expect(n, YML_SCALAR, path, err) < 0)
		return -1;
	*ret = n->str;
	return 0;
}

int yml_get_bool(const struct yml_node *n, const char *path, bool *ret, struct ab_err *err)
{
	if (!yml_is_bool(n))
		return yml_error(err, n, path, "expected a boolean (true or false), got %s%s%s%s",
				 yml_describe(n), n && n->kind == YML_SCALAR ? " \"" : "",
				 n && n->kind == YML_SCALAR ? n->str : "", n && n->kind == YML_SCALAR ? "\"" : "");
	*ret = n->str[0] == 't' || n->str[0] == 'T';
	return 0;
}

int yml_get_int(const struct yml_node *n, const char *path, int64_t min, int64_t max,
		int64_t *ret, struct ab_err *err)
{
	if (!n || n->kind != YML_SCALAR || yml_is_null(n) || yml_is_bool(n))
		return yml_error(err, n, path, "expected an integer, got %s", yml_describe(n));
	int64_t v;
	if (parse_int64(n->str, INT64_MIN, INT64_MAX, &v) < 0)
		return yml_error(err, n, path, "expected an integer, got \"%s\"", n->str);
	if (v < min || v > max)
		return yml_error(err, n, path, "%" PRId64 " out of range (%" PRId64 " to %" PRId64 ")", v, min, max);
	*ret = v;
	return 0;
}

int yml_get_str_list(struct arena *a, const struct yml_node *n, const char *path, char ***ret,
		     size_t *ret_n, struct ab_err *err)
{
	if (yml_expect(n, YML_SEQ, path, err) < 0)
		return -1;
	char **v = arena_alloc(a, (n->n_items + 1) * sizeof *v);
	for (size_t i = 0; i < n->n_items; i++) {
		char ip[512];
		snprintf(ip, sizeof ip, "%s[%zu]", path ? path : "", i);
		const char *s;
		if (yml_get_str(n->items[i], ip, &s, err) < 0)
			return -1;
		v[i] = (char *)s;
	}
	*ret = v;
	*ret_n = n->n_items;
	return 0;
}

/* ---------------------------------------------------------------- building */

struct yml_node *yml_new_map(struct arena *a)
{
	struct yml_node *n = arena_alloc(a, sizeof *n);
	n->kind = YML_MAP;
	return n;
}

struct yml_node *yml_new_seq(struct arena *a)
{
	struct yml_node *n = arena_alloc(a, sizeof *n);
	n->kind = YML_SEQ;
	return n;
}

struct yml_node *yml_new_str(struct arena *a, const char *s)
{
	struct yml_node *n = arena_alloc(a, sizeof *n);
	n->kind = YML_SCALAR;
	n->str = arena_strdup(a, s ? s : "");
	n->plain = false;
	return n;
}

struct yml_node *yml_new_plain(struct arena *a, const char *s)
{
	struct yml_node *n = yml_new_str(a, s);
	n->plain = true;
	return n;
}

/* Arrays in the arena grow by doubling; the old block stays until arena_free. */
static void *grow(struct arena *a, void *old, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return old;
	size_t c = *cap ? *cap * 2 : 4;
	void *p = arena_alloc(a, c * size);
	if (n)
		memcpy(p, old, n * size);
	*cap = c;
	return p;
}

void yml_map_add(struct arena *a, struct yml_node *map, const char *key, struct yml_node *value)
{
	map->pairs = grow(a, map->pairs, map->n_pairs, &map->cap_, sizeof *map->pairs);
	map->pairs[map->n_pairs].key = yml_new_str(a, key);
	map->pairs[map->n_pairs].value = value;
	map->n_pairs++;
}

void yml_seq_add(struct arena *a, struct yml_node *seq, struct yml_node *item)
{
	seq->items = grow(a, seq->items, seq->n_items, &seq->cap_, sizeof *seq->items);
	seq->items[seq->n_items++] = item;
}

void yml_map_del(struct yml_node *map, const char *key)
{
	for (size_t i = 0; i < map->n_pairs; i++)
		if (streq(map->pairs[i].key->str, key)) {
			memmove(&map->pairs[i], &map->pairs[i + 1], (map->n_pairs - i - 1) * sizeof *map->pairs);
			map->n_pairs--;
			return;
		}
}

void yml_map_set(struct arena *a, struct yml_node *map, const char *key, struct yml_node *value)
{
	for (size_t i = 0; i < map->n_pairs; i++)
		if (streq(map->pairs[i].key->str, key)) {
			map->pairs[i].value = value;
			return;
		}
	yml_map_add(a, map, key, value);
}

/* ---------------------------------------------------------------- writing */

struct outbuf {
	char *p;
	size_t len, cap;
};

static int write_handler(void *data, unsigned char *buf, size_t size)
{
	struct outbuf *o = data;
	if (o->len + size + 1 > o->cap) {
		while (o->len + size + 1 > o->cap)
			o->cap = o->cap ? o->cap * 2 : 1024;
		o->p = xrealloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, buf, size);
	o->len += size;
	o->p[o->len] = 0;
	return 1;
}

static bool needs_quotes(const char *s)
{
	struct yml_node tmp = {.kind = YML_SCALAR, .str = (char *)s, .plain = true};
	static const char *const yaml11[] = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
					     "on", "On", "ON", "off", "Off", "OFF", NULL};
	return yml_is_null(&tmp) || yml_is_bool(&tmp) || looks_numeric(s) || str_in(s, yaml11);
}

static int emit_event(yaml_emitter_t *e, yaml_event_t *ev, struct ab_err *err)
{
	if (!yaml_emitter_emit(e, ev))
		return ab_error(err, 0, "emit YAML: %s", e->problem ? e->problem : "error");
	return 0;
}

static int emit_node(yaml_emitter_t *e, const struct yml_node *n, struct ab_err *err)
{
	yaml_event_t ev;
	switch (n->kind) {
	case YML_SCALAR: {
		yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
		int plain_ok = 1;
		if (!n->plain) {
			if (strchr(n->str, '\n') && !strchr(n->str, '\r') && !strchr(n->str, '\t')) {
				style = YAML_LITERAL_SCALAR_STYLE;
			} else if (needs_quotes(n->str)) {
				style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
				plain_ok = 0;
			}
		}
		yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)n->str, (int)strlen(n->str),
					     plain_ok, 1, style);
		return emit_event(e, &ev, err);
	}
	case YML_SEQ:
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
						     n->n_items ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE);
		if (emit_event(e, &ev, err) < 0)
			return -1;
		for (size_t i = 0; i < n->n_items; i++)
			if (emit_node(e, n->items[i], err) < 0)
				return -1;
		yaml_sequence_end_event_initialize(&ev);
		return emit_event(e, &ev, err);
	case YML_MAP:
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
						    n->n_pairs ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
		if (emit_event(e, &ev, err) < 0)
			return -1;
		for (size_t i = 0; i < n->n_pairs; i++)
			if (emit_node(e, n->pairs[i].key, err) < 0 || emit_node(e, n->pairs[i].value, err) < 0)
				return -1;
		yaml_mapping_end_event_initialize(&ev);
		return emit_event(e, &ev, err);
	}
	return ab_error(err, 0, "emit YAML: bad node");
}

int yml_emit(const struct yml_node *root, char **ret_text, size_t *ret_len, struct ab_err *err)
{
	yaml_emitter_t e;
	struct outbuf o = {0};
	if (!yaml_emitter_initialize(&e))
		return ab_error(err, ENOMEM, "YAML emitter");
	yaml_emitter_set_output(&e, write_handler, &o);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);   /* no folding of long scalars */
	yaml_emitter_set_indent(&e, 2);
	yaml_event_t ev;
	int rc = -1;
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (emit_event(&e, &ev, err) < 0)
		goto out;
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	if (emit_event(&e, &ev, err) < 0)
		goto out;
	struct yml_node empty = {.kind = YML_MAP};
	if (emit_node(&e, root ? root : &empty, err) < 0)
		goto out;
	yaml_document_end_event_initialize(&ev, 1);
	if (emit_event(&e, &ev, err) < 0)
		goto out;
	yaml_stream_end_event_initialize(&ev);
	if (emit_event(&e, &ev, err) < 0)
		goto out;
	if (!yaml_emitter_flush(&e)) {
		ab_error(err, 0, "emit YAML: flush");
		goto out;
	}
	if (!o.p)
		o.p = xstrdup("");
	*ret_text = TAKE_PTR(o.p);
	if (ret_len)
		*ret_len = o.len;
	rc = 0;
out:
	free(o.p);
	yaml_emitter_delete(&e);
	return rc;
}
