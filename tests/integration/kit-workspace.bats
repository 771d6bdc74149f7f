#!/usr/bin/env bats
# Kits: the workspace's protections and the workspaces refused
# (agentbox-kit(5), WORKSPACE). The attacks these stop, each shown working
# with the protection opened first, are in tests/security/kit-workspace.bats.

load helpers
load kit_helpers

setup() {
	requires root
	command -v git >/dev/null || skip "needs git"
	setup_state_only
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	git -C "$WS" init -q
	echo hello >"$WS/README"
	mkdir "$WS/.vscode"
	echo '{}' >"$WS/.vscode/settings.json"
	chown -R 1000:1000 "$WS"
	kit_setup_common
}

teardown() {
	teardown_bundle
}

# try.sh, put in the workspace: "try NAME COMMAND" prints "NAME: written"
# or "NAME: refused".
write_try() {
	cat >"$TEST_DIR/try.sh" <<-'EOF'
		try() { if sh -c "$2" 2>/dev/null; then echo "$1: written"; else echo "$1: refused"; fi; }
	EOF
}

@test "kit run: git's hooks and config, .envrc, editors' and agents' settings cannot be written or made; the host's workspace is unchanged" {
	write_try
	local before
	before=$(ws_snapshot "$WS")
	kit k.yaml <<-EOF
		mounts:
		  - source: $TEST_DIR/try.sh
		    target: /opt/try.sh
		command:
		  - sh
		  - -c
		  - |
		    . /opt/try.sh
		    try hook 'echo x >.git/hooks/pre-commit'
		    try hook-sample 'echo x >>.git/hooks/pre-commit.sample'
		    try hooks-rm 'rm -rf .git/hooks'
		    try config 'echo "[core]" >>.git/config'
		    try commondir 'echo ../x >.git/commondir'
		    try modules 'mkdir -p .git/modules/evil'
		    try rename-git 'mv .git .git-old'
		    try envrc 'echo x >.envrc'
		    try vscode-new 'echo {} >.vscode/tasks.json'
		    try vscode-edit 'echo x >.vscode/settings.json'
		    try vscode-rm 'rm -rf .vscode'
		    try idea 'mkdir .idea/x'
		    try mcp 'echo {} >.mcp.json'
		    try claude 'echo {} >.claude/settings.json'
		    try devcontainer 'echo {} >.devcontainer.json'
		    try ordinary 'echo note >notes.txt'
	EOF
	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml"
	assert_success
	local want
	want=$(printf '%s: refused\n' hook hook-sample hooks-rm config commondir modules rename-git envrc \
		vscode-new vscode-edit vscode-rm idea mcp claude devcontainer; echo "ordinary: written")
	[ "$stdout" = "$want" ] || fail "got: $stdout"
	# what the box may write landed; nothing else changed, no placeholder is left
	[ "$(cat "$WS/notes.txt")" = note ]
	[ "$(stat -c %u:%g "$WS/notes.txt")" = 1000:1000 ]
	rm "$WS/notes.txt"
	[ "$(ws_snapshot "$WS")" = "$before" ] || diff <(echo "$before") <(ws_snapshot "$WS") >&2
	[ "$(ws_snapshot "$WS")" = "$before" ]
	assert_kit_run_clean
}

@test "kit run: the box commits; the placeholders are not in what git sees" {
	runtime kit run --workspace "$WS" -- sh -c '
		ls -d .envrc .claude .git/modules >/dev/null && echo placeholders-seen
		git status --porcelain --untracked-files=all
		git add -A && git -c user.email=agent@box -c user.name=agent commit -qm "from the box" && echo committed'
	assert_success
	[ "${lines[0]}" = placeholders-seen ]
	[ "${lines[1]}" = "?? .vscode/settings.json" ]
	[ "${lines[2]}" = "?? README" ]
	[ "${lines[3]}" = committed ]
	[ "${#lines[@]}" -eq 4 ]
	[ "$(git -c safe.directory='*' -C "$WS" log --format=%s)" = "from the box" ]
	[ "$(git -c safe.directory='*' -C "$WS" show --name-only --format= HEAD | sort | tr '\n' ' ')" = ".vscode/settings.json README " ]
	[ ! -e "$WS/.envrc" ] && [ ! -e "$WS/.claude" ] && [ ! -e "$WS/.git/modules" ] && [ ! -e "$WS/.git/commondir" ]
	assert_kit_run_clean
}

@test "kit run: workspace_protect adds paths, workspace_writable opens default ones" {
	write_try
	echo 'all:' >"$WS/Makefile"
	mkdir "$WS/deploy"
	chown -R 1000:1000 "$WS"
	kit k.yaml <<-EOF
		workspace_protect: [Makefile, deploy/prod.yaml, scripts/release/]
		workspace_writable: [.vscode, .git/hooks]
		mounts:
		  - source: $TEST_DIR/try.sh
		    target: /opt/try.sh
		command:
		  - sh
		  - -c
		  - |
		    . /opt/try.sh
		    try makefile 'echo x >>Makefile'
		    try prod 'echo x >deploy/prod.yaml'
		    try deploy-other 'echo x >deploy/other.yaml'
		    try rename-deploy 'mv deploy deploy2'
		    try release 'mkdir -p scripts/release && echo x >scripts/release/go.sh'
		    try vscode 'echo {} >.vscode/tasks.json'
		    try hook 'echo x >.git/hooks/pre-commit'
		    try config 'echo x >>.git/config'
	EOF
	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml"
	assert_success
	[ "$stdout" = "$(printf '%s\n' 'makefile: refused' 'prod: refused' 'deploy-other: written' 'rename-deploy: refused' \
		'release: refused' 'vscode: written' 'hook: written' 'config: refused')" ] || fail "got: $stdout"
	[ "$(cat "$WS/Makefile")" = all: ]
	[ ! -e "$WS/deploy/prod.yaml" ] && [ -e "$WS/deploy/other.yaml" ]
	[ ! -e "$WS/scripts" ]          # its placeholders went with the run
	[ -e "$WS/.vscode/tasks.json" ] && [ -e "$WS/.git/hooks/pre-commit" ]
	assert_kit_run_clean
	runtime kit show "$TEST_DIR/k.yaml"
	assert_success
	assert_output_contains "#   workspace protections: git's hooks and config, .envrc, editors' and agents' settings, and Makefile, deploy/prod.yaml, scripts/release; opened: .vscode, .git/hooks"
	assert_output_contains "workspace_writable:"
}

@test "kit: bad workspace_protect and workspace_writable entries are errors naming file, line and field" {
	kit a.yaml <<<'workspace_writable: [src]'
	runtime kit show "$TEST_DIR/a.yaml"
	assert_failure 1
	assert_one_error_line "a.yaml:1:22: workspace_writable\[0\]: \"src\" is not protected by default"
	kit b.yaml <<<'workspace_protect: [ok, /etc/passwd]'
	runtime kit run --workspace "$WS" "$TEST_DIR/b.yaml" -- true
	assert_failure 1
	assert_one_error_line "b.yaml:1:25: workspace_protect\[1\]: \"/etc/passwd\": an absolute path"
	kit c.yaml <<<'workspace_protect: [a/../../x]'
	runtime kit build "$TEST_DIR/c.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "workspace_protect\[0\]: \"a/../../x\": \".\" and \"..\" are not allowed"
	kit d.yaml <<<'workspace_allow_sensitive: "yes"'
	runtime kit show "$TEST_DIR/d.yaml"
	assert_failure 1
	assert_one_error_line "workspace_allow_sensitive: expected a boolean"
	[ ! -e "$TEST_DIR/b" ]
	assert_kit_run_clean
}

@test "kit run: a protected entry that is a symlink is refused with one line, and nothing is made" {
	mv "$WS/.git/hooks" "$WS/.githooks"
	ln -s ../.githooks "$WS/.git/hooks"
	local before
	before=$(ws_snapshot "$WS")
	runtime kit run --workspace "$WS" -- true
	assert_failure 1
	assert_one_error_line "workspace $WS: .git/hooks is a symlink: a box could replace it.*workspace_writable"
	[ "$(ws_snapshot "$WS")" = "$before" ]
	assert_kit_run_clean
	# opened, it runs
	kit w.yaml <<<'workspace_writable: [.git/hooks]'
	runtime kit run --workspace "$WS" "$TEST_DIR/w.yaml" -- true
	assert_success
	assert_kit_run_clean
	# a directory above a protected entry
	mkdir "$WS/real-conf"
	ln -s real-conf "$WS/conf"
	kit p.yaml <<-'EOF'
		workspace_protect: [conf/app.yaml]
		workspace_writable: [.git/hooks]
	EOF
	runtime kit run --workspace "$WS" "$TEST_DIR/p.yaml" -- true
	assert_failure 1
	assert_one_error_line "workspace $WS: conf \(above conf/app.yaml\) is a symlink"
	assert_kit_run_clean
}

@test "kit run: core.hooksPath, config includes and submodules' .git files are followed into the workspace" {
	write_try
	git -c safe.directory='*' -C "$WS" config core.hooksPath .githooks
	git -c safe.directory='*' -C "$WS" config include.path ../project.gitconfig
	echo '[alias] st = status' >"$WS/project.gitconfig"
	# a submodule checkout whose .git file points into .git/modules
	mkdir -p "$WS/.git/modules/lib" "$WS/vendor/lib"
	echo 'gitdir: ../../.git/modules/lib' >"$WS/vendor/lib/.git"
	printf '[submodule "lib"]\n\tpath = vendor/lib\n\turl = https://example.invalid/lib\n' >"$WS/.gitmodules"
	chown -R 1000:1000 "$WS"
	kit k.yaml <<-EOF
		mounts:
		  - source: $TEST_DIR/try.sh
		    target: /opt/try.sh
		command:
		  - sh
		  - -c
		  - |
		    . /opt/try.sh
		    try hookspath 'mkdir -p .githooks && echo x >.githooks/pre-commit'
		    try include 'echo x >>project.gitconfig'
		    try submodule-gitfile 'echo "gitdir: /workspace/evil" >vendor/lib/.git'
		    try submodule-gitdir 'echo x >.git/modules/lib/config'
		    try gitmodules 'echo >>.gitmodules'
	EOF
	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml"
	assert_success
	[ "$stdout" = "$(printf '%s\n' 'hookspath: refused' 'include: refused' 'submodule-gitfile: refused' \
		'submodule-gitdir: refused' 'gitmodules: written')" ] || fail "got: $stdout"
	[ ! -e "$WS/.githooks" ]
	assert_kit_run_clean
}

@test "kit run: /, a home directory, a directory above one, and one with credentials are refused unless allowed" {
	local home=$TEST_DIR/home
	mkdir -p "$home/proj"
	chown -R 1000:1000 "$home"
	HOME=$home runtime_at "$home" kit run -- true
	assert_failure 1
	assert_one_error_line "workspace $home: your home directory .*--allow-sensitive-workspace or set workspace_allow_sensitive: true"
	HOME=$home runtime kit run --workspace "$TEST_DIR" -- true
	assert_failure 1
	assert_one_error_line "workspace $TEST_DIR: holds $home, your home directory"
	runtime kit run --workspace / -- true
	assert_failure 1
	assert_one_error_line "workspace /: the whole file system"
	# root's own home, as `sudo agentbox kit run` from it would give
	runtime_at /root kit run -- true
	assert_failure 1
	assert_one_error_line "workspace /root: root's home directory"
	# a project below the home is fine
	HOME=$home runtime_at "$home/proj" kit run -- true
	assert_success
	# credentials at the top
	mkdir "$WS/.aws"
	runtime kit run --workspace "$WS" -- true
	assert_failure 1
	assert_one_error_line "workspace $WS: holds .aws, credentials a box would read"
	rmdir "$WS/.aws"
	echo '//registry.npmjs.org/:_authToken=${NPM_TOKEN}' >"$WS/.npmrc"
	runtime kit run --workspace "$WS" -- true
	assert_success
	echo '//registry.npmjs.org/:_authToken=npm_abcdef123456' >"$WS/.npmrc"
	runtime kit run --workspace "$WS" -- true
	assert_failure 1
	assert_one_error_line "holds .npmrc with a registry token"
	kit b.yaml <<<"workspace: $WS"
	runtime kit build "$TEST_DIR/b.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "holds .npmrc with a registry token"
	[ ! -e "$TEST_DIR/b" ]
	# asked for explicitly: the flag, or the kit's setting
	runtime kit run --allow-sensitive-workspace --workspace "$WS" -- true
	assert_success
	kit s.yaml <<<'workspace_allow_sensitive: true'
	runtime kit run --workspace "$WS" "$TEST_DIR/s.yaml" -- true
	assert_success
	assert_kit_run_clean
}

@test "kit run: in a home directory allowed as the workspace, the shell's start-up files are protected too" {
	local home=$TEST_DIR/home
	mkdir -p "$home"
	echo 'echo hi' >"$home/.profile"
	chown -R 1000:1000 "$home"
	HOME=$home runtime kit run --allow-sensitive-workspace --workspace "$home" -- sh -c '
		{ echo x >>.profile; } 2>/dev/null || echo profile-refused
		{ echo x >.bashrc; } 2>/dev/null || echo bashrc-refused
		{ mkdir -p .local/bin && echo x >.local/bin/git; } 2>/dev/null || echo local-bin-refused'
	assert_success
	[ "$stdout" = "$(printf '%s\n' profile-refused bashrc-refused local-bin-refused)" ] || fail "got: $stdout"
	[ "$(cat "$home/.profile")" = "echo hi" ] && [ ! -e "$home/.bashrc" ] && [ ! -e "$home/.local" ]
	# elsewhere a .bashrc is the project's own file
	runtime kit run --workspace "$WS" -- sh -c 'echo x >.bashrc && echo written'
	assert_success
	[ "$stdout" = written ]
	assert_kit_run_clean
}

@test "kit run: two boxes on one workspace: the first to end leaves the other's protections in place" {
	"$RUNTIME" --root "$ROOT" kit run --workspace "$WS" -- sh -c '
		touch /workspace/a-up; while [ ! -e /workspace/a-go ]; do sleep 0.05; done
		echo x 2>/dev/null >.envrc && echo envrc-written || echo envrc-refused
		ls -d .claude' >"$TEST_DIR/a.out" 2>&1 3>&- &
	local a=$!
	wait_for_path "$WS/a-up" || { cat "$TEST_DIR/a.out" >&2; kill "$a"; false; }
	runtime kit run --workspace "$WS" -- true
	assert_success
	# B has ended, A still runs: the placeholders stay
	[ -d "$WS/.envrc" ] && [ -d "$WS/.claude" ]
	touch "$WS/a-go"
	local st=0
	wait "$a" || st=$?
	cat "$TEST_DIR/a.out" >&2
	[ "$st" -eq 0 ]
	[ "$(cat "$TEST_DIR/a.out")" = "$(printf 'envrc-refused\n.claude')" ]
	# the last one out took them away
	[ ! -e "$WS/.envrc" ] && [ ! -e "$WS/.claude" ]
	assert_kit_run_clean
}

@test "kit run: a SIGKILLed run's placeholders are removed by the next kit command" {
	"$RUNTIME" --root "$ROOT" kit run --workspace "$WS" -- sh -c 'touch /workspace/up; exec sleep 300' \
		>"$TEST_DIR/k.out" 2>&1 3>&- &
	local pid=$!
	wait_for_path "$WS/up" || { cat "$TEST_DIR/k.out" >&2; kill "$pid"; false; }
	# a placeholder: the whiteout device node, which nothing can open
	[ -c "$WS/.envrc" ] && [ "$(stat -c %t:%T "$WS/.envrc")" = 0:0 ]
	kill -KILL "$pid"
	wait "$pid" || true
	[ -c "$WS/.envrc" ]             # nobody else cleans up...
	runtime kit show                # ... until the next kit command
	assert_success
	[ ! -e "$WS/.envrc" ] && [ ! -e "$WS/.vscode/x" ] && [ -e "$WS/.vscode/settings.json" ]
	assert_kit_run_clean
}

@test "kit build: the protected entries that exist are bound read-only, the directories above them onto themselves" {
	kit b.yaml <<-EOF
		workspace: $WS
		workspace_protect: [README]
	EOF
	runtime kit build "$TEST_DIR/b.yaml" -o "$TEST_DIR/b"
	assert_success
	local c=$TEST_DIR/b/config.json
	jq -e --arg s "$WS/.git/hooks" '.mounts[] | select(.destination == "/workspace/.git/hooks" and .source == $s and (.options | index("ro")))' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/workspace/.git/config" and (.options | index("ro")))' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/workspace/.git" and (.options | index("rw")))' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/workspace/README" and (.options | index("ro")))' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/workspace/.vscode" and (.options | index("ro")))' "$c" >/dev/null
	# what does not exist has no placeholder in a build: nothing was made
	! jq -e '.mounts[] | select(.destination == "/workspace/.envrc")' "$c" >/dev/null || fail "succeeded, must not: jq -e '.mounts[] | select(.destination == \"/workspace/.en..."
	[ ! -e "$WS/.envrc" ]
	# parents come before what is under them
	[ "$(jq -r '[.mounts[].destination] | index("/workspace/.git") < index("/workspace/.git/hooks")' "$c")" = true ]
}

# ---------------------------------------------------------------- id-mapped workspaces

@test "kit run: a root-owned workspace is writable by the non-root agent; the host sees its owner's ids" {
	chown -R 0:0 "$WS"
	runtime kit run --workspace "$WS" -- sh -c '
		id -u; stat -c %u:%g /workspace /workspace/README /workspace/.git/config
		echo made >/workspace/made && mkdir /workspace/dir && echo in >/workspace/dir/f && echo written
		{ echo x >.git/hooks/pre-commit; } 2>/dev/null || echo hook-refused
		git add made && git -c user.email=a@b -c user.name=a commit -qm "from the box" && echo committed'
	assert_success
	[ "$stdout" = "$(printf '%s\n' 1000 1000:1000 1000:1000 1000:1000 written hook-refused committed)" ] ||
		fail "got: $stdout"
	[ "$(stat -c %u:%g "$WS/made" "$WS/dir" "$WS/dir/f" | sort -u)" = 0:0 ]
	# git's own files too: the pinned .git is mapped like the rest
	[ -z "$(find "$WS/.git" ! -user 0)" ] || fail "not root's: $(find "$WS/.git" ! -user 0)"
	[ "$(git -C "$WS" log --format=%s -1)" = "from the box" ]
	assert_kit_run_clean
	# kit build writes the same mapping, and binds the protections from the mapped workspace
	kit b.yaml <<<"workspace: $WS"
	runtime kit build "$TEST_DIR/b.yaml" -o "$TEST_DIR/b"
	assert_success
	jq -e '.mounts[] | select(.destination == "/workspace") | (.options | index("idmap")) and
		.uidMappings == [{"containerID": 0, "hostID": 1000, "size": 1}] and
		.gidMappings == [{"containerID": 0, "hostID": 1000, "size": 1}]' "$TEST_DIR/b/config.json" >/dev/null
	[ "$(jq -r '.mounts[] | select(.destination == "/workspace/.git/hooks") | .source' "$TEST_DIR/b/config.json")" = \
		"$TEST_DIR/b/rootfs/workspace/.git/hooks" ]
	# and that bundle runs so (the sources through /workspace resolve to the mapped mount)
	jq '.process.args = ["sh", "-c", "echo b >/workspace/built && echo written; { echo x >/workspace/.git/hooks/h; } 2>/dev/null || echo hook-refused"]' \
		"$TEST_DIR/b/config.json" >"$TEST_DIR/c.json" && mv "$TEST_DIR/c.json" "$TEST_DIR/b/config.json"
	runtime run --bundle "$TEST_DIR/b" abkt-built
	assert_success
	[ "$stdout" = "$(printf 'written\nhook-refused')" ]
	[ "$(stat -c %u:%g "$WS/built")" = 0:0 ]
}

@test "kit run: a box's user keeps its uid in a workspace of another owner; root in the box writes as the owner" {
	export AGENTBOX_BOXES=$TEST_DIR/boxes
	runtime kit run --name abkt-idm --workspace "$WS" -- sh -c 'echo one >/workspace/one; id -u'
	assert_success
	[ "$stdout" = 1000 ]
	# the same box in a workspace of uid 2000: still 1000 inside, 2000's files on disk
	mkdir "$TEST_DIR/ws2"
	chown 2000:2000 "$TEST_DIR/ws2"
	runtime kit run --name abkt-idm --workspace "$TEST_DIR/ws2" -- sh -c 'id -u; stat -c %u /workspace; echo two >/workspace/two'
	assert_success
	[ "$stdout" = "$(printf '1000\n1000')" ]
	[ "$(stat -c %u:%g "$TEST_DIR/ws2/two")" = 2000:2000 ]
	# a kit whose user is root writes a user's workspace as that user
	kit r.yaml <<<'user: "0:0"'
	runtime kit run --workspace "$WS" "$TEST_DIR/r.yaml" -- sh -c 'id -u; echo r >/workspace/by-root'
	assert_success
	[ "$stdout" = 0 ]
	[ "$(stat -c %u:%g "$WS/by-root")" = 1000:1000 ]
	assert_kit_run_clean
}

@test "kit run: a workspace whose file system cannot be id-mapped: one warning, and the box writes with its own ids" {
	local ram=$TEST_DIR/ram
	mkdir "$ram"
	mount -t ramfs abkt-ramfs "$ram"
	defer umount -l "$ram"
	chmod 1777 "$ram"
	runtime kit run --workspace "$ram" -- sh -c 'id -u; echo x >/workspace/f && echo written'
	assert_success
	[ "$stdout" = "$(printf '1000\nwritten')" ]
	[ "${#stderr_lines[@]}" -eq 1 ] || fail "want one warning: $stderr"
	[[ "$stderr" == "agentbox: warning: kit: workspace $ram: ramfs cannot be id-mapped here (Invalid argument); the box's user 1000:1000 writes it with its own permissions, not as its owner 0:0" ]] ||
		fail "got: $stderr"
	[ "$(stat -c %u "$ram/f")" = 1000 ]
	assert_kit_run_clean
}

@test "kit run: a workspace read-only on the host stays read-only in the box, and gets no placeholder" {
	local ro=$TEST_DIR/ro
	mkdir "$ro"
	mount --bind "$WS" "$ro"
	defer umount -l "$ro"
	mount -o remount,bind,ro "$ro"
	local before
	before=$(ws_snapshot "$WS")
	runtime kit run --workspace "$ro" -- sh -c 'cat README; { touch new; } 2>/dev/null || echo read-only; { mkdir .envrc; } 2>/dev/null || echo no-envrc'
	assert_success
	[ "$stdout" = "$(printf 'hello\nread-only\nno-envrc')" ]
	[ "$(ws_snapshot "$WS")" = "$before" ]
	assert_kit_run_clean
}

@test "kit run: a placeholder is the 0:0 device node, not a directory, except on overlayfs (a whiteout there)" {
	# elsewhere: a node, which takes no disk block and which nothing opens
	runtime kit run --workspace "$WS" -- sh -c '
		[ -c .envrc ] && stat -c "%t:%T" .envrc; { cat .envrc; } 2>/dev/null || echo unreadable
		{ mkdir .idea; } 2>/dev/null || echo no-idea'
	assert_success
	[ "$stdout" = "$(printf '0:0\nunreadable\nno-idea')" ]
	[ ! -e "$WS/.envrc" ] && [ ! -e "$WS/.idea" ]
	# on overlayfs that node would be a whiteout, and the name would vanish:
	# directories stand in, read-only, and go with the run
	local ov=$TEST_DIR/ov
	mkdir -p "$ov/lower" "$ov/upper" "$ov/work" "$ov/ws"
	echo hello >"$ov/lower/README"
	mount -t overlay agentbox-test-ov -o "lowerdir=$ov/lower,upperdir=$ov/upper,workdir=$ov/work" "$ov/ws"
	defer umount -l "$ov/ws"
	chown 1000:1000 "$ov/ws"
	runtime kit run --workspace "$ov/ws" -- sh -c '
		[ -d .envrc ] && echo envrc-dir; { touch .envrc/x; } 2>/dev/null || echo envrc-refused
		echo note >notes.txt && cat README'
	assert_success
	[ "$stdout" = "$(printf 'envrc-dir\nenvrc-refused\nhello')" ]
	[ "$(cat "$ov/ws/notes.txt")" = note ]
	[ ! -e "$ov/ws/.envrc" ] && [ ! -e "$ov/upper/.envrc" ] && [ ! -e "$ov/ws/.git" ]
	assert_kit_run_clean
}
