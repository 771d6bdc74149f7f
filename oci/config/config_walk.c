/* Walking a yajl tree with the JSON path kept for error messages. */
#include "config_walk.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void walk_init(struct walk *w, struct arena *a, const char *what, struct ab_err *err)
{
	w->a = a;
	w->what = what;
	w->err = err;
	w->len = 0;
	w->path[0] = 0;
}

/* By hand, not printf: a path is pushed for every node of config.json and this
 * was a fifth of the runtime's own instructions in a run. Truncates at the end
 * of path like snprintf did. */
static void walk_put(struct walk *w, const char *s, size_t n)
{
	size_t room = sizeof w->path - 1 - w->len;
	if (n > room)
		n = room;
	memcpy(w->path + w->len, s, n);
	w->len += n;
	w->path[w->len] = 0;
}

static void walk_put_str(struct walk *w, const char *s)
{
	walk_put(w, s, strnlen(s, 200));
}

size_t walk_push_key(struct walk *w, const char *key)
{
	size_t old = w->len;
	if (w->len)
		walk_put(w, ".", 1);
	walk_put_str(w, key);
	return old;
}

size_t walk_push_index(struct walk *w, size_t i)
{
	size_t old = w->len;
	char digits[24];
	size_t n = sizeof digits;
	do
		digits[--n] = (char)('0' + i % 10);
	while ((i /= 10) && n > 1);
	digits[--n] = '[';
	walk_put(w, digits + n, sizeof digits - n);
	walk_put(w, "]", 1);
	return old;
}

size_t walk_push_map_key(struct walk *w, const char *key)
{
	size_t old = w->len;
	walk_put(w, "[\"", 2);
	walk_put_str(w, key);
	walk_put(w, "\"]", 2);
	return old;
}

void walk_pop(struct walk *w, size_t old)
{
	w->len = old;
	w->path[old] = 0;
}

int walk_fail(struct walk *w, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (w->len)
		return ab_error(w->err, 0, "%s: %s: %s", w->what, w->path, msg);
	return ab_error(w->err, 0, "%s: %s", w->what, msg);
}

int walk_missing(struct walk *w, const char *key)
{
	walk_push_key(w, key);
	return walk_fail(w, "missing");
}

int walk_unknown(struct walk *w)
{
	return walk_fail(w, "unknown field");
}

const char *walk_type_name(yajl_val v)
{
	if (!v)
		return "nothing";
	switch (v->type) {
	case yajl_t_string:
		return "a string";
	case yajl_t_number:
		return strpbrk(v->u.number.r, ".eE") ? "a number" : "an integer";
	case yajl_t_object:
		return "an object";
	case yajl_t_array:
		return "an array";
	case yajl_t_true:
	case yajl_t_false:
		return "a boolean";
	case yajl_t_null:
		return "null";
	default:
		return "an unknown value";
	}
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int walk_obj(struct walk *w, yajl_val v)
{
	if (YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_OBJECT(v))
		return walk_fail(w, "expected an object, got %s", walk_type_name(v));
	/* yajl keeps repeated keys; one spelling of a field must not shadow
	 * another. Sorting keeps this O(n log n) for large annotation maps. */
	size_t n = v->u.object.len;
	if (n < 2)
		return 1;
	_cleanup_free_ const char **keys = xmalloc(n * sizeof *keys);
	memcpy(keys, v->u.object.keys, n * sizeof *keys);
	qsort(keys, n, sizeof *keys, cmp_key);
	for (size_t i = 1; i < n; i++)
		if (streq(keys[i - 1], keys[i]))
			return walk_fail(w, "duplicate key \"%.200s\"", keys[i]);
	return 1;
}

int walk_arr(struct walk *w, yajl_val v)
{
	if (YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return walk_fail(w, "expected an array, got %s", walk_type_name(v));
	return 1;
}

int walk_str(struct walk *w, yajl_val v, char **out)
{
	if (YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_STRING(v))
		return walk_fail(w, "expected a string, got %s", walk_type_name(v));
	*out = arena_strdup(w->a, v->u.string);
	return 1;
}

int walk_nonempty_str(struct walk *w, yajl_val v, char **out)
{
	char *s = NULL;
	int r = walk_str(w, v, &s);
	if (r <= 0)
		return r;
	if (!*s)
		return walk_fail(w, "must not be empty");
	*out = s;
	return 1;
}

int walk_abs_path(struct walk *w, yajl_val v, char **out)
{
	char *s = NULL;
	int r = walk_str(w, v, &s);
	if (r <= 0)
		return r;
	if (s[0] != '/')
		return walk_fail(w, "must be an absolute path, got \"%.300s\"", s);
	walk_clean_path(s);
	*out = s;
	return 1;
}

void walk_clean_path(char *s)
{
	char *out = s;
	const char *p = s;
	while (*p) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len && !(len == 1 && p[0] == '.')) {
			*out++ = '/';
			memmove(out, p, len);
			out += len;
		}
		p = end;
	}
	if (out == s)
		*out++ = '/';
	*out = 0;
}

int walk_bool(struct walk *w, yajl_val v, bool *out)
{
	if (YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return walk_fail(w, "expected a boolean, got %s", walk_type_name(v));
	*out = YAJL_IS_TRUE(v);
	return 1;
}

/* The raw text of an integer, or NULL (error set) for any other value.
 * Numbers are read from yajl's raw text: its long long cannot hold the
 * uint64 values OCI uses (RLIM_INFINITY, seccomp masks). */
static const char *integer_text(struct walk *w, yajl_val v)
{
	if (!YAJL_IS_NUMBER(v)) {
		walk_fail(w, "expected an integer, got %s", walk_type_name(v));
		return NULL;
	}
	const char *r = v->u.number.r;
	if (strpbrk(r, ".eE")) {
		walk_fail(w, "expected an integer, got %.40s", r);
		return NULL;
	}
	return r;
}

int walk_u64(struct walk *w, yajl_val v, uint64_t max, uint64_t *out)
{
	if (YAJL_IS_NULL(v))
		return 0;
	const char *r = integer_text(w, v);
	if (!r)
		return -1;
	if (r[0] == '-') {
		if (strspn(r + 1, "0") == strlen(r + 1)) {   /* "-0" */
			*out = 0;
			return 1;
		}
		return walk_fail(w, "must not be negative, got %.40s", r);
	}
	errno = 0;
	char *end;
	unsigned long long x = strtoull(r, &end, 10);
	if (errno == ERANGE || *end || x > max)
		return walk_fail(w, "%.40s is out of range (0..%" PRIu64 ")", r, max);
	*out = x;
	return 1;
}

int walk_i64(struct walk *w, yajl_val v, int64_t min, int64_t max, int64_t *out)
{
	if (YAJL_IS_NULL(v))
		return 0;
	const char *r = integer_text(w, v);
	if (!r)
		return -1;
	errno = 0;
	char *end;
	long long x = strtoll(r, &end, 10);
	if (errno == ERANGE || *end || x < min || x > max) {
		if (min == 0 && r[0] == '-')
			return walk_fail(w, "must not be negative, got %.40s", r);
		return walk_fail(w, "%.40s is out of range (%" PRId64 "..%" PRId64 ")", r, min, max);
	}
	*out = x;
	return 1;
}

int walk_u32(struct walk *w, yajl_val v, uint32_t *out)
{
	uint64_t x;
	int r = walk_u64(w, v, UINT32_MAX, &x);
	if (r > 0)
		*out = (uint32_t)x;
	return r;
}

int walk_int(struct walk *w, yajl_val v, int min, int max, int *out)
{
	int64_t x;
	int r = walk_i64(w, v, min, max, &x);
	if (r > 0)
		*out = (int)x;
	return r;
}

int walk_str_array(struct walk *w, yajl_val v, char ***out, size_t *n)
{
	if (YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return walk_fail(w, "expected an array of strings, got %s", walk_type_name(v));
	char **arr = arena_alloc(w->a, (v->u.array.len + 1) * sizeof *arr);
	yajl_val item;
	WALK_ITEMS(w, v, i, item) {
		if (!YAJL_IS_STRING(item))
			return walk_fail(w, "expected a string, got %s", walk_type_name(item));
		arr[i] = arena_strdup(w->a, item->u.string);
	}
	*out = arr;
	*n = v->u.array.len;
	return 1;
}

int walk_str_map(struct walk *w, yajl_val v, struct oci_kv **out, size_t *n)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	struct oci_kv *kv = arena_alloc(w->a, (v->u.object.len + 1) * sizeof *kv);
	const char *key;
	yajl_val val;
	size_t i = 0;
	WALK_MAP(w, v, key, val) {
		if (!YAJL_IS_STRING(val))
			return walk_fail(w, "expected a string, got %s", walk_type_name(val));
		kv[i].key = arena_strdup(w->a, key);
		kv[i].value = arena_strdup(w->a, val->u.string);
		i++;
	}
	*out = kv;
	*n = i;
	return 1;
}

int walk_name(struct walk *w, yajl_val v, const struct walk_name *names, size_t n, const char *what,
	      char **text, int *value)
{
	char *s = NULL;
	int r = walk_str(w, v, &s);
	if (r <= 0)
		return r;
	if (text)
		*text = s;
	for (size_t i = 0; i < n; i++) {
		if (streq(s, names[i].name)) {
			*value = names[i].value;
			return 1;
		}
	}
	return walk_fail(w, "unknown %s \"%.100s\"", what, s);
}

int walk_known_strs(struct walk *w, yajl_val v, const char *const *known, size_t n_known, const char *what,
		    char ***out, size_t *n)
{
	int r = walk_str_array(w, v, out, n);
	for (size_t i = 0; r > 0 && i < *n; i++) {
		size_t j = 0;
		while (j < n_known && !streq((*out)[i], known[j]))
			j++;
		if (j == n_known) {
			walk_push_index(w, i);
			return walk_fail(w, "unknown %s \"%.100s\"", what, (*out)[i]);
		}
	}
	return r;
}

/* "0-3,7,9-11": what the kernel's cpulist parser takes. */
bool cpu_list_valid(const char *s)
{
	if (!*s)
		return false;
	for (;;) {
		size_t n = strspn(s, "0123456789");
		if (!n)
			return false;
		s += n;
		if (*s == '-') {
			n = strspn(++s, "0123456789");
			if (!n)
				return false;
			s += n;
		}
		if (!*s)
			return true;
		if (*s++ != ',')
			return false;
	}
}

/* ---- field tables ---- */

/* An array of objects into a new array of f->item_size bytes each. */
static int walk_list(struct walk *w, yajl_val v, const struct walk_field *f, void *at, size_t *n)
{
	int r = walk_arr(w, v);
	if (r <= 0)
		return r;
	char *items = arena_alloc(w->a, v->u.array.len * f->item_size);
	memcpy(at, &items, sizeof items);
	yajl_val item;
	WALK_ITEMS(w, v, i, item) {
		if (YAJL_IS_NULL(item))
			return walk_fail(w, "expected an object, got null");
		void *one = items + i * f->item_size;
		if ((f->parse ? f->parse(w, item, one) : walk_fields(w, item, f->fields, one, NULL)) < 0)
			return -1;
		if (f->check && f->check(w, items, i) < 0)
			return -1;
	}
	*n = v->u.array.len;
	return 1;
}

/* One field's value into obj as its entry says; walk_str's 1/0/-1. */
static int walk_field(struct walk *w, yajl_val v, const struct walk_field *f, void *obj)
{
	char *at = (char *)obj + f->off;
	size_t *n = (size_t *)((char *)obj + f->n);
	int64_t i64;
	uint64_t u64;
	int r;
	switch ((enum walk_kind)f->kind) {
	case WALK_STR:
		r = walk_str(w, v, (char **)at);
		if (r > 0 && f->valid && !f->valid(*(char **)at))
			return walk_fail(w, "not %s: \"%.100s\"", f->invalid, *(char **)at);
		break;
	case WALK_NONEMPTY_STR:
		r = walk_nonempty_str(w, v, (char **)at);
		break;
	case WALK_ABS_PATH:
		r = walk_abs_path(w, v, (char **)at);
		break;
	case WALK_BOOL:
		r = walk_bool(w, v, (bool *)at);
		break;
	case WALK_I64:
		r = walk_i64(w, v, f->min, (int64_t)f->max, (int64_t *)at);
		break;
	case WALK_INT:
		r = walk_i64(w, v, f->min, (int64_t)f->max, &i64);
		if (r > 0)
			*(int *)at = (int)i64;
		break;
	case WALK_U64:
		r = walk_u64(w, v, f->max, (uint64_t *)at);
		break;
	case WALK_U32:
		r = walk_u64(w, v, f->max, &u64);
		if (r > 0)
			*(uint32_t *)at = (uint32_t)u64;
		break;
	case WALK_U16:
		r = walk_u64(w, v, f->max, &u64);
		if (r > 0)
			*(uint16_t *)at = (uint16_t)u64;
		break;
	case WALK_STR_ARRAY:
		r = walk_str_array(w, v, (char ***)at, n);
		break;
	case WALK_STR_MAP:
		r = walk_str_map(w, v, (struct oci_kv **)at, n);
		break;
	case WALK_OBJECT:
		r = walk_fields(w, v, f->fields, at, NULL);
		break;
	case WALK_LIST:
		r = walk_list(w, v, f, at, n);
		break;
	case WALK_CUSTOM:
		r = f->parse(w, v, at);
		break;
	default:                /* WALK_IGNORE */
		r = 0;
		break;
	}
	if (f->has)
		*(bool *)((char *)obj + f->has - 1) = r > 0;
	return r;
}

int walk_fields(struct walk *w, yajl_val v, const struct walk_field *fields, void *obj, uint64_t *seen)
{
	int r = walk_obj(w, v);
	if (r <= 0)
		return r;
	uint64_t got = 0;
	const char *key;
	yajl_val val;
	WALK_FIELDS(w, v, key, val) {
		/* a first letter that differs rules an entry out without a call */
		const struct walk_field *f = fields;
		while (f->name && (f->name[0] != key[0] || !streq(f->name, key)))
			f++;
		if (f->name)
			r = walk_field(w, val, f, obj);
		else
			r = f->parse ? f->parse(w, val, obj) : walk_unknown(w);
		if (r < 0)
			return r;
		if (r > 0)
			got |= UINT64_C(1) << (f - fields);
	}
	for (const struct walk_field *f = fields; f->name; f++)
		if (f->required && !WF_SEEN(got, f - fields))
			return walk_missing(w, f->name);
	if (seen)
		*seen = got;
	return 1;
}
