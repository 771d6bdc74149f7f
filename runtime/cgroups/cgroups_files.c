/* cgroups: reading and writing cgroup files (errors name the file and the value),
 * and the pieces of the stats object v1 and v2 write alike. */

#include "cgroups_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "util.h"

#define CG_FILE_MAX (4u << 20)

/* ------------------------------------------------------------------ file helpers */

bool cg_exists(const char *dir, const char *file)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
		return false;
	return access(p, F_OK) == 0;
}

int cg_write_keep(const char *dir, const char *file, int *fd, const char *val, struct ab_err *err)
{
	/* the path is made only to open the file or to name it: the device
	 * rules come a dozen to one open file */
	if (*fd < 0 || log_debug_enabled()) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
			return ab_error(err, ENAMETOOLONG, "write %s/%s", dir, file);
		log_debug("cgroups: write \"%s\" to %s", val, p);
		if (*fd < 0 && (*fd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
			return ab_error(err, errno, "write \"%s\" to %s", val, p);
	}
	/* One write(2): cgroup files take one value a call. */
	size_t len = strlen(val);
	ssize_t n;
	do
		n = write(*fd, val, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ab_error(err, errno, "write \"%s\" to %s/%s", val, dir, file);
	return 0;
}

int cg_write(const char *dir, const char *file, const char *val, struct ab_err *err)
{
	_cleanup_close_ int fd = -1;
	return cg_write_keep(dir, file, &fd, val, err);
}

int cg_writef(const char *dir, const char *file, struct ab_err *err, const char *fmt, ...)
{
	char val[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(val, sizeof val, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof val)
		return ab_error(err, EINVAL, "write %s/%s: value too long", dir, file);
	return cg_write(dir, file, val, err);
}

int cg_read(const char *dir, const char *file, char **ret, struct ab_err *err)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
		return ab_error(err, ENAMETOOLONG, "read %s/%s", dir, file);
	int r = read_file_at(AT_FDCWD, p, CG_FILE_MAX, ret, NULL, err);
	return r < 0 ? (err->code ? -err->code : -EIO) : 0;
}

int cg_read_u64(const char *dir, const char *file, uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	struct ab_err e;
	int r = cg_read(dir, file, &s, &e);
	if (r < 0)
		return r;
	s[strcspn(s, " \n")] = 0;
	if (streq(s, "max")) {
		*ret = UINT64_MAX;
		return 0;
	}
	/* v1 reads "-1" for an unlimited quota; callers that care read the text. */
	return parse_uint64(s, ret) < 0 ? -EINVAL : 0;
}

int cg_kv(const char *text, const char *key, uint64_t *ret)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, n) == 0 && p[n] == ' ') {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(p + n + 1, &end, 10);
			if (errno || end == p + n + 1)
				return -EINVAL;
			*ret = v;
			return 0;
		}
	}
	return -ENOENT;
}

int cg_read_kv(const char *dir, const char *file, const char *key, uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	struct ab_err e;
	int r = cg_read(dir, file, &s, &e);
	return r < 0 ? r : cg_kv(s, key, ret);
}

int cg_read_counter(const char *dir, const char *file, const char *key, uint64_t *ret, struct ab_err *err)
{
	int r = cg_read_kv(dir, file, key, ret);
	if (r == -ENOENT) {
		*ret = 0;
		return 0;
	}
	if (r < 0)
		return ab_error(err, -r, "read %s/%s", dir, file);
	return 0;
}

/* ------------------------------------------------------------------ stats helpers */

void cg_json_file(struct json_out *o, const char *key, const char *dir, const char *file)
{
	uint64_t v;
	if (cg_read_u64(dir, file, &v) == 0)
		json_kv_uint(o, key, v);
}

/* memory.stat, io.stat-like "key value" lines as an object of numbers. */
void cg_stats_raw(struct json_out *o, const char *key, const char *text)
{
	json_key(o, key);
	json_obj_begin(o);
	for (const char *p = text; *p;) {
		const char *sp = strchr(p, ' '), *nl = strchrnul(p, '\n');
		if (sp && sp < nl) {
			char k[128];
			snprintf(k, sizeof k, "%.*s", (int)(sp - p), p);
			json_kv_uint(o, k, strtoull(sp + 1, NULL, 10));
		}
		p = *nl ? nl + 1 : nl;
	}
	json_obj_end(o);
}

void cg_stats_pids(struct json_out *o, const char *dir)
{
	uint64_t v;
	json_key(o, "pids");
	json_obj_begin(o);
	cg_json_file(o, "current", dir, "pids.current");
	/* runc reports an unlimited pids.max as 0 */
	if (cg_read_u64(dir, "pids.max", &v) == 0)
		json_kv_uint(o, "limit", v == UINT64_MAX ? 0 : v);
	json_obj_end(o);
}

void cg_stats_blkio_entry(struct json_out *o, const char *key, bool *started, unsigned maj, unsigned min,
			  const char *op, uint64_t value)
{
	if (!*started) {
		json_key(o, key);
		json_arr_begin(o);
		*started = true;
	}
	json_obj_begin(o);
	json_kv_uint(o, "major", maj);
	json_kv_uint(o, "minor", min);
	json_kv_str(o, "op", op);
	json_kv_uint(o, "value", value);
	json_obj_end(o);
}
