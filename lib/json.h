/* The one JSON module: reading through yajl's tree parser with errors that name
 * the JSON path, and writing through yajl_gen. */
#ifndef AGENTBOX_JSON_H
#define AGENTBOX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "error.h"

/* ---- reading ---- */
/* Parse text; on failure err says "<what>: invalid JSON: <yajl's reason>". */
int json_parse(const char *text, const char *what, yajl_val *ret, struct ab_err *err);
void json_free(yajl_val v);
/* Look up key in an object (NULL when absent or v is not an object). */
yajl_val json_get(yajl_val obj, const char *key);

/* ---- writing ---- */
struct json_out;
struct json_out *json_out_new(bool pretty);
void json_out_free(struct json_out *o);
void json_obj_begin(struct json_out *o);
void json_obj_end(struct json_out *o);
void json_arr_begin(struct json_out *o);
void json_arr_end(struct json_out *o);
void json_key(struct json_out *o, const char *key);
void json_str(struct json_out *o, const char *s);   /* NULL writes null */
void json_int(struct json_out *o, int64_t v);
void json_uint(struct json_out *o, uint64_t v);
void json_bool(struct json_out *o, bool v);
void json_null(struct json_out *o);
/* key + value shorthands */
void json_kv_str(struct json_out *o, const char *key, const char *s);
void json_kv_int(struct json_out *o, const char *key, int64_t v);
void json_kv_uint(struct json_out *o, const char *key, uint64_t v);
void json_kv_bool(struct json_out *o, const char *key, bool v);
/* "key": [v[0], ..., v[n-1]] */
void json_kv_strs(struct json_out *o, const char *key, const char *const *v, size_t n);
/* A parsed value as it was read: keys in their order, numbers by their text. */
void json_value(struct json_out *o, yajl_val v);
/* The generated text (valid until the next call on o). */
const char *json_out_text(struct json_out *o, size_t *ret_len);

#endif
