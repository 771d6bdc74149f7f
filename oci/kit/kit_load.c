/* Kits: loading a file, `extends` (maps merge, lists and scalars replace, null
 * removes), the built-in default kit. */
#include "kit_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define KIT_MAX_EXTENDS 16

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

struct kit *kit_new(void)
{
	struct kit *k = xcalloc(1, sizeof *k);
	k->rootfs = KIT_ROOTFS_HOST;
	k->readonly_rootfs = true;
	k->proxy = true;
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
		k->workspace = kit_normalize_abs(&k->arena, workspace);
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