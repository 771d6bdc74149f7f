/* The YAML module (lib/yml.h) under every YAML agentbox reads — kits and
 * /etc/agentbox/config.yaml: yml_parse, the strict walk helpers over every
 * node, and emit → parse giving back the same document. */
#include "fuzz.h"

#include "yml.h"

static size_t fz_yaml_walk(const struct yml_node *n, unsigned depth)
{
	FUZZ_CHECK(depth <= YML_MAX_DEPTH + 1, "depth %u", depth);
	struct ab_err err = {0};
	(void)yml_describe(n);
	size_t count = 1;
	switch (n->kind) {
	case YML_SCALAR: {
		FUZZ_CHECK(n->str != NULL, "scalar without text");
		const char *s;
		bool b;
		int64_t i;
		(void)yml_get_str(n, "x", &s, &err);
		(void)yml_get_bool(n, "x", &b, &err);
		(void)yml_get_int(n, "x", INT64_MIN, INT64_MAX, &i, &err);
		(void)yml_get_int(n, "x", 0, 100, &i, &err);
		(void)yml_is_null(n);
		(void)yml_is_number(n);
		break;
	}
	case YML_SEQ:
		for (size_t k = 0; k < n->n_items; k++)
			count += fz_yaml_walk(n->items[k], depth + 1);
		break;
	case YML_MAP: {
		static const char *const keys[] = {"name", "extends", "rootfs", NULL};
		(void)yml_check_map(n, "x", keys, &err);
		for (size_t k = 0; k < n->n_pairs; k++) {
			FUZZ_CHECK(n->pairs[k].key->kind == YML_SCALAR, "non-scalar key");
			FUZZ_CHECK(yml_map_get(n, n->pairs[k].key->str) != NULL, "key not found");
			count += 1 + fz_yaml_walk(n->pairs[k].value, depth + 1);
		}
		break;
	}
	}
	return count;
}

/* The same document: kinds, keys and text, and each scalar read the same way
 * (null, boolean, number or string). */
static bool fz_yaml_same(const struct yml_node *a, const struct yml_node *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case YML_SCALAR:
		return strcmp(a->str, b->str) == 0 && yml_is_null(a) == yml_is_null(b) &&
		       yml_is_bool(a) == yml_is_bool(b) && yml_is_number(a) == yml_is_number(b);
	case YML_SEQ:
		if (a->n_items != b->n_items)
			return false;
		for (size_t i = 0; i < a->n_items; i++)
			if (!fz_yaml_same(a->items[i], b->items[i]))
				return false;
		return true;
	case YML_MAP:
		if (a->n_pairs != b->n_pairs)
			return false;
		for (size_t i = 0; i < a->n_pairs; i++)
			if (strcmp(a->pairs[i].key->str, b->pairs[i].key->str) ||
			    !fz_yaml_same(a->pairs[i].value, b->pairs[i].value))
				return false;
		return true;
	}
	return false;
}

FUZZ_TARGET(yaml)
{
	struct arena a = {0};
	struct yml_node *root = NULL;
	struct ab_err err = {0};
	if (yml_parse(&a, (const char *)data, size, "fuzz.yaml", &root, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
		arena_free(&a);
		return 0;
	}
	if (!root) {
		arena_free(&a);
		return 0;
	}
	size_t nodes = fz_yaml_walk(root, 0);
	FUZZ_CHECK(nodes <= 2 * YML_MAX_NODES + 1, "%zu nodes", nodes);

	char *text = NULL;
	size_t len = 0;
	if (yml_emit(root, &text, &len, &err) == 0) {
		struct arena b = {0};
		struct yml_node *root2 = NULL;
		int r = yml_parse(&b, text, len, "emitted.yaml", &root2, &err);
		FUZZ_CHECK(r == 0, "emitted text does not parse: %s\n%s", err.msg, text);
		FUZZ_CHECK(root2 != NULL, "emitted text is empty:\n%s", text);
		/* the text may differ (a multi-line plain scalar comes back quoted),
		 * the document may not */
		FUZZ_CHECK(fz_yaml_same(root, root2), "emitted text reads back differently:\n%s", text);
		arena_free(&b);
	}
	free(text);
	arena_free(&a);
	return 0;
}
