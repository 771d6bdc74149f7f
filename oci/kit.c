/* Kits: strict reading of the YAML, `extends`, and `kit show`. */
#include "kit.h"
#include "egress.h"
#include "yml.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

#define KIT_MAX_EXTENDS 16
#define KIT_MAX_ITEMS 4096

static const char *const top_fields[] = {
	"name", "extends", "rootfs", "workspace", "mounts", "env", "credentials", "files",
	"network", "resources", "user", "security", "startup", "command", NULL,
};

/* ---------------------------------------------------------------- paths */

/* Lexically normalise an absolute path: no "//", ".", trailing "/"; ".." pops. */
static char *normalize_abs(struct arena *a, const char *path)
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
	return normalize_abs(a, arena_printf(a, "%s/%s", cwd, dir));
}

/* A host path as written in a kit: relative to the kit file's directory. */
static char *host_path(struct arena *a, const struct yml_node *n, const char *text)
{
	if (text[0] == '/')
		return normalize_abs(a, text);
	return normalize_abs(a, arena_printf(a, "%s/%s", node_dir(a, n), text));
}

/* A path inside the box: absolute, no "." or ".." components, not "/". */
static int box_path(struct arena *a, const struct yml_node *n, const char *path, const char *text,
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
	char *norm = normalize_abs(a, text);
	if (streq(norm, "/"))
		return yml_error(err, n, path, "\"/\" is not allowed here");
	*ret = norm;
	return 0;
}

static bool path_under(const char *path, const char *dir)
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

static bool env_name_valid(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static bool kit_name_valid(const char *s)
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
static int parse_user(const char *s, uint32_t *uid, uint32_t *gid)
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

/* ---------------------------------------------------------------- the fields */

/* A list of strings copied into the kit's arena (the trees go away after loading). */
static int str_list_copy(struct arena *a, const struct yml_node *n, const char *path, char ***ret,
			 size_t *ret_n, struct ab_err *err)
{
	if (yml_get_str_list(a, n, path, ret, ret_n, err) < 0)
		return -1;
	for (size_t i = 0; i < *ret_n; i++)
		(*ret)[i] = arena_strdup(a, (*ret)[i]);
	return 0;
}

#define PATHBUF 256
#define SUBPATH(buf, ...) snprintf((buf), sizeof(buf), __VA_ARGS__)

static int read_name(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	const char *s;
	if (yml_get_str(n, "name", &s, err) < 0)
		return -1;
	if (!kit_name_valid(s))
		return yml_error(err, n, "name", "\"%s\" is not a valid name (letters, digits, - _ . ; at most 63, starting with a letter or digit)", s);
	k->name = arena_strdup(&k->arena, s);
	return 0;
}

static int read_rootfs(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	if (n->kind == YML_MAP) {
		static const char *const fields[] = {"image", "tag", NULL};
		if (yml_check_map(n, "rootfs", fields, err) < 0)
			return -1;
		const struct yml_node *img = yml_map_get(n, "image"), *tag = yml_map_get(n, "tag");
		const char *s;
		if (!img || yml_is_null(img))
			return yml_error(err, n, "rootfs", "an image needs \"image\" (the OCI image layout directory)");
		if (yml_get_str(img, "rootfs.image", &s, err) < 0)
			return -1;
		k->rootfs = KIT_ROOTFS_IMAGE;
		k->rootfs_path = host_path(a, img, s);
		k->rootfs_tag = NULL;
		if (tag && !yml_is_null(tag)) {
			if (yml_get_str(tag, "rootfs.tag", &s, err) < 0)
				return -1;
			if (!*s)
				return yml_error(err, tag, "rootfs.tag", "an empty tag");
			k->rootfs_tag = arena_strdup(a, s);
		}
		return 0;
	}
	const char *s;
	if (yml_get_str(n, "rootfs", &s, err) < 0)
		return -1;
	if (streq(s, "host")) {
		k->rootfs = KIT_ROOTFS_HOST;
		return 0;
	}
	char *p = host_path(a, n, s);
	/* DIR:TAG naming an image layout, or a directory that is one */
	char *colon = strrchr(p, ':');
	struct stat st;
	char *layout = arena_printf(a, "%s/oci-layout", p);
	bool image = stat(layout, &st) == 0;
	if (image) {
		k->rootfs = KIT_ROOTFS_IMAGE;
		k->rootfs_path = p;
		k->rootfs_tag = NULL;
		return 0;
	}
	if (colon && colon[1] && !strchr(colon, '/')) {
		char *dir = arena_strndup(a, p, (size_t)(colon - p));
		if (stat(arena_printf(a, "%s/oci-layout", dir), &st) == 0) {
			k->rootfs = KIT_ROOTFS_IMAGE;
			k->rootfs_path = dir;
			k->rootfs_tag = arena_strdup(a, colon + 1);
			return 0;
		}
	}
	k->rootfs = KIT_ROOTFS_DIR;
	k->rootfs_path = p;
	return 0;
}

static int read_mounts(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"source", "target", "type", "readonly", "size", NULL};
	if (yml_expect(n, YML_SEQ, "mounts", err) < 0)
		return -1;
	if (n->n_items > KIT_MAX_ITEMS)
		return yml_error(err, n, "mounts", "too many entries (at most %d)", KIT_MAX_ITEMS);
	k->mounts = arena_alloc(a, (n->n_items + 1) * sizeof *k->mounts);
	for (size_t i = 0; i < n->n_items; i++) {
		const struct yml_node *m = n->items[i];
		struct kit_mount *km = &k->mounts[i];
		char p[64], fp[PATHBUF];
		SUBPATH(p, "mounts[%zu]", i);
		if (yml_check_map(m, p, fields, err) < 0)
			return -1;
		km->readonly = true;
		const struct yml_node *v;
		const char *s;
		if ((v = yml_map_get(m, "type")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.type", p);
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (streq(s, "tmpfs"))
				km->tmpfs = true;
			else if (!streq(s, "bind"))
				return yml_error(err, v, fp, "unknown type \"%s\" (bind or tmpfs)", s);
		}
		v = yml_map_get(m, "target");
		SUBPATH(fp, "%s.target", p);
		if (!v || yml_is_null(v))
			return yml_error(err, m, fp, "missing");
		if (yml_get_str(v, fp, &s, err) < 0 || box_path(a, v, fp, s, &km->target, err) < 0)
			return -1;
		if (streq(km->target, "/workspace") || path_under(km->target, "/proc") ||
		    path_under(km->target, "/sys") || path_under(km->target, "/dev"))
			return yml_error(err, v, fp, "%s is reserved", km->target);
		v = yml_map_get(m, "source");
		SUBPATH(fp, "%s.source", p);
		if (km->tmpfs) {
			if (v && !yml_is_null(v))
				return yml_error(err, v, fp, "a tmpfs mount has no source");
		} else {
			if (!v || yml_is_null(v))
				return yml_error(err, m, fp, "missing (a bind mount needs a host path)");
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			km->source = host_path(a, v, s);
		}
		if ((v = yml_map_get(m, "readonly")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.readonly", p);
			if (yml_get_bool(v, fp, &km->readonly, err) < 0)
				return -1;
		}
		if ((v = yml_map_get(m, "size")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.size", p);
			if (!km->tmpfs)
				return yml_error(err, v, fp, "only a tmpfs mount has a size");
			int64_t sz;
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (kit_parse_size(s, &sz) < 0 || sz <= 0)
				return yml_error(err, v, fp, "\"%s\" is not a size (like 64m or 1g)", s);
			km->size = (uint64_t)sz;
			km->size_text = arena_strdup(a, s);
		}
		for (size_t j = 0; j < i; j++)
			if (streq(k->mounts[j].target, km->target))
				return yml_error(err, m, p, "target %s is mounted twice", km->target);
	}
	k->n_mounts = n->n_items;
	return 0;
}

static int read_env(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	if (yml_expect(n, YML_MAP, "env", err) < 0)
		return -1;
	k->env = arena_alloc(a, (n->n_pairs + 1) * sizeof *k->env);
	k->n_env = 0;
	for (size_t i = 0; i < n->n_pairs; i++) {
		const struct yml_pair *pr = &n->pairs[i];
		char p[PATHBUF];
		SUBPATH(p, "env.%s", pr->key->str);
		if (!env_name_valid(pr->key->str))
			return yml_error(err, pr->key, p, "not a valid variable name");
		if (yml_is_null(pr->value))
			continue;   /* unset (removes an inherited value) */
		const char *s;
		if (yml_get_str(pr->value, p, &s, err) < 0)
			return -1;
		k->env[k->n_env].key = arena_strdup(a, pr->key->str);
		k->env[k->n_env].value = arena_strdup(a, s);
		k->n_env++;
	}
	return 0;
}

static int read_credentials(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"name", "from", "to", NULL};
	if (yml_expect(n, YML_SEQ, "credentials", err) < 0)
		return -1;
	if (n->n_items > KIT_MAX_ITEMS)
		return yml_error(err, n, "credentials", "too many entries (at most %d)", KIT_MAX_ITEMS);
	k->credentials = arena_alloc(a, (n->n_items + 1) * sizeof *k->credentials);
	for (size_t i = 0; i < n->n_items; i++) {
		const struct yml_node *c = n->items[i];
		struct kit_credential *kc = &k->credentials[i];
		char p[64], fp[PATHBUF];
		SUBPATH(p, "credentials[%zu]", i);
		if (yml_check_map(c, p, fields, err) < 0)
			return -1;
		const struct yml_node *v = yml_map_get(c, "name");
		const char *s;
		SUBPATH(fp, "%s.name", p);
		if (!v || yml_is_null(v))
			return yml_error(err, c, fp, "missing");
		if (yml_get_str(v, fp, &s, err) < 0)
			return -1;
		if (!env_name_valid(s))
			return yml_error(err, v, fp, "\"%s\" is not a valid name (letters, digits and _, not starting with a digit)", s);
		kc->name = arena_strdup(a, s);
		for (size_t j = 0; j < i; j++)
			if (streq(k->credentials[j].name, s))
				return yml_error(err, v, fp, "credential \"%s\" is defined twice", s);

		v = yml_map_get(c, "from");
		SUBPATH(fp, "%s.from", p);
		if (!v || yml_is_null(v))
			return yml_error(err, c, fp, "missing (env:VARIABLE or file:PATH)");
		if (yml_get_str(v, fp, &s, err) < 0)
			return -1;
		if (strncmp(s, "env:", 4) == 0) {
			kc->from = KIT_FROM_ENV;
			if (!env_name_valid(s + 4))
				return yml_error(err, v, fp, "\"%s\": not a valid variable name", s + 4);
			kc->from_ref = arena_strdup(a, s + 4);
		} else if (strncmp(s, "file:", 5) == 0 && s[5]) {
			kc->from = KIT_FROM_FILE;
			kc->from_ref = host_path(a, v, s + 5);
		} else {
			return yml_error(err, v, fp, "\"%s\": expected env:VARIABLE or file:PATH", s);
		}

		kc->to = KIT_TO_ENV;
		v = yml_map_get(c, "to");
		SUBPATH(fp, "%s.to", p);
		if (v && !yml_is_null(v)) {
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (streq(s, "env")) {
				kc->to = KIT_TO_ENV;
			} else if (strncmp(s, "file:", 5) == 0) {
				kc->to = KIT_TO_FILE;
				if (box_path(a, v, fp, s + 5, &kc->to_path, err) < 0)
					return -1;
				const char *last = strrchr(kc->to_path, '/');
				if (last == kc->to_path)
					return yml_error(err, v, fp, "%s: a credential file needs a directory of its own, not /", kc->to_path);
				if (path_under(kc->to_path, "/workspace"))
					return yml_error(err, v, fp, "%s is in the workspace, which is on the host's disk", kc->to_path);
				if (path_under(kc->to_path, "/proc") || path_under(kc->to_path, "/sys") ||
				    path_under(kc->to_path, "/dev"))
					return yml_error(err, v, fp, "%s is reserved", kc->to_path);
				for (size_t j = 0; j < i; j++)
					if (k->credentials[j].to == KIT_TO_FILE && streq(k->credentials[j].to_path, kc->to_path))
						return yml_error(err, v, fp, "%s is the file of credential \"%s\" already", kc->to_path, k->credentials[j].name);
			} else {
				return yml_error(err, v, fp, "\"%s\": expected env or file:/PATH", s);
			}
		}
	}
	k->n_credentials = n->n_items;
	return 0;
}

static int read_files(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"path", "content", "source", "mode", "owner", NULL};
	if (yml_expect(n, YML_SEQ, "files", err) < 0)
		return -1;
	if (n->n_items > KIT_MAX_ITEMS)
		return yml_error(err, n, "files", "too many entries (at most %d)", KIT_MAX_ITEMS);
	k->files = arena_alloc(a, (n->n_items + 1) * sizeof *k->files);
	for (size_t i = 0; i < n->n_items; i++) {
		const struct yml_node *f = n->items[i];
		struct kit_file *kf = &k->files[i];
		char p[64], fp[PATHBUF];
		SUBPATH(p, "files[%zu]", i);
		if (yml_check_map(f, p, fields, err) < 0)
			return -1;
		const struct yml_node *v = yml_map_get(f, "path");
		const char *s;
		SUBPATH(fp, "%s.path", p);
		if (!v || yml_is_null(v))
			return yml_error(err, f, fp, "missing");
		if (yml_get_str(v, fp, &s, err) < 0 || box_path(a, v, fp, s, &kf->path, err) < 0)
			return -1;
		if (path_under(kf->path, "/proc") || path_under(kf->path, "/sys") || path_under(kf->path, "/dev") ||
		    path_under(kf->path, "/workspace"))
			return yml_error(err, v, fp, "%s is reserved", kf->path);
		for (size_t j = 0; j < i; j++)
			if (streq(k->files[j].path, kf->path))
				return yml_error(err, v, fp, "%s is given twice", kf->path);
		const struct yml_node *c = yml_map_get(f, "content");
		const struct yml_node *src = yml_map_get(f, "source");
		if (c && yml_is_null(c))
			c = NULL;
		if (src && yml_is_null(src))
			src = NULL;
		if (!c == !src)
			return yml_error(err, f, p, "give exactly one of content and source");
		if (c) {
			SUBPATH(fp, "%s.content", p);
			if (yml_get_str(c, fp, &s, err) < 0)
				return -1;
			kf->content = arena_strdup(a, s);
		} else {
			SUBPATH(fp, "%s.source", p);
			if (yml_get_str(src, fp, &s, err) < 0)
				return -1;
			kf->source = host_path(a, src, s);
		}
		if ((v = yml_map_get(f, "mode")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.mode", p);
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			size_t len = strlen(s);
			if (len < 3 || len > 4 || strspn(s, "01234567") != len)
				return yml_error(err, v, fp, "\"%s\" is not an octal mode like \"0644\"", s);
			unsigned long m = strtoul(s, NULL, 8);
			if (m & 07000)
				return yml_error(err, v, fp, "\"%s\": setuid, setgid and sticky bits are not allowed", s);
			kf->has_mode = true;
			kf->mode = (uint32_t)m;
		}
		if ((v = yml_map_get(f, "owner")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.owner", p);
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (parse_user(s, &kf->uid, &kf->gid) < 0)
				return yml_error(err, v, fp, "\"%s\" is not UID:GID", s);
			kf->has_owner = true;
		}
	}
	k->n_files = n->n_items;
	return 0;
}

static int read_egress_list(struct kit *k, const struct yml_node *n, bool deny, struct ab_err *err)
{
	const char *path = deny ? "network.deny" : "network.allow";
	char **list;
	size_t len;
	if (str_list_copy(&k->arena, n, path, &list, &len, err) < 0)
		return -1;
	if (len > EGRESS_MAX_ENTRIES)
		return yml_error(err, n, path, "too many entries (at most %d)", EGRESS_MAX_ENTRIES);
	for (size_t i = 0; i < len; i++) {
		const struct yml_node *item = n->items[i];
		char p[PATHBUF];
		SUBPATH(p, "%s[%zu]", path, i);
		if (strchr(list[i], ','))
			return yml_error(err, item, p, "one entry per item (\"%s\" has a comma)", list[i]);
		if (streq(list[i], "all"))
			return yml_error(err, item, p, "\"all\" is not an entry: a kit cannot turn the firewall off");
		struct egress_policy tmp = {0};
		char src[PATH_MAX + PATHBUF];
		snprintf(src, sizeof src, "%s:%u:%u: %s", item->file ? item->file : "kit", item->line, item->col, p);
		int r = egress_policy_add(&tmp, list[i], deny, src, err);
		egress_policy_free(&tmp);
		if (r < 0)
			return -1;
	}
	if (deny) {
		k->deny = list;
		k->n_deny = len;
	} else {
		k->allow = list;
		k->n_allow = len;
	}
	return 0;
}

static int read_network(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	static const char *const fields[] = {"allow", "deny", NULL};
	if (yml_check_map(n, "network", fields, err) < 0)
		return -1;
	const struct yml_node *v;
	if ((v = yml_map_get(n, "allow")) && !yml_is_null(v) && read_egress_list(k, v, false, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "deny")) && !yml_is_null(v) && read_egress_list(k, v, true, err) < 0)
		return -1;
	return 0;
}

static int read_resources(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"memory", "cpus", "pids", "timeout", NULL};
	if (yml_check_map(n, "resources", fields, err) < 0)
		return -1;
	const struct yml_node *v;
	const char *s;
	if ((v = yml_map_get(n, "memory")) && !yml_is_null(v)) {
		if (yml_get_str(v, "resources.memory", &s, err) < 0)
			return -1;
		if (kit_parse_size(s, &k->resources.memory) < 0)
			return yml_error(err, v, "resources.memory", "\"%s\" is not a size (like 256m or 2g)", s);
		if (k->resources.memory < (4 << 20))
			return yml_error(err, v, "resources.memory", "%s is below the minimum of 4m", s);
		k->resources.has_memory = true;
		k->resources.memory_text = arena_strdup(a, s);
	}
	if ((v = yml_map_get(n, "cpus")) && !yml_is_null(v)) {
		if (yml_get_str(v, "resources.cpus", &s, err) < 0)
			return -1;
		if (kit_parse_cpus(s, &k->resources.cpus_milli) < 0)
			return yml_error(err, v, "resources.cpus", "\"%s\" is not a number of CPUs (like 1.5; 0.001 to 1024)", s);
		k->resources.has_cpus = true;
		k->resources.cpus_text = arena_strdup(a, s);
	}
	if ((v = yml_map_get(n, "pids")) && !yml_is_null(v)) {
		if (yml_get_int(v, "resources.pids", 1, 4194304, &k->resources.pids, err) < 0)
			return -1;
		k->resources.has_pids = true;
	}
	if ((v = yml_map_get(n, "timeout")) && !yml_is_null(v)) {
		if (yml_get_str(v, "resources.timeout", &s, err) < 0)
			return -1;
		if (kit_parse_duration_ms(s, &k->resources.timeout_ms) < 0)
			return yml_error(err, v, "resources.timeout", "\"%s\" is not a duration (like 30s, 10m, 1h or 500ms; at most 596h)", s);
		k->resources.has_timeout = true;
		k->resources.timeout_text = arena_strdup(a, s);
	}
	return 0;
}

static int read_security(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"seccomp", "capabilities", "readonly_rootfs", NULL};
	if (yml_check_map(n, "security", fields, err) < 0)
		return -1;
	const struct yml_node *v;
	const char *s;
	if ((v = yml_map_get(n, "seccomp")) && !yml_is_null(v)) {
		if (yml_get_str(v, "security.seccomp", &s, err) < 0)
			return -1;
		if (!streq(s, "agent") && !streq(s, "default") && !streq(s, "none"))
			return yml_error(err, v, "security.seccomp", "unknown profile \"%s\" (agent, default or none)", s);
		k->seccomp = arena_strdup(a, s);
	}
	if ((v = yml_map_get(n, "capabilities")) && !yml_is_null(v)) {
		char **list;
		size_t len;
		if (yml_get_str_list(a, v, "security.capabilities", &list, &len, err) < 0)
			return -1;
		for (size_t i = 0; i < len; i++) {
			char p[PATHBUF], name[64];
			SUBPATH(p, "security.capabilities[%zu]", i);
			const char *c = list[i];
			if (strncasecmp(c, "CAP_", 4) == 0)
				c += 4;
			if (strlen(c) > 40)
				return yml_error(err, v->items[i], p, "unknown capability \"%s\"", list[i]);
			size_t o = (size_t)snprintf(name, sizeof name, "cap_");
			for (const char *q = c; *q; q++)
				name[o++] = (char)tolower((unsigned char)*q);
			name[o] = 0;
			cap_value_t cv;
			if (cap_from_name(name, &cv) < 0)
				return yml_error(err, v->items[i], p, "unknown capability \"%s\"", list[i]);
			for (char *q = name; *q; q++)
				*q = (char)toupper((unsigned char)*q);
			list[i] = arena_strdup(a, name);
			for (size_t j = 0; j < i; j++)
				if (streq(list[j], list[i]))
					return yml_error(err, v->items[i], p, "%s is listed twice", list[i]);
		}
		k->capabilities = list;
		k->n_capabilities = len;
	}
	if ((v = yml_map_get(n, "readonly_rootfs")) && !yml_is_null(v) &&
	    yml_get_bool(v, "security.readonly_rootfs", &k->readonly_rootfs, err) < 0)
		return -1;
	return 0;
}

/* Fill k from a mapping (after extends). Absent and null fields keep defaults. */
static int kit_from_tree(struct kit *k, const struct yml_node *root, struct ab_err *err)
{
	struct arena *a = &k->arena;
	if (yml_check_map(root, NULL, top_fields, err) < 0)
		return -1;
	k->rootfs = KIT_ROOTFS_HOST;
	k->readonly_rootfs = true;
	k->seccomp = arena_strdup(a, "agent");
	for (size_t i = 0; i < root->n_pairs; i++) {
		const char *key = root->pairs[i].key->str;
		const struct yml_node *v = root->pairs[i].value;
		if (yml_is_null(v))
			continue;
		int r = 0;
		const char *s;
		if (streq(key, "name")) {
			r = read_name(k, v, err);
		} else if (streq(key, "extends")) {
			r = yml_get_str(v, "extends", &s, err);   /* followed by the loader */
		} else if (streq(key, "rootfs")) {
			r = read_rootfs(k, v, err);
		} else if (streq(key, "workspace")) {
			if ((r = yml_get_str(v, "workspace", &s, err)) == 0)
				k->workspace = host_path(a, v, s);
		} else if (streq(key, "mounts")) {
			r = read_mounts(k, v, err);
		} else if (streq(key, "env")) {
			r = read_env(k, v, err);
		} else if (streq(key, "credentials")) {
			r = read_credentials(k, v, err);
		} else if (streq(key, "files")) {
			r = read_files(k, v, err);
		} else if (streq(key, "network")) {
			r = read_network(k, v, err);
		} else if (streq(key, "resources")) {
			r = read_resources(k, v, err);
		} else if (streq(key, "user")) {
			if ((r = yml_get_str(v, "user", &s, err)) == 0) {
				if (parse_user(s, &k->uid, &k->gid) < 0)
					r = yml_error(err, v, "user", "\"%s\" is not UID or UID:GID (numbers)", s);
				k->has_user = true;
			}
		} else if (streq(key, "security")) {
			r = read_security(k, v, err);
		} else if (streq(key, "startup")) {
			r = str_list_copy(a, v, "startup", &k->startup, &k->n_startup, err);
		} else if (streq(key, "command")) {
			r = str_list_copy(a, v, "command", &k->command, &k->n_command, err);
			if (r == 0 && k->n_command == 0)
				r = yml_error(err, v, "command", "empty (leave it out for the default /bin/sh)");
		}
		if (r < 0)
			return -1;
	}
	/* cross-field checks */
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		if (c->to != KIT_TO_FILE)
			continue;
		for (size_t j = 0; j < k->n_mounts; j++)
			if (!k->mounts[j].tmpfs && path_under(c->to_path, k->mounts[j].target)) {
				const struct yml_node *cn = yml_map_get(root, "credentials");
				return yml_error(err, cn && cn->kind == YML_SEQ && i < cn->n_items ? cn->items[i] : root,
						 "credentials", "%s is inside the bind mount %s, which is on the host's disk",
						 c->to_path, k->mounts[j].target);
			}
	}
	return 0;
}

/* ---------------------------------------------------------------- extends */

struct loader {
	struct arena *a;                /* trees */
	char *stack[KIT_MAX_EXTENDS + 1];
	char *shown[KIT_MAX_EXTENDS + 1];
	size_t depth;
	char *chain[KIT_MAX_EXTENDS + 1];
	size_t n_chain;
};

static struct yml_pair *find_pair(struct yml_node *map, const char *key)
{
	for (size_t i = 0; i < map->n_pairs; i++)
		if (streq(map->pairs[i].key->str, key))
			return &map->pairs[i];
	return NULL;
}

/* Maps merge key by key (recursively), everything else in child replaces;
 * `extends` is dropped. */
static struct yml_node *merge(struct arena *a, const struct yml_node *base, const struct yml_node *child)
{
	struct yml_node *m = yml_new_map(a);
	m->file = child->file;
	m->line = child->line;
	m->col = child->col;
	const struct yml_node *srcs[2] = {base, child};
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < srcs[s]->n_pairs; i++) {
			const struct yml_pair *p = &srcs[s]->pairs[i];
			if (streq(p->key->str, "extends"))
				continue;
			struct yml_pair *have = find_pair(m, p->key->str);
			if (!have) {
				yml_map_add(a, m, p->key->str, p->value);
				m->pairs[m->n_pairs - 1].key = p->key;
			} else if (have->value->kind == YML_MAP && p->value->kind == YML_MAP) {
				have->value = merge(a, have->value, p->value);
				have->key = p->key;
			} else {
				have->value = p->value;
				have->key = p->key;
			}
		}
	}
	return m;
}

static int load_merged(struct loader *L, const char *path, const struct yml_node *from,
		       struct yml_node **ret, struct ab_err *err)
{
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		if (from)
			return yml_error(err, from, "extends", "%s: %s", path, strerror(errno));
		return ab_error(err, errno, "%s", path);
	}
	for (size_t i = 0; i < L->depth; i++) {
		if (!streq(L->stack[i], real))
			continue;
		char chain[2048];
		size_t off = 0;
		for (size_t j = i; j < L->depth && off < sizeof chain; j++)
			off += (size_t)snprintf(chain + off, sizeof chain - off, "%s -> ", L->shown[j]);
		if (off < sizeof chain)
			snprintf(chain + off, sizeof chain - off, "%s", path);
		return yml_error(err, from, "extends", "cycle: %s", chain);
	}
	if (L->depth >= KIT_MAX_EXTENDS)
		return yml_error(err, from, "extends", "more than %d levels of extends", KIT_MAX_EXTENDS);
	L->stack[L->depth] = arena_strdup(L->a, real);
	L->shown[L->depth] = arena_strdup(L->a, path);
	L->depth++;

	struct yml_node *root;
	if (yml_load(L->a, path, path, &root, err) < 0)
		return -1;
	if (!root)
		return ab_error(err, 0, "%s: empty kit (a kit is a mapping of fields)", path);
	if (root->kind != YML_MAP)
		return yml_error(err, root, NULL, "a kit is a mapping of fields, not %s", yml_describe(root));
	/* each file must be valid on its own, also where a child overrides it */
	struct kit scratch = {0};
	int r = kit_from_tree(&scratch, root, err);
	arena_free(&scratch.arena);
	if (r < 0)
		return -1;

	struct yml_node *merged = root;
	const struct yml_node *ext = yml_map_get(root, "extends");
	if (ext && !yml_is_null(ext)) {
		const char *s = ext->str;
		char *base_path;
		if (s[0] == '/') {
			base_path = arena_strdup(L->a, s);
		} else {
			const char *slash = strrchr(path, '/');
			base_path = slash ? arena_printf(L->a, "%.*s/%s", (int)(slash - path), path, s)
					  : arena_strdup(L->a, s);
		}
		struct yml_node *base;
		if (load_merged(L, base_path, ext, &base, err) < 0)
			return -1;
		merged = merge(L->a, base, root);
	} else {
		yml_map_del(root, "extends");
	}
	L->chain[L->n_chain++] = arena_strdup(L->a, path);
	L->depth--;
	*ret = merged;
	return 0;
}

static struct kit *kit_new(void)
{
	struct kit *k = xcalloc(1, sizeof *k);
	k->rootfs = KIT_ROOTFS_HOST;
	k->readonly_rootfs = true;
	k->seccomp = arena_strdup(&k->arena, "agent");
	return k;
}

static int finish_load(struct loader *L, const char *file, struct yml_node *merged, struct kit **ret,
		       struct ab_err *err)
{
	struct kit *k = kit_new();
	if (kit_from_tree(k, merged, err) < 0) {
		kit_free(k);
		return -1;
	}
	k->file = arena_strdup(&k->arena, file);
	k->chain = arena_alloc(&k->arena, (L->n_chain + 1) * sizeof *k->chain);
	for (size_t i = 0; i < L->n_chain; i++)
		k->chain[i] = arena_strdup(&k->arena, L->chain[i]);
	k->n_chain = L->n_chain;
	*ret = k;
	return 0;
}

int kit_load(const char *path, struct kit **ret, struct ab_err *err)
{
	struct arena trees = {0};
	struct loader L = {.a = &trees};
	struct yml_node *merged;
	int r = load_merged(&L, path, NULL, &merged, err);
	if (r == 0)
		r = finish_load(&L, path, merged, ret, err);
	arena_free(&trees);
	return r;
}

int kit_parse(const char *text, size_t len, const char *file, struct kit **ret, struct ab_err *err)
{
	struct arena trees = {0};
	struct loader L = {.a = &trees};
	struct yml_node *root, *merged = NULL;
	int r = -1;
	if (yml_parse(&trees, text, len, file, &root, err) < 0)
		goto out;
	if (!root) {
		ab_error(err, 0, "%s: empty kit (a kit is a mapping of fields)", file);
		goto out;
	}
	if (root->kind != YML_MAP) {
		yml_error(err, root, NULL, "a kit is a mapping of fields, not %s", yml_describe(root));
		goto out;
	}
	merged = root;
	const struct yml_node *ext = yml_map_get(root, "extends");
	if (ext && !yml_is_null(ext)) {
		const char *s;
		if (yml_get_str(ext, "extends", &s, err) < 0)
			goto out;
		const char *slash = strrchr(file, '/');
		char *base_path = s[0] == '/' || !slash ? arena_strdup(&trees, s)
							: arena_printf(&trees, "%.*s/%s", (int)(slash - file), file, s);
		/* the text itself is on the stack under its name, for cycles */
		char real[PATH_MAX];
		if (realpath(file, real)) {
			L.stack[0] = arena_strdup(&trees, real);
			L.shown[0] = arena_strdup(&trees, file);
			L.depth = 1;
		}
		struct yml_node *base;
		if (load_merged(&L, base_path, ext, &base, err) < 0)
			goto out;
		L.depth = 0;
		merged = merge(&trees, base, root);
	}
	L.chain[L.n_chain++] = arena_strdup(&trees, file);
	r = finish_load(&L, file, merged, ret, err);
out:
	arena_free(&trees);
	return r;
}

struct kit *kit_default(const char *workspace)
{
	struct kit *k = kit_new();
	k->name = arena_strdup(&k->arena, "default");
	char cwd[PATH_MAX];
	if (!workspace && getcwd(cwd, sizeof cwd))
		workspace = cwd;
	if (workspace)
		k->workspace = normalize_abs(&k->arena, workspace);
	/* `kit run --allow pypi.org ... -- pip install x` should just work: pip
	 * installs into the user's site in the home tmpfs (the host's /usr is
	 * read-only, so Debian's "externally managed" guard protects nothing here) */
	k->env = arena_alloc(&k->arena, 2 * sizeof *k->env);
	k->env[0] = (struct oci_kv){arena_strdup(&k->arena, "PIP_USER"), arena_strdup(&k->arena, "1")};
	k->env[1] = (struct oci_kv){arena_strdup(&k->arena, "PIP_BREAK_SYSTEM_PACKAGES"), arena_strdup(&k->arena, "1")};
	k->n_env = 2;
	return k;
}

void kit_free(struct kit *k)
{
	if (!k)
		return;
	arena_free(&k->arena);
	free(k);
}

/* ---------------------------------------------------------------- show */

static struct yml_node *str_list(struct arena *a, char **v, size_t n)
{
	struct yml_node *s = yml_new_seq(a);
	for (size_t i = 0; i < n; i++)
		yml_seq_add(a, s, yml_new_str(a, v[i]));
	return s;
}

static void join(char *buf, size_t len, char **v, size_t n, const char *none)
{
	size_t off = 0;
	buf[0] = 0;
	if (n == 0)
		snprintf(buf, len, "%s", none);
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", v[i]);
}

static struct yml_node *kit_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *root = yml_new_map(a);
	char buf[128];
	if (k->name)
		yml_map_add(a, root, "name", yml_new_str(a, k->name));
	if (k->rootfs == KIT_ROOTFS_IMAGE) {
		struct yml_node *r = yml_new_map(a);
		yml_map_add(a, r, "image", yml_new_str(a, k->rootfs_path));
		if (k->rootfs_tag)
			yml_map_add(a, r, "tag", yml_new_str(a, k->rootfs_tag));
		yml_map_add(a, root, "rootfs", r);
	} else {
		yml_map_add(a, root, "rootfs", yml_new_str(a, k->rootfs == KIT_ROOTFS_HOST ? "host" : k->rootfs_path));
	}
	if (k->workspace)
		yml_map_add(a, root, "workspace", yml_new_str(a, k->workspace));
	if (k->n_mounts) {
		struct yml_node *s = yml_new_seq(a);
		for (size_t i = 0; i < k->n_mounts; i++) {
			const struct kit_mount *m = &k->mounts[i];
			struct yml_node *e = yml_new_map(a);
			if (m->source)
				yml_map_add(a, e, "source", yml_new_str(a, m->source));
			yml_map_add(a, e, "target", yml_new_str(a, m->target));
			yml_map_add(a, e, "type", yml_new_str(a, m->tmpfs ? "tmpfs" : "bind"));
			yml_map_add(a, e, "readonly", yml_new_plain(a, m->readonly ? "true" : "false"));
			if (m->size_text)
				yml_map_add(a, e, "size", yml_new_str(a, m->size_text));
			yml_seq_add(a, s, e);
		}
		yml_map_add(a, root, "mounts", s);
	}
	if (k->n_env) {
		struct yml_node *e = yml_new_map(a);
		for (size_t i = 0; i < k->n_env; i++)
			yml_map_add(a, e, k->env[i].key, yml_new_str(a, k->env[i].value));
		yml_map_add(a, root, "env", e);
	}
	if (k->n_credentials) {
		struct yml_node *s = yml_new_seq(a);
		for (size_t i = 0; i < k->n_credentials; i++) {
			const struct kit_credential *c = &k->credentials[i];
			struct yml_node *e = yml_new_map(a);
			yml_map_add(a, e, "name", yml_new_str(a, c->name));
			yml_map_add(a, e, "from", yml_new_str(a, arena_printf(a, "%s:%s", c->from == KIT_FROM_ENV ? "env" : "file", c->from_ref)));
			yml_map_add(a, e, "to", yml_new_str(a, c->to == KIT_TO_ENV ? "env" : arena_printf(a, "file:%s", c->to_path)));
			yml_seq_add(a, s, e);
		}
		yml_map_add(a, root, "credentials", s);
	}
	if (k->n_files) {
		struct yml_node *s = yml_new_seq(a);
		for (size_t i = 0; i < k->n_files; i++) {
			const struct kit_file *f = &k->files[i];
			struct yml_node *e = yml_new_map(a);
			yml_map_add(a, e, "path", yml_new_str(a, f->path));
			if (f->content)
				yml_map_add(a, e, "content", yml_new_str(a, f->content));
			else
				yml_map_add(a, e, "source", yml_new_str(a, f->source));
			if (f->has_mode) {
				snprintf(buf, sizeof buf, "%04o", f->mode);
				yml_map_add(a, e, "mode", yml_new_str(a, buf));
			}
			if (f->has_owner) {
				snprintf(buf, sizeof buf, "%u:%u", f->uid, f->gid);
				yml_map_add(a, e, "owner", yml_new_str(a, buf));
			}
			yml_seq_add(a, s, e);
		}
		yml_map_add(a, root, "files", s);
	}
	struct yml_node *net = yml_new_map(a);
	yml_map_add(a, net, "allow", str_list(a, k->allow, k->n_allow));
	yml_map_add(a, net, "deny", str_list(a, k->deny, k->n_deny));
	yml_map_add(a, root, "network", net);
	if (k->resources.has_memory || k->resources.has_cpus || k->resources.has_pids || k->resources.has_timeout) {
		struct yml_node *r = yml_new_map(a);
		if (k->resources.has_memory)
			yml_map_add(a, r, "memory", yml_new_str(a, k->resources.memory_text));
		if (k->resources.has_cpus)
			yml_map_add(a, r, "cpus", yml_new_plain(a, k->resources.cpus_text));
		if (k->resources.has_pids) {
			snprintf(buf, sizeof buf, "%" PRId64, k->resources.pids);
			yml_map_add(a, r, "pids", yml_new_plain(a, buf));
		}
		if (k->resources.has_timeout)
			yml_map_add(a, r, "timeout", yml_new_str(a, k->resources.timeout_text));
		yml_map_add(a, root, "resources", r);
	}
	if (k->has_user) {
		snprintf(buf, sizeof buf, "%u:%u", k->uid, k->gid);
		yml_map_add(a, root, "user", yml_new_str(a, buf));
	}
	struct yml_node *sec = yml_new_map(a);
	yml_map_add(a, sec, "seccomp", yml_new_str(a, k->seccomp));
	yml_map_add(a, sec, "capabilities", str_list(a, k->capabilities, k->n_capabilities));
	yml_map_add(a, sec, "readonly_rootfs", yml_new_plain(a, k->readonly_rootfs ? "true" : "false"));
	yml_map_add(a, root, "security", sec);
	if (k->n_startup)
		yml_map_add(a, root, "startup", str_list(a, k->startup, k->n_startup));
	if (k->n_command)
		yml_map_add(a, root, "command", str_list(a, k->command, k->n_command));
	return root;
}

/* A value for the comment block: control characters and the line breaks YAML
 * knows besides \n (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR — each would end
 * the comment and turn the rest of the line into YAML) shown as '?'. In a. */
static const char *comment_safe(struct arena *a, const char *s)
{
	char *c = arena_strdup(a, s ? s : "");
	char *w = c;
	for (const unsigned char *p = (const unsigned char *)c; *p;) {
		size_t unicode_break = p[0] == 0xc2 && p[1] == 0x85 ? 2
				     : p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9) ? 3 : 0;
		if (unicode_break || *p < 0x20 || *p == 0x7f) {
			*w++ = '?';
			p += unicode_break ? unicode_break : 1;
		} else {
			*w++ = (char)*p++;
		}
	}
	*w = 0;
	return c;
}

int kit_show(const struct kit *k, char **ret_text, struct ab_err *err)
{
	struct arena a = {0};
	struct yml_node *root = kit_tree(&a, k);
	_cleanup_free_ char *yaml = NULL;
	size_t len;
	if (yml_emit(root, &yaml, &len, err) < 0) {
		arena_free(&a);
		return -1;
	}

	char allow[4096], deny[4096], caps[1024], chain[2048], user[64];
	join(allow, sizeof allow, k->allow, k->n_allow, "nothing");
	join(deny, sizeof deny, k->deny, k->n_deny, "nothing");
	join(caps, sizeof caps, k->capabilities, k->n_capabilities, "none");
	chain[0] = 0;
	size_t off = 0;
	for (size_t i = k->n_chain; i-- > 0 && off < sizeof chain;)
		off += (size_t)snprintf(chain + off, sizeof chain - off, "%s%s", i + 1 < k->n_chain ? " extends " : "",
					comment_safe(&a, k->chain[i]));
	uint32_t uid, gid;
	kit_effective_user(k, k->workspace, &uid, &gid);
	snprintf(user, sizeof user, "%u:%u%s", uid, gid, k->has_user ? "" : " (default)");
	char timeout[64];
	snprintf(timeout, sizeof timeout, "%s", k->resources.has_timeout ? k->resources.timeout_text : "none");

	char *text = xasprintf(
		"# The effective kit: %s\n"
		"# Policy it implies:\n"
		"#   network:   %s\n"
		"#   egress allow: %s\n"
		"#   egress deny:  %s\n"
		"#   seccomp profile: %s\n"
		"#   user: %s, capabilities: %s, no new privileges\n"
		"#   rootfs: %s, %s; workspace: %s\n"
		"#   credentials: %zu, read at start and never written to the bundle\n"
		"#   timeout: %s\n"
		"%s",
		k->n_chain ? chain : "built-in default kit",
		k->n_allow ? "user-mode (slirp4netns) behind a default-deny firewall"
			   : "none (a network namespace with only loopback)",
		comment_safe(&a, allow), comment_safe(&a, deny), k->seccomp, user, caps,
		k->rootfs == KIT_ROOTFS_HOST ? "the host's /usr and a curated /etc"
		: k->rootfs == KIT_ROOTFS_IMAGE ? arena_printf(&a, "the OCI image %s:%s", comment_safe(&a, k->rootfs_path),
							       k->rootfs_tag ? comment_safe(&a, k->rootfs_tag) : "(its only image)")
		: comment_safe(&a, k->rootfs_path),
		k->readonly_rootfs ? "read-only" : "writable",
		k->workspace ? comment_safe(&a, k->workspace) : "none",
		k->n_credentials, comment_safe(&a, timeout), yaml);
	arena_free(&a);
	*ret_text = text;
	return 0;
}
