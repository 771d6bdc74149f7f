#!/bin/bash
# What the kit test files share (kit.bats, kit-workspace.bats, kit-boxes.bats,
# tests/security/kit-workspace.bats): load after helpers.

# wait_for_path PATH: up to 20 s for PATH to exist (empty or not).
wait_for_path() {
	local i
	for ((i = 0; i < 1000; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.02
	done
	echo "wait_for_path: $1 did not appear in 20s" >&2
	return 1
}

# kit FILE <<<TEXT: write a kit into the test dir.
kit() {
	cat >"$TEST_DIR/$1"
}

# kit_setup_common: what assert_kit_run_clean compares with.
kit_setup_common() {
	KIT_DIRS_BEFORE=$(ls -1 /run/agentbox-kits 2>/dev/null || true)
	SLIRP_BEFORE=$(pgrep -x slirp4netns || true)
	KIT_CGROUPS_BEFORE=$(kit_cgroups)
}

kit_cgroups() {
	find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d \( -path '*/agentbox/kit-*' -o -path '*/agentbox/box-*' \) \
		2>/dev/null | sort || true
}

# The container ids of this test's kit runs: each run has a durable deny log
# under the test's own AGENTBOX_LOG_DIR (setup_state_only), named by its id.
own_kit_ids() {
	ls -1 "${AGENTBOX_LOG_DIR:-/nonexistent}" 2>/dev/null | grep -E '^(kit|box)-' || true
}

# Nothing of a kit run may be left: state, temp dirs, mounts, slirp4netns,
# cgroups, workspace placeholders.
assert_kit_run_clean() {
	local left
	left=$(ls "$ROOT" 2>/dev/null | grep -v '\.lock$' || true)   # dot files: caches
	[ -z "$left" ] || fail "state left under $ROOT: $left"
	# (other runs, of other tests, may come and go meanwhile: ours name our state root)
	local d root
	root=$(realpath "$ROOT")
	left=
	for d in $(comm -13 <(echo "$KIT_DIRS_BEFORE" | sort) <(ls -1 /run/agentbox-kits 2>/dev/null | sort)); do
		[ "$(cut -d' ' -f3- "/run/agentbox-kits/$d/owner" 2>/dev/null)" != "$root" ] || left="$left $d"
	done
	[ -z "$left" ] || fail "temporary kit dirs left:$left"
	local m
	for m in $(awk '$5 ~ "^/run/agentbox-kits/" { print $5 }' /proc/self/mountinfo); do
		d=${m#/run/agentbox-kits/}
		d=${d%%/*}
		[ "$(cut -d' ' -f3- "/run/agentbox-kits/$d/owner" 2>/dev/null)" != "$root" ] || fail "mount left: $m"
	done
	local p parent
	for p in $(pgrep -x slirp4netns || true); do
		grep -qx "$p" <<<"$SLIRP_BEFORE" && continue
		parent=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || continue
		! tr '\0' ' ' <"/proc/$parent/cmdline" 2>/dev/null | grep -qF -- "--root $ROOT " || fail "slirp4netns left: pid $p"
	done
	# cgroups of this test's runs only: another kit run on the host (another
	# test, another user) may hold one of its own at this moment
	local ids cg
	ids=$(own_kit_ids)
	left=
	for cg in $(comm -13 <(echo "$KIT_CGROUPS_BEFORE") <(kit_cgroups)); do
		grep -qxF "${cg##*/}" <<<"$ids" && left="$left $cg"
	done
	[ -z "$left" ] || fail "cgroups left:$left"
	if [ -n "${WS:-}" ] && [ -d "$WS" ]; then
		local key
		key=$(stat -c '%d %i' "$WS" | awk '{ printf "%x-%x", $1, $2 }')
		[ ! -e "/run/agentbox-kits/.placeholders-0/$key.list" ] ||
			fail "placeholders of $WS still listed: $(tr '\0' ' ' <"/run/agentbox-kits/.placeholders-0/$key.list")"
	fi
}

# ws_snapshot DIR: what a run must leave as it was: every entry's path, type,
# mode, owner, size and (files) content. Directory times are left out: a
# placeholder made and removed touches its parent's.
ws_snapshot() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %s\n' | sort && find . -type f -print0 | sort -z | xargs -0r sha256sum)
}
