/* Unit tests for the workspace's protections (oci/kit/kit_workspace.c,
 * oci/kit/kit_git.c), the refusals' pure parts, the kit fields that steer them,
 * the config.json they become, and the names of named boxes
 * (runtime/kit/kit_box.c). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "kit.h"
#include "kit_box.h"
#include "kit_git.h"
#include "kit_workspace.h"
#include "tap.h"

static char tmpdir[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	if (mkdir(path, 0755) < 0) {
		perror(path);
		exit(2);
	}
}

static struct kit *parse(const char *text, struct ab_err *err)
{
	struct kit *k = NULL;
	char file[PATH_MAX + 16];
	snprintf(file, sizeof file, "%s/kit.yaml", tmpdir);
	ab_err_clear(err);
	if (kit_parse(text, strlen(text), file, &k, err) < 0)
		return NULL;
	return k;
}

/* ---------------------------------------------------------------- paths, names */

static void test_rel_paths(void)
{
	char buf[PATH_MAX];
	const char *why = NULL;
	ok(kit_workspace_rel_path("a//b/./c/", buf, sizeof buf, &why) < 0, "rel path: \".\" refused");
	ok(kit_workspace_rel_path("a//b/c/", buf, sizeof buf, &why) == 0 && streq(buf, "a/b/c"), "rel path: normalised (%s)", buf);
	ok(kit_workspace_rel_path("/etc", buf, sizeof buf, &why) < 0 && strstr(why, "absolute"), "rel path: absolute refused");
	ok(kit_workspace_rel_path("a/../b", buf, sizeof buf, &why) < 0, "rel path: \"..\" refused");
	ok(kit_workspace_rel_path("", buf, sizeof buf, &why) < 0, "rel path: empty refused");
	ok(kit_workspace_rel_path("a\nb", buf, sizeof buf, &why) < 0 && strstr(why, "control"), "rel path: a newline refused");
	ok(kit_workspace_rel_path(".git/hooks", buf, 8, &why) < 0, "rel path: too long for the buffer");

	ok(kit_workspace_default_name(".git"), "default names: .git");
	ok(kit_workspace_default_name(".git/hooks"), "default names: .git/hooks");
	ok(kit_workspace_default_name(".vscode"), "default names: .vscode");
	ok(kit_workspace_default_name(".config"), "default names: .config (above .config/git)");
	ok(!kit_workspace_default_name(".git/objects"), "default names: not .git/objects");
	ok(!kit_workspace_default_name("src"), "default names: not src");
	ok(!kit_workspace_default_name(".vscode/tasks.json"), "default names: not below one");

	ok(kit_box_name_valid("abkt-box_1.2"), "box names: letters, digits, - _ .");
	ok(!kit_box_name_valid(".hidden") && !kit_box_name_valid("-x") && !kit_box_name_valid(""), "box names: start");
	ok(!kit_box_name_valid("a/b") && !kit_box_name_valid("a b") && !kit_box_name_valid("a:b"), "box names: no / space :");
	char long_name[80];
	memset(long_name, 'x', 64);
	long_name[64] = 0;
	ok(!kit_box_name_valid(long_name), "box names: at most 63");
	long_name[63] = 0;
	ok(kit_box_name_valid(long_name), "box names: 63 is fine");
}

/* ---------------------------------------------------------------- git's files */

struct seen {
	char text[2048];
};

static void record(const char *section, const char *sub, const char *key, const char *value, void *data)
{
	struct seen *s = data;
	size_t n = strlen(s->text);
	snprintf(s->text + n, sizeof s->text - n, "%s|%s|%s=%s;", section, sub ? sub : "-", key, value ? value : "(none)");
}

static void config_is(const char *text, const char *want, const char *what)
{
	struct seen s = {""};
	kit_git_config_each(text, strlen(text), record, &s);
	is_str(s.text, want, "git config: %s", what);
}

static void test_git_config(void)
{
	config_is("[core]\n\thooksPath = .githooks\n", "core|-|hookspath=.githooks;", "a key, lower-cased");
	config_is("[Core] HooksPath=x # comment\n", "core|-|hookspath=x;", "section case, a comment after");
	config_is("[includeIf \"gitdir:/a/\"]\n  path = \"../p q.cfg\" ; c\n", "includeif|gitdir:/a/|path=../p q.cfg;",
		  "a quoted subsection and value");
	config_is("[submodule.lib]\npath = vendor/lib\n", "submodule|lib|path=vendor/lib;", "the old [a.b] form");
	config_is("[core] bare\n[core] fsmonitor = \"touch x\\\"; false\"\n",
		  "core|-|bare=(none);core|-|fsmonitor=touch x\"; false;", "a key alone; an escaped quote");
	config_is("[a]\nk = one \\\n two\n", "a|-|k=one  two;", "a continued line");
	config_is("[a]\nk = \"a#b\"\n", "a|-|k=a#b;", "# inside quotes");
	config_is("k = before any section\n[a]\nk = v\n", "", "a key before any section: git stops there");
	config_is("[a\nk = v\n", "", "a broken header: git stops there");
	config_is("[a]\r\nk = v\r\n", "a|-|k=v;", "CRLF");

	struct arena a = {0};
	put("cfg", "[core]\n\thooksPath = one\n[include]\n\tpath = x.cfg\n[core]\n\thooksPath = two\n"
		   "[includeIf \"onbranch:main\"]\n\tpath = /abs.cfg\n");
	int dfd = open(tmpdir, O_PATH | O_DIRECTORY);
	struct kit_git_config_refs r;
	kit_git_config_refs(dfd, "cfg", &a, &r);
	ok(r.hooks_path && streq(r.hooks_path, "two"), "git config refs: the last hooksPath wins");
	ok(r.n_includes == 2 && streq(r.includes[0], "x.cfg") && streq(r.includes[1], "/abs.cfg"), "git config refs: includes");
	kit_git_config_refs(dfd, "missing", &a, &r);
	ok(!r.hooks_path && !r.n_includes, "git config refs: a missing file has none");

	put("gitfile", "gitdir: ../modules/x\n");
	const char *t = kit_gitfile_target(dfd, "gitfile", &a);
	ok(t && streq(t, "../modules/x"), "gitfile: its target");
	put("gitfile2", " gitdir: x\n");
	ok(!kit_gitfile_target(dfd, "gitfile2", &a), "gitfile: git wants \"gitdir: \" at the start");
	put("gmods", "[submodule \"a\"]\n\tpath = vendor/a\n\turl = x\n[submodule \"b\"]\n\tpath = b\n[other]\n\tpath = no\n");
	char **mods;
	size_t n = kit_gitmodules_paths(dfd, "gmods", &a, &mods);
	ok(n == 2 && streq(mods[0], "vendor/a") && streq(mods[1], "b"), "gitmodules: submodule paths only");
	char link[PATH_MAX + 16];
	snprintf(link, sizeof link, "%s/cfg-link", tmpdir);
	(void)symlink("cfg", link);
	kit_git_config_refs(dfd, "cfg-link", &a, &r);
	ok(!r.hooks_path, "git config refs: a symlink is not followed");
	close(dfd);
	arena_free(&a);
}

/* ---------------------------------------------------------------- the fields */

static void test_fields(void)
{
	struct ab_err err;
	struct kit *k = parse("workspace_protect: [Makefile, \"deploy//prod.yaml/\"]\n"
			      "workspace_writable: [.vscode, .git/hooks]\nworkspace_allow_sensitive: true\n", &err);
	ok(k != NULL, "fields: the workspace ones parse (%s)", k ? "" : err.msg);
	if (k) {
		ok(k->n_ws_protect == 2 && streq(k->ws_protect[1], "deploy/prod.yaml"), "fields: protect normalised");
		ok(k->n_ws_writable == 2 && streq(k->ws_writable[1], ".git/hooks"), "fields: writable");
		ok(k->ws_allow_sensitive, "fields: allow_sensitive");
		char *text = NULL;
		ok(kit_show(k, NULL, &text, &err) == 0, "fields: kit show");
		has_substr(text, "workspace_protect:\n- Makefile\n- deploy/prod.yaml\n", "show: protect");
		has_substr(text, "workspace_allow_sensitive: true\n", "show: allow_sensitive");
		has_substr(text, "and Makefile, deploy/prod.yaml; opened: .vscode, .git/hooks; a home directory", "show: the comment");
		free(text);
		kit_free(k);
	}
	k = parse("workspace_writable: [src]\n", &err);
	ok(!k, "fields: writable must name a default protection");
	has_substr(err.msg, "kit.yaml:1:22: workspace_writable[0]: \"src\" is not protected by default", "fields: its message");
	k = parse("workspace_protect: [a, a/]\n", &err);
	ok(!k, "fields: a path twice");
	has_substr(err.msg, "workspace_protect[1]: a is listed twice", "fields: twice message");
	k = parse("workspace_protect: a\n", &err);
	ok(!k, "fields: protect is a list");
	k = parse("security: {readonly_rootfs: true}\n", &err);
	ok(k && k->readonly_rootfs_set, "fields: readonly_rootfs set explicitly is known");
	kit_free(k);
	k = parse("name: x\n", &err);
	ok(k && !k->readonly_rootfs_set && k->readonly_rootfs, "fields: readonly_rootfs by default");
	kit_free(k);
}

/* ---------------------------------------------------------------- the plan */

static const struct kit_ws_entry *find(const struct kit_ws_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++)
		if (streq(p->v[i].rel, rel))
			return &p->v[i];
	return NULL;
}

static void test_plan(void)
{
	struct ab_err err;
	struct arena a = {0};
	char ws[PATH_MAX + 16];
	snprintf(ws, sizeof ws, "%s/ws", tmpdir);
	mk("ws");
	mk("ws/.git");
	mk("ws/.git/hooks");
	put("ws/.git/config", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../shared.cfg\n\tpath = /etc/gitconfig\n");
	put("ws/shared.cfg", "");
	mk("ws/.vscode");
	put("ws/.bashrc", "");
	put("ws/.gitmodules", "[submodule \"x\"]\n\tpath = sub\n[submodule \"out\"]\n\tpath = ../../etc\n");
	mk("ws/sub");
	put("ws/sub/.git", "gitdir: ../.git/modules/x\n");
	struct kit *k = parse("workspace_protect: [deploy/prod.yaml]\nworkspace_writable: [.idea]\n", &err);
	struct kit_ws_plan p;
	ok(k && kit_workspace_plan(k, ws, true, &a, &p, &err) == 0, "plan: made (%s)", err.msg);
	const struct kit_ws_entry *e;
	ok((e = find(&p, ".git")) && e->action == KIT_WS_PIN && !e->absent, "plan: .git pinned");
	ok((e = find(&p, ".git/hooks")) && e->action == KIT_WS_READONLY && e->dir && !e->absent, "plan: hooks read-only");
	ok((e = find(&p, ".git/config")) && e->action == KIT_WS_READONLY && !e->dir, "plan: config read-only");
	ok((e = find(&p, ".git/commondir")) && e->absent && !e->dir && streq(e->content, ".\n"),
	   "plan: commondir's placeholder is a file holding \".\"");
	ok((e = find(&p, ".git/modules")) && e->absent && e->dir, "plan: modules' placeholder is a directory");
	ok(!find(&p, ".git/worktrees") && !find(&p, ".git/config.worktree"), "plan: absent worktrees, config.worktree: none");
	ok((e = find(&p, ".githooks")) && e->absent && e->dir && streq(e->name, ".git/hooks"), "plan: core.hooksPath");
	ok((e = find(&p, "shared.cfg")) && !e->absent && streq(e->name, ".git/config"), "plan: an include in the workspace");
	ok((e = find(&p, "sub/.git")) && !e->absent && !e->dir, "plan: a submodule's .git file");
	ok((e = find(&p, "sub")) && e->action == KIT_WS_PIN, "plan: its directory pinned");
	ok((e = find(&p, ".envrc")) && e->absent && e->dir, "plan: .envrc's placeholder");
	ok((e = find(&p, ".vscode")) && !e->absent && e->action == KIT_WS_READONLY, "plan: .vscode read-only");
	ok(!find(&p, ".idea"), "plan: .idea opened");
	ok((e = find(&p, ".bashrc")) && !e->absent, "plan: an existing .bashrc read-only");
	ok(!find(&p, ".profile"), "plan: no placeholder for .profile outside a home");
	ok((e = find(&p, "deploy")) && e->action == KIT_WS_PIN && e->absent, "plan: a missing parent, pinned and made");
	ok((e = find(&p, "deploy/prod.yaml")) && e->absent, "plan: the protected path");
	bool ordered = true;
	for (size_t i = 1; i < p.n; i++)
		ordered &= strcmp(p.v[i - 1].rel, p.v[i].rel) < 0;
	ok(ordered, "plan: sorted, parents first");
	bool none_outside = true;
	for (size_t i = 0; i < p.n; i++)
		none_outside &= p.v[i].rel[0] != '/' && strncmp(p.v[i].rel, "..", 2) != 0 && !strstr(p.v[i].rel, "etc");
	ok(none_outside, "plan: nothing outside the workspace (.gitmodules' ../../etc, an absolute include)");

	/* kit build's: what exists only */
	struct kit_ws_plan q;
	ok(kit_workspace_plan(k, ws, false, &a, &q, &err) == 0 && !find(&q, ".envrc") && !find(&q, ".git/commondir") &&
	   find(&q, ".git/hooks"), "plan: without placeholders, the existing entries");

	/* symlinks are refused */
	char link[PATH_MAX + 64];
	snprintf(link, sizeof link, "%s/.envrc", ws);
	(void)symlink("/etc/passwd", link);
	ok(kit_workspace_plan(k, ws, true, &a, &q, &err) < 0, "plan: a protected symlink is refused");
	has_substr(err.msg, ": .envrc is a symlink: a box could replace it", "plan: its message");
	unlink(link);

	/* config.json: the binds after the workspace, id-mapped or not */
	struct kit_build_opts o = {.bundle = tmpdir, .workspace = ws, .root_path = "/merged", .ws_plan = &p};
	char *json = NULL;
	ok(kit_config_json(k, &o, &json, &err) == 0, "config: made");
	yajl_val v;
	ok(json_parse(json, "t", &v, &err) == 0, "config: parses");
	yajl_val mounts = json_get(v, "mounts");
	int at_ws = -1, at_git = -1, at_hooks = -1;
	for (size_t i = 0; YAJL_IS_ARRAY(mounts) && i < mounts->u.array.len; i++) {
		const char *d = YAJL_GET_STRING(json_get(mounts->u.array.values[i], "destination"));
		if (!d)
			continue;
		if (streq(d, "/workspace")) at_ws = (int)i;
		if (streq(d, "/workspace/.git")) at_git = (int)i;
		if (streq(d, "/workspace/.git/hooks")) at_hooks = (int)i;
	}
	ok(at_ws >= 0 && at_ws < at_git && at_git < at_hooks, "config: workspace, then .git, then .git/hooks");
	const char *src = at_hooks >= 0 ? YAJL_GET_STRING(json_get(mounts->u.array.values[at_hooks], "source")) : NULL;
	ok(src && streq(src, arena_printf(&a, "%s/.git/hooks", ws)), "config: sources on the host when not id-mapped");
	json_free(v);
	free(json);
	o.ws_idmap = true;
	o.ws_owner_uid = 0;
	o.ws_owner_gid = 0;
	uint32_t uid = 1000, gid = 1000;
	o.uid = &uid;
	o.gid = &gid;
	ok(kit_config_json(k, &o, &json, &err) == 0, "config: id-mapped made");
	has_substr(json, "\"uidMappings\": [\n        {\n          \"containerID\": 0,\n          \"hostID\": 1000,\n          \"size\": 1",
		   "config: the owner's uid shows as the user's");
	has_substr(json, "\"source\": \"/merged/workspace/.git/hooks\"", "config: protections from the mapped workspace");
	has_substr(json, "\"idmap\"", "config: the idmap option");
	free(json);
	kit_free(k);
	arena_free(&a);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_kit_workspace.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	test_rel_paths();
	test_git_config();
	test_fields();
	test_plan();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return tap_done();
}
