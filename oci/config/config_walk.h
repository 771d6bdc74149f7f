/* Private to oci/config*.c: walking a yajl tree while keeping the JSON path of
 * the value at hand, so every error reads "<what>: <path>: <problem>". */
#ifndef AGENTBOX_OCI_CONFIG_WALK_H
#define AGENTBOX_OCI_CONFIG_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "config_types.h"
#include "error.h"
#include "util.h"

struct walk {
	struct arena *a;
	const char *what;           /* the source, e.g. "config.json" */
	struct ab_err *err;
	size_t len;
	char path[768];             /* "linux.namespaces[2].type" */
};

void walk_init(struct walk *w, struct arena *a, const char *what, struct ab_err *err);
/* Append ".key" / "[i]" / "[\"key\"]" (for map keys that may hold dots);
 * each returns the old length to hand to walk_pop. */
size_t walk_push_key(struct walk *w, const char *key);
size_t walk_push_index(struct walk *w, size_t i);
size_t walk_push_map_key(struct walk *w, const char *key);
void walk_pop(struct walk *w, size_t old);

/* Fill w->err with "<what>: <path>: <message>"; returns -1. */
int walk_fail(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int walk_missing(struct walk *w, const char *key);     /* "<path>.key: missing" */
int walk_unknown(struct walk *w);                       /* "<path>: unknown field" */
const char *walk_type_name(yajl_val v);                 /* "a string", "an integer", ... */

/* Readers for the value at the current path. Each returns 1 when it stored a
 * value, 0 when v is JSON null (taken as absent: out is left alone), -1 with
 * w->err filled on a wrong type or a bad value. */
int walk_obj(struct walk *w, yajl_val v);               /* object, no duplicate keys */
int walk_arr(struct walk *w, yajl_val v);
int walk_str(struct walk *w, yajl_val v, char **out);
int walk_nonempty_str(struct walk *w, yajl_val v, char **out);
int walk_abs_path(struct walk *w, yajl_val v, char **out);   /* cleaned as below */
int walk_bool(struct walk *w, yajl_val v, bool *out);
int walk_u64(struct walk *w, yajl_val v, uint64_t max, uint64_t *out);
int walk_i64(struct walk *w, yajl_val v, int64_t min, int64_t max, int64_t *out);
int walk_u32(struct walk *w, yajl_val v, uint32_t *out);
int walk_int(struct walk *w, yajl_val v, int min, int max, int *out);
/* Array of strings, stored NULL-terminated. */
int walk_str_array(struct walk *w, yajl_val v, char ***out, size_t *n);
/* Object of string values. */
int walk_str_map(struct walk *w, yajl_val v, struct oci_kv **out, size_t *n);

/* A name from a fixed set, and what it stands for. */
struct walk_name {
	const char *name;
	int value;
};
/* A string that must be one of names[0..n): its value into *value, and the
 * string itself into *text unless text is NULL; else the error
 * "unknown <what> \"<string>\"". */
int walk_name(struct walk *w, yajl_val v, const struct walk_name *names, size_t n, const char *what,
	      char **text, int *value);
/* An array of strings, each one of known[0..n_known): "[i]: unknown <what> ..." else. */
int walk_known_strs(struct walk *w, yajl_val v, const char *const *known, size_t n_known, const char *what,
		    char ***out, size_t *n);

/* One spelling of an absolute path, in place: repeated slashes collapsed, "."
 * components and a trailing slash dropped ("/a//./b/" -> "/a/b"). ".." is
 * kept: it is resolved where the path is used (inside the container's root
 * for its paths), as the kernel would. */
void walk_clean_path(char *s);

/* "0-3,7,9-11": a CPU or memory node list as the kernel's cpulist parser takes it. */
bool cpu_list_valid(const char *s);

/* ---- Field tables: how the fields of one kind of object are read ----
 *
 * Each object of config.json is described by a table of its fields (name,
 * kind, where the value goes in the struct, its "present" flag) and read by
 * walk_fields: one loop, one lookup, one place where an unknown field is an
 * error and a required one "missing". A field the kinds below do not cover
 * gets a parser of its own (WALK_CUSTOM); checks across fields stay in the
 * function that calls walk_fields, after it. */
enum walk_kind {
	WALK_STR,               /* char *, walk_str */
	WALK_NONEMPTY_STR,      /* char *, walk_nonempty_str */
	WALK_ABS_PATH,          /* char *, walk_abs_path */
	WALK_BOOL,              /* bool */
	WALK_I64,               /* int64_t in min..max */
	WALK_INT,               /* int in min..max */
	WALK_U64,               /* uint64_t in 0..max */
	WALK_U32,               /* uint32_t in 0..max */
	WALK_U16,               /* uint16_t in 0..max */
	WALK_STR_ARRAY,         /* char ** (count at .n), walk_str_array */
	WALK_STR_MAP,           /* struct oci_kv * (count at .n), walk_str_map */
	WALK_OBJECT,            /* a nested object read by .fields into the struct at .off */
	WALK_LIST,              /* an array of objects, .item_size bytes each (count at .n),
				 * each read by .parse, or by .fields; a null item is an error */
	WALK_CUSTOM,            /* .parse(w, v, the struct + .off) */
	WALK_IGNORE,            /* not ours to read: another platform's */
};

struct walk_field {
	const char *name;       /* NULL ends the table (its .parse, if any, answers an unknown key) */
	uint8_t kind;           /* enum walk_kind */
	bool required;          /* absent (or null): "<path>.name: missing", in table order */
	uint16_t off;           /* where the value goes */
	uint16_t n;             /* the count of an array or map */
	uint16_t has;           /* 1 + where a bool goes that says a value was stored; 0: none */
	uint32_t item_size;     /* WALK_LIST */
	int64_t min;            /* WALK_I64, WALK_INT */
	uint64_t max;           /* WALK_I64, WALK_INT, WALK_U* */
	/* WALK_STR: a stored string must pass valid, else "not <invalid>: \"<string>\"" */
	bool (*valid)(const char *s);
	const char *invalid;
	const struct walk_field *fields;                         /* WALK_OBJECT, WALK_LIST */
	int (*parse)(struct walk *w, yajl_val v, void *at);      /* WALK_CUSTOM, WALK_LIST */
	/* WALK_LIST: after item i, with the path at it (items before it to compare) */
	int (*check)(struct walk *w, const void *items, size_t i);
};

/* Read object v into obj by its table. 1 when read, 0 when v is null (obj
 * untouched), -1 with w->err filled (an unknown field, a bad value, a
 * required field missing). seen (may be NULL): bit i set when fields[i]
 * stored a value, for checks that depend on other fields. */
int walk_fields(struct walk *w, yajl_val v, const struct walk_field *fields, void *obj, uint64_t *seen);

/* The offset of member m of T, which must be of type `type` (checked at
 * compile time: a table entry that stores an int64_t into a uint64_t does
 * not build). */
#define WALK_AT(T, m, type)                                                                       \
	((uint16_t)(offsetof(T, m) + 0 * sizeof(struct {                                          \
		_Static_assert(__builtin_types_compatible_p(__typeof__(((T *)0)->m), type),       \
			       #T "." #m " is not " #type);                                        \
		int _;                                                                            \
	})))

/* Table entries by kind: { "name", WF_xxx(struct, member, ...), [WF_HAS(...),] [.required = true] } */
#define WF_STR(T, m)            .kind = WALK_STR, .off = WALK_AT(T, m, char *)
/* a string that must pass fn: "not <what>: \"<string>\"" else */
#define WF_VALID_STR(T, m, fn, what) WF_STR(T, m), .valid = (fn), .invalid = (what)
#define WF_NONEMPTY_STR(T, m)   .kind = WALK_NONEMPTY_STR, .off = WALK_AT(T, m, char *)
#define WF_ABS_PATH(T, m)       .kind = WALK_ABS_PATH, .off = WALK_AT(T, m, char *)
#define WF_BOOL(T, m)           .kind = WALK_BOOL, .off = WALK_AT(T, m, bool)
#define WF_I64(T, m, lo, hi)    .kind = WALK_I64, .off = WALK_AT(T, m, int64_t), .min = (lo), .max = (hi)
#define WF_INT(T, m, lo, hi)    .kind = WALK_INT, .off = WALK_AT(T, m, int), .min = (lo), .max = (hi)
#define WF_U64(T, m, hi)        .kind = WALK_U64, .off = WALK_AT(T, m, uint64_t), .max = (hi)
#define WF_U32(T, m, hi)        .kind = WALK_U32, .off = WALK_AT(T, m, uint32_t), .max = (hi)
#define WF_U16(T, m, hi)        .kind = WALK_U16, .off = WALK_AT(T, m, uint16_t), .max = (hi)
#define WF_STR_ARRAY(T, m, cnt) .kind = WALK_STR_ARRAY, .off = WALK_AT(T, m, char **), .n = WALK_AT(T, cnt, size_t)
#define WF_STR_MAP(T, m, cnt)   .kind = WALK_STR_MAP, .off = WALK_AT(T, m, struct oci_kv *), \
				.n = WALK_AT(T, cnt, size_t)
#define WF_OBJECT(T, m, table)  .kind = WALK_OBJECT, .off = offsetof(T, m), .fields = (table)
/* then .fields = table of the item, or .parse = its parser */
#define WF_LIST(T, m, cnt, item) .kind = WALK_LIST, .off = WALK_AT(T, m, item *), \
				.n = WALK_AT(T, cnt, size_t), .item_size = sizeof(item)
#define WF_CUSTOM(T, m, fn)     .kind = WALK_CUSTOM, .off = offsetof(T, m), .parse = (fn)
/* fn gets the whole object (a value that goes into several members) */
#define WF_PARSE(fn)            .kind = WALK_CUSTOM, .parse = (fn)
/* a nested object whose fields go into this same struct */
#define WF_FLAT(table)          .kind = WALK_OBJECT, .fields = (table)
#define WF_HAS(T, m)            .has = WALK_AT(T, m, bool) + 1
#define WF_SEEN(seen, i)        (((seen) >> (i)) & 1)

/* Iterate over an object's fields with the key pushed on the path for the body.
 * The body may `continue`; on `return` the path is simply left as it is (an
 * error names it). */
#define WALK_FIELDS(w, obj, key, val)                                                     \
	for (size_t _wi = 0, _wold = 0;                                                   \
	     _wi < (obj)->u.object.len &&                                                 \
	     ((key) = (obj)->u.object.keys[_wi], (val) = (obj)->u.object.values[_wi],     \
	      _wold = walk_push_key((w), (key)), 1);                                      \
	     walk_pop((w), _wold), _wi++)

/* The same over an object used as a map (keys are data, pushed as ["key"]). */
#define WALK_MAP(w, obj, key, val)                                                        \
	for (size_t _wi = 0, _wold = 0;                                                   \
	     _wi < (obj)->u.object.len &&                                                 \
	     ((key) = (obj)->u.object.keys[_wi], (val) = (obj)->u.object.values[_wi],     \
	      _wold = walk_push_map_key((w), (key)), 1);                                  \
	     walk_pop((w), _wold), _wi++)

/* Iterate over an array with "[i]" pushed on the path. */
#define WALK_ITEMS(w, arr, i, val)                                                        \
	for (size_t i = 0, _wold = 0;                                                     \
	     i < (arr)->u.array.len &&                                                    \
	     ((val) = (arr)->u.array.values[i], _wold = walk_push_index((w), i), 1);      \
	     walk_pop((w), _wold), i++)

#endif
