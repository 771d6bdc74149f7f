#!/usr/bin/env bats
# Cases of the peer suites (runtime-tools, crun's tests, runc's integration
# suite) that agentbox takes as runc and crun do, or refuses with one line
# (docs/conformance.md says which and why). Each would fail without its fix.

load helpers

setup() {
	requires root
	setup_bundle
	CT_N=0
}

teardown() {
	teardown_bundle
}

# in_container ARGS...: run ARGS as the container's process (a new id each
# call); $status/$output/$stdout are the runtime's, so the program's.
in_container() {
	CT_N=$((CT_N + 1))
	set_args "$@"
	run_container "abc2-ct$CT_N"
}

# ---------------------------------------------------------------- process

@test "linux.memoryPolicy is the init's NUMA policy (set_mempolicy), inherited by its children" {
	[ -e /proc/self/numa_maps ] || skip "kernel without NUMA memory policies"
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0", flags: ["MPOL_F_STATIC_NODES"]}'
	# numa_maps' first line is the program's text; the policy shows on each
	in_container sh -c 'head -n 1 /proc/self/numa_maps'
	assert_success
	[[ "$stdout" == *" bind=static:0 "* ]] || fail "numa_maps: $stdout"
	update_config '.linux.memoryPolicy = {mode: "MPOL_LOCAL"}'
	in_container sh -c 'head -n 1 /proc/self/numa_maps'
	assert_success
	[[ "$stdout" == *" local "* ]] || fail "numa_maps: $stdout"
	# a node this host does not have: the kernel's refusal, named
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "1023"}'
	in_container true
	assert_failure 1
	assert_one_error_line 'linux\.memoryPolicy: set MPOL_BIND on nodes 1023: Invalid argument'
	assert_nothing_left
}

@test "process.ioPriority without a priority takes 0, as the schema allows" {
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_IDLE"}'
	in_container sh -c 'ionice -p $$'
	assert_success
	[[ "$stdout" == idle* ]] || fail "ionice: $stdout"
}
