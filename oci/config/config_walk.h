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

/* One spelling of an absolute path, in place: repeated slashes collapsed, "."
 * components and a trailing slash dropped ("/a//./b/" -> "/a/b"). ".." is
 * kept: it is resolved where the path is used (inside the container's root
 * for its paths), as the kernel would. */
void walk_clean_path(char *s);

/* "0-3,7,9-11": a CPU or memory node list as the kernel's cpulist parser takes it. */
bool cpu_list_valid(const char *s);

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
