/* Which entries of a workspace the box may not write, and how kit run keeps
 * them so (kit_workspace.h). What is on the list, and why, is written up in
 * agentbox-kit(5), WORKSPACE; the reasoning in short:
 *
 * - the host runs these as the user later, without a review of the change:
 *   git runs hooks and whatever its config names (core.fsmonitor,
 *   core.hooksPath, aliases, filters, includes) on the next `git status`,
 *   often from the shell prompt; a "commondir" file or a ".git" file points
 *   git at another config; direnv runs .envrc on cd; editors and coding
 *   agents run their project settings' tasks, hooks and servers;
 * - the project's own code and build files (Makefile, package.json, .npmrc,
 *   setup.py...) are the agent's work: the user reviews and runs them
 *   knowingly, and an agent that cannot edit them cannot do its job, so they
 *   are not on the list (workspace_protect adds any path).
 *
 * A bind keeps the box from writing, removing or renaming an entry that
 * exists; one that does not exist yet gets an empty placeholder (the 0:0
 * device node, which nothing opens and git does not list, or a directory
 * where that node cannot be had; inside .git a neutral file: see
 * runtime/kit/kit_placeholders.c) that kit run removes afterwards. Directories above a protected entry are bound onto themselves,
 * so that they cannot be renamed away with it. A symlink cannot be bound over:
 * a protected entry that is one is refused. */
#include "kit_workspace.h"
#include "kit_git.h"
#include "kit_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* submodules of submodules: how deep, and how many in all */
#define MAX_SUBMODULE_DEPTH 8
#define MAX_SUBMODULES 512

enum placeholder {
	PH_NONE,        /* protected when it exists; the box may create it */
	PH_DIR,         /* absent: a placeholder stands in (the 0:0 node, or a directory) */
	PH_FILE,        /* absent: a file with `content` stands in */
	PH_HOME,        /* PH_DIR when the workspace is a home directory, else PH_NONE */
};

struct protected_name {
	const char *rel;
	enum placeholder ph;
	const char *content;
};

/* In every workspace. */
static const struct protected_name top_names[] = {
	{".envrc", PH_DIR, NULL},               /* direnv: shell code run on cd */
	{".vscode", PH_DIR, NULL},              /* tasks (runOn: folderOpen), settings naming programs */
	{".idea", PH_DIR, NULL},                /* JetBrains run configurations, startup tasks */
	{".devcontainer", PH_DIR, NULL},        /* initializeCommand runs on the host */
	{".devcontainer.json", PH_DIR, NULL},
	{".zed", PH_DIR, NULL},                 /* tasks, language server commands */
	{".helix", PH_DIR, NULL},               /* language server commands */
	{".nvim.lua", PH_DIR, NULL},            /* (neo)vim's 'exrc' files */
	{".nvimrc", PH_DIR, NULL},
	{".exrc", PH_DIR, NULL},
	{".dir-locals.el", PH_DIR, NULL},       /* Emacs directory variables (eval) */
	{".claude", PH_DIR, NULL},              /* coding agents: hooks, MCP servers, permissions */
	{".mcp.json", PH_DIR, NULL},
	{".cursor", PH_DIR, NULL},
	{".gemini", PH_DIR, NULL},
	/* what kit run held back from earlier boxes (kit_sweep.c): kept as it is
	 * for the user to look at */
	{KIT_QUARANTINE_DIR, PH_NONE, NULL},
	/* run at the next login when the workspace is a home directory */
	{".bashrc", PH_HOME, NULL},
	{".bash_profile", PH_HOME, NULL},
	{".bash_login", PH_HOME, NULL},
	{".bash_logout", PH_HOME, NULL},
	{".profile", PH_HOME, NULL},
	{".zshrc", PH_HOME, NULL},
	{".zshenv", PH_HOME, NULL},
	{".zprofile", PH_HOME, NULL},
	{".zlogin", PH_HOME, NULL},
	{".zlogout", PH_HOME, NULL},
	{".gitconfig", PH_HOME, NULL},
	{".config/git", PH_HOME, NULL},
	{".config/fish", PH_HOME, NULL},
	{".config/autostart", PH_HOME, NULL},
	{".config/systemd", PH_HOME, NULL},
	{".local/bin", PH_HOME, NULL},
	{".ssh", PH_HOME, NULL},
};

/* In a git directory (.git, or one a .git file or a submodule names). */
static const struct protected_name gitdir_names[] = {
	{"hooks", PH_DIR, NULL},                /* run by commit, checkout, merge, push... */
	{"config", PH_FILE, ""},                /* core.fsmonitor, aliases, filters, includes... */
	{"commondir", PH_FILE, ".\n"},          /* where config and hooks are ("." = here) */
	{"config.worktree", PH_NONE, NULL},     /* read only when config enables it */
	{"modules", PH_DIR, NULL},              /* the submodules' git directories */
	{"worktrees", PH_NONE, NULL},           /* linked worktrees' commondir and gitdir */
};

bool kit_workspace_tool_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(top_names); i++)
		if (top_names[i].ph == PH_DIR && streq(top_names[i].rel, name))
			return true;
	return false;
}

/* rel, below the top, ends in a name the end of a run holds back at any
 * depth ("sub/.vscode", "vendor/lib/.git"); not inside the top's .git */
static bool guarded_below_top(const char *rel)
{
	const char *last = strrchr(rel, '/');
	if (!last || strncmp(rel, ".git/", 5) == 0)
		return false;
	last++;
	return kit_workspace_tool_name(last) || streq(last, ".git") || streq(last, ".gitmodules");
}

bool kit_workspace_default_name(const char *rel)
{
	if (streq(rel, ".git") || guarded_below_top(rel))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(top_names); i++)
		if (kit_path_under(top_names[i].rel, rel))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(gitdir_names); i++) {
		char name[64];
		snprintf(name, sizeof name, ".git/%s", gitdir_names[i].rel);
		if (kit_path_under(name, rel))
			return true;
	}
	return false;
}

int kit_workspace_rel_path(const char *text, char *buf, size_t len, const char **why)
{
	size_t o = 0;
	if (!*text) {
		*why = "an empty path";
		return -1;
	}
	if (text[0] == '/') {
		*why = "an absolute path (give it relative to the workspace)";
		return -1;
	}
	for (const char *p = text; *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			*why = "\".\" and \"..\" are not allowed";
			return -1;
		}
		for (const char *q = p; q < e; q++) {
			if ((unsigned char)*q < 0x20 || *q == 0x7f) {
				*why = "a control character";
				return -1;
			}
		}
		if (o + n + 2 > len) {
			*why = "too long";
			return -1;
		}
		if (o)
			buf[o++] = '/';
		memcpy(buf + o, p, n);
		o += n;
		p = e;
	}
	buf[o] = 0;
	return 0;
}

/* ---------------------------------------------------------------- the plan */

struct cand {
	char *rel;
	const char *name;
	enum placeholder ph;
	const char *content;
	bool user;              /* from workspace_protect: never skipped quietly */
};

struct planner {
	const struct kit *k;
	const char *ws;
	int wsfd;
	bool with_absent, home;
	struct arena *a;
	struct cand *c;
	size_t n, cap;
	struct kit_ws_entry *out;
	size_t n_out, cap_out;
};

enum kind { K_DIR, K_FILE, K_ABSENT, K_SYMLINK, K_NOT_UNDER_DIR };

/* What rel is, walking from the workspace without following a symlink;
 * *bad_at: the component where a symlink or a missing directory was met. */
static enum kind classify(int wsfd, const char *rel, size_t *bad_at)
{
	if (!strchr(rel, '/')) {         /* most are at the top: one fstatat */
		struct stat st;
		*bad_at = strlen(rel);
		if (fstatat(wsfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return K_ABSENT;
		return S_ISLNK(st.st_mode) ? K_SYMLINK : S_ISDIR(st.st_mode) ? K_DIR : K_FILE;
	}
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	_cleanup_close_ int cur = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	for (char *p = buf;;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = 0;
		struct stat st;
		*bad_at = (size_t)(p - buf) + strlen(p);
		if (fstatat(cur, p, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOTDIR ? K_NOT_UNDER_DIR : K_ABSENT;
		if (S_ISLNK(st.st_mode))
			return K_SYMLINK;
		if (!slash)
			return S_ISDIR(st.st_mode) ? K_DIR : K_FILE;
		if (!S_ISDIR(st.st_mode))
			return K_NOT_UNDER_DIR;
		int next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return K_ABSENT;
		close(cur);
		cur = next;
		p = slash + 1;
	}
}

/* v (n items of size bytes, room for *cap) with room for one more: the same
 * array, or a copy in a twice as large (at first 64) of a's. */
static void *room_for_one(struct arena *a, void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	size_t c = *cap ? 2 * *cap : 64;
	void *bigger = arena_alloc(a, c * size);
	if (n)
		memcpy(bigger, v, n * size);
	*cap = c;
	return bigger;
}

static void add(struct planner *P, const char *rel, const char *name, enum placeholder ph,
		const char *content, bool user)
{
	for (size_t i = 0; i < P->n; i++)
		if (streq(P->c[i].rel, rel))
			return;
	P->c = room_for_one(P->a, P->c, P->n, &P->cap, sizeof *P->c);
	P->c[P->n++] = (struct cand){arena_strdup(P->a, rel), name, ph, content, user};
}

/* A path git gives (relative to base_rel, or absolute) as one relative to the
 * workspace, or NULL when it leads outside it. */
static char *in_workspace(struct planner *P, const char *base_rel, const char *path)
{
	char *abs;
	if (path[0] == '/')
		abs = kit_normalize_abs(P->a, path);
	else if (path[0] == '~')
		return NULL;    /* the user's home: outside, or refused as a workspace */
	else
		abs = kit_normalize_abs(P->a, arena_printf(P->a, "%s/%s/%s", P->ws, base_rel, path));
	size_t n = strlen(P->ws);
	if (strncmp(abs, P->ws, n) != 0 || abs[n] != '/' || !abs[n + 1])
		return NULL;
	return abs + n + 1;
}

/* The entries of the git directory gd_rel, whose worktree is wt_rel ("" for
 * the workspace's own). */
static void add_gitdir(struct planner *P, const char *gd_rel, const char *wt_rel, bool submodule)
{
	for (size_t i = 0; i < ARRAY_SIZE(gitdir_names); i++) {
		const struct protected_name *g = &gitdir_names[i];
		const char *name = submodule ? ".git/modules" : arena_printf(P->a, ".git/%s", g->rel);
		add(P, arena_printf(P->a, "%s/%s", gd_rel, g->rel), name, g->ph, g->content, false);
	}
	_cleanup_close_ int gd = -1;
	size_t bad;
	if (classify(P->wsfd, gd_rel, &bad) != K_DIR ||
	    (gd = openat(P->wsfd, gd_rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	static const char *const configs[] = {"config", "config.worktree"};
	for (size_t i = 0; i < ARRAY_SIZE(configs); i++) {
		struct kit_git_config_refs refs;
		kit_git_config_refs(gd, configs[i], P->a, &refs);
		const char *hooks = refs.hooks_path ? in_workspace(P, wt_rel, refs.hooks_path) : NULL;
		if (hooks)
			add(P, hooks, submodule ? ".git/modules" : ".git/hooks", PH_DIR, NULL, false);
		for (size_t j = 0; j < refs.n_includes; j++) {
			const char *inc = in_workspace(P, gd_rel, refs.includes[j]);
			if (inc)
				add(P, inc, submodule ? ".git/modules" : ".git/config", PH_NONE, NULL, false);
		}
	}
}

/* The submodules the .gitmodules of the worktree base_rel ("" for the
 * workspace's) lists, and theirs in turn: a submodule's config is as much
 * the host's to run as the top's. */
static void add_submodules(struct planner *P, const char *base_rel, int depth, size_t *budget)
{
	if (depth >= MAX_SUBMODULE_DEPTH)
		return;
	const char *gm = *base_rel ? arena_printf(P->a, "%s/.gitmodules", base_rel) : ".gitmodules";
	size_t bad;
	if (classify(P->wsfd, gm, &bad) != K_FILE)
		return;
	char **mods;
	size_t n = kit_gitmodules_paths(P->wsfd, gm, P->a, &mods);
	for (size_t i = 0; i < n && *budget > 0; i++) {
		const char *sub = in_workspace(P, base_rel, mods[i]);
		if (!sub || (*base_rel && !kit_path_under(sub, base_rel)))
			continue;
		(*budget)--;
		char *dotgit = arena_printf(P->a, "%s/.git", sub);
		add(P, dotgit, ".git/modules", PH_NONE, NULL, false);
		enum kind k = classify(P->wsfd, dotgit, &bad);
		if (k == K_DIR)
			add_gitdir(P, dotgit, sub, true);
		if (k == K_DIR || k == K_FILE)
			add_submodules(P, sub, depth + 1, budget);
	}
}

/* .git as a directory, a file naming one, or absent; and the submodules. */
static void add_git(struct planner *P)
{
	size_t bad;
	enum kind k = classify(P->wsfd, ".git", &bad);
	if (k == K_ABSENT || k == K_SYMLINK) {
		add(P, ".git", ".git", PH_DIR, NULL, false);   /* no `git init` whose config the host runs */
		return;
	}
	if (k == K_FILE) {
		add(P, ".git", ".git", PH_NONE, NULL, false);
		char *target = kit_gitfile_target(P->wsfd, ".git", P->a);
		const char *gd = target ? in_workspace(P, "", target) : NULL;
		if (gd)
			add_gitdir(P, gd, "", false);
	} else if (k == K_DIR) {
		add_gitdir(P, ".git", "", false);
	}
	size_t budget = MAX_SUBMODULES;
	add_submodules(P, "", 0, &budget);
}

static bool opened(const struct kit *k, const char *name)
{
	for (size_t i = 0; i < k->n_ws_writable; i++)
		if (kit_path_under(name, k->ws_writable[i]))
			return true;
	return false;
}

static void emit(struct planner *P, const char *rel, const char *name, enum kit_ws_action action,
		 bool absent, bool dir, const char *content)
{
	P->out = room_for_one(P->a, P->out, P->n_out, &P->cap_out, sizeof *P->out);
	P->out[P->n_out++] = (struct kit_ws_entry){arena_strdup(P->a, rel), name, action, absent, dir, content};
}

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct kit_ws_entry *)a)->rel, ((const struct kit_ws_entry *)b)->rel);
}

/* Entries covered by a read-only one above them go; the directories above the
 * rest are pinned. */
static void finish(struct planner *P)
{
	qsort(P->out, P->n_out, sizeof *P->out, by_rel);
	size_t w = 0;
	for (size_t i = 0; i < P->n_out; i++) {
		bool covered = false;
		for (size_t j = 0; j < w && !covered; j++)
			covered = P->out[j].action == KIT_WS_READONLY && strncmp(P->out[i].rel, P->out[j].rel, strlen(P->out[j].rel)) == 0 &&
				  P->out[i].rel[strlen(P->out[j].rel)] == '/';
		if (!covered)
			P->out[w++] = P->out[i];
	}
	P->n_out = w;
	size_t n = P->n_out;
	for (size_t i = 0; i < n; i++) {
		char *rel = arena_strdup(P->a, P->out[i].rel);
		for (char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
			*slash = 0;
			bool have = false;
			for (size_t j = 0; j < P->n_out && !have; j++)
				have = streq(P->out[j].rel, rel);
			size_t bad;
			if (!have)
				emit(P, rel, P->out[i].name, KIT_WS_PIN, classify(P->wsfd, rel, &bad) == K_ABSENT, true, NULL);
			*slash = '/';
		}
	}
	qsort(P->out, P->n_out, sizeof *P->out, by_rel);
}

int kit_workspace_plan(const struct kit *k, const char *ws, bool with_absent, struct arena *a,
		       struct kit_ws_plan *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	_cleanup_close_ int wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0)
		return ab_error(err, errno, "workspace %s", ws);
	struct planner P = {.k = k, .ws = ws, .wsfd = wsfd, .with_absent = with_absent, .a = a,
			    .home = kit_workspace_is_home(ws)};
	add_git(&P);
	for (size_t i = 0; i < ARRAY_SIZE(top_names); i++)
		add(&P, top_names[i].rel, top_names[i].rel, top_names[i].ph, NULL, false);
	for (size_t i = 0; i < k->n_ws_protect; i++)
		add(&P, k->ws_protect[i], k->ws_protect[i], PH_DIR, NULL, true);

	ret->opened = arena_alloc(a, (P.n + 1) * sizeof *ret->opened);
	for (size_t i = 0; i < P.n; i++) {
		const struct cand *c = &P.c[i];
		if (!c->user && opened(k, c->name)) {
			ret->opened[ret->n_opened++] = c->rel;
			continue;
		}
		enum placeholder ph = c->ph == PH_HOME ? (P.home ? PH_DIR : PH_NONE) : c->ph;
		size_t bad;
		enum kind kd = classify(wsfd, c->rel, &bad);
		if (kd == K_SYMLINK) {
			/* a home's shell files matter only in a home: elsewhere a link is let be */
			if (c->ph == PH_HOME && !P.home)
				continue;
			const char *link = arena_strndup(a, c->rel, bad);
			const char *above = streq(link, c->rel) ? "" : arena_printf(a, " (above %s)", c->rel);
			return ab_error(err, 0, "workspace %s: %s%s is a symlink: a box could replace it, so it cannot be "
					"kept read-only (replace the link by what it points to, or open %s with "
					"workspace_writable in the kit)", ws, link, above, c->name);
		}
		if (kd == K_DIR || kd == K_FILE)
			emit(&P, c->rel, c->name, KIT_WS_READONLY, false, kd == K_DIR, NULL);
		else if (kd == K_ABSENT && with_absent && ph != PH_NONE)
			emit(&P, c->rel, c->name, KIT_WS_READONLY, true, ph == PH_DIR, ph == PH_FILE ? c->content : NULL);
	}
	finish(&P);
	ret->v = P.out;
	ret->n = P.n_out;
	ret->home = P.home;
	return 0;
}
