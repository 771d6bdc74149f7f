#!/bin/bash
# helpers.bash for the reliability tests: the integration suite's helpers
# (bundles, `runtime`, teardown that fails on leftovers) plus checks that a
# whole host is clean of one test's containers.

load ../integration/helpers

# Pids of runtime processes of this test: the DNS sentry and an init that has
# not exec'd yet are forks of the runtime, so their command line still holds
# this test's unique --root.
runtime_pids() {
	local f p argv0
	# one grep over every command line (NUL-separated arguments)
	for f in $(grep -l -z -x -F -- "$ROOT" /proc/[0-9]*/cmdline 2>/dev/null); do
		p=${f#/proc/}
		p=${p%/cmdline}
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
		[ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
		# run as $RUNTIME (its exe may be a sealed memfd copy, and an init
		# after pivot_root no longer sees the path anyway)
		argv0=$(tr '\0' '\n' 2>/dev/null <"/proc/$p/cmdline" | head -1) 2>/dev/null
		[ "$argv0" = "$RUNTIME" ] || continue
		echo "$p"
	done
	true
}

# Mounts whose source or target lies in this test's directory (but for the
# ones the test made itself, listed in TEST_OWN_MOUNTS).
TEST_OWN_MOUNTS=()
test_mounts() {
	local m own
	grep -F "$TEST_DIR" /proc/self/mountinfo | while read -r m; do
		for own in "${TEST_OWN_MOUNTS[@]}"; do
			[[ "$m" == *" $own "* ]] && continue 2
		done
		echo "$m"
	done
	true
}

# Processes still in the network namespace with inode $1 (the container's:
# its nftables table lives and dies with it).
netns_users() {
	stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null |
		awk -v want="$1" '$1 == want { split($2, p, "/"); print p[3] }'
	# or holding it open by an fd
	find /proc/[0-9]*/fd -lname "net:\[$1\]" 2>/dev/null | cut -d/ -f3
	true
}

# assert_host_clean [NETNS-INODE...]: nothing of this test's containers is left:
# no container's state entry, no container or runtime process (sentry, init), no cgroup,
# no mount, no live network namespace of a container (waits up to 5 s for
# processes that are already dying).
assert_host_clean() {
	local left pids cgs m ns users i
	# (dot entries are the runtime's own, not a container's: .seccomp-cache)
	left=$(ls "$ROOT" 2>/dev/null || true)
	[ -z "$left" ] || fail "state dir $ROOT still holds: $left"
	for ((i = 0; i < 250; i++)); do
		pids="$(bundle_pids) $(runtime_pids)"
		[ -z "${pids// /}" ] && break
		sleep 0.02
	done
	[ -z "${pids// /}" ] || fail "processes left: $pids: $(for p in $pids; do tr '\0' ' ' </proc/$p/cmdline; echo; done)"
	cgs=$(leftover_cgroups)
	[ -z "$cgs" ] || fail "cgroups left: $cgs"
	m=$(test_mounts)
	[ -z "$m" ] || fail "mounts left: $m"
	for ns in "$@"; do
		users=$(netns_users "$ns" | sort -u)
		[ -z "$users" ] || fail "network namespace $ns (and its nft table) still used by: $users"
	done
	# the firewall is never the host's
	! nft list table inet agentbox >/dev/null 2>&1 || fail "an agentbox nft table in the host's network namespace"
}

# container_netns: the inode of the network namespace of the first runtime or
# container process of this test (empty when there is none).
container_netns() {
	local p mine
	mine=$(stat -L -c %i /proc/self/ns/net)
	for p in $(runtime_pids) $(bundle_pids); do
		local ino
		ino=$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null) || continue
		[ "$ino" != "$mine" ] && { echo "$ino"; return 0; }
	done
	true
}
