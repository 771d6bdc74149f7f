/* cgroup files (cgroups_files.c): reading and writing them with errors that
 * name the file and the value, and the stats helpers v1 and v2 share. */
#ifndef AGENTBOX_CGROUPS_FILES_H
#define AGENTBOX_CGROUPS_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct json_out;

bool cg_exists(const char *dir, const char *file);
int cg_write(const char *dir, const char *file, const char *val, struct ab_err *err);
/* The same through *fd, opened on first use and left open for the next value
 * (devices.allow takes one rule per write(2)); the caller closes it. */
int cg_write_keep(const char *dir, const char *file, int *fd, const char *val, struct ab_err *err);
int cg_writef(const char *dir, const char *file, struct ab_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Whole file, NUL-terminated; -errno on failure (-ENOENT when absent). */
int cg_read(const char *dir, const char *file, char **ret, struct ab_err *err);
/* First line as a number; "max" reads as UINT64_MAX. -errno when absent or not a number. */
int cg_read_u64(const char *dir, const char *file, uint64_t *ret);
/* Value of "key N" in a flat-keyed text (memory.stat, cgroup.events, ...). */
int cg_kv(const char *text, const char *key, uint64_t *ret);
/* Read dir/file and look up key in it. */
int cg_read_kv(const char *dir, const char *file, const char *key, uint64_t *ret);
/* The same for a counter: 0 where the file or the key is absent (an older
 * kernel), -1 with err when the file cannot be read. */
int cg_read_counter(const char *dir, const char *file, const char *key, uint64_t *ret, struct ab_err *err);

/* ---- stats helpers shared by v1 and v2 ---- */
/* "key": N from a one-number file, when it exists ("max" = UINT64_MAX). */
void cg_json_file(struct json_out *o, const char *key, const char *dir, const char *file);
/* "key": {k: N, ...} from "k N" lines (memory.stat). */
void cg_stats_raw(struct json_out *o, const char *key, const char *text);
/* "pids": {current, limit} */
void cg_stats_pids(struct json_out *o, const char *dir);
/* One {major, minor, op, value} of a blkio list: the first (*started false)
 * opens "key": [ first; the caller closes the list. */
void cg_stats_blkio_entry(struct json_out *o, const char *key, bool *started, unsigned maj, unsigned min,
			  const char *op, uint64_t value);

#endif
