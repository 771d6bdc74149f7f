/* json_parse builds its tree from yajl's stream parser into an arena: the
 * same tree, value for value, as yajl_tree_parse builds, and the same
 * refusals. */
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "json.h"
#include "tap.h"

static bool same(yajl_val a, yajl_val b, char *why, size_t len)
{
	if (!a || !b || a->type != b->type) {
		snprintf(why, len, "type %d against %d", a ? (int)a->type : -1, b ? (int)b->type : -1);
		return false;
	}
	switch (a->type) {
	case yajl_t_string:
		if (strcmp(a->u.string, b->u.string) != 0) {
			snprintf(why, len, "string \"%s\" against \"%s\"", a->u.string, b->u.string);
			return false;
		}
		return true;
	case yajl_t_number:
		if (strcmp(a->u.number.r, b->u.number.r) != 0 || a->u.number.flags != b->u.number.flags ||
		    a->u.number.i != b->u.number.i ||
		    ((a->u.number.flags & YAJL_NUMBER_DOUBLE_VALID) && a->u.number.d != b->u.number.d)) {
			snprintf(why, len, "number %s (%lld, flags %u) against %s (%lld, flags %u)", a->u.number.r,
				 a->u.number.i, a->u.number.flags, b->u.number.r, b->u.number.i, b->u.number.flags);
			return false;
		}
		return true;
	case yajl_t_object:
		if (a->u.object.len != b->u.object.len) {
			snprintf(why, len, "object of %zu members against %zu", a->u.object.len, b->u.object.len);
			return false;
		}
		for (size_t i = 0; i < a->u.object.len; i++) {
			if (strcmp(a->u.object.keys[i], b->u.object.keys[i]) != 0) {
				snprintf(why, len, "key \"%s\" against \"%s\"", a->u.object.keys[i], b->u.object.keys[i]);
				return false;
			}
			if (!same(a->u.object.values[i], b->u.object.values[i], why, len))
				return false;
		}
		return true;
	case yajl_t_array:
		if (a->u.array.len != b->u.array.len) {
			snprintf(why, len, "array of %zu against %zu", a->u.array.len, b->u.array.len);
			return false;
		}
		for (size_t i = 0; i < a->u.array.len; i++)
			if (!same(a->u.array.values[i], b->u.array.values[i], why, len))
				return false;
		return true;
	default:
		return true;
	}
}

int main(void)
{
	static const char *const docs[] = {
		"{}",
		"[]",
		"\"just a string\"",
		"42",
		"null",
		"true",
		"{\"a\": 1, \"b\": [1, 2, {\"c\": null}], \"d\": {\"e\": {\"f\": [[], {}, [[]]]}}}",
		/* duplicate keys are kept, in order */
		"{\"k\": 1, \"k\": 2, \"k\": \"three\"}",
		/* numbers: fractions, exponents, the edges of long long */
		"[0, -0, 1.5, -2.25e3, 1e400, 9223372036854775807, 9223372036854775808, -9223372036854775808,"
		" -9223372036854775807, 92233720368547758070, 922337203685477581, 0.1e-400, 123456789012345678901234567890]",
		/* escapes and UTF-8 */
		"{\"s\": \"tab\\there \\\"quoted\\\" \\u00e9 \\ud83d\\ude00 \\/ back\\\\slash\", \"\\u0041key\": \"caf\xc3\xa9\"}",
		/* comments, which yajl_tree_parse allows */
		"/* a comment */ {\"a\": 1, // another\n \"b\": 2}",
		/* a runc-like config */
		"{\"ociVersion\": \"1.0.2\", \"process\": {\"terminal\": false, \"user\": {\"uid\": 0, \"gid\": 0},"
		" \"args\": [\"sh\"], \"env\": [\"PATH=/usr/bin\", \"TERM=xterm\"], \"cwd\": \"/\","
		" \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 1024}]},"
		" \"mounts\": [{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},"
		" {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"nosuid\", \"strictatime\", \"mode=755\"]}]}",
	};
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		char msg[256];
		yajl_val want = yajl_tree_parse(docs[i], msg, sizeof msg);
		yajl_val got = NULL;
		struct ab_err e;
		int r = json_parse(docs[i], "doc", &got, &e);
		char why[512] = "";
		ok(want && r == 0 && same(got, want, why, sizeof why), "doc %zu: the same tree as yajl_tree_parse %s", i,
		   why);
		json_free(got);
		yajl_tree_free(want);
	}

	static const char *const bad[] = {
		"", "{", "[1, 2", "{\"a\" 1}", "{1: 2}", "[1,]", "{\"a\": tru}", "[\"unterminated]", "01", "[1] [2]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char msg[256];
		yajl_val want = yajl_tree_parse(bad[i], msg, sizeof msg);
		yajl_val got = NULL;
		struct ab_err e = {0};
		int r = json_parse(bad[i], "doc", &got, &e);
		ok(!want && r < 0 && !got && strncmp(e.msg, "doc: invalid JSON: ", 19) == 0,
		   "bad doc %zu refused as yajl_tree_parse refuses it: %s", i, e.msg);
		yajl_tree_free(want);
	}

	/* the walk's errors name a line and column, as before */
	struct ab_err e = {0};
	yajl_val v = NULL;
	ok(json_parse("{\n  \"a\": [1,\n  }\n", "config.json", &v, &e) < 0, "a broken document is refused");
	has_substr(e.msg, "at line 3, column", "its line and column are named");
	return tap_done();
}
