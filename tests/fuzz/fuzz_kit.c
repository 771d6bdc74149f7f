/* Kits (oci/kit/kit.h): kit_parse on the input, `extends` resolved against a
 * fixed set of base kits, then the two things a kit becomes — its effective
 * YAML (kit show), which must read back to the same kit, and its config.json
 * (kit build), which agentbox's own config parser must accept. */
#include "fuzz.h"

#if __has_include("kit.h")
#include <unistd.h>

#include "config.h"
#include "kit.h"
#include "yml.h"

static char fz_kit_dir[128];
static char fz_kit_file[160];

/* Base kits the input may extend; only these names are followed, so the
 * fuzzer never makes the parser open a path of the host (a fifo, /dev/stdin). */
static const struct { const char *name, *text; } fz_kit_bases[] = {
	{"base.yaml", "name: base\nenv: {A: a, B: b}\nnetwork: {deny: [198.18.201.99]}\n"
		      "resources: {memory: 256m, pids: 256}\ncommand: [sh, -c, echo]\n"},
	{"middle.yaml", "extends: base.yaml\nname: middle\nenv: {B: m}\nstartup: [echo middle]\n"},
	{"cycle-a.yaml", "extends: cycle-b.yaml\nname: a\n"},
	{"cycle-b.yaml", "extends: cycle-a.yaml\nname: b\n"},
	{"bad.yaml", "name: bad\nnosuchfield: 1\n"},
	{"list.yaml", "- not\n- a kit\n"},
};

static void fz_kit_cleanup(void)
{
	fuzz_rm_tree(fz_kit_dir);
}

FUZZ_INIT(kit)
{
	fuzz_scratch_dir("/tmp", "kit", fz_kit_dir, sizeof fz_kit_dir);
	atexit(fz_kit_cleanup);
	for (size_t i = 0; i < sizeof fz_kit_bases / sizeof fz_kit_bases[0]; i++) {
		char path[160];
		snprintf(path, sizeof path, "%s/%s", fz_kit_dir, fz_kit_bases[i].name);
		FILE *f = fopen(path, "w");
		if (!f || fputs(fz_kit_bases[i].text, f) < 0 || fclose(f) != 0)
			abort();
	}
	snprintf(fz_kit_file, sizeof fz_kit_file, "%s/fuzz.yaml", fz_kit_dir);
	return 0;
}

/* Is `extends` absent, or one of the bases (or a name that does not exist)? */
static bool fz_kit_extends_ok(const char *text, size_t len)
{
	struct arena a = {0};
	struct yml_node *root = NULL;
	struct ab_err err;
	bool ok = true;
	if (yml_parse(&a, text, len, "pre", &root, &err) == 0 && root && root->kind == YML_MAP) {
		const struct yml_node *ext = yml_map_get(root, "extends");
		if (ext && ext->kind == YML_SCALAR && !yml_is_null(ext)) {
			ok = strcmp(ext->str, "missing.yaml") == 0;
			for (size_t i = 0; i < sizeof fz_kit_bases / sizeof fz_kit_bases[0]; i++)
				if (strcmp(ext->str, fz_kit_bases[i].name) == 0)
					ok = true;
		}
	}
	arena_free(&a);
	return ok;
}

/* kit show's text after its leading comment lines */
static const char *fz_kit_body(const char *s)
{
	while (*s == '#') {
		const char *nl = strchr(s, '\n');
		if (!nl)
			return "";
		s = nl + 1;
	}
	return s;
}

FUZZ_TARGET(kit)
{
	const char *text = (const char *)data;
	if (!fz_kit_extends_ok(text, size))
		return 0;
	struct kit *k = NULL;
	struct ab_err err = {0};
	if (kit_parse(text, size, fz_kit_file, &k, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
		return 0;
	}
	FUZZ_CHECK(k != NULL, "no kit on success");

	char *shown = NULL;
	if (kit_show(k, NULL, &shown, &err) == 0) {
		struct kit *k2 = NULL;
		int r = kit_parse(shown, strlen(shown), fz_kit_file, &k2, &err);
		FUZZ_CHECK(r == 0, "kit show output does not read back: %s\n%s", err.msg, shown);
		char *shown2 = NULL;
		FUZZ_CHECK(kit_show(k2, NULL, &shown2, &err) == 0, "kit show of the read-back kit: %s", err.msg);
		/* the comment block names the files it came from: compare the kit itself */
		FUZZ_CHECK(strcmp(fz_kit_body(shown), fz_kit_body(shown2)) == 0,
			   "kit show is not a fixed point:\n%s\n---\n%s", shown, shown2);
		free(shown2);
		kit_free(k2);
	}
	free(shown);

	struct kit_build_opts o = {.bundle = "/nonexistent", .egress_annotations = true};
	char *json = NULL;
	if (kit_config_json(k, &o, &json, &err) == 0) {
		struct oci_config *c = NULL;
		int r = oci_config_parse(json, "config.json", &c, &err);
		FUZZ_CHECK(r == 0, "the kit's config.json is refused: %s\n%s", err.msg, json);
		oci_config_free(c);
	}
	free(json);
	kit_free(k);
	return 0;
}

#else
/* No oci/kit/kit.h in this tree yet: an empty target. */
FUZZ_TARGET(kit)
{
	(void)data;
	(void)size;
	return 0;
}
#endif
