#!/usr/bin/env bats
# The workspace as a way back to the host (issue 22, item 9): a box writes
# something in its workspace that the host later runs as the user, with no
# review, on an everyday command (`git status`, `git commit`). Each attack is
# first shown working where the protection is opened (workspace_writable, or
# --allow-sensitive-workspace), then blocked by kit run's defaults.
#
# The host's git runs as root here on a repository owned by uid 1000 (the
# box's user), so it is told safe.directory='*', as a user's own git needs
# nothing of the kind. Markers the host-side payloads make are under
# $TEST_DIR. No network.

load helpers
load ../integration/kit_helpers

setup() {
	requires root
	command -v git >/dev/null || skip "needs git"
	setup_state_only
	WS=$TEST_DIR/ws
	MARK=$TEST_DIR/ran-on-the-host
	mkdir -p "$WS"
	echo code >"$WS/main.c"
	chown -R 1000:1000 "$WS"
	kit_setup_common
}

teardown() {
	teardown_bundle
}

# host_git ARGS...: git on the host, in the workspace, as its user runs it.
host_git() {
	git -c safe.directory='*' -c user.email=user@host -c user.name=user -C "$WS" "$@"
}

# a repository with one commit, as the user left it before the agent came
make_repo() {
	host_git init -q
	host_git add main.c
	host_git commit -qm "before the agent"
	chown -R 1000:1000 "$WS"
}

# run_box KIT_TEXT SCRIPT: kit run with the kit given and the script as its
# command (it ends with status 0 whatever its steps do).
run_box() {
	printf '%s\n' "$1" >"$TEST_DIR/k.yaml"
	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml" -- sh -c "$2; true"
	assert_success
	assert_kit_run_clean
}

@test "workspace: a git hook the box writes runs at the host's next commit, unless .git/hooks is protected" {
	make_repo
	local plant="printf '#!/bin/sh\ntouch $MARK\n' >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
	run_box 'workspace_writable: [.git/hooks]' "$plant"
	host_git commit -q --allow-empty -m "the user's next commit"
	[ -e "$MARK" ] || unprotected_failed "a pre-commit hook planted by the box"
	rm -f "$MARK" "$WS/.git/hooks/pre-commit"

	run_box 'name: protected' "$plant"
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	host_git commit -q --allow-empty -m "and the one after"
	[ ! -e "$MARK" ] || fail "the box's hook ran on the host"
}

@test "workspace: core.fsmonitor the box sets runs at the host's next git status, unless .git/config is protected" {
	make_repo
	local plant="git config core.fsmonitor 'touch $MARK; false'"
	run_box 'workspace_writable: [.git/config]' "$plant"
	host_git status >/dev/null
	[ -e "$MARK" ] || unprotected_failed "core.fsmonitor set by the box"
	rm -f "$MARK"
	host_git config --unset core.fsmonitor

	run_box 'name: protected' "$plant"
	host_git status >/dev/null
	[ ! -e "$MARK" ] || fail "the box's fsmonitor command ran on the host"
	[ -z "$(host_git config core.fsmonitor || true)" ]
}

@test "workspace: a commondir the box writes points git at a config of its own, unless commondir is protected" {
	make_repo
	local plant="mkdir evil && cp -r .git/objects .git/refs evil/ &&
		printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $MARK; false\"\n' >evil/config &&
		echo ../evil >.git/commondir"
	# (the workspace guard would hold back the config the commondir names: off too)
	run_box $'workspace_writable: [.git/commondir]\nworkspace_guard: off' "$plant"
	host_git status >/dev/null 2>&1 || true
	[ -e "$MARK" ] || unprotected_failed "a commondir written by the box"
	rm -rf "$MARK" "$WS/evil" "$WS/.git/commondir"

	run_box 'name: protected' "$plant"
	[ ! -e "$WS/.git/commondir" ]
	host_git status >/dev/null
	[ ! -e "$MARK" ] || fail "git on the host read the box's config"
}

@test "workspace: .git renamed away and rebuilt by the box, unless .git is pinned" {
	make_repo
	local plant="mv .git .git-old && mkdir .git && cp -a .git-old/. .git/ &&
		printf '[core]\n\tfsmonitor = \"touch $MARK; false\"\n' >>.git/config"
	run_box 'workspace_writable: [.git]' "$plant"
	host_git status >/dev/null
	[ -e "$MARK" ] || unprotected_failed "a .git rebuilt by the box"
	rm -rf "$MARK" "$WS/.git"
	mv "$WS/.git-old" "$WS/.git"

	run_box 'name: protected' "$plant"
	[ ! -e "$WS/.git-old" ]
	host_git status >/dev/null
	[ ! -e "$MARK" ] || fail "git on the host ran the config of a .git the box rebuilt"
}

@test "workspace: a repository the box creates where there was none runs its config on the host, unless .git is protected" {
	local plant="git init -q && git config core.fsmonitor 'touch $MARK; false' && git add main.c &&
		git -c user.email=a@b -c user.name=a commit -qm x"
	run_box 'workspace_writable: [.git]' "$plant"
	host_git status >/dev/null
	[ -e "$MARK" ] || unprotected_failed "a repository made by the box"
	rm -rf "$MARK" "$WS/.git"

	run_box 'name: protected' "$plant"
	[ ! -e "$WS/.git" ]
	! host_git status >/dev/null 2>&1 || fail "the box made a repository in the workspace"
	[ ! -e "$MARK" ]
}

@test "workspace: hooks the box writes where core.hooksPath points run on the host, unless protected" {
	make_repo
	host_git config core.hooksPath .githooks
	chown -R 1000:1000 "$WS"
	local plant="mkdir -p .githooks && printf '#!/bin/sh\ntouch $MARK\n' >.githooks/pre-commit && chmod +x .githooks/pre-commit"
	run_box 'workspace_writable: [.git/hooks]' "$plant"
	host_git commit -q --allow-empty -m next
	[ -e "$MARK" ] || unprotected_failed "a hook in core.hooksPath written by the box"
	rm -rf "$MARK" "$WS/.githooks"

	run_box 'name: protected' "$plant"
	[ ! -e "$WS/.githooks" ]
	host_git commit -q --allow-empty -m "the one after"
	[ ! -e "$MARK" ] || fail "the box's hook ran on the host"
}

@test "workspace: run from a home directory the box reads ~/.ssh, unless the workspace is refused" {
	local home=$TEST_DIR/home
	mkdir -p "$home/.ssh"
	echo "PRIVATE-KEY-$RANDOM$RANDOM" >"$home/.ssh/id_ed25519"
	chmod 600 "$home/.ssh/id_ed25519"
	chown -R 1000:1000 "$home"
	HOME=$home runtime_at "$home" kit run --allow-sensitive-workspace -- cat .ssh/id_ed25519
	assert_success
	[ "$stdout" = "$(cat "$home/.ssh/id_ed25519")" ] || unprotected_failed "reading ~/.ssh from a home workspace"
	assert_kit_run_clean

	HOME=$home runtime_at "$home" kit run -- cat .ssh/id_ed25519
	assert_failure 1
	assert_one_error_line "workspace $home: your home directory \(a box would read its credentials"
	[[ "$output" != *PRIVATE-KEY* ]]
	assert_kit_run_clean
}
