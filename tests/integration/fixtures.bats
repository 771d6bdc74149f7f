#!/usr/bin/env bats
# The config.json files real engines wrote (tests/data/engine-fixtures/), run as
# they are, with only what cannot exist here replaced: the rootfs, the host
# files they bind, the hooks, the cgroup path, namespaces joined by path.

load helpers

FIXTURES=$FIXTURES_DIR

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# use_fixture NAME: $BUNDLE/config.json := the fixture, made runnable here.
use_fixture() {
	local f=$FIXTURES/$1-create-config.json
	[ -f "$f" ] || skip "fixture $f is absent"
	cp "$f" "$BUNDLE/config.json"
	chmod u+w "$BUNDLE/config.json"
	# - root.path: absolute ones (docker, podman) point at our rootfs; a
	#   relative one (ctr: "rootfs") is kept, it already resolves in $BUNDLE
	# - hooks: their binaries (libnetwork-setkey) do not exist here; the
	#   prestart hook has its own test below
	# - cgroupsPath: same shape (parent/leaf), unique names
	# - namespace paths (--net container:X) name processes that are gone
	# - rlimits: this machine lacks CAP_SYS_RESOURCE, so no limit can be
	#   raised above our own hard limit (runc fails the same way)
	update_config '
		.process.args = ["/bin/abtest", "echo", "fixture-ok"]
		| .process.terminal = false
		| del(.hooks)
		| if (.root.path | startswith("/")) then .root.path = $rootfs else . end
		| .linux.cgroupsPath = $cg
		| .linux.namespaces |= map(del(.path))
		| if .process.rlimits then .process.rlimits |= map(
			if .type == "RLIMIT_NOFILE" then .hard = ([.hard, $nofile] | min)
			elif .type == "RLIMIT_NPROC" then .hard = ([.hard, $nproc] | min)
			else . end | .soft = ([.soft, .hard] | min)) else . end' \
		--arg rootfs "$BUNDLE/rootfs" \
		--arg cg "/$CGROUP_NAME-parent/$CGROUP_NAME" \
		--argjson nofile "$(ulimit -Hn)" \
		--argjson nproc "$(ulimit -Hu | sed 's/unlimited/4294967295/')"
	defer remove_parent_cgroups "$CGROUP_NAME-parent"
	replace_bind_sources
}

# Bind sources that do not exist here become test files (or dirs).
replace_bind_sources() {
	local i dest src new filter=. args=()
	mkdir -p "$TEST_DIR/binds"
	while IFS=$'\t' read -r i dest src; do
		[ -n "$src" ] && [ -e "$src" ] && continue
		new=$TEST_DIR/binds/$i$(basename "$dest")
		case $dest in
		*/shm | */cache | */data) mkdir -p "$new" ;;
		*/docker-init | */init) cp "$ABTEST" "$new" ;;
		*/resolv.conf) echo "nameserver 198.18.0.53" >"$new" ;;
		*/hostname) echo fixturehost >"$new" ;;
		*/hosts) echo "127.0.0.1 localhost" >"$new" ;;
		*) : >"$new" ;;
		esac
		filter+=" | .mounts[$i].source = \$s$i"
		args+=(--arg "s$i" "$new")
	done < <(jq -r '.mounts | to_entries[]
		| select(.value.type == "bind" or ((.value.options // []) | index("bind") or index("rbind")))
		| [.key, .value.destination, (.value.source // "")] | @tsv' "$BUNDLE/config.json")
	update_config "$filter" "${args[@]}"
}

remove_parent_cgroups() {
	find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -name "$1" -exec rmdir {} \; 2>/dev/null || true
}

# run_fixture: create (with --pid-file), start, the process exits 0 and says
# so, delete leaves nothing; then the same config with `run`.
run_fixture() {
	create_container ct --pid-file "$TEST_DIR/ct.pid"
	assert_success
	[ "$(cat "$TEST_DIR/ct.pid")" = "$(state_field ct .pid)" ]
	runtime start ct
	assert_success
	wait_for_status ct stopped
	wait_for_line "$CT_STDOUT" '^fixture-ok$'
	runtime delete ct
	assert_success
	assert_nothing_left

	run_container ct2
	assert_success
	[ "$stdout" = fixture-ok ]
	assert_nothing_left
}

@test "fixture: docker 20.10 config.json (seccomp, sysctls, binds, cgroup mount)" {
	use_fixture docker
	run_fixture
}

@test "fixture: podman 4.3 config.json (umask, rlimits, pids limit, shm bind)" {
	use_fixture podman
	run_fixture
}

@test "fixture: ctr 1.6 config.json (relative root.path)" {
	use_fixture ctr
	run_fixture
}

@test "fixture: every *-create-config.json in the fixtures dir is covered above" {
	local f name
	for f in "$FIXTURES"/*-create-config.json; do
		name=$(basename "$f" -create-config.json)
		grep -q "use_fixture $name\$" "$BATS_TEST_FILENAME" || fail "fixture $f has no test"
	done
}

@test "fixture: docker's prestart hook (libnetwork-setkey) gets the state on stdin" {
	use_fixture docker
	# a stand-in for libnetwork-setkey with docker's argv shape
	cat >"$TEST_DIR/setkey" <<-EOF
		#!/bin/sh
		cat >"$TEST_DIR/setkey.state"
		echo "\$@" >"$TEST_DIR/setkey.args"
	EOF
	chmod 755 "$TEST_DIR/setkey"
	update_config '.hooks.prestart = [{path: $p,
		args: ["libnetwork-setkey", "-exec-root=/var/run/docker", "41a05b5ce2f5", "b5b0f38ca2b0"]}]' \
		--arg p "$TEST_DIR/setkey"
	create_container ct
	assert_success
	[ "$(jq -r .id "$TEST_DIR/setkey.state")" = ct ]
	[ "$(jq -r .pid "$TEST_DIR/setkey.state")" = "$(state_field ct .pid)" ]
	[ "$(jq -r .bundle "$TEST_DIR/setkey.state")" = "$BUNDLE" ]
	[ "$(cat "$TEST_DIR/setkey.args")" = "-exec-root=/var/run/docker 41a05b5ce2f5 b5b0f38ca2b0" ]
	runtime start ct
	assert_success
	wait_for_line "$CT_STDOUT" '^fixture-ok$'
}

@test "fixture: docker's seccomp profile is in force (clone3 gives ENOSYS)" {
	use_fixture docker
	set_args sh -c 'abtest caps; abtest clone3'
	run_container ct
	assert_success
	grep -qE '^Seccomp:[[:space:]]+2$' <<<"$stdout"
	grep -qx ENOSYS <<<"$stdout"
	# control: with no seccomp filter at all, the kernel itself answers
	# (agentbox stacks its own agent profile, which hides clone3 too)
	update_config 'del(.linux.seccomp)'
	set_args sh -c 'abtest caps; abtest clone3'
	run_container ct2
	assert_success
	if grep -qE '^Seccomp:[[:space:]]+0$' <<<"$stdout"; then
		grep -qx EINVAL <<<"$stdout"
	fi
}
