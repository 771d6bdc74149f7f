#!/usr/bin/env bats
# Code the host runs from below the workspace's top (issue 34, class 2):
# the top's git metadata and editors' settings are read-only to a box, but
# the index is writable (the agent commits). So a box makes a repository
# below the top whose config sets core.fsmonitor, records it in the top's
# index as a gitlink and commits: the user's next `git status`, `git diff`
# or `git commit -a` at the top runs its program, as the user. The same with
# a .git file naming a git directory elsewhere, a repository git does not
# know of (the user's git in that directory runs it), the top's
# config.worktree, a submodule of a submodule, and the settings editors,
# agents and direnv run when a folder below the top is opened.
#
# Each attack is first shown working with the guard off (kit run
# --workspace-guard off: what kit run did before), then held back by the
# guard: after every box, the host's own git (status, diff, commit -a, and
# git in the directories the box made) and a stand-in for direnv (which
# sources .envrc) run in the workspace, and must not run what the box left
# (a marker file under $TEST_DIR). The workspace is root's, as a CI
# checkout; the host's git is root's. No network.

load helpers
load ../integration/kit_helpers

setup() {
	requires root agentbox
	command -v git >/dev/null || skip "needs git"
	setup_state_only
	WS=$TEST_DIR/ws
	MARK=$TEST_DIR/ran
	mkdir -p "$WS"
	export AGENTBOX_BOXES=$TEST_DIR/boxes
	kit_setup_common
}

teardown() {
	teardown_bundle
}

# host_git ARGS...: the host user's git in the workspace (no config of its own).
host_git() {
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		git -c user.email=user@host -c user.name=user -c protocol.file.allow=always -C "$WS" "$@"
}

# a repository with one commit, as the user left it before the agent came
make_repo() {
	rm -rf "$WS"
	mkdir -p "$WS"
	echo code >"$WS/main.c"
	host_git init -q
	host_git add main.c
	host_git commit -qm "before the agent"
}

# box GUARD SCRIPT [KIT]: kit run on the workspace (GUARD: quarantine or
# off), SCRIPT under sh with a git identity and mark NAME (a command that
# makes the marker NAME, and fails).
box() {
	local kitfile=()
	[ -z "${3:-}" ] || kitfile=("$3")
	runtime kit run --workspace-guard "$1" --workspace "$WS" "${kitfile[@]}" -- sh -c "
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
mark() { echo \"touch $MARK.\$1; false\"; }
$2"
	assert_success
	assert_kit_run_clean
}

# What the user does next in the workspace: git at the top (status, diff,
# commit -a), git in each directory given, and direnv's part in each (it
# sources an .envrc it was allowed to).
host_tools() {
	host_git status >/dev/null 2>&1 || true
	host_git diff >/dev/null 2>&1 || true
	host_git commit -qam "the user's next commit" >/dev/null 2>&1 || true
	local d
	for d in "$@"; do
		git -C "$WS/$d" status >/dev/null 2>&1 || true
		[ ! -f "$WS/$d/.envrc" ] || (cd "$WS/$d" && . ./.envrc) >/dev/null 2>&1 || true
	done
}

# ran: the markers made, by name
ran() {
	(cd "$TEST_DIR" && ls -1 ran.* 2>/dev/null | sed 's/^ran\.//' | tr '\n' ' ')
}

NESTED='set -e
# a repository below the top, recorded as a gitlink and committed
mkdir sub && cd sub && git init -q && echo s >s && git add s && git commit -qm s
git config core.fsmonitor "$(mark gitlink)"
cd .. && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub
# the same through a .git file naming a git directory of any name
mkdir gsub && cd gsub && git init -q --separate-git-dir=../.hidden && echo "gitdir: ../.hidden" >.git
echo g >g && git add g && git commit -qm g
git config core.fsmonitor "$(mark gitfile)"
cd .. && git update-index --add --cacheinfo 160000,$(git -C gsub rev-parse HEAD),gsub
# git submodule add in place (it writes .gitmodules; the read-only config stops it after)
mkdir sm && cd sm && git init -q && echo m >m && git add m && git commit -qm m
git config core.fsmonitor "$(mark submodule-add)"
cd .. && { git -c protocol.file.allow=always submodule add ./sm sm >/dev/null 2>&1 || true; }
git commit -qm "the agent adds repositories"
# a repository no index knows: the user runs git in it
mkdir sub2 && git -C sub2 init -q && git -C sub2 config core.fsmonitor "$(mark untracked)"
# the top repository'"'"'s config.worktree (the user'"'"'s config reads it)
printf "[core]\n\tfsmonitor = \"%s\"\n" "$(mark config.worktree)" >.git/config.worktree'

@test "workspace: repositories the box makes below the top run their config at the host's git status, diff and commit -a, unless quarantined" {
	make_repo
	host_git config extensions.worktreeConfig true
	box off "$NESTED"
	host_tools sub2
	[ "$(ran)" = "config.worktree gitfile gitlink submodule-add untracked " ] ||
		unprotected_failed "host git ran only: $(ran)"
	rm -f "$MARK".*
	host_git diff >/dev/null 2>&1 || true
	[ -e "$MARK.gitlink" ] || unprotected_failed "git diff did not run it"

	rm -f "$MARK".*
	make_repo
	host_git config extensions.worktreeConfig true
	box quarantine "$NESTED"
	host_tools sub2 sub gsub sm
	[ -z "$(ran)" ] || fail "the host's git ran the box's program: $(ran)"
	# the box's work is kept: its commits, the repositories' contents
	host_git log --format=%s | grep -qx "the agent adds repositories" || fail "the box's commit is gone"
	[ "$(git -C "$WS/sub" log --format=%s)" = s ] || fail "the nested repository's commit is gone"
	local q
	q=$(ls -d "$WS"/.agentbox-quarantine/*-kit-*)
	for f in sub/.git/config gsub/.git .hidden/config sm/.git/config sub2/.git/config .git/config.worktree .gitmodules; do
		grep -q "	$f	" "$q/MANIFEST" || fail "$f is not in the quarantine's list: $(cat "$q/MANIFEST")"
		[[ "$stderr" == *"quarantined $f as "* || "$stderr" == *"and "*" more"* ]] || fail "$f not reported: $stderr"
	done
	[[ "$stderr" == *"quarantined in $WS/.agentbox-quarantine/"*"look with ls -la and cat"* ]] || fail "not told where: $stderr"
	# the quarantine is no repository and no worktree content to the host's git
	[ -z "$(host_git status --porcelain --ignored=no | grep agentbox-quarantine)" ] || fail "git lists the quarantine"
}

@test "workspace: editors', agents' and direnv's settings the box writes below the top are held back; a package's own in node_modules are not" {
	local plant='for d in sub a/b/c; do mkdir -p $d && cd $d
echo "touch '"$MARK"'.envrc-$(basename $d)" >.envrc
mkdir -p .vscode .claude .cursor .idea .devcontainer
echo "{\"tasks\":[{\"command\":\"touch x\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}" >.vscode/tasks.json
echo "{\"hooks\":{}}" >.claude/settings.json
echo "{\"mcpServers\":{}}" >.mcp.json
echo x >.cursor/rules; echo "<project/>" >.idea/workspace.xml
echo "{\"initializeCommand\":\"touch x\"}" >.devcontainer/devcontainer.json
echo "((nil . ((eval . (shell-command \"touch x\")))))" >.dir-locals.el
echo "os.execute(\"touch x\")" >.nvim.lua
cd /workspace; done
mkdir -p node_modules/pkg/.vscode && echo "{}" >node_modules/pkg/.vscode/settings.json'
	local names=".envrc .vscode/tasks.json .claude/settings.json .mcp.json .cursor/rules .idea/workspace.xml
		.devcontainer/devcontainer.json .dir-locals.el .nvim.lua"
	make_repo
	box off "$plant"
	host_tools sub a/b/c
	[ "$(ran)" = "envrc-c envrc-sub " ] || unprotected_failed "direnv's stand-in ran: $(ran)"
	local f
	for f in $names; do
		[ -f "$WS/sub/$f" ] && [ -f "$WS/a/b/c/$f" ] || unprotected_failed "$f was not written below the top"
	done

	rm -f "$MARK".*
	make_repo
	box quarantine "$plant"
	host_tools sub a/b/c
	[ -z "$(ran)" ] || fail "the host ran the box's .envrc: $(ran)"
	for f in $names; do
		[ ! -e "$WS/sub/$f" ] && [ ! -e "$WS/a/b/c/$f" ] || fail "$f is still below the top"
	done
	[ -f "$WS/node_modules/pkg/.vscode/settings.json" ] || fail "a package's own settings were taken"
	grep -q "	a/b/c/.vscode	editors, agents or direnv run it" "$WS"/.agentbox-quarantine/*/MANIFEST ||
		fail "not in the list: $(cat "$WS"/.agentbox-quarantine/*/MANIFEST)"
	[[ "$stderr" == *"and 8 more"* ]] || fail "not at most 10 lines: $stderr"
}

@test "workspace: a submodule of a submodule is read-only to the box as the submodule is; a .gitmodules it changes is put back" {
	make_repo
	(
		set -e
		src=$TEST_DIR/src
		mkdir -p "$src/inner" "$src/lib"
		cd "$src/inner" && git init -q && echo i >i && git add i && git -c user.name=u -c user.email=u@h commit -qm i
		cd "$src/lib" && git init -q && echo l >l && git add l &&
			git -c protocol.file.allow=always submodule -q add "$src/inner" inner &&
			git -c user.name=u -c user.email=u@h commit -qm l
		cd "$WS" && git -c protocol.file.allow=always submodule -q add "$src/lib" lib &&
			git -c protocol.file.allow=always submodule -q update --init --recursive &&
			git -c user.name=u -c user.email=u@h commit -qm lib
	) >/dev/null 2>&1 || fail "could not lay out the submodules"
	[ -e "$WS/lib/inner/.git" ] || fail "no nested submodule"
	local gitmodules plant
	plant='git -C lib/inner config core.fsmonitor "$(mark nested-submodule)" 2>&1 | tail -1
printf "[submodule \"x\"]\n\tpath = x\n\turl = ../x\n" >>.gitmodules'
	printf 'name: open\nworkspace_writable: [.git]\n' >"$TEST_DIR/open.yaml"
	box off "$plant" "$TEST_DIR/open.yaml"
	host_tools
	[ -e "$MARK.nested-submodule" ] || unprotected_failed "the nested submodule's config did not run"

	rm -f "$MARK".*
	git -C "$WS/lib/inner" config --unset core.fsmonitor
	gitmodules=$(cat "$WS/.gitmodules")
	box quarantine "$plant"
	[[ "$output" == *"could not"* ]] || fail "the box could write the nested submodule's config: $output"
	host_tools
	[ -z "$(ran)" ] || fail "the host ran the box's program: $(ran)"
	[ "$(cat "$WS/.gitmodules")" = "$gitmodules" ] || fail ".gitmodules was not put back: $(cat "$WS/.gitmodules")"
	[[ "$stderr" == *"quarantined .gitmodules as "*"the one from before the run is back in its place"* ]] ||
		fail "not said: $stderr"
}

@test "workspace: the user's own nested repositories keep their config and hooks; ordinary work is held back nowhere" {
	make_repo
	mkdir -p "$WS/vendor/lib"
	(
		cd "$WS/vendor/lib" && git init -q && echo v >v && git add v && git -c user.name=u -c user.email=u@h commit -qm v &&
			git remote add origin https://example.invalid/lib.git &&
			printf '#!/bin/sh\ntouch %s.userhook 2>/dev/null\nexit 0\n' "$MARK" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
	) || fail "could not lay out the nested repository"
	printf 'node_modules/\n' >"$WS/.gitignore"
	box quarantine 'echo more >>main.c && git commit -qam "the agent edits"
git -C vendor/lib commit -q --allow-empty -m "the agent in the nested repository"
mkdir -p node_modules/pkg/.vscode src && echo "{}" >node_modules/pkg/.vscode/settings.json && echo x >src/new.c
echo "*.o" >>.gitignore'
	[[ "$stderr" != *"held back"* ]] || fail "ordinary work was held back: $stderr"
	[ ! -e "$WS/.agentbox-quarantine" ] || fail "a quarantine for ordinary work"
	[ "$(git -C "$WS/vendor/lib" remote get-url origin)" = https://example.invalid/lib.git ] || fail "the config was taken"
	git -C "$WS/vendor/lib" log --format=%s | grep -q "the agent in the nested repository" || fail "the box's commit is gone"
	rm -f "$MARK".*
	git -C "$WS/vendor/lib" -c user.name=u -c user.email=u@h commit -q --allow-empty -m "the user's"
	[ -e "$MARK.userhook" ] || fail "the user's own hook no longer runs"
	host_git log --format=%s | grep -qx "the agent edits" || fail "the box's commit is gone"
}

@test "workspace: a named box and its fork are guarded as a one-off run is" {
	local plant='cp /bin/sh x; chmod 4755 x || echo refused; mkdir -p d && echo "touch '"$MARK"'.named" >d/.envrc'
	runtime kit run --name abguard --workspace "$WS" -- sh -c "$plant"
	assert_success
	[[ "$output" == *refused* ]] || fail "a named box could chmod 4755: $output"
	[ ! -u "$WS/x" ] && [ ! -e "$WS/d/.envrc" ] || fail "a named box left them: $(ls -la "$WS" "$WS/d")"
	rm -rf "$WS/x" "$WS/d"
	runtime kit fork abguard abguard-fork
	assert_success
	runtime kit run --name abguard-fork --workspace "$WS" -- sh -c "$plant"
	assert_success
	[[ "$output" == *refused* ]] || fail "a fork could chmod 4755: $output"
	[ ! -u "$WS/x" ] && [ ! -e "$WS/d/.envrc" ] || fail "a fork left them"
	runtime kit rm abguard abguard-fork
	assert_success
	assert_kit_run_clean
}

@test "workspace: a kit run killed with SIGKILL before its end: the next run on the workspace holds back what that box left" {
	make_repo
	"$RUNTIME" --root "$ROOT" kit run --workspace "$WS" -- \
		sh -c 'mkdir -p sub && echo "touch '"$MARK"'.killed" >sub/.envrc && touch ready && sleep 60' \
		>"$TEST_DIR/killed.out" 2>&1 3>&- &
	local pid=$!
	defer kill -KILL "$pid"
	wait_for_path "$WS/ready"
	kill -KILL "$pid"
	wait "$pid" || true
	host_tools sub
	[ -e "$MARK.killed" ] || unprotected_failed "the killed box's .envrc did not run"
	rm -f "$MARK".* "$WS/ready"
	runtime kit run --workspace "$WS" -- true
	assert_success
	host_tools sub
	[ -z "$(ran)" ] || fail "the host ran the killed box's .envrc: $(ran)"
	[[ "$stderr" == *"quarantined sub/.envrc as "* ]] || fail "not held back by the next run: $stderr"
	assert_kit_run_clean
}
