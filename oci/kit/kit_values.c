/* Kits: host and box paths, sizes, durations, CPUs, names and users as a kit
 * writes them. */
#include "kit_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Lexically normalise an absolute path: no "//", ".", trailing "/"; ".." pops. */
char *kit_normalize_abs(struct arena *a, const char *path)
{
	size_t n = strlen(path);
	char *out = arena_alloc(a, n + 2);
	size_t o = 0;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchrnul(p, '/');
		size_t len = (size_t)(e - p);
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	return out;
}

/* Directory of the file a node came from, absolute (the cwd for built nodes). */
static char *node_dir(struct arena *a, const struct yml_node *n)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, "/");
	if (!n || !n->file)
		return arena_strdup(a, cwd);
	const char *f = n->file;
	const char *slash = strrchr(f, '/');
	char *dir = slash ? arena_strndup(a, f, (size_t)(slash - f)) : arena_strdup(a, ".");
	if (slash == f)
		dir = arena_strdup(a, "/");
	if (dir[0] == '/')
		return dir;
	return kit_normalize_abs(a, arena_printf(a, "%s/%s", cwd, dir));
}

/* A host path as written in a kit: relative to the kit file's directory. */
char *kit_host_path(struct arena *a, const struct yml_node *n, const char *text)
{
	if (text[0] == '/')
		return kit_normalize_abs(a, text);
	return kit_normalize_abs(a, arena_printf(a, "%s/%s", node_dir(a, n), text));
}

/* A path inside the box: absolute, no "." or ".." components, not "/". */
int kit_box_path(struct arena *a, const struct yml_node *n, const char *path, const char *text,
		    char **ret, struct ab_err *err)
{
	if (text[0] != '/')
		return yml_error(err, n, path, "\"%s\" is not an absolute path", text);
	for (const char *p = text; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t len = (size_t)(e - p);
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return yml_error(err, n, path, "\"%s\": \".\" and \"..\" are not allowed", text);
		p = e;
	}
	char *norm = kit_normalize_abs(a, text);
	if (streq(norm, "/"))
		return yml_error(err, n, path, "\"/\" is not allowed here");
	*ret = norm;
	return 0;
}

bool kit_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* ---------------------------------------------------------------- value parsers */

int kit_parse_size(const char *s, int64_t *ret)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	uint64_t v = 0;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	unsigned shift = 0;
	switch (tolower((unsigned char)*p)) {
	case 0: break;
	case 'k': shift = 10; break;
	case 'm': shift = 20; break;
	case 'g': shift = 30; break;
	case 't': shift = 40; break;
	case 'b': shift = 0; break;
	default: return -1;
	}
	if (*p) {
		bool was_b = tolower((unsigned char)*p) == 'b';
		p++;
		if (!was_b) {
			if (tolower((unsigned char)*p) == 'i')
				p++;
			if (tolower((unsigned char)*p) == 'b')
				p++;
		}
		if (*p)
			return -1;
	}
	if (v > ((uint64_t)INT64_MAX >> shift))
		return -1;
	*ret = (int64_t)(v << shift);
	return 0;
}

int kit_parse_duration_ms(const char *s, int64_t *ret)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	uint64_t v = 0;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > 1000000000ULL)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	uint64_t mult;
	if (!*p || streq(p, "s"))
		mult = 1000;
	else if (streq(p, "ms"))
		mult = 1;
	else if (streq(p, "m"))
		mult = 60 * 1000;
	else if (streq(p, "h"))
		mult = 3600 * 1000;
	else
		return -1;
	v *= mult;
	if (v == 0 || v > INT32_MAX)
		return -1;
	*ret = (int64_t)v;
	return 0;
}

int kit_parse_cpus(const char *s, uint64_t *ret)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	uint64_t whole = 0, frac = 0;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1024)
			return -1;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		uint64_t scale = 100;
		for (; isdigit((unsigned char)*p); p++) {
			if (scale == 0) {
				if (*p != '0')
					return -1;  /* finer than a thousandth */
				continue;
			}
			frac += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p)
		return -1;
	uint64_t milli = whole * 1000 + frac;
	if (milli == 0 || milli > 1024 * 1000)
		return -1;
	*ret = milli;
	return 0;
}

bool kit_env_name_valid(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

bool kit_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* "UID" or "UID:GID", decimal. */
int kit_parse_user(const char *s, uint32_t *uid, uint32_t *gid)
{
	char buf[64];
	if (strlen(s) >= sizeof buf)
		return -1;
	snprintf(buf, sizeof buf, "%s", s);
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = 0;
	int64_t u, g;
	if (parse_int64(buf, 0, UINT32_MAX - 1, &u) < 0)
		return -1;
	g = u;
	if (colon && parse_int64(colon + 1, 0, UINT32_MAX - 1, &g) < 0)
		return -1;
	*uid = (uint32_t)u;
	*gid = (uint32_t)g;
	return 0;
}
int kit_ws_guard_parse(const char *s, enum kit_ws_guard *ret)
{
	if (streq(s, "quarantine"))
		*ret = KIT_WS_GUARD_QUARANTINE;
	else if (streq(s, "off"))
		*ret = KIT_WS_GUARD_OFF;
	else
		return -1;
	return 0;
}

const char *kit_ws_guard_name(enum kit_ws_guard g)
{
	return g == KIT_WS_GUARD_OFF ? "off" : "quarantine";
}
