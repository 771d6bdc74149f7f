#!/bin/bash
# Shared by tests/security/floor-*.bats: the capability sets attacks run
# with, runc as the unprotected reference, and agent configs that relax one
# floor setting at a time. Loaded after tests/security/helpers.bash.

# The capability sets of `runc spec` and of Docker's default (the docker
# fixture in tests/data/engine-fixtures, as dockerd sends it).
RUNC_SPEC_CAPS='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]'
docker_caps() {
	jq -c '.process.capabilities.bounding' "$FIXTURES_DIR/docker-create-config.json"
}

# with_caps runc|docker: every capability set of the bundle's process.
with_caps() {
	local caps
	case $1 in
	runc) caps=$RUNC_SPEC_CAPS ;;
	docker) caps=$(docker_caps) ;;
	*) fail "with_caps: runc or docker, not $1" ;;
	esac
	update_config '.process.capabilities = {bounding: $c, effective: $c, permitted: $c}
		| .process.noNewPrivileges = true' --argjson c "$caps"
}

# floor_config YAML: agentbox runs with the built-in defaults plus YAML
# (an empty YAML: the defaults alone). The firewall stays as it is.
floor_config() {
	FLOOR_CONFIG=$TEST_DIR/floor.yaml
	printf '%s\n' "${1:-{\}}" >"$FLOOR_CONFIG"
	RUNTIME_ARGS=(--config "$FLOOR_CONFIG")
}

# runc_run ID: runc on the same bundle (its own state root), like `runtime`:
# sets status, output, stdout, stderr.
runc_run() {
	requires_runc
	RT_CALLS=$((RT_CALLS + 1))
	RT_STDOUT=$TEST_DIR/runc.$RT_CALLS.stdout
	RT_STDERR=$TEST_DIR/runc.$RT_CALLS.stderr
	mkdir -p "$TEST_DIR/runc-state"
	defer "$RUNC" --root "$TEST_DIR/runc-state" delete --force "$1"
	status=0
	timeout -k 5 "$RUNTIME_TIMEOUT" "$RUNC" --root "$TEST_DIR/runc-state" run --bundle "$BUNDLE" "$1" \
		</dev/null >"$RT_STDOUT" 2>"$RT_STDERR" 3>&- || status=$?
	_rt_collect "$RUNC run $1"
}

# in_box ID CMD...: process.args = CMD, then `runtime run`.
in_box() {
	local id=$1
	shift
	set_args "$@"
	run_container "$id"
}

# in_runc ID CMD...: the same under runc.
in_runc() {
	local id=$1
	shift
	set_args "$@"
	runc_run "$id"
}
