/* setup: register agentbox with an engine (agentbox-setup(8)).
 *
 * docker      runtimes.agentbox.path in /etc/docker/daemon.json, the file
 *             parsed (lib/json.h) and written back whole: every other key kept
 *             in its order, numbers as they were written.
 * podman      a drop-in of our own, containers.conf.d/50-agentbox.conf.
 * containerd  a marked block at the end of /etc/containerd/config.toml. Not a
 *             drop-in with an `imports` line: containerd 1.6 takes a plugin's
 *             whole section from the imported file, so a drop-in naming the
 *             CRI plugin would drop what config.toml says of it (Debian's
 *             stock file sets its CNI bin_dir there).
 *
 * Each edit is text in, text out (setup_edit_*, tested by
 * tests/unit/test_setup.c); the command shows it as a diff, then writes the
 * file atomically with its mode and owner, or removes a file that undo leaves
 * empty. Errors name the file; nothing is written before the edit is known
 * good. */
#include "commands.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SETUP_MAX_FILE (4u << 20)
#define CRI_HANDLER "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.agentbox"
#define CRI_RUNTIMES "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes]"
#define BLOCK_BEGIN "# BEGIN agentbox setup"
#define BLOCK_END "# END agentbox setup"
#define PODMAN_MARK "# Written by agentbox setup"

void setup_change_free(struct setup_change *c)
{
	free(c->before);
	free(c->after);
	c->before = c->after = NULL;
	c->note = NULL;
}

static bool blank_text(const char *s)
{
	return !s || !s[strspn(s, " \t\r\n")];
}

static bool line_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

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
	if (!blank_text(text)) {
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

/* ---- containerd: config.toml ------------------------------------------------- */

struct toml_scan {
	int version;               /* the top-level version key, -1 when absent */
	bool content;              /* any key or table outside our block */
	const char *begin, *end;   /* our block: its first line (the blank line before it
				    * included) and the byte after its last */
	bool block_version;        /* our block holds the version line */
	int foreign;               /* line of a handler agentbox not in our block, or 0 */
};

/* "[ a . 'b' ]" -> "[a.\"b\"]": table headers compared as containerd's tools write them */
static void header_norm(const char *line, size_t len, char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < size; i++) {
		if (line[i] == ' ' || line[i] == '\t')
			continue;
		if (line[i] == '#')
			break;
		buf[n++] = line[i] == '\'' ? '"' : line[i];
	}
	buf[n] = 0;
}

static bool key_is(const char *s, const char *key)
{
	size_t n = strlen(key);
	return strncmp(s, key, n) == 0 && (s[n] == ' ' || s[n] == '\t' || s[n] == '=' || s[n] == '.');
}

/* One line of config.toml (without its newline) into the scan. Multi-line
 * strings and arrays are not followed: containerd's own files have none
 * whose lines start with "[" or a key named here. */
static void toml_line(struct toml_scan *s, const char *line, size_t len, int lineno, bool in_block,
		      char *table, size_t table_size)
{
	const char *p = line + strspn(line, " \t");
	if (p >= line + len || *p == '#' || *p == '\r')
		return;
	if (!in_block)
		s->content = true;
	if (*p == '[') {
		header_norm(p, len - (size_t)(p - line), table, table_size);
		if (!in_block && !s->foreign && strncmp(table, CRI_HANDLER, strlen(CRI_HANDLER)) == 0 &&
		    (table[strlen(CRI_HANDLER)] == ']' || table[strlen(CRI_HANDLER)] == '.'))
			s->foreign = lineno;
		return;
	}
	if (!table[0] && key_is(p, "version")) {
		p += strcspn(p, "=");
		if (*p == '=')
			s->version = atoi(p + 1 + strspn(p + 1, " \t"));
		s->block_version |= in_block;
	} else if (!in_block && !s->foreign && streq(table, CRI_RUNTIMES) && key_is(p, "agentbox")) {
		s->foreign = lineno;
	}
}

static int toml_scan(const char *text, const char *what, struct toml_scan *s, struct ab_err *err)
{
	*s = (struct toml_scan){.version = -1};
	char table[512] = "";
	const char *prev = NULL;   /* start of the line before, when blank */
	int lineno = 0;
	for (const char *line = text ? text : ""; *line;) {
		size_t len = strcspn(line, "\n");
		const char *next = line + len + (line[len] == '\n');
		lineno++;
		bool marker_begin = strncmp(line, BLOCK_BEGIN, strlen(BLOCK_BEGIN)) == 0;
		if (marker_begin) {
			if (s->begin)
				return ab_error(err, 0, "%s: line %d: a second \"" BLOCK_BEGIN "\"; fix the file by hand", what, lineno);
			s->begin = prev ? prev : line;
		}
		toml_line(s, line, len, lineno, s->begin && !s->end, table, sizeof table);
		if (s->begin && !s->end && strncmp(line, BLOCK_END, strlen(BLOCK_END)) == 0)
			s->end = next;
		prev = line_blank(line, len) ? line : NULL;
		line = next;
	}
	if (s->begin && !s->end)
		return ab_error(err, 0, "%s: \"" BLOCK_BEGIN "\" without its \"" BLOCK_END "\" line; fix the file by hand", what);
	return 0;
}

static char *containerd_block(const char *bin, bool with_version)
{
	return xasprintf(BLOCK_BEGIN ": the runtime handler agentbox (agentbox setup --undo containerd removes it)\n"
			 "%s" CRI_HANDLER "]\n"
			 "  runtime_type = \"io.containerd.runc.v2\"\n"
			 "  pod_annotations = [\"agentbox.*\"]\n"
			 "  " CRI_HANDLER ".options]\n"
			 "    BinaryName = \"%s\"\n" BLOCK_END "\n",
			 with_version ? "version = 2\n" : "", bin);
}

/* text with [from, to) replaced by repl */
static char *text_splice(const char *text, const char *from, const char *to, const char *repl)
{
	return xasprintf("%.*s%s%s", (int)(from - text), text, repl, to);
}

static int containerd_undo(const char *text, const struct toml_scan *s, struct setup_change *ret)
{
	if (!s->begin)
		return 0;
	/* the version line went in with the block when the file had nothing else;
	 * what was added after it since still needs it */
	ret->after = text_splice(text, s->begin, s->end, s->block_version && s->content ? "version = 2\n" : "");
	if (blank_text(ret->after)) {
		free(ret->after);
		ret->after = NULL;
	}
	ret->before = xstrdup(text);
	return 1;
}

int setup_edit_containerd(const char *text, const char *what, const char *bin, bool undo,
			  struct setup_change *ret, struct ab_err *err)
{
	*ret = (struct setup_change){0};
	struct toml_scan s;
	if (toml_scan(text, what, &s, err) < 0)
		return -1;
	if (undo)
		return containerd_undo(text, &s, ret);
	if (s.foreign)
		return ab_error(err, 0, "%s: line %d: a runtime handler agentbox is there already, not written by agentbox setup; "
			       "edit it by hand, or remove it and run agentbox setup again", what, s.foreign);
	if (s.version != 2 && (s.version != -1 || s.content))
		return ab_error(err, 0, "%s: not a version 2 config (%s); agentbox setup edits version 2 only", what,
				s.version < 0 ? "no \"version = 2\" line" : "another version");
	_cleanup_free_ char *block = containerd_block(bin, s.begin ? s.block_version : s.version < 0);
	if (s.begin) {
		const char *b = strstr(s.begin, BLOCK_BEGIN);
		if ((size_t)(s.end - b) == strlen(block) && strncmp(b, block, strlen(block)) == 0)
			return 0;
		ret->after = text_splice(text, b, s.end, block);
	} else {
		size_t len = text ? strlen(text) : 0;
		const char *sep = len == 0 ? "" : text[len - 1] != '\n' ? "\n\n" : "\n";
		ret->after = xasprintf("%s%s%s", text ? text : "", sep, block);
	}
	ret->before = text ? xstrdup(text) : NULL;
	return 1;
}

/* ---- podman: a drop-in of our own --------------------------------------------- */

static char *podman_dropin(const char *bin)
{
	return xasprintf(PODMAN_MARK ": the OCI runtime agentbox for Podman\n"
			 "# (podman --runtime agentbox ...); agentbox setup --undo podman removes this file.\n"
			 "# Podman 4 replaces these two lists rather than adding to them, so its own\n"
			 "# defaults are repeated here.\n"
			 "[engine]\n"
			 "runtime_supports_json = [\"crun\", \"runc\", \"kata\", \"runsc\", \"krun\", \"agentbox\"]\n"
			 "runtime_supports_nocgroup = [\"crun\", \"krun\", \"agentbox\"]\n"
			 "\n"
			 "[engine.runtimes]\n"
			 "agentbox = [\"%s\"]\n", bin);
}

int setup_edit_podman(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err)
{
	*ret = (struct setup_change){0};
	if (text && strncmp(text, PODMAN_MARK, strlen(PODMAN_MARK)) != 0)
		return ab_error(err, 0, "%s: was not written by agentbox setup; left as it is (remove it, or name another file with --config)", what);
	if (undo) {
		if (!text)
			return 0;
		ret->before = xstrdup(text);
		return 1;
	}
	char *want = podman_dropin(bin);
	if (text && streq(text, want)) {
		free(want);
		return 0;
	}
	ret->before = text ? xstrdup(text) : NULL;
	ret->after = want;
	return 1;
}

/* ---- the preview: one unified diff hunk ---------------------------------------- */

struct lines {
	const char **at;
	int *len;
	size_t n;
};

static void lines_split(const char *text, struct lines *l)
{
	*l = (struct lines){0};
	for (const char *p = text ? text : ""; *p; l->n++) {
		l->at = xrealloc(l->at, (l->n + 1) * sizeof *l->at);
		l->len = xrealloc(l->len, (l->n + 1) * sizeof *l->len);
		l->at[l->n] = p;
		l->len[l->n] = (int)strcspn(p, "\n");
		p += l->len[l->n] + (p[l->len[l->n]] == '\n');
	}
}

static bool lines_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->at[i], b->at[j], (size_t)a->len[i]) == 0;
}

static void print_lines(const struct lines *l, size_t from, size_t to, char mark)
{
	for (size_t i = from; i < to; i++)
		printf("%c%.*s\n", mark, l->len[i], l->at[i]);
}

/* An edit changes one run of lines: the common head and tail around it are
 * the context. */
static void print_diff(const char *path, const char *before, const char *after)
{
	struct lines a, b;
	lines_split(before, &a);
	lines_split(after, &b);
	size_t pre = 0, suf = 0;
	while (pre < a.n && pre < b.n && lines_eq(&a, pre, &b, pre))
		pre++;
	while (suf < a.n - pre && suf < b.n - pre && lines_eq(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	size_t c0 = pre < 3 ? pre : 3, c1 = suf < 3 ? suf : 3;
	size_t start = pre - c0;
	size_t na = c0 + (a.n - pre - suf) + c1, nb = c0 + (b.n - pre - suf) + c1;
	printf("--- %s\n+++ %s\n", before ? path : "/dev/null", after ? path : "/dev/null");
	printf("@@ -%zu,%zu +%zu,%zu @@\n", na ? start + 1 : start, na, nb ? start + 1 : start, nb);
	print_lines(&a, start, pre, ' ');
	print_lines(&a, pre, a.n - suf, '-');
	print_lines(&b, pre, b.n - suf, '+');
	print_lines(&a, a.n - suf, a.n - suf + c1, ' ');
	free(a.at);
	free(a.len);
	free(b.at);
	free(b.len);
}

/* ---- the command ---------------------------------------------------------------- */

typedef int (*setup_edit_fn)(const char *text, const char *what, const char *bin, bool undo,
			     struct setup_change *ret, struct ab_err *err);

struct engine {
	const char *name;
	setup_edit_fn edit;
	const char *file;         /* as root */
	const char *user_file;    /* below $XDG_CONFIG_HOME for other users, or NULL */
	const char *added, *removed;
};

static const struct engine engines[] = {
	{"docker", setup_edit_docker, "/etc/docker/daemon.json", NULL,
	 "dockerd reads its runtimes again on SIGHUP: kill -HUP $(pidof dockerd) (or systemctl reload docker); "
	 "then docker run --runtime=agentbox ...",
	 "dockerd forgets the runtime on SIGHUP: kill -HUP $(pidof dockerd) (or systemctl reload docker)"},
	{"podman", setup_edit_podman, "/etc/containers/containers.conf.d/50-agentbox.conf",
	 "containers/containers.conf.d/50-agentbox.conf",
	 "podman reads it on every run, nothing to reload: podman --runtime agentbox run ...",
	 "podman reads its configuration on every run, nothing to reload"},
	{"containerd", setup_edit_containerd, "/etc/containerd/config.toml", NULL,
	 "restart containerd to load the handler (systemctl restart containerd); "
	 "a Kubernetes RuntimeClass with handler: agentbox then selects it",
	 "restart containerd to drop the handler (systemctl restart containerd)"},
};

/* the binary to register: --path, or the one running */
static int setup_binary(const char *opt, bool undo, char *buf, size_t size, struct ab_err *err)
{
	if (opt) {
		snprintf(buf, size, "%s", opt);
	} else {
		ssize_t n = readlink("/proc/self/exe", buf, size - 1);
		if (n < 0)
			return ab_error(err, errno, "setup: readlink /proc/self/exe (give --path)");
		buf[n] = 0;
		if (n > 10 && streq(buf + n - 10, " (deleted)"))
			return ab_error(err, 0, "setup: the running agentbox (%s) was deleted; give --path", buf);
	}
	if (buf[0] != '/')
		return ab_error(err, 0, "setup: --path %s: not an absolute path", buf);
	for (const char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\' || *p == 0x7f)
			return ab_error(err, 0, "setup: --path %s: quotes, backslashes and control characters are refused", buf);
	if (!undo && access(buf, X_OK) < 0)
		return ab_error(err, errno, "setup: --path %s", buf);
	return 0;
}

/* the engine's file: --config, else the default (a user's own for podman) */
static int setup_file(const struct engine *e, const char *opt, char *buf, size_t size, struct ab_err *err)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	if (opt)
		snprintf(buf, size, "%s", opt);
	else if (geteuid() == 0 || !e->user_file)
		snprintf(buf, size, "%s", e->file);
	else if (xdg && xdg[0] == '/')
		snprintf(buf, size, "%s/%s", xdg, e->user_file);
	else if (home && home[0] == '/')
		snprintf(buf, size, "%s/.config/%s", home, e->user_file);
	else
		return ab_error(err, 0, "setup: neither XDG_CONFIG_HOME nor HOME is set: give --config FILE");
	/* a symlink is followed: the file it names is edited */
	char real[PATH_MAX];
	struct stat st;
	if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!realpath(buf, real))
			return ab_error(err, errno, "setup: %s", buf);
		snprintf(buf, size, "%s", real);
	}
	return 0;
}

/* the file's text, or NULL when there is none */
static int setup_read(const char *path, char **ret, struct stat *st, struct ab_err *err)
{
	*ret = NULL;
	if (stat(path, st) < 0) {
		if (errno == ENOENT)
			return 0;
		return ab_error(err, errno, "setup: %s", path);
	}
	if (!S_ISREG(st->st_mode))
		return ab_error(err, 0, "setup: %s: not a regular file", path);
	size_t len;
	if (read_file_at(AT_FDCWD, path, SETUP_MAX_FILE, ret, &len, err) < 0)
		return ab_wrap(err, "setup");
	if (strlen(*ret) != len) {
		free(*ret);
		*ret = NULL;
		return ab_error(err, 0, "setup: %s: holds NUL bytes, not a configuration file", path);
	}
	return 0;
}

/* write (same mode and owner) or remove the file */
static int setup_apply(const char *path, const char *after, const struct stat *old, struct ab_err *err)
{
	if (!after) {
		if (unlink(path) < 0 && errno != ENOENT)
			return ab_error(err, errno, "setup: remove %s", path);
		return 0;
	}
	_cleanup_free_ char *dir = xstrdup(path);
	if (mkdir_p(dirname(dir), 0755, err) < 0)
		return ab_wrap(err, "setup");
	mode_t mode = old ? old->st_mode & 07777 : 0644;
	if (write_file_atomic_at(AT_FDCWD, path, after, strlen(after), mode, err) < 0)
		return ab_wrap(err, "setup");
	/* the umask may have taken bits the file had */
	if (old && (chmod(path, mode) < 0 || chown(path, old->st_uid, old->st_gid) < 0))
		return ab_error(err, errno, "setup: %s written, but its mode or owner could not be restored", path);
	return 0;
}

static int setup_run(const struct engine *e, const char *path, const char *bin, bool undo, bool dry_run,
		     struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct stat st;
	if (setup_read(path, &text, &st, err) < 0)
		return -1;
	struct setup_change c;
	int r = e->edit(text, path, bin, undo, &c, err);
	if (r < 0)
		return ab_wrap(err, "setup %s", e->name);
	if (r == 0) {
		printf("%s: nothing to change (agentbox is %s)\n", path, undo ? "not registered there by agentbox setup" : "registered already");
		return 0;
	}
	if (c.note)
		printf("# %s: %s\n", path, c.note);
	print_diff(path, c.before, c.after);
	if (dry_run) {
		printf("dry run: %s not changed\n", path);
	} else {
		fflush(stdout);
		r = setup_apply(path, c.after, text ? &st : NULL, err);
		if (r >= 0)
			printf("%s %s\n%s\n", c.after ? "wrote" : "removed", path, undo ? e->removed : e->added);
	}
	setup_change_free(&c);
	return r < 0 ? r : 0;
}

int cmd_setup(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"undo", no_argument, NULL, 'u'}, {"dry-run", no_argument, NULL, 'n'},
		{"path", required_argument, NULL, 'p'}, {"config", required_argument, NULL, 'c'}, {0}};
	const char *path_opt = NULL, *config_opt = NULL;
	bool undo = false, dry_run = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'u': undo = true; break;
		case 'n': dry_run = true; break;
		case 'p': path_opt = optarg; break;
		case 'c': config_opt = optarg; break;
		default: return ab_error(err, 0, "setup: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return ab_error(err, 0, "setup: name one engine: docker, podman or containerd");
	const struct engine *e = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		if (streq(engines[i].name, argv[optind]))
			e = &engines[i];
	if (!e)
		return ab_error(err, 0, "setup: unknown engine \"%s\" (docker, podman or containerd)", argv[optind]);
	char bin[PATH_MAX], path[PATH_MAX];
	if (setup_binary(path_opt, undo, bin, sizeof bin, err) < 0 || setup_file(e, config_opt, path, sizeof path, err) < 0)
		return -1;
	return setup_run(e, path, bin, undo, dry_run, err);
}
