/* agentbox setup docker: runtimes.agentbox.path in /etc/docker/daemon.json.
 * The file is parsed (lib/json.h) and written back whole: every other key kept
 * in its order, numbers as they were written. */
#include "setup.h"
#include "setup_text.h"
#include "json.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/* yajl's pretty printer writes an empty object or array over lines of its
 * own, "{\n\n  }": made "{}" (a raw newline is layout, never inside a string) */
static char *text_with_newline(const char *s, size_t len)
{
	char *t = len && s[len - 1] == '\n' ? xstrdup(s) : xasprintf("%s\n", s), *w = t;
	for (const char *r = t; *r; r++) {
		*w++ = *r;
		size_t sp = strspn(r + 1, " \n");
		if ((*r == '{' || *r == '[') && r[1] == '\n' && r[1 + sp] == (*r == '{' ? '}' : ']'))
			r += sp;
	}
	*w = 0;
	return t;
}

/* ---- docker: daemon.json ---------------------------------------------------- */

enum docker_op { DOCKER_KEEP, DOCKER_ADD, DOCKER_UNDO };

/* runtimes with agentbox set to bin (ADD), left out (UNDO) or as it is */
static void docker_runtimes(struct json_out *o, yajl_val rt, const char *bin, enum docker_op op)
{
	bool seen = false;
	json_obj_begin(o);
	for (size_t i = 0; rt && i < rt->u.object.len; i++) {
		const char *k = rt->u.object.keys[i];
		yajl_val v = rt->u.object.values[i];
		if (op == DOCKER_KEEP || !streq(k, "agentbox")) {
			json_key(o, k);
			json_value(o, v);
			continue;
		}
		if (op == DOCKER_UNDO)
			continue;
		seen = true;
		bool has_path = false;
		json_key(o, k);
		json_obj_begin(o);
		for (size_t j = 0; j < v->u.object.len; j++) {
			json_key(o, v->u.object.keys[j]);
			if (streq(v->u.object.keys[j], "path")) {
				json_str(o, bin);
				has_path = true;
			} else {
				json_value(o, v->u.object.values[j]);
			}
		}
		if (!has_path)
			json_kv_str(o, "path", bin);
		json_obj_end(o);
	}
	if (op == DOCKER_ADD && !seen) {
		json_key(o, "agentbox");
		json_obj_begin(o);
		json_kv_str(o, "path", bin);
		json_obj_end(o);
	}
	json_obj_end(o);
}

/* The whole file. Undo leaves an empty runtimes object in place: dockerd's
 * SIGHUP replaces its runtimes only when the file has the key (20.10), so
 * without it the runtime would stay loaded until a restart. */
static char *docker_render(yajl_val root, const char *bin, enum docker_op op)
{
	struct json_out *o = json_out_new(true);
	size_t n = root ? root->u.object.len : 0;
	bool seen = false;
	json_obj_begin(o);
	for (size_t i = 0; i < n; i++) {
		const char *k = root->u.object.keys[i];
		yajl_val v = root->u.object.values[i];
		json_key(o, k);
		if (streq(k, "runtimes") && YAJL_IS_OBJECT(v) && op != DOCKER_KEEP) {
			seen = true;
			docker_runtimes(o, v, bin, op);
		} else {
			json_value(o, v);
		}
	}
	if (op == DOCKER_ADD && !seen) {
		json_key(o, "runtimes");
		docker_runtimes(o, NULL, bin, op);
	}
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	char *ret = text_with_newline(text, len);
	json_out_free(o);
	return ret;
}

/* runtimes.agentbox of a parsed daemon.json, checked for shape */
static int docker_entry(yajl_val root, const char *what, yajl_val *ret, struct ab_err *err)
{
	*ret = NULL;
	yajl_val rt = root ? json_get(root, "runtimes") : NULL;
	if (rt && !YAJL_IS_OBJECT(rt))
		return ab_error(err, 0, "%s: \"runtimes\" is not an object", what);
	yajl_val ab = rt ? json_get(rt, "agentbox") : NULL;
	if (ab && !YAJL_IS_OBJECT(ab))
		return ab_error(err, 0, "%s: runtimes.agentbox is not an object", what);
	*ret = ab;
	return 0;
}

int setup_edit_docker(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err)
{
	*ret = (struct setup_change){0};
	yajl_val root = NULL, ab;
	if (!setup_blank_text(text)) {
		if (json_parse(text, what, &root, err) < 0) {
			size_t n = strlen(err->msg);
			snprintf(err->msg + n, sizeof err->msg - n, "; left as it is");
			return -1;
		}
		if (!YAJL_IS_OBJECT(root)) {
			json_free(root);
			return ab_error(err, 0, "%s: not a JSON object; left as it is", what);
		}
	}
	int r = docker_entry(root, what, &ab, err);
	yajl_val p = ab ? json_get(ab, "path") : NULL;
	const char *cur = p && YAJL_IS_STRING(p) ? p->u.string : NULL;
	yajl_val dflt = root ? json_get(root, "default-runtime") : NULL;
	if (r < 0 || (!undo && cur && streq(cur, bin)) || (undo && !ab))
		goto out;
	if (undo && (!cur || !streq(cur, bin))) {
		r = ab_error(err, 0, "%s: runtimes.agentbox runs %s, not %s: left as it is (agentbox setup --undo --path %s docker removes it)",
			     what, cur ? cur : "no path", bin, cur ? cur : "PATH");
		goto out;
	}
	if (undo && dflt && YAJL_IS_STRING(dflt) && streq(dflt->u.string, "agentbox")) {
		r = ab_error(err, 0, "%s: \"default-runtime\" is agentbox: choose another default before removing the runtime", what);
		goto out;
	}
	ret->before = text ? docker_render(root, bin, DOCKER_KEEP) : NULL;
	ret->after = docker_render(root, bin, undo ? DOCKER_UNDO : DOCKER_ADD);
	if (text && !streq(ret->before, text))
		ret->note = "the file is written back in JSON's usual layout (two-space indent); every key keeps its value and its place";
	r = 1;
out:
	json_free(root);
	return r;
}
