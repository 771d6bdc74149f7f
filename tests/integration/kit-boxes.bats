#!/usr/bin/env bats
# Named boxes (agentbox-kit(8), BOXES): kit run --name, kit ls, kit rm,
# kit fork. Each test keeps its boxes in a store of its own
# ($AGENTBOX_BOXES); the names start with "abkt".

load helpers
load kit_helpers

setup() {
	requires root
	setup_state_only
	ensure_rootfs
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 1000:1000 "$WS"
	export AGENTBOX_BOXES=$TEST_DIR/boxes
	# a root file system of the box's own (busybox), where a root user installs
	cp -a "$TEST_ROOTFS" "$TEST_DIR/base"
	mkdir -p "$TEST_DIR/base/opt" "$TEST_DIR/base/home"
	kit root.yaml <<-EOF
		name: abkt-root
		rootfs: $TEST_DIR/base
		user: "0:0"
		env:
		  WHICH: first
	EOF
	kit_setup_common
}

teardown() {
	teardown_bundle
}

# box_run NAME [KIT] -- CMD...: kit run --name NAME in the workspace.
box_run() {
	local name=$1
	shift
	runtime kit run --name "$name" --workspace "$WS" "$@"
}

@test "kit run --name: a file installed in the first run is there in the third; the kit's other settings apply afresh; rm removes the box" {
	box_run abkt-one "$TEST_DIR/root.yaml" -- sh -c '
		echo v1 >/opt/tool && echo notes >/root/notes && echo scratch >/tmp/scratch && echo "$WHICH"'
	assert_success
	[ "$stdout" = first ]
	[ -f "$TEST_DIR/boxes/abkt-one/upper/opt/tool" ]
	# run two: another kit file for the same base, another environment
	sed 's/WHICH: first/WHICH: second/' "$TEST_DIR/root.yaml" >"$TEST_DIR/root2.yaml"
	box_run abkt-one "$TEST_DIR/root2.yaml" -- sh -c 'echo "$WHICH"; cat /opt/tool; ls /tmp'
	assert_success
	[ "$stdout" = "$(printf 'second\nv1')" ]        # /tmp is a tmpfs: gone
	# run three
	box_run abkt-one "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/tool /root/notes; echo "$WHICH"'
	assert_success
	[ "$stdout" = "$(printf 'v1\nnotes\nfirst')" ]
	# the base never changed
	[ ! -e "$TEST_DIR/base/opt/tool" ]
	assert_kit_run_clean

	runtime kit ls
	assert_success
	[ "${lines[0]}" = "$(printf '%-20s %-32s %8s %8s %-16s  %-16s  %s' NAME KIT SIZE SHARED CREATED 'LAST USED' STATE)" ]
	[[ "${lines[1]}" =~ ^abkt-one\ +$TEST_DIR/root.yaml\ +[0-9.]+K\ +0B\ +[0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9:]{5}\ +[0-9]{4}-.*\ idle$ ]] ||
		fail "kit ls: ${lines[1]}"
	runtime kit ls --json
	assert_success
	[ "$(jq -r '.[0].name + " " + .[0].kit + " " + (.[0].running | tostring)' <<<"$stdout")" = "abkt-one $TEST_DIR/root.yaml false" ]
	[ "$(jq -r '.[0].last_used >= .[0].created and .[0].size > 0' <<<"$stdout")" = true ]

	runtime kit rm abkt-one
	assert_success
	[ ! -e "$TEST_DIR/boxes/abkt-one" ]
	runtime kit ls -q
	assert_success
	[ -z "$stdout" ]
	# the next run of that name starts from the base again
	box_run abkt-one "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/tool 2>/dev/null || echo fresh'
	assert_success
	[ "$stdout" = fresh ]
	assert_kit_run_clean
}

@test "kit run --name: the home persists with the host rootfs and the default user; the root stays read-only where the kit says so" {
	box_run abkt-home -- sh -c 'echo cached >"$HOME/.cache-file"; id -u; stat -c %a:%u "$HOME"'
	assert_success
	[ "$stdout" = "$(printf '1000\n700:1000')" ]
	box_run abkt-home -- sh -c 'cat "$HOME/.cache-file"'
	assert_success
	[ "$stdout" = cached ]
	# a kit that keeps the root read-only: the home still persists
	kit ro.yaml <<-EOF
		rootfs: $TEST_DIR/base
		user: "0:0"
		security: {readonly_rootfs: true}
	EOF
	box_run abkt-ro "$TEST_DIR/ro.yaml" -- sh -c 'touch /opt/x 2>/dev/null || echo root-read-only; echo kept >/root/file'
	assert_success
	[ "$stdout" = root-read-only ]
	box_run abkt-ro "$TEST_DIR/ro.yaml" -- cat /root/file
	assert_success
	[ "$stdout" = kept ]
	assert_kit_run_clean
}

@test "kit fork: the new box starts from NAME's layer without a copy; the two diverge" {
	box_run abkt-base "$TEST_DIR/root.yaml" -- sh -c 'head -c 8388608 /dev/zero >/opt/big && echo base >/opt/who'
	assert_success
	local before after
	before=$(du -sk "$TEST_DIR/boxes" | cut -f1)
	runtime kit fork abkt-base abkt-task
	assert_success
	after=$(du -sk "$TEST_DIR/boxes" | cut -f1)
	[ $((after - before)) -lt 1024 ] || fail "the fork took $((after - before)) KiB: a copy"
	# both see the frozen layer, one file, not two
	local layer
	layer=$(jq -r '.layers[0]' "$TEST_DIR/boxes/abkt-task/box.json")
	[ "$(jq -r '.layers[0]' "$TEST_DIR/boxes/abkt-base/box.json")" = "$layer" ]
	[ -f "$TEST_DIR/boxes/.layers/$layer/opt/big" ]
	[ "$(stat -c %h "$TEST_DIR/boxes/.layers/$layer/opt/big")" = 1 ]
	# they diverge
	box_run abkt-task "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/who; echo task >/opt/who; echo x >>/opt/big; rm /opt/big; echo new >/opt/task-only'
	assert_success
	[ "$stdout" = base ]
	box_run abkt-base "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/who; ls /opt; wc -c </opt/big'
	assert_success
	[ "$stdout" = "$(printf 'base\nbig\nwho\n8388608')" ]
	box_run abkt-task "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/who; ls /opt'
	assert_success
	[ "$stdout" = "$(printf 'task\ntask-only\nwho')" ]
	# a fork of a fork; then removing the boxes frees the layers no box lists
	runtime kit fork abkt-task abkt-task2
	assert_success
	runtime kit ls -q
	[ "$stdout" = "$(printf 'abkt-base\nabkt-task\nabkt-task2')" ]
	runtime kit rm abkt-base abkt-task
	assert_success
	[ -d "$TEST_DIR/boxes/.layers/$layer" ]          # abkt-task2 stands on it
	box_run abkt-task2 "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/who'
	assert_success
	[ "$stdout" = task ]
	runtime kit rm abkt-task2
	assert_success
	[ -z "$(ls -A "$TEST_DIR/boxes/.layers")" ]
	assert_kit_run_clean
}

@test "kit run --name: a box in use is refused with one line, and so are rm and fork of it" {
	"$RUNTIME" --root "$ROOT" kit run --name abkt-busy --workspace "$WS" -- sh -c \
		'touch /workspace/up; while [ ! -e /workspace/go ]; do sleep 0.05; done' >"$TEST_DIR/a.out" 2>&1 3>&- &
	local pid=$!
	wait_for_path "$WS/up" || { cat "$TEST_DIR/a.out" >&2; kill "$pid"; false; }
	box_run abkt-busy -- true
	assert_failure 1
	assert_one_error_line "box abkt-busy is in use by another kit run"
	runtime kit rm abkt-busy
	assert_failure 1
	assert_one_error_line "box abkt-busy is in use by a kit run: remove it when the run has ended"
	runtime kit fork abkt-busy abkt-other
	assert_failure 1
	assert_one_error_line "box abkt-busy is in use by a kit run: fork it when the run has ended"
	[ ! -e "$TEST_DIR/boxes/abkt-other" ]
	runtime kit ls
	assert_success
	[[ "${lines[1]}" == abkt-busy*running ]]
	# the box's name is taken where a person works with the running box...
	runtime exec abkt-busy cat /proc/1/cmdline
	assert_success
	[[ "$stdout" == sh* ]] || fail "exec by name: $stdout"
	runtime ps abkt-busy
	assert_success
	runtime egress show --json abkt-busy
	assert_success
	[ "$(jq -r '.allow | length' <<<"$stdout")" = 0 ]
	runtime egress deny abkt-busy 198.18.48.7
	assert_success
	[ "$(jq -r .egressPolicy "$ROOT/box-abkt-busy/state.json")" = "allow=;deny=198.18.48.7" ]
	# ...and named in the error of those that end or change a container
	# (engines drive them by id; a gone id must never find a box)
	runtime kill abkt-busy KILL
	assert_failure 1
	assert_one_error_line 'container "abkt-busy" does not exist \(the box abkt-busy runs as container "box-abkt-busy"\)$'
	runtime state abkt-busy
	assert_failure 1
	assert_one_error_line 'the box abkt-busy runs as container "box-abkt-busy"'
	touch "$WS/go"
	wait "$pid"
	# the box's log outlives its run, under its name too
	runtime egress log abkt-busy
	assert_success
	assert_output_matches 'policy +deny +198\.18\.48\.7'
	runtime kit rm abkt-busy
	assert_success
	assert_kit_run_clean
}

@test "kit run --name: a SIGKILLed run leaves the box usable; the next run starts from what it wrote" {
	chown 0:0 "$WS"         # the kit's user is root
	"$RUNTIME" --root "$ROOT" kit run --name abkt-kill --workspace "$WS" "$TEST_DIR/root.yaml" -- sh -c \
		'echo before-kill >/opt/state; head -c 1048576 /dev/zero >/opt/blob; touch /workspace/up; exec sleep 300' \
		>"$TEST_DIR/k.out" 2>&1 3>&- &
	local pid=$!
	wait_for_path "$WS/up" || { cat "$TEST_DIR/k.out" >&2; kill "$pid"; false; }
	kill -KILL "$pid"
	wait "$pid" || true
	rm "$WS/up"
	box_run abkt-kill "$TEST_DIR/root.yaml" -- sh -c 'cat /opt/state; wc -c </opt/blob; echo again >/opt/state'
	assert_success
	[ "$stdout" = "$(printf 'before-kill\n1048576')" ]
	box_run abkt-kill "$TEST_DIR/root.yaml" -- cat /opt/state
	assert_success
	[ "$stdout" = again ]
	assert_kit_run_clean
}

@test "kit boxes: a store a crash left half-changed is finished by the next kit command" {
	box_run abkt-crash "$TEST_DIR/root.yaml" -- sh -c 'echo kept >/opt/kept'
	assert_success
	# a fork killed after freezing the upper layer, before box.json said so
	local id=0123456789abcdef0123456789abcdef
	mkdir -p "$TEST_DIR/boxes/.layers"
	mv "$TEST_DIR/boxes/abkt-crash/upper" "$TEST_DIR/boxes/.layers/$id"
	jq --arg id "$id" '.freezing = $id' "$TEST_DIR/boxes/abkt-crash/box.json" >"$TEST_DIR/j" &&
		mv "$TEST_DIR/j" "$TEST_DIR/boxes/abkt-crash/box.json"
	# a box being made, and one being removed
	mkdir -p "$TEST_DIR/boxes/.new-abkt-x-0000/upper" "$TEST_DIR/boxes/.trash-abkt-y-0000/upper"
	# and a layer nobody lists
	mkdir -p "$TEST_DIR/boxes/.layers/ffffffffffffffff/opt"
	runtime kit ls -q
	assert_success
	[ "$stdout" = abkt-crash ]
	[ ! -e "$TEST_DIR/boxes/.new-abkt-x-0000" ] && [ ! -e "$TEST_DIR/boxes/.trash-abkt-y-0000" ]
	[ ! -e "$TEST_DIR/boxes/.layers/ffffffffffffffff" ]
	[ "$(jq -c '[.layers, .freezing]' "$TEST_DIR/boxes/abkt-crash/box.json")" = "[[\"$id\"],null]" ]
	box_run abkt-crash "$TEST_DIR/root.yaml" -- cat /opt/kept
	assert_success
	[ "$stdout" = kept ]
	assert_kit_run_clean
}

@test "kit boxes: a box keeps its base and its user; bad names and operations are one line each" {
	box_run abkt-b "$TEST_DIR/root.yaml" -- true
	assert_success
	box_run abkt-b -- true
	assert_failure 1
	assert_one_error_line "box abkt-b lies on the rootfs dir:$TEST_DIR/base; this kit's is host \(run it under another name, or remove the box: agentbox kit rm abkt-b\)"
	kit u.yaml <<-EOF
		rootfs: $TEST_DIR/base
		user: "4242:4242"
	EOF
	box_run abkt-b "$TEST_DIR/u.yaml" -- true
	assert_failure 1
	assert_one_error_line "box abkt-b belongs to the user 0:0 .*this kit runs as 4242:4242"
	local bad
	for bad in ../x .hidden 'a b' "$(printf 'x%.0s' {1..64})" ''; do
		box_run "$bad" -- true
		assert_failure 1
		assert_one_error_line "--name \"$bad\": a box name is letters, digits"
	done
	runtime kit fork abkt-b abkt-b
	assert_failure 1
	assert_one_error_line "fork abkt-b into itself"
	box_run abkt-c "$TEST_DIR/root.yaml" -- true
	runtime kit fork abkt-b abkt-c
	assert_failure 1
	assert_one_error_line "box abkt-c exists already"
	runtime kit fork abkt-nope abkt-d
	assert_failure 1
	assert_one_error_line "box abkt-nope does not exist"
	runtime kit rm abkt-nope
	assert_failure 1
	assert_one_error_line "box abkt-nope does not exist"
	runtime kit fork abkt-b
	assert_failure 1
	assert_one_error_line "fork: give a box NAME and the NEW one's name"
	[ "$(ls "$TEST_DIR/boxes")" = "$(printf 'abkt-b\nabkt-c')" ]
	# a first run that never starts leaves no box behind
	kit cred.yaml <<-'EOF'
		credentials:
		  - name: TOKEN
		    from: env:ABKT_UNSET_VARIABLE
	EOF
	box_run abkt-new "$TEST_DIR/cred.yaml" -- true
	assert_failure 1
	assert_one_error_line "credentials\[0\] \(TOKEN\): the host has no environment variable ABKT_UNSET_VARIABLE"
	[ "$(ls "$TEST_DIR/boxes")" = "$(printf 'abkt-b\nabkt-c')" ]
	assert_kit_run_clean
}

@test "kit boxes: each user's store is under their XDG data directory, root's under /var/lib" {
	# (under /tmp: the test's own directory is root's alone)
	local top home
	top=$(mktemp -d /tmp/abkt-nobody.XXXXXX)
	defer rm -rf "$top"
	chmod 755 "$top"
	home=$top/home
	mkdir -p "$home"
	chown 65534:65534 "$home"
	run env -u AGENTBOX_BOXES -u XDG_DATA_HOME HOME="$home" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$RUNTIME" --root "$top/state" kit ls -q
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(stat -c '%u %a' "$home/.local/share/agentbox/boxes")" = "65534 700" ]
	mkdir -p "$top/xdg"
	chown 65534:65534 "$top/xdg"
	run env -u AGENTBOX_BOXES HOME="$home" XDG_DATA_HOME="$top/xdg" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$RUNTIME" --root "$top/state" kit ls -q
	[ "$status" -eq 0 ] || fail "$output"
	[ -d "$top/xdg/agentbox/boxes" ]
	# another user's store is not ours to use
	run env AGENTBOX_BOXES="$top/xdg/agentbox/boxes" "$RUNTIME" --root "$ROOT" kit ls
	[ "$status" -eq 1 ]
	[[ "$output" == *"not owned by us, or writable by others"* ]]
	# root's (read only: nothing is made by ls that was not there)
	if [ -d /var/lib/agentbox/boxes ]; then
		run env -u AGENTBOX_BOXES "$RUNTIME" --root "$ROOT" kit ls -q
		[ "$status" -eq 0 ]
	fi
}
