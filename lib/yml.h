/* The one YAML module, over libyaml: a small document tree whose every node knows
 * the file, line and column it came from, helpers for strict walks over it
 * (unknown keys, wrong types and bad values become "FILE:LINE:COL: PATH: what"),
 * and an emitter for trees built in memory.
 *
 * What is accepted: one document of mappings, sequences and scalars. Anchors,
 * aliases, non-standard tags and duplicate keys are errors; so are mapping keys
 * that are not scalars and scalars containing NUL. Nodes live in an arena the
 * caller owns (util.h), so a tree is freed at once with arena_free. */
#ifndef AGENTBOX_YML_H
#define AGENTBOX_YML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "util.h"

#include <yaml.h>

enum yml_kind { YML_SCALAR, YML_SEQ, YML_MAP };

struct yml_node;

struct yml_pair {
	struct yml_node *key;           /* always a scalar */
	struct yml_node *value;
};

struct yml_node {
	enum yml_kind kind;
	const char *file;               /* source name for errors; NULL when built in memory */
	unsigned line, col;             /* 1-based start of the node; 0 when built in memory */
	/* YML_SCALAR */
	char *str;                      /* NUL-terminated text as written (after unescaping) */
	bool plain;                     /* unquoted: may be null, a boolean or a number */
	/* YML_SEQ */
	struct yml_node **items;
	size_t n_items;
	/* YML_MAP, in document order */
	struct yml_pair *pairs;
	size_t n_pairs;
	size_t cap_;                    /* internal: room in items/pairs */
};

/* Limits on what a document may make us allocate. */
#define YML_MAX_DEPTH 64
#define YML_MAX_NODES 200000
#define YML_MAX_FILE (4u << 20)

/* ---- reading ---- */

/* Parse text (len bytes) into a tree allocated in a. `file` names the source in
 * errors and is kept (copied) in every node. An empty document gives *ret = NULL. */
int yml_parse(struct arena *a, const char *text, size_t len, const char *file,
	      struct yml_node **ret, struct ab_err *err);
/* Read path (at most YML_MAX_FILE bytes) and parse it; `shown` (or path when NULL)
 * names it in errors. */
int yml_load(struct arena *a, const char *path, const char *shown, struct yml_node **ret,
	     struct ab_err *err);

/* "FILE:LINE:COL: PATH: message" (the location part only when n has one, the
 * path part only when path is not NULL or empty). Returns -1. */
int yml_error(struct ab_err *err, const struct yml_node *n, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "a mapping", "a sequence", "a string", "null", "a boolean", "a number" */
const char *yml_describe(const struct yml_node *n);

/* Scalar classification (plain scalars only; a quoted scalar is always a string),
 * after the YAML 1.2 core schema. */
bool yml_is_null(const struct yml_node *n);        /* NULL, "", ~, null, Null, NULL */
bool yml_is_bool(const struct yml_node *n);        /* true/false, True/False, TRUE/FALSE */
bool yml_is_number(const struct yml_node *n);

/* Lookups. yml_map_get returns the value for key (NULL when absent or map is not a
 * mapping); yml_map_pair the pair, for the key's own position. */
struct yml_node *yml_map_get(const struct yml_node *map, const char *key);
const struct yml_pair *yml_map_pair(const struct yml_node *map, const char *key);

/* Strict walks. Each checks the node and fills ret, or fails with a message naming
 * n's position and path. */
/* n must be a mapping whose keys are all in allowed (NULL-terminated). */
int yml_check_map(const struct yml_node *n, const char *path, const char *const *allowed,
		  struct ab_err *err);
int yml_expect(const struct yml_node *n, enum yml_kind kind, const char *path, struct ab_err *err);
/* Any non-null scalar, as written (so a number or boolean gives its text). */
int yml_get_str(const struct yml_node *n, const char *path, const char **ret, struct ab_err *err);
int yml_get_bool(const struct yml_node *n, const char *path, bool *ret, struct ab_err *err);
/* A decimal integer in [min, max] (plain or quoted). */
int yml_get_int(const struct yml_node *n, const char *path, int64_t min, int64_t max,
		int64_t *ret, struct ab_err *err);
/* A sequence of non-null scalars, as a NULL-terminated array in a. */
int yml_get_str_list(struct arena *a, const struct yml_node *n, const char *path, char ***ret,
		     size_t *ret_n, struct ab_err *err);

/* ---- building and writing ---- */

struct yml_node *yml_new_map(struct arena *a);
struct yml_node *yml_new_seq(struct arena *a);
/* A string: written quoted when it would otherwise read back as null, a boolean
 * or a number; multi-line text as a literal block. */
struct yml_node *yml_new_str(struct arena *a, const char *s);
/* A plain scalar written as is (numbers, booleans). */
struct yml_node *yml_new_plain(struct arena *a, const char *s);
void yml_map_add(struct arena *a, struct yml_node *map, const char *key, struct yml_node *value);
void yml_seq_add(struct arena *a, struct yml_node *seq, struct yml_node *item);
/* Remove key from map (no-op when absent). */
void yml_map_del(struct yml_node *map, const char *key);
/* Set key in map, replacing an existing value in place (keeps its order). */
void yml_map_set(struct arena *a, struct yml_node *map, const char *key, struct yml_node *value);

/* Emit root as a YAML document (block style, no "---"/"..." markers) into a
 * malloc'd NUL-terminated buffer. */
int yml_emit(const struct yml_node *root, char **ret_text, size_t *ret_len, struct ab_err *err);

#endif
