/* The workspace guard's pure parts (kit_guard.h). */
#include "kit_guard.h"
#include "kit_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kit_guard_item *kit_guard_add(struct kit_guard_report *r, enum kit_guard_what what, const char *rel,
				     const char *held)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 32;
		struct kit_guard_item *v = arena_alloc(&r->a, cap * sizeof *v);
		if (r->n)
			memcpy(v, r->v, r->n * sizeof *v);
		r->v = v;
		r->cap = cap;
	}
	struct kit_guard_item *it = &r->v[r->n++];
	*it = (struct kit_guard_item){what, arena_strdup(&r->a, rel), held ? arena_strdup(&r->a, held) : NULL, false};
	return it;
}

void kit_guard_report_free(struct kit_guard_report *r)
{
	arena_free(&r->a);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- scope */

static void mark(struct kit_guard_marks *m, size_t cap, const char *rel, enum kit_guard_scope s)
{
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->rel[i], rel)) {
			if (s > m->scope[i])
				m->scope[i] = s;        /* read-only wins over opened */
			return;
		}
	if (m->n < cap) {
		m->rel[m->n] = rel;
		m->scope[m->n++] = s;
	}
}

void kit_guard_marks_make(const struct kit *k, const struct kit_ws_plan *plan, struct arena *a,
			  struct kit_guard_marks *ret)
{
	size_t cap = (plan ? plan->n + plan->n_opened : 0) + k->n_ws_writable + 1;
	ret->rel = arena_alloc(a, cap * sizeof *ret->rel);
	ret->scope = arena_alloc(a, cap * sizeof *ret->scope);
	ret->n = 0;
	/* the quarantine directory is read-only to a box when it exists at the
	 * start (kit_workspace.c): then it is among these */
	for (size_t i = 0; plan && i < plan->n; i++)
		if (plan->v[i].action == KIT_WS_READONLY)
			mark(ret, cap, plan->v[i].rel, KIT_GUARD_NONE);
	for (size_t i = 0; i < k->n_ws_writable; i++)
		mark(ret, cap, k->ws_writable[i], KIT_GUARD_PRIVS);
	for (size_t i = 0; plan && i < plan->n_opened; i++)
		mark(ret, cap, plan->opened[i], KIT_GUARD_PRIVS);
}

void kit_guard_marks_below(const struct kit_guard_marks *m, const char *dir_rel, struct arena *a,
			   struct kit_guard_marks *ret)
{
	size_t n = 0, len = strlen(dir_rel);
	for (size_t i = 0; i < m->n; i++)
		n += !len || (strncmp(m->rel[i], dir_rel, len) == 0 && m->rel[i][len] == '/');
	ret->n = 0;
	if (!n) {
		ret->rel = NULL;
		ret->scope = NULL;
		return;
	}
	ret->rel = arena_alloc(a, n * sizeof *ret->rel);
	ret->scope = arena_alloc(a, n * sizeof *ret->scope);
	for (size_t i = 0; i < m->n; i++)
		if (!len || (strncmp(m->rel[i], dir_rel, len) == 0 && m->rel[i][len] == '/')) {
			ret->rel[ret->n] = m->rel[i];
			ret->scope[ret->n++] = m->scope[i];
		}
}

enum kit_guard_scope kit_guard_scope_of(const struct kit_guard_marks *m, const char *rel, enum kit_guard_scope inherit)
{
	enum kit_guard_scope s = inherit;
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->rel[i], rel) && m->scope[i] > s)
			s = m->scope[i];
	return s;
}

/* ---------------------------------------------------------------- names */

enum kit_guard_member kit_guard_gitdir_member(const char *name)
{
	if (streq(name, "config") || streq(name, "config.worktree") || streq(name, "commondir"))
		return KIT_GUARD_RUN_FILE;
	if (streq(name, "hooks"))
		return KIT_GUARD_RUN_DIR;
	return KIT_GUARD_NOT_RUN;
}

bool kit_guard_is_gitdir(bool head, bool objects, bool refs, bool commondir)
{
	return head && ((objects && refs) || commondir);
}

bool kit_guard_tool_at(const char *rel, const char *name)
{
	if (!streq(name, ".gitmodules") && !kit_workspace_tool_name(name))
		return false;
	/* npm unpacks packages with their own dot-files; nobody opens one there as a project */
	size_t n = strlen("node_modules");
	for (const char *p = rel; (p = strstr(p, "node_modules")); p += n)
		if ((p == rel || p[-1] == '/') && p[n] == '/')
			return false;
	return true;
}

char *kit_guard_in_workspace(struct arena *a, const char *ws, const char *base_rel, const char *path)
{
	char *abs;
	if (!*path || path[0] == '~')
		return NULL;    /* the user's home: outside, or refused as a workspace */
	if (path[0] == '/')
		abs = kit_normalize_abs(a, path);
	else
		abs = kit_normalize_abs(a, arena_printf(a, "%s%s%s/%s", ws, *base_rel ? "/" : "", base_rel, path));
	size_t n = strlen(ws);
	if (strncmp(abs, ws, n) != 0 || abs[n] != '/' || !abs[n + 1])
		return NULL;
	return abs + n + 1;
}

/* ---------------------------------------------------------------- telling */

static const char *why(enum kit_guard_what w)
{
	switch (w) {
	case KIT_GUARD_SETID: return "set-user-ID or set-group-ID bits cleared";
	case KIT_GUARD_FCAPS: return "file capabilities removed";
	case KIT_GUARD_DEVICE: return "device node removed";
	case KIT_GUARD_FIFO: return "FIFO removed";
	case KIT_GUARD_GIT: return "git runs what it holds or names";
	case KIT_GUARD_GITLINK: return "a .git file or link: git would use the repository it names";
	case KIT_GUARD_GITMODULES: return "git reads the submodules from it";
	case KIT_GUARD_TOOL: return "editors, agents or direnv run it when that folder is opened";
	case KIT_GUARD_DEEP: return "too deep to be looked into";
	case KIT_GUARD_STUCK: return "could NOT be held back";
	}
	return "";
}

#define RESTORED "; the one from before the run is back in its place"

struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *add = NULL;
	int n = vasprintf(&add, fmt, ap);
	va_end(ap);
	if (n < 0)
		ab_fatal("out of memory");
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->s = xrealloc(t->s, t->cap);
	}
	memcpy(t->s + t->len, add, (size_t)n + 1);
	t->len += (size_t)n;
	free(add);
}

static void item_line(struct text *t, const struct kit_guard_item *it, const char *qdir)
{
	size_t q = qdir ? strlen(qdir) : 0;
	if (it->what == KIT_GUARD_STUCK)
		put(t, "  could NOT hold back %s: %s\n", it->rel, it->held ? it->held : "");
	else if (it->held && q && strncmp(it->held, qdir, q) == 0 && it->held[q] == '/')
		put(t, "  quarantined %s as %s (%s%s)\n", it->rel, it->held + q + 1, why(it->what),
		    it->restored ? RESTORED : "");
	else if (it->held)
		put(t, "  quarantined %s as %s (%s)\n", it->rel, it->held, why(it->what));
	else
		put(t, "  %s: %s\n", it->rel, why(it->what));
}

char *kit_guard_summary(const struct kit_guard_report *r, const char *ws, size_t max_lines)
{
	if (!r->n)
		return NULL;
	struct text t = {0};
	put(&t, "agentbox: the box left %zu thing%s in the workspace %s that would carry privilege or run on "
	    "the host; held back (agentbox-kit(5), WORKSPACE):\n", r->n, r->n == 1 ? "" : "s", ws);
	for (size_t i = 0; i < r->n && i < max_lines; i++)
		item_line(&t, &r->v[i], r->qdir);
	if (r->n > max_lines)
		put(&t, "  and %zu more\n", r->n - max_lines);
	if (r->qdir)
		put(&t, "  quarantined in %s/%s (all of it listed in MANIFEST there): look with ls -la and cat, not "
		    "with git or an editor; to keep one, move it back (mv %s/N-NAME PATH)\n", ws, r->qdir, r->qdir);
	return t.s;
}

char *kit_guard_manifest(const struct kit_guard_report *r)
{
	struct text t = {0};
	put(&t, "# what kit run held back: where it is now<TAB>where the box left it<TAB>why\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct kit_guard_item *it = &r->v[i];
		if (it->what == KIT_GUARD_STUCK)
			put(&t, "-\t%s\t%s: %s\n", it->rel, why(it->what), it->held ? it->held : "");
		else
			put(&t, "%s\t%s\t%s%s\n", it->held ? it->held : "-", it->rel, why(it->what),
			    it->restored ? RESTORED : "");
	}
	return t.s;
}
