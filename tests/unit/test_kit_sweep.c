/* Unit tests for the workspace guard's end of a run (runtime/kit/kit_sweep.c
 * and oci/kit/kit_guard.c): a workspace is laid out as the user left it,
 * then changed as a box would, and the sweep must hold back exactly what
 * the box made or changed that a host tool would run, clear set-id bits,
 * remove devices and FIFOs, and leave the user's own alone. Also the pure
 * parts: scopes, names, paths, the summary and the list. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "kit.h"
#include "kit_guard.h"
#include "kit_sweep.h"
#include "kit_workspace.h"
#include "tap.h"

static char ws[PATH_MAX];

static char *at(const char *rel)
{
	static char buf[8][PATH_MAX + 64];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", ws, rel);
	return buf[i];
}

/* mkdir -p of rel's directories, then the file with text */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s", at(rel));
	for (char *p = path + strlen(ws) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		(void)mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void gitdir(const char *rel, const char *config)
{
	char b[PATH_MAX];
	snprintf(b, sizeof b, "%s/HEAD", rel);
	put(b, "ref: refs/heads/main\n");
	snprintf(b, sizeof b, "%s/objects/info/x", rel);
	put(b, "");
	snprintf(b, sizeof b, "%s/refs/heads/x", rel);
	put(b, "");
	snprintf(b, sizeof b, "%s/config", rel);
	put(b, config);
}

static bool exists(const char *rel)
{
	struct stat st;
	return lstat(at(rel), &st) == 0;
}

static char *slurp(const char *rel)
{
	static char buf[4096];
	FILE *f = fopen(at(rel), "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* Until the coarse clock is past every change made so far: the sweep's
 * start must fall after the user's files and before the box's. */
static void next_tick(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_REALTIME, &a);
	do
		clock_gettime(CLOCK_REALTIME_COARSE, &b);
	while (b.tv_sec < a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec <= a.tv_nsec));
}

static struct kit *kit_with(const char *text)
{
	struct kit *k = NULL;
	struct ab_err err;
	char file[PATH_MAX + 16];
	snprintf(file, sizeof file, "%s.kit.yaml", ws);
	if (kit_parse(text, strlen(text), file, &k, &err) < 0) {
		printf("# %s\n", err.msg);
		exit(2);
	}
	return k;
}

/* The user's workspace before the box. */
static void lay_out_users(void)
{
	gitdir(".git", "[core]\n\trepositoryformatversion = 0\n");
	put(".gitmodules", "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n");
	gitdir("lib/.git", "[core]\n");                 /* a listed submodule */
	gitdir("lib/inner/.git", "[core]\n");           /* ... and one of its own */
	put("lib/.gitmodules", "[submodule \"inner\"]\n\tpath = inner\n\turl = ../inner\n");
	gitdir("old/.git", "[core]\n");                 /* a nested repository of the user's */
	put("old/.git/hooks/pre-commit", "#!/bin/sh\n");
	gitdir("old2/.git", "[core]\n");
	gitdir("hp/.git", "[core]\n\thooksPath = myhooks\n");
	put("hp/myhooks/README", "hooks\n");
	gitdir("inc/.git", "[include]\n\tpath = ../shared.cfg\n");
	put("inc/shared.cfg", "[core]\n");
	put("wt/.git/HEAD", "ref: refs/heads/main\n");     /* a git directory sharing another's */
	put("wt/.git/commondir", "../../shared\n");
	put("shared/config", "[core]\n");
	put("keep/.vscode/settings.json", "{}\n");
	put("src/main.c", "int main(void) { return 0; }\n");
	put("legacy-suid", "#!/bin/sh\n");
	chmod(at("legacy-suid"), 04755);
}

/* What a box does. */
static void box_writes(void)
{
	gitdir("new/.git", "[core]\n\tfsmonitor = touch /tmp/x\n");
	put("new/.git/hooks/post-checkout", "#!/bin/sh\n");
	put("old2/.git/config", "[core]\n\tfsmonitor = touch /tmp/x\n");
	put("gl/.git", "gitdir: ../hidden\n");
	put("sub/.vscode/tasks.json", "{}\n");
	put("deep/a/b/.envrc", "echo hi\n");
	put("node_modules/p/.vscode/settings.json", "{}\n");
	put(".gitmodules", "[submodule \"evil\"]\n\tpath = evil\n\turl = ../evil\n");
	put("sub2/.gitmodules", "[submodule \"x\"]\n\tpath = x\n");
	gitdir("bare.git", "[core]\n\tbare = true\n\tpager = touch /tmp/x\n");
	put("hp/myhooks/pre-commit", "#!/bin/sh\ntouch /tmp/x\n");
	put("inc/shared.cfg", "[core]\n\tfsmonitor = touch /tmp/x\n");
	put("open/.vscode/tasks.json", "{}\n");
	put("shared/config", "[core]\n\tfsmonitor = touch /tmp/x\n");
	put("src/util.c", "int util;\n");
	put("s", "#!/bin/sh\n");
	chmod(at("s"), 06755);
	mkdir(at("ln"), 0755);
	symlink("/etc/passwd", at("ln/.envrc"));
	mkfifo(at("f"), 0644);
	if (geteuid() == 0) {
		mknod(at("cdev"), S_IFCHR | 0666, makedev(1, 3));
		mknod(at("wo"), S_IFCHR | 0600, makedev(0, 0));
	}
}

static void test_sweep(void)
{
	lay_out_users();
	struct kit *k = kit_with("name: t\nworkspace_writable: [open/.vscode]\n");
	struct arena a = {0};
	struct kit_ws_plan plan;
	struct ab_err err;
	ok(kit_workspace_plan(k, ws, false, &a, &plan, &err) == 0, "the plan");
	bool inner = false;
	for (size_t i = 0; i < plan.n; i++)
		inner |= streq(plan.v[i].rel, "lib/inner/.git") && plan.v[i].action == KIT_WS_READONLY;
	ok(inner, "a submodule of a listed submodule is protected as the submodule is");
	next_tick();
	struct kit_sweep s;
	kit_sweep_begin(&s, k, ws, &plan);
	ok(s.on && s.gitmodules && strstr(s.gitmodules, "\"lib\""), "begun, the top .gitmodules noted");
	box_writes();
	kit_sweep_end(&s, "kit-test");

	ok(!exists("new/.git/config") && !exists("new/.git/hooks") && exists("new/.git/HEAD"),
	   "a repository the box made: its config and hooks held back, its commits kept");
	ok(!exists("old2/.git/config") && exists("old2/.git/HEAD"), "a config the box changed held back");
	ok(exists("old/.git/config") && exists("old/.git/hooks/pre-commit"), "the user's nested repository untouched");
	ok(exists("lib/.git/config") && exists("lib/inner/.git/config"), "the submodules untouched");
	ok(!exists("gl/.git"), "a .git file below the top held back");
	ok(!exists("sub/.vscode") && exists("sub"), "editor settings below the top held back");
	ok(exists("keep/.vscode/settings.json"), "the user's own editor settings untouched");
	ok(!exists("deep/a/b/.envrc"), "an .envrc deep down held back");
	ok(!exists("ln/.envrc") && access("/etc/passwd", R_OK) == 0, "a symlink held back as a link, its target untouched");
	ok(exists("node_modules/p/.vscode/settings.json"), "a package's own settings in node_modules left");
	ok(exists("open/.vscode/tasks.json"), "settings below a path the kit opened left");
	const char *gm = slurp(".gitmodules");
	ok(gm && strstr(gm, "\"lib\"") && !strstr(gm, "evil"), "the top .gitmodules is as it was before the run");
	ok(!exists("sub2/.gitmodules"), "a .gitmodules below the top held back");
	ok(!exists("bare.git/config") && exists("bare.git/HEAD"), "a bare repository's config held back");
	ok(!exists("hp/myhooks") && exists("hp/.git/config"), "the core.hooksPath directory the box changed held back");
	ok(!exists("inc/shared.cfg") && exists("inc/.git/config"), "a file the config includes, changed, held back");
	ok(!exists("shared/config") && exists("wt/.git/commondir"), "the config a commondir sends git to, changed, held back");
	ok(exists("src/util.c") && exists("src/main.c"), "the project's code stays");
	struct stat st;
	ok(stat(at("s"), &st) == 0 && !(st.st_mode & 06000) && (st.st_mode & 0755) == 0755,
	   "set-id bits cleared, the rest of the mode kept (%o)", st.st_mode & 07777);
	ok(stat(at("legacy-suid"), &st) == 0 && (st.st_mode & 04000), "the user's own set-user-ID file is left");
	ok(!exists("f"), "a FIFO removed");
	if (geteuid() == 0) {
		ok(!exists("cdev"), "a device node removed");
		ok(exists("wo"), "the whiteout node (kit run's placeholder) left");
	}

	const char *gi = slurp(".agentbox-quarantine/.gitignore");
	ok(gi && streq(gi, "*\n"), "the quarantine directory is ignored by git");
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof cmd, "cat '%s'/.agentbox-quarantine/*-kit-test/MANIFEST", ws);
	FILE *p = popen(cmd, "r");
	char manifest[8192] = "";
	size_t n = p ? fread(manifest, 1, sizeof manifest - 1, p) : 0;
	manifest[n] = 0;
	if (p)
		pclose(p);
	has_substr(manifest, "\tnew/.git/config\tgit runs", "the list names where each came from and why");
	has_substr(manifest, "-hooks\tnew/.git/hooks\t", "... and where it is now");
	has_substr(manifest, "\t.gitmodules\tgit reads the submodules from it; the one from before the run is back",
		   "... and that the .gitmodules was put back");

	/* the next run: nothing new, and the quarantine is read-only to it */
	kit_free(k);
	arena_free(&a);
	k = kit_with("name: t\n");
	ok(kit_workspace_plan(k, ws, false, &a, &plan, &err) == 0, "the next run's plan");
	bool q_ro = false;
	for (size_t i = 0; i < plan.n; i++)
		q_ro |= streq(plan.v[i].rel, ".agentbox-quarantine") && plan.v[i].action == KIT_WS_READONLY;
	ok(q_ro, "the quarantine is read-only to the next box");
	next_tick();
	kit_sweep_begin(&s, k, ws, &plan);
	kit_sweep_end(&s, "kit-test2");
	snprintf(cmd, sizeof cmd, "ls -d '%s'/.agentbox-quarantine/*-kit-test2 2>/dev/null", ws);
	p = popen(cmd, "r");
	n = p ? fread(manifest, 1, sizeof manifest - 1, p) : 0;
	if (p)
		pclose(p);
	ok(n == 0, "a run that changed nothing holds nothing back");

	/* off: nothing */
	kit_free(k);
	k = kit_with("name: t\nworkspace_guard: off\n");
	kit_sweep_begin(&s, k, ws, &plan);
	ok(!s.on, "workspace_guard: off does not sweep");
	kit_free(k);
	arena_free(&a);
}

/* ---------------------------------------------------------------- pure parts */

static void test_names(void)
{
	ok(kit_guard_gitdir_member("config") == KIT_GUARD_RUN_FILE && kit_guard_gitdir_member("commondir") == KIT_GUARD_RUN_FILE &&
	   kit_guard_gitdir_member("config.worktree") == KIT_GUARD_RUN_FILE, "config, commondir, config.worktree");
	ok(kit_guard_gitdir_member("hooks") == KIT_GUARD_RUN_DIR, "hooks: any change in it");
	ok(kit_guard_gitdir_member("index") == KIT_GUARD_NOT_RUN && kit_guard_gitdir_member("objects") == KIT_GUARD_NOT_RUN,
	   "the index and objects are not run");
	ok(kit_guard_is_gitdir(true, true, true, false) && kit_guard_is_gitdir(true, false, false, true) &&
	   !kit_guard_is_gitdir(false, true, true, false) && !kit_guard_is_gitdir(true, true, false, false),
	   "a git directory: HEAD, and objects and refs or a commondir");
	ok(kit_guard_tool_at("a/b/.vscode", ".vscode") && kit_guard_tool_at("x/.envrc", ".envrc") &&
	   kit_guard_tool_at(".gitmodules", ".gitmodules") && kit_guard_tool_at("a/.mcp.json", ".mcp.json"),
	   "tools' names at any depth");
	ok(!kit_guard_tool_at("node_modules/p/.vscode", ".vscode") && !kit_guard_tool_at("a/node_modules/.envrc", ".envrc") &&
	   kit_guard_tool_at("my_node_modules/.envrc", ".envrc"), "not inside node_modules");
	ok(!kit_guard_tool_at("a/.bashrc", ".bashrc") && !kit_guard_tool_at("a/Makefile", "Makefile"),
	   "a home's files and the project's code are not tools' settings");
	ok(kit_workspace_default_name("sub/.vscode") && kit_workspace_default_name("vendor/lib/.git") &&
	   kit_workspace_default_name("a/.gitmodules") && !kit_workspace_default_name("sub/x"),
	   "workspace_writable may open what the end of a run holds back below the top");
}

static void test_paths(void)
{
	struct arena a = {0};
	const char *r = kit_guard_in_workspace(&a, "/w", "sub", "../x/y");
	is_str(r, "x/y", "relative to the base");
	r = kit_guard_in_workspace(&a, "/w", "", "/w/a/./b");
	is_str(r, "a/b", "absolute inside");
	ok(!kit_guard_in_workspace(&a, "/w", "sub", "../../etc") && !kit_guard_in_workspace(&a, "/w", "", "/wx/a") &&
	   !kit_guard_in_workspace(&a, "/w", "", "~/x") && !kit_guard_in_workspace(&a, "/w", "", "/w"),
	   "outside, the home, the top itself: none");
	arena_free(&a);
}

static void test_scope(void)
{
	struct kit *k = kit_with("name: t\nworkspace_writable: [.vscode, sub/.claude]\n");
	struct kit_ws_entry e[] = {
		{.rel = ".git/hooks", .action = KIT_WS_READONLY},
		{.rel = ".git", .action = KIT_WS_PIN},
		{.rel = ".envrc", .action = KIT_WS_READONLY},
	};
	struct kit_ws_plan plan = {.v = e, .n = ARRAY_SIZE(e)};
	struct arena a = {0};
	struct kit_guard_marks m, below;
	kit_guard_marks_make(k, &plan, &a, &m);
	ok(kit_guard_scope_of(&m, ".git/hooks", KIT_GUARD_ALL) == KIT_GUARD_NONE, "a read-only entry: nothing to judge");
	ok(kit_guard_scope_of(&m, ".git", KIT_GUARD_ALL) == KIT_GUARD_ALL, "a pinned one: all");
	ok(kit_guard_scope_of(&m, "sub/.claude", KIT_GUARD_ALL) == KIT_GUARD_PRIVS, "an opened one: privileges only");
	ok(kit_guard_scope_of(&m, "x", KIT_GUARD_PRIVS) == KIT_GUARD_PRIVS, "inherited");
	kit_guard_marks_below(&m, ".git", &a, &below);
	ok(below.n == 1 && streq(below.rel[0], ".git/hooks"), "the marks below a directory");
	kit_guard_marks_below(&m, "src", &a, &below);
	ok(below.n == 0, "none below an unmarked one");
	kit_free(k);
	arena_free(&a);
}

static void test_summary(void)
{
	struct kit_guard_report r = {0};
	ok(kit_guard_summary(&r, "/w", 3) == NULL, "nothing to tell: no text");
	r.qdir = arena_strdup(&r.a, ".agentbox-quarantine/RUN");
	kit_guard_add(&r, KIT_GUARD_GIT, "sub/.git/config", ".agentbox-quarantine/RUN/1-config");
	kit_guard_add(&r, KIT_GUARD_SETID, "bin/x", NULL);
	kit_guard_add(&r, KIT_GUARD_STUCK, "y/.envrc", "Permission denied");
	kit_guard_add(&r, KIT_GUARD_FIFO, "f1", NULL);
	kit_guard_add(&r, KIT_GUARD_FIFO, "f2", NULL);
	char *t = kit_guard_summary(&r, "/w", 3);
	has_substr(t, "the box left 5 things in the workspace /w", "the heading counts them");
	has_substr(t, "\n  quarantined sub/.git/config as 1-config (git runs", "one line per item");
	has_substr(t, "\n  bin/x: set-user-ID or set-group-ID bits cleared\n", "what was cleared");
	has_substr(t, "\n  could NOT hold back y/.envrc: Permission denied\n", "what could not be held back");
	has_substr(t, "\n  and 2 more\n", "at most max lines, then how many more");
	has_substr(t, "quarantined in /w/.agentbox-quarantine/RUN (all of it listed in MANIFEST there): look with ls -la and cat",
		   "where, and how to look");
	ok(!strstr(t, "f1"), "the lines past the max are not shown");
	free(t);
	t = kit_guard_manifest(&r);
	has_substr(t, ".agentbox-quarantine/RUN/1-config\tsub/.git/config\tgit runs", "the list: where now, where from, why");
	has_substr(t, "-\tf2\tFIFO removed\n", "all of them");
	free(t);
	kit_guard_report_free(&r);
}

/* workspace_guard: parsed strictly, shown back, and what the bundle gets */
static void test_field(void)
{
	struct kit *k = NULL;
	struct ab_err err;
	const char *bad = "name: t\nworkspace_guard: maybe\n";
	ok(kit_parse(bad, strlen(bad), "/k.yaml", &k, &err) < 0, "workspace_guard: an unknown value is refused");
	has_substr(err.msg, "k.yaml:2:18: workspace_guard: \"maybe\": give quarantine or off", "... naming where and what");
	k = kit_with("name: t\nworkspace_guard: off\n");
	ok(k->ws_guard == KIT_WS_GUARD_OFF, "off");
	char *text = NULL;
	ok(kit_show(k, NULL, &text, &err) == 0 && strstr(text, "\nworkspace_guard: off\n") && strstr(text, "#   workspace guard: off"),
	   "kit show says off");
	free(text);
	struct kit_build_opts o = {.bundle = "/b", .root_path = "/merged"};
	char *json = NULL;
	ok(kit_config_json(k, &o, &json, &err) == 0 && !strstr(json, "agentbox.seccomp.file-privileges"),
	   "off: no file-privileges guard in the bundle");
	free(json);
	kit_free(k);
	k = kit_with("name: t\n");
	ok(k->ws_guard == KIT_WS_GUARD_QUARANTINE, "the default is quarantine");
	ok(kit_show(k, NULL, &text, &err) == 0 && !strstr(text, "\nworkspace_guard:") && strstr(text, "#   workspace guard: quarantine"),
	   "kit show: the default in the comment only");
	free(text);
	ok(kit_config_json(k, &o, &json, &err) == 0 && strstr(json, "\"agentbox.seccomp.file-privileges\": \"refuse\""),
	   "the bundle asks for the file-privileges guard");
	free(json);
	kit_free(k);
	enum kit_ws_guard g;
	ok(kit_ws_guard_parse("quarantine", &g) == 0 && g == KIT_WS_GUARD_QUARANTINE && kit_ws_guard_parse("Off", &g) < 0 &&
	   streq(kit_ws_guard_name(KIT_WS_GUARD_OFF), "off"), "the values, by name");
}

int main(void)
{
	snprintf(ws, sizeof ws, "/tmp/ab-sweep.XXXXXX");
	if (!mkdtemp(ws))
		return 2;
	test_names();
	test_paths();
	test_scope();
	test_summary();
	test_field();
	test_sweep();
	char cmd[2 * PATH_MAX + 32];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.kit.yaml'", ws, ws);
	if (system(cmd) != 0)
		return 2;
	return tap_done();
}
