/* agentbox setup containerd: a marked block at the end of
 * /etc/containerd/config.toml. Not a drop-in with an `imports` line:
 * containerd 1.6 takes a plugin's whole section from the imported file, so a
 * drop-in naming the CRI plugin would drop what config.toml says of it
 * (Debian's stock file sets its CNI bin_dir there). */
#include "setup.h"
#include "setup_text.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CRI_HANDLER "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.agentbox"
#define CRI_RUNTIMES "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes]"
#define BLOCK_BEGIN "# BEGIN agentbox setup"
#define BLOCK_END "# END agentbox setup"

static bool line_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

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
	if (setup_blank_text(ret->after)) {
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
