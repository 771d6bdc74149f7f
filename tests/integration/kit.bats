#!/usr/bin/env bats
# Kits (agentbox-kit(5)): kit build / run / show.
#
# The network test builds its own little internet, after TESTING.md: a netns
# "inet" joined to the host's netns by a veth (198.18.200.1/30 here,
# 198.18.200.2/30 there), test servers on 198.18.201.10 and .11 in it, and a
# host route for 198.18.201.0/24 through the veth. slirp4netns runs in the
# host's netns, so the box reaches them through it. Nothing else is routed.

load helpers
load kit_helpers

KITS=$REPO_ROOT/tests/data/kits

setup() {
	requires root
	setup_state_only
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 1000:1000 "$WS"
	kit_setup_common
}

teardown() {
	teardown_bundle
}

# oci_layout DIR [OPTIONS]: a two-layer image layout tagged v1 (see oci_layout.py);
# prints the manifest's digest (hex).
oci_layout() {
	python3 "$REPO_ROOT/tests/integration/oci_layout.py" "$@"
}

# blob_of LAYOUT MANIFEST_HEX JQ: the hex digest the manifest names at JQ.
blob_of() {
	jq -r "$3" "$1/blobs/sha256/$2" | cut -d: -f2
}

# The image cache under the state root holds exactly $1 entries (temporary ones included).
assert_image_cache_count() {
	local n
	n=$(ls -A "$ROOT/.images" 2>/dev/null | wc -l)
	[ "$n" -eq "$1" ] || fail "image cache: $n entries, want $1: $(ls -A "$ROOT/.images" 2>/dev/null)"
}

# ---------------------------------------------------------------- build

@test "kit build: a bundle with hardened defaults, host rootfs and curated /etc" {
	kit hello.yaml <<-'EOF'
		name: hello
		env:
		  GREETING: hi
		network:
		  allow: [pypi.org]
		  deny: [169.254.169.254]
		command: [sh, -c, 'echo "$GREETING from $(id -u)"']
	EOF
	runtime kit build "$TEST_DIR/hello.yaml" -o "$TEST_DIR/b"
	assert_success
	local c=$TEST_DIR/b/config.json
	[ "$(jq -r .process.user.uid "$c")" = 1000 ]
	[ "$(jq -r .process.noNewPrivileges "$c")" = true ]
	[ "$(jq -r .root.readonly "$c")" = true ]
	[ "$(jq -r .root.path "$c")" = rootfs ]
	[ "$(jq -r '.process.capabilities.bounding | length' "$c")" = 0 ]
	[ "$(jq -r '[.linux.namespaces[].type] | sort | join(",")' "$c")" = cgroup,ipc,mount,network,pid,uts ]
	[ "$(jq -r '.annotations["agentbox.seccomp.profile"]' "$c")" = agent ]
	[ "$(jq -r '.annotations["agentbox.egress.allow"]' "$c")" = pypi.org ]
	[ "$(jq -r '.annotations["agentbox.egress.deny"]' "$c")" = 169.254.169.254 ]
	jq -e '.linux.maskedPaths | index("/proc/kcore")' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/usr" and (.options | index("ro")))' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/tmp" and .type == "tmpfs")' "$c" >/dev/null
	jq -e '.mounts[] | select(.destination == "/run" and .type == "tmpfs")' "$c" >/dev/null
	# Debian's merged /usr: the symlinks are recreated, not bound
	local d
	for d in bin sbin lib lib64; do
		if [ -L "/$d" ]; then
			[ "$(readlink "$TEST_DIR/b/rootfs/$d")" = "$(readlink "/$d")" ]
		fi
	done
	grep -q '^agent:x:1000:1000:' "$TEST_DIR/b/rootfs/etc/passwd"
	grep -q '^root:x:0:0:' "$TEST_DIR/b/rootfs/etc/passwd"
	grep -q 'nameserver 10.0.2.3' "$TEST_DIR/b/rootfs/etc/resolv.conf"
	[ -d "$TEST_DIR/b/rootfs/etc/ssl/certs" ] || [ ! -d /etc/ssl/certs ]

	# and it runs (the egress annotations need the runtime's consent)
	runtime --egress-allow pypi.org run --bundle "$TEST_DIR/b" hello-ct
	assert_success
	[ "$output" = "hi from 1000" ]
}

@test "kit build: the bundle also runs under runc" {
	command -v runc >/dev/null || skip "needs runc"
	kit plain.yaml <<-'EOF'
		name: plain
		files:
		  - path: /etc/motd
		    content: "from a kit file\n"
		startup: ["echo startup ran"]
		command: [sh, -c, 'cat /etc/motd; id -u; touch /x 2>/dev/null || echo read-only root']
	EOF
	runtime kit build "$TEST_DIR/plain.yaml" -o "$TEST_DIR/b"
	assert_success
	mkdir -p "$TEST_DIR/runc"
	defer runc --root "$TEST_DIR/runc" delete -f "kit-runc-$$"
	run timeout 60 runc --root "$TEST_DIR/runc" run -b "$TEST_DIR/b" "kit-runc-$$" </dev/null
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "startup ran" ]
	[ "${lines[1]}" = "from a kit file" ]
	[ "${lines[2]}" = 1000 ]
	[ "${lines[3]}" = "read-only root" ]
}

@test "kit build: replaces its own earlier build, refuses any other non-empty directory" {
	kit k.yaml <<<'name: k'
	runtime kit build "$TEST_DIR/k.yaml" -o "$TEST_DIR/b"
	assert_success
	runtime kit build "$TEST_DIR/k.yaml" -o "$TEST_DIR/b"
	assert_success
	mkdir "$TEST_DIR/other"
	touch "$TEST_DIR/other/precious"
	runtime kit build "$TEST_DIR/k.yaml" -o "$TEST_DIR/other"
	assert_failure 1
	assert_one_error_line "exists and is not empty"
	[ -e "$TEST_DIR/other/precious" ]
}

@test "kit build: errors name file, line, column and field; nothing is written" {
	runtime kit build "$KITS/bad-port.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "bad-port.yaml:6:7: network.allow\[2\]: entry \"example.com:70000\": port 70000 out of range"
	[ ! -e "$TEST_DIR/b" ]
	runtime kit build "$KITS/bad-field.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "bad-field.yaml:4:3: resources.swap: unknown field"
	runtime kit build "$KITS/bad-type.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "bad-type.yaml:3:20: security.readonly_rootfs: expected a boolean"
	runtime kit build "$KITS/cycle-a.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "cycle-b.yaml:2:10: extends: cycle: .*cycle-a.yaml -> .*cycle-b.yaml -> .*cycle-a.yaml"
	kit img.yaml <<<'rootfs: {tag: latest}'
	runtime kit build "$TEST_DIR/img.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line 'img.yaml:1:9: rootfs: an image needs "image"'
	runtime kit build "$TEST_DIR/img.yaml"
	assert_failure 1
	assert_one_error_line "-o BUNDLE is required"
	kit guard.yaml <<<'workspace_guard: maybe'
	runtime kit build "$TEST_DIR/guard.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line 'guard.yaml:1:18: workspace_guard: "maybe": give quarantine or off'
	runtime kit run --workspace-guard maybe -- true
	assert_failure 1
	assert_one_error_line '--workspace-guard "maybe": give quarantine or off'
	[ ! -e "$TEST_DIR/b" ]
	assert_kit_run_clean
}

# ---------------------------------------------------------------- show

@test "kit show: the effective kit after extends, and its policy" {
	runtime kit show "$KITS/child.yaml"
	assert_success
	assert_output_contains "# The effective kit: $KITS/child.yaml extends $KITS/middle.yaml extends $KITS/base.yaml"
	assert_output_contains "#   egress allow: 198.18.201.10:8080"
	assert_output_contains "#   egress deny:  198.18.201.99"
	assert_output_contains "#   seccomp profile: agent"
	assert_output_contains "name: child"
	assert_output_contains "FROM_BASE: base"
	assert_output_contains "OVERRIDDEN: middle"
	refute_output_contains "  REMOVED: "
	refute_output_contains "extends:"
	assert_output_contains "pids: 128"
	# the output is itself a kit that shows the same
	printf '%s\n' "$output" >"$TEST_DIR/shown.yaml"
	local first=$output
	runtime kit show "$TEST_DIR/shown.yaml"
	assert_success
	[ "$(sed -n '/^name:/,$p' <<<"$output")" = "$(sed -n '/^name:/,$p' <<<"$first")" ]
	# the same as one JSON object, the option before or after KIT
	runtime kit show --json "$KITS/child.yaml"
	assert_success
	[ "$(jq -r '.files | join(" ")' <<<"$stdout")" = "$KITS/child.yaml $KITS/middle.yaml $KITS/base.yaml" ]
	[ "$(jq -c '[.policy.allow, .policy.deny, .policy.seccomp, .policy.user.from]' <<<"$stdout")" = \
		'[["198.18.201.10:8080"],["198.18.201.99"],"agent","default"]' ] || fail "$stdout"
	[ "$(jq -c '[.kit.name, .kit.env.FROM_BASE, .kit.env.OVERRIDDEN, (.kit.env | has("REMOVED")), .kit.resources.pids]' \
		<<<"$stdout")" = '["child","base","middle",false,128]' ] || fail "$stdout"
	local json=$stdout
	runtime kit show "$KITS/child.yaml" --json
	assert_success
	[ "$stdout" = "$json" ]
	# the default kit; and usage errors name what is wrong
	runtime kit show --json
	assert_success
	[ "$(jq -r '.files | length' <<<"$stdout")" = 0 ]
	runtime kit show a.yaml b.yaml
	assert_failure 1
	assert_one_error_line 'kit: show: give at most one KIT \("b.yaml" is a second\)'
}

@test "kit show: a header credential whose host network.allow does not allow is warned about" {
	cat >"$TEST_DIR/cred.yaml" <<'EOF'
rootfs: host
network:
  allow: [api.allowed.test, "*.svc.test", web.test:80]
credentials:
  - name: TOKEN
    from: env:AGENTBOX_TEST_NO_SUCH
    to: header
    hosts: [api.allowed.test, "*.svc.test", web.test, api.forgotten.test]
    header: "Authorization: Bearer {}"
EOF
	runtime kit show "$TEST_DIR/cred.yaml"
	assert_success
	# one line each on stderr and in the policy comment, for the two it cannot reach
	[ "$(grep -c '^agentbox: warning: credential TOKEN: .* is not allowed on TCP/443 by network.allow' <<<"$output")" = 2 ]
	assert_output_contains "#   warning: credential TOKEN: api.forgotten.test is not allowed on TCP/443 by network.allow: its requests can never be made"
	assert_output_contains "#   warning: credential TOKEN: web.test is not allowed on TCP/443"
	refute_output_contains "credential TOKEN: api.allowed.test is not"
	refute_output_contains "credential TOKEN: *.svc.test is not"
}

@test "kit show: the example kits are valid" {
	local k
	for k in "$REPO_ROOT"/kits/*.yaml; do
		runtime kit show "$k"
		assert_success
	done
	runtime kit show "$REPO_ROOT/kits/git-ssh.yaml"
	assert_output_contains "#   egress allow: github.com:22"
	runtime kit show "$REPO_ROOT/kits/no-network.yaml"
	assert_output_contains "#   network:   none"
	jq -e '.properties | keys | length == 19' "$REPO_ROOT/kits/kit.schema.json" >/dev/null
}

# ---------------------------------------------------------------- run

@test "kit run: the exit status comes back and nothing is left" {
	kit st.yaml <<<'command: [sh, -c, "exit 7"]'
	runtime kit run "$TEST_DIR/st.yaml"
	assert_failure 7
	assert_kit_run_clean
	runtime kit run "$TEST_DIR/st.yaml" -- sh -c 'echo replaced; exit 0'
	assert_success
	[ "$output" = replaced ]
	assert_kit_run_clean
}

@test "kit run: without a KIT, the current directory is the workspace and there is no network" {
	runtime_at "$WS" kit run -- sh -c 'pwd; id -u; echo made >/workspace/made; grep -c : /proc/net/dev'
	assert_success
	[ "${lines[0]}" = /workspace ]
	[ "${lines[1]}" = 1000 ]          # the workspace's owner
	[ "$(cat "$WS/made")" = made ]
	[ "${lines[2]}" = 1 ]             # only lo
	assert_kit_run_clean
}

@test "kit run: --workspace overrides, the kit's env, user and extends apply" {
	runtime kit run --workspace "$WS" "$KITS/child.yaml"
	assert_success
	[ "${lines[0]}" = "middle startup" ]
	[ "${lines[1]}" = "base middle child unset" ]
	[ "${lines[2]}" = 128 ]
	kit u.yaml <<-'EOF'
		user: "4242:4343"
		command: [sh, -c, 'echo $(id -u):$(id -g) $HOME; touch $HOME/ok && echo home-writable']
	EOF
	runtime kit run "$TEST_DIR/u.yaml"
	assert_success
	[ "${lines[0]}" = "4242:4343 /home/agent" ]
	[ "${lines[1]}" = home-writable ]
	assert_kit_run_clean
}

@test "kit run: mounts, files and capabilities" {
	mkdir "$TEST_DIR/data"
	echo data >"$TEST_DIR/data/d"
	echo from-source >"$TEST_DIR/src.txt"
	kit m.yaml <<-'EOF'
		mounts:
		  - source: data
		    target: /data
		  - type: tmpfs
		    target: /scratch
		    readonly: false
		    size: 1m
		files:
		  - path: /etc/agent.conf
		    source: src.txt
		    mode: "0640"
		    owner: "0:1000"
		security:
		  capabilities: [NET_BIND_SERVICE]
		command:
		  - sh
		  - -c
		  - |
		    cat /data/d
		    touch /data/x 2>/dev/null || echo data-read-only
		    touch /scratch/x && echo scratch-writable
		    cat /etc/agent.conf
		    stat -c %a:%u:%g /etc/agent.conf
		    grep CapEff /proc/self/status
	EOF
	runtime kit run "$TEST_DIR/m.yaml"
	assert_success
	[ "${lines[0]}" = data ]
	[ "${lines[1]}" = data-read-only ]
	[ "${lines[2]}" = scratch-writable ]
	[ "${lines[3]}" = from-source ]
	[ "${lines[4]}" = 640:0:1000 ]
	[[ "${lines[5]}" =~ CapEff:.*0000000000000400 ]]
	[ ! -e "$TEST_DIR/data/x" ]
	assert_kit_run_clean
}

@test "kit run: a failing startup command stops the run with its output" {
	kit s.yaml <<-'EOF'
		startup:
		  - echo first
		  - echo failing >&2; exit 3
		  - echo never
		command: [echo, never either]
	EOF
	runtime kit run "$TEST_DIR/s.yaml"
	assert_failure 3
	assert_output_contains first
	assert_output_contains failing
	assert_output_contains "kit startup[1] failed with status 3"
	refute_output_contains never
	assert_kit_run_clean
}

@test "kit run: resources.timeout kills the box" {
	kit t.yaml <<-'EOF'
		resources:
		  timeout: 500ms
		command: [sleep, "30"]
	EOF
	runtime kit run "$TEST_DIR/t.yaml"
	[ "$status" -ne 0 ]
	assert_output_contains "exceeded its timeout of 500 ms"
	assert_kit_run_clean
}

@test "kit run: signals are forwarded to the box" {
	kit sig.yaml <<<'command: [sh, -c, "trap \"echo got TERM; exit 42\" TERM; touch /workspace/up; while :; do sleep 0.05; done"]'
	"$RUNTIME" --root "$ROOT" kit run --workspace "$WS" "$TEST_DIR/sig.yaml" >"$TEST_DIR/sig.out" 2>&1 3>&- &
	local pid=$!
	wait_for_path "$WS/up" || { cat "$TEST_DIR/sig.out" >&2; kill "$pid"; false; }
	kill -TERM "$pid"
	local st=0
	wait "$pid" || st=$?
	[ "$st" -eq 42 ]
	grep -q "got TERM" "$TEST_DIR/sig.out"
	assert_kit_run_clean
}

@test "kit run: an OCI image layout: layers in order with whiteouts, the image's config, a cache by manifest digest" {
	local mh
	mh=$(oci_layout "$TEST_DIR/img")
	kit i.yaml <<<"rootfs: $TEST_DIR/img:v1"
	# no command anywhere: the image's Cmd, in its WorkingDir, with its Env under the box's HOME
	runtime kit run "$TEST_DIR/i.yaml"
	assert_success
	[ "$output" = image-cmd ]
	[ "$(ls -A "$ROOT/.images")" = "$mh" ]
	runtime kit run "$TEST_DIR/i.yaml" -- sh -c 'test -e /etc/gone.txt && echo still-there; ls -A /opq; cat /etc/kept.txt /layer2.txt; echo "$IMG_VAR $HOME"; pwd'
	assert_success
	[ "${lines[0]}" = new.txt ]     # opaque: old.txt and sub/ of layer 1 are gone, layer 2's file is there
	[ "${lines[1]}" = kept ]
	[ "${lines[2]}" = "layer 2" ]
	[ "${lines[3]}" = "from-image /home/agent" ]
	[ "${lines[4]}" = /opq ]
	[ "${#lines[@]}" -eq 5 ]
	# the unpacked root has no whiteout markers and nothing outside
	[ ! -e "$ROOT/.images/$mh/etc/gone.txt" ] && [ ! -e "$ROOT/.images/$mh/etc/.wh.gone.txt" ]
	[ ! -e "$ROOT/.images/$mh/opq/.wh..wh..opq" ] && [ ! -e "$ROOT/.images/$mh/opq/sub" ]
	# the next run takes the cache: the same directory, and the layers are not read again
	local before
	before=$(stat -c '%i %Y' "$ROOT/.images/$mh")
	rm "$TEST_DIR/img/blobs/sha256/$(blob_of "$TEST_DIR/img" "$mh" '.layers[0].digest')"
	runtime kit run "$TEST_DIR/i.yaml" -- cat /layer2.txt
	assert_success
	[ "$output" = "layer 2" ]
	[ "$(stat -c '%i %Y' "$ROOT/.images/$mh")" = "$before" ]
	assert_image_cache_count 1
	# kit build names the cached root and the image's defaults
	runtime kit build "$TEST_DIR/i.yaml" -o "$TEST_DIR/b"
	assert_success
	[ "$(jq -r .root.path "$TEST_DIR/b/config.json")" = "$(realpath "$ROOT")/.images/$mh" ]
	[ "$(jq -c .process.args "$TEST_DIR/b/config.json")" = '["/bin/sh","-c","echo image-cmd"]' ]
	[ "$(jq -r .process.cwd "$TEST_DIR/b/config.json")" = /opq ]
	jq -e '.process.env | index("IMG_VAR=from-image") and index("PATH=/bin") and index("HOME=/home/agent")' "$TEST_DIR/b/config.json"
	# a tar+zstd layer, and the {image, tag} form
	mh=$(oci_layout "$TEST_DIR/zimg" --zstd)
	kit z.yaml <<<"rootfs: {image: $TEST_DIR/zimg, tag: v1}"
	runtime kit run "$TEST_DIR/z.yaml" -- sh -c 'ls -A /opq; cat /layer2.txt'
	assert_success
	[ "$output" = "$(printf 'new.txt\nlayer 2')" ]
	assert_image_cache_count 2
	# a file of a layer under a symlink of a lower one that points out: the
	# symlink is replaced by a directory, never followed
	mkdir "$TEST_DIR/outside"
	mh=$(oci_layout "$TEST_DIR/thr" --through "$TEST_DIR/outside")
	kit s.yaml <<<"rootfs: $TEST_DIR/thr:v1"
	runtime kit run "$TEST_DIR/s.yaml" -- cat /out/through-symlink
	assert_success
	[ "$output" = out ]
	[ -z "$(ls -A "$TEST_DIR/outside")" ]
	[ -d "$ROOT/.images/$mh/out" ] && [ ! -L "$ROOT/.images/$mh/out" ]
	# a tag naming an image index: this host's platform is picked
	mh=$(oci_layout "$TEST_DIR/nimg" --nested)
	kit n.yaml <<<"rootfs: $TEST_DIR/nimg:v1"
	runtime kit run "$TEST_DIR/n.yaml" -- cat /layer2.txt
	assert_success
	[ "$output" = "layer 2" ]
	# (its manifest is the first image's: the same cache entry)
	[ -d "$ROOT/.images/$mh" ]
	assert_image_cache_count 3
	assert_kit_run_clean
}

@test "kit run: the first unpacking of an image says so on a terminal, layer by layer; a cached image or a pipe gets no such line" {
	oci_layout "$TEST_DIR/img" >/dev/null
	kit i.yaml <<<"rootfs: $TEST_DIR/img:v1"
	local pty=("$PYTHON" "$REPO_ROOT/tests/integration/ptyrun.py" --timeout 60 --)
	run "${pty[@]}" "$RUNTIME" --root "$ROOT" kit run --workspace "$WS" "$TEST_DIR/i.yaml" -- true
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"agentbox: unpacking the image $TEST_DIR/img (once; cached for the next runs): layer 1 of 2, "*" MiB"* ]] ||
		fail "no progress line: $output"
	[[ "$output" == *"layer 2 of 2"* ]] || fail "$output"
	run "${pty[@]}" "$RUNTIME" --root "$ROOT" kit run --workspace "$WS" "$TEST_DIR/i.yaml" -- true
	[ "$status" -eq 0 ] && [[ "$output" != *unpacking* ]] || fail "a cached image: $output"
	rm -rf "$ROOT/.images"
	runtime kit run --workspace "$WS" "$TEST_DIR/i.yaml" -- true
	assert_success
	refute_output_contains unpacking
	assert_kit_run_clean
}

@test "kit run: an image without libarchive is one clear line" {
	oci_layout "$TEST_DIR/img" >/dev/null
	kit i.yaml <<<"rootfs: $TEST_DIR/img:v1"
	local lib
	lib=$(realpath "$(ldconfig -p | awk '$1 == "libarchive.so.13" {print $NF; exit}')")
	[ -f "$lib" ]
	# the runtime in a mount namespace of its own where the library is empty
	cat >"$TEST_DIR/nolib" <<-EOF
		#!/bin/sh
		exec unshare -m --propagation private sh -c 'mount --bind /dev/null "\$0" && exec "\$@"' '$lib' '$RUNTIME' "\$@"
	EOF
	chmod +x "$TEST_DIR/nolib"
	RUNTIME=$TEST_DIR/nolib runtime kit run "$TEST_DIR/i.yaml" -- true
	assert_failure 1
	assert_one_error_line "needs libarchive.so.13 \(Debian package libarchive13\)"
	assert_image_cache_count 0
	# the same image with it
	runtime kit run "$TEST_DIR/i.yaml" -- true
	assert_success
	assert_kit_run_clean
}

@test "kit run: a bad OCI image is refused with one line, and nothing is cached" {
	local mh blob
	# a layer that does not match its digest (same size)
	mh=$(oci_layout "$TEST_DIR/tam")
	blob=$(blob_of "$TEST_DIR/tam" "$mh" '.layers[1].digest')
	python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0xff; open(p, "wb").write(b)' \
		"$TEST_DIR/tam/blobs/sha256/$blob"
	kit t.yaml <<<"rootfs: $TEST_DIR/tam:v1"
	runtime kit run "$TEST_DIR/t.yaml" -- true
	assert_failure 1
	assert_one_error_line "layer 1: blob $TEST_DIR/tam/blobs/sha256/$blob: digest mismatch"
	assert_image_cache_count 0
	# an unknown tag
	oci_layout "$TEST_DIR/img" >/dev/null
	kit u.yaml <<<"rootfs: $TEST_DIR/img:nope"
	runtime kit run "$TEST_DIR/u.yaml" -- true
	assert_failure 1
	assert_one_error_line "index.json: no image tagged \"nope\""
	# a layer that is not a tar
	oci_layout "$TEST_DIR/cor" --corrupt >/dev/null
	kit c.yaml <<<"rootfs: $TEST_DIR/cor:v1"
	runtime kit run "$TEST_DIR/c.yaml" -- true
	assert_failure 1
	assert_one_error_line "layer 1 \(blob sha256:[0-9a-f]{12}\): Unrecognized archive format"
	# an entry that leaves the root
	oci_layout "$TEST_DIR/esc" --escape >/dev/null
	kit e.yaml <<<"rootfs: $TEST_DIR/esc:v1"
	runtime kit run "$TEST_DIR/e.yaml" -- true
	assert_failure 1
	assert_one_error_line 'entry "../escaped" leaves the root: refused'
	[ ! -e "$ROOT/.images/escaped" ] && [ ! -e "$ROOT/escaped" ]
	# a hard link to a host file through a lower layer's symlink
	mkdir "$TEST_DIR/outside"
	echo secret >"$TEST_DIR/outside/secret"
	oci_layout "$TEST_DIR/hl" --link-through "$TEST_DIR/outside" >/dev/null
	kit h.yaml <<<"rootfs: $TEST_DIR/hl:v1"
	runtime kit run "$TEST_DIR/h.yaml" -- true
	assert_failure 1
	assert_one_error_line "layer 1 \(blob sha256:[0-9a-f]{12}\): h: Hard-link target 'out/secret' does not exist"
	[ "$(stat -c %h "$TEST_DIR/outside/secret")" -eq 1 ]
	# a missing blob, an unsupported media type, no index.json
	mh=$(oci_layout "$TEST_DIR/mis")
	blob=$(blob_of "$TEST_DIR/mis" "$mh" '.config.digest')
	rm "$TEST_DIR/mis/blobs/sha256/$blob"
	kit m.yaml <<<"rootfs: $TEST_DIR/mis:v1"
	runtime kit run "$TEST_DIR/m.yaml" -- true
	assert_failure 1
	assert_one_error_line "config: blob $TEST_DIR/mis/blobs/sha256/$blob: No such file"
	jq '.manifests[0].mediaType = "application/vnd.example.thing"' "$TEST_DIR/img/index.json" >"$TEST_DIR/idx" &&
		mv "$TEST_DIR/idx" "$TEST_DIR/img/index.json"
	kit v.yaml <<<"rootfs: $TEST_DIR/img:v1"
	runtime kit run "$TEST_DIR/v.yaml" -- true
	assert_failure 1
	assert_one_error_line 'unsupported media type "application/vnd.example.thing"'
	rm "$TEST_DIR/img/index.json"
	runtime kit build "$TEST_DIR/v.yaml" -o "$TEST_DIR/b"
	assert_failure 1
	assert_one_error_line "$TEST_DIR/img/index.json: No such file"
	[ ! -e "$TEST_DIR/b" ]
	assert_image_cache_count 0
	assert_kit_run_clean
}

# procs_in_pidns NS: " PID:CMDLINE" for each process in the pid namespace NS
# (as readlink /proc/PID/ns/pid names it)
procs_in_pidns() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" != "$1" ] ||
			printf ' %s:%s' "${p#/proc/}" "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
	done
}

@test "kit run: a SIGKILLed kit run takes its box along; the next kit command removes what it left" {
	kit k.yaml <<<'command: [sh, -c, "touch /workspace/up; exec sleep 300"]'
	"$RUNTIME" --root "$ROOT" kit run --workspace "$WS" "$TEST_DIR/k.yaml" >"$TEST_DIR/k.out" 2>&1 3>&- &
	local pid=$!
	wait_for_path "$WS/up" || { cat "$TEST_DIR/k.out" >&2; kill "$pid"; false; }
	local id dir init
	id=$(ls "$ROOT" | grep '^kit-' | grep -v '\.lock$')
	[ -n "$id" ]
	dir=/run/agentbox-kits/$id
	[ -s "$dir/owner" ]
	init=$(jq -r .pid "$ROOT/$id/state.json")
	[ "$init" -gt 0 ]
	local pidns
	pidns=$(readlink "/proc/$init/ns/pid")
	[ -n "$(procs_in_pidns "$pidns")" ] || fail "no process found in the box's pid namespace"
	# the box's init runs as the kit's user: its parent-death signal survived the switch
	kill -0 "$init"
	kill -KILL "$pid"
	wait "$pid" || true
	local i
	for ((i = 0; i < 250; i++)); do
		kill -0 "$init" 2>/dev/null || break
		sleep 0.02
	done
	! kill -0 "$init" 2>/dev/null || fail "the box's init $init outlived its kit run"
	# nothing is left in the box's pid namespace
	local left
	left=$(procs_in_pidns "$pidns")
	[ -z "$left" ] || fail "processes of the box outlived its kit run:$left"
	# what the killed run left is still there (nobody else cleans up) ...
	[ -d "$dir" ]
	[ -d "$ROOT/$id" ]
	grep -q "$dir/merged" /proc/self/mountinfo
	# ... until the next kit command
	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml" -- true
	assert_success
	[ ! -e "$dir" ]
	assert_kit_run_clean
}

@test "kit run: the rootfs is a copy-on-write overlay; the base stays untouched" {
	ensure_rootfs
	cp -a "$TEST_ROOTFS" "$TEST_DIR/base"
	local before
	before=$(cd "$TEST_DIR/base" && find . -printf '%p %m %s %T@\n' | sort | sha256sum)
	kit ow.yaml <<-EOF
		rootfs: $TEST_DIR/base
		security:
		  readonly_rootfs: false
		user: "0:0"
		command: [sh, -c, 'echo new >/newfile; echo changed >/etc/hosts; rm /bin/abtest; ls /newfile; cat /etc/hosts']
	EOF
	runtime kit run "$TEST_DIR/ow.yaml"
	assert_success
	[ "${lines[0]}" = /newfile ]
	[ "$(cd "$TEST_DIR/base" && find . -printf '%p %m %s %T@\n' | sort | sha256sum)" = "$before" ]
	[ -e "$TEST_DIR/base/bin/abtest" ]
	[ ! -e "$TEST_DIR/base/newfile" ]
	# and the next run starts from the base again
	runtime kit run "$TEST_DIR/ow.yaml" -- sh -c 'ls /newfile 2>/dev/null || echo clean; ls /bin/abtest'
	assert_success
	[ "${lines[0]}" = clean ]
	assert_kit_run_clean
}

@test "kit run: credentials reach the box as env and file, and are never written to disk" {
	local secret="SECRETVALUE-$RANDOM$RANDOM$RANDOM"
	local want
	want=$(printf '%s' "$secret" | sha256sum | cut -d' ' -f1)
	mkdir "$TEST_DIR/src"
	printf '%s' "$secret" >"$TEST_DIR/src/token"
	kit cred.yaml <<-EOF
		credentials:
		  - name: KIT_TOKEN
		    from: env:KIT_TEST_SECRET
		  - name: TOKEN_FILE
		    from: file:src/token
		    to: file:/run/secrets/token
		command:
		  - sh
		  - -c
		  - |
		    printf %s "\$KIT_TOKEN" | sha256sum >/workspace/env.sha
		    sha256sum </run/secrets/token >/workspace/file.sha
		    stat -c %a:%u /run/secrets/token >/workspace/file.stat
		    stat -f -c %T /run/secrets >/workspace/file.fs
		    touch /workspace/ready
		    while [ ! -e /workspace/go ]; do sleep 0.05; done
	EOF
	# kit build writes references only
	runtime kit build "$TEST_DIR/cred.yaml" -o "$TEST_DIR/b"
	assert_success
	jq -r '.annotations["agentbox.kit.credentials"]' "$TEST_DIR/b/config.json" | grep -q 'env:KIT_TEST_SECRET'

	KIT_TEST_SECRET=$secret "$RUNTIME" --root "$ROOT" --log "$TEST_DIR/agentbox.log" --debug \
		kit run --workspace "$WS" "$TEST_DIR/cred.yaml" >"$TEST_DIR/run.out" 2>&1 3>&- &
	local pid=$!
	wait_for_path "$WS/ready" || { cat "$TEST_DIR/run.out" >&2; kill "$pid"; false; }
	# while it runs: its bundle, state and overlay are there, and hold no secret
	ls /run/agentbox-kits/kit-*/bundle/config.json >/dev/null
	[ -n "$(ls -A "$ROOT")" ]
	run grep -rsl --exclude-dir=src -- "$secret" "$ROOT" /run/agentbox-kits "$TEST_DIR"
	[ "$status" -eq 1 ] || fail "the secret is on disk: $output"
	touch "$WS/go"
	local st=0
	wait "$pid" || st=$?
	cat "$TEST_DIR/run.out" >&2
	[ "$st" -eq 0 ]
	[ "$(cut -d' ' -f1 "$WS/env.sha")" = "$want" ]
	[ "$(cut -d' ' -f1 "$WS/file.sha")" = "$want" ]
	[ "$(cat "$WS/file.stat")" = 400:1000 ]
	[ "$(cat "$WS/file.fs")" = tmpfs ]
	run grep -rsl --exclude-dir=src -- "$secret" "$ROOT" /run/agentbox-kits "$TEST_DIR"
	[ "$status" -eq 1 ] || fail "the secret is on disk: $output"
	assert_kit_run_clean

	# a missing source is an error naming the credential, not its value
	runtime kit run "$TEST_DIR/cred.yaml"
	assert_failure 1
	assert_one_error_line "credentials\[0\] \(KIT_TOKEN\): the host has no environment variable KIT_TEST_SECRET"
	assert_kit_run_clean
}

@test "kit run: resources are applied" {
	[ -e /sys/fs/cgroup/pids/cgroup.procs ] || skip "needs the v1 pids hierarchy"
	kit r.yaml <<-'EOF'
		resources:
		  memory: 64m
		  pids: 32
		command: [sh, -c, 'cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes']
	EOF
	runtime kit run "$TEST_DIR/r.yaml"
	assert_success
	[ "${lines[0]}" = 32 ]
	[ "${lines[1]}" = $((64 << 20)) ]
	assert_kit_run_clean
}

@test "kit run: -t gives the box a terminal" {
	command -v script >/dev/null || skip "needs script(1)"
	run timeout 30 script -qec "$RUNTIME --root $ROOT kit run -t -- sh -c 'test -t 0 && echo has-a-tty; echo TERM=\$TERM'" /dev/null
	[ "$status" -eq 0 ]
	assert_output_contains has-a-tty
	assert_output_contains TERM=xterm
	assert_kit_run_clean
}

@test "kit run: bad arguments" {
	runtime kit run --allow 'example.com:99999'
	assert_failure 1
	assert_one_error_line "--allow #1: entry \"example.com:99999\": port 99999 out of range"
	runtime kit run --allow 'a.com,b.com' -- true
	assert_failure 1
	assert_one_error_line "one entry per --allow"
	runtime kit run "$KITS/base.yaml" echo hi
	assert_failure 1
	assert_one_error_line "put the command after --"
	runtime kit run --workspace "$TEST_DIR/nope" -- true
	assert_failure 1
	assert_one_error_line "--workspace"
	# no slirp4netns: one clear line before anything is made, and nothing left
	run env PATH=/nonexistent "$RUNTIME" --root "$ROOT" kit run --allow 198.18.201.10 -- true
	[ "$status" -eq 1 ]
	[ "$output" = "agentbox: network: slirp4netns not found on PATH (a box with network needs it: install slirp4netns)" ]
	assert_kit_run_clean
	runtime kit frobnicate
	assert_failure 1
	assert_one_error_line "unknown subcommand \"frobnicate\""
	runtime kit --help
	assert_success
	assert_output_contains "agentbox kit build [--allow-sensitive-workspace] KIT -o BUNDLE"
	assert_kit_run_clean
}

# ---------------------------------------------------------------- network

# The little internet; everything is removed by teardown.
setup_inet() {
	command -v slirp4netns >/dev/null || skip "needs slirp4netns"
	command -v socat >/dev/null || skip "needs socat"
	# one at a time: the addresses are fixed
	exec 8>/run/agentbox-kit-test-net.lock
	flock -w 60 8
	local r=$$
	NS=abk-inet-$r
	HV=abk-h$((r % 100000))
	ip netns add "$NS"
	defer ip netns del "$NS"
	ip link add "$HV" type veth peer name n0 netns "$NS"
	defer ip link del "$HV"
	ip addr add 198.18.200.1/30 dev "$HV"
	ip link set "$HV" up
	ip -n "$NS" addr add 198.18.200.2/30 dev n0
	ip -n "$NS" link set n0 up
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add 198.18.201.10/32 dev lo
	ip -n "$NS" addr add 198.18.201.11/32 dev lo
	ip route add 198.18.201.0/24 via 198.18.200.2 dev "$HV"
	defer ip route del 198.18.201.0/24 via 198.18.200.2
	ip netns exec "$NS" socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo hello-from-inet' \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	local i
	for i in $(seq 50); do
		socat -T2 - TCP:198.18.201.10:8080,connect-timeout=1 </dev/null 2>/dev/null | grep -q hello && break
		sleep 0.1
	done
}

@test "kit run: an allowlist reaches the allowed test host through slirp4netns (its tap device persistent), not the denied one" {
	setup_inet
	# both hosts answer without any policy (from the host)
	run socat -T5 - TCP:198.18.201.10:8080,connect-timeout=4 </dev/null
	[ "$output" = hello-from-inet ]
	run socat -T2 - TCP:198.18.201.11:8080,connect-timeout=1 </dev/null
	[ "$output" = hello-from-inet ]

	kit net.yaml <<-'EOF'
		network:
		  allow: ["198.18.201.10:8080"]
		command:
		  - sh
		  - -c
		  - |
		    grep -q tap0 /proc/net/dev && echo has-tap0
		    echo "flags $(cat /sys/class/net/tap0/tun_flags)"
		    grep nameserver /etc/resolv.conf
		    socat -T5 - TCP:198.18.201.10:8080,connect-timeout=4 </dev/null || echo allowed-failed
		    socat -T2 - TCP:198.18.201.11:8080,connect-timeout=1 </dev/null 2>/dev/null || echo denied-blocked
	EOF
	# the denied host answers a box that allows it: the rule, not the setup, blocks it
	runtime kit run --allow 198.18.201.11:8080 "$TEST_DIR/net.yaml"
	assert_success
	[ "$(grep -c hello-from-inet <<<"$output")" = 2 ]
	assert_kit_run_clean

	runtime kit run "$TEST_DIR/net.yaml"
	assert_success
	assert_output_contains has-tap0
	# made persistent before slirp4netns attaches (IFF_PERSIST): a tap device
	# that goes with slirp4netns' last file is unregistered in its exit,
	# which waits for the kernel's RCU callbacks (tens of ms); a persistent
	# one goes later with the box's network namespace
	local flags
	flags=$(sed -n 's/^flags //p' <<<"$stdout")
	(( flags & 0x800 )) || fail "tap0 is not persistent: ${flags:-none}: $output"
	assert_output_contains "nameserver 10.0.2.3"
	[ "$(grep -c hello-from-inet <<<"$output")" = 1 ]
	assert_output_contains denied-blocked
	refute_output_contains allowed-failed
	assert_kit_run_clean

	# a deny entry wins over the allowlist
	kit deny.yaml <<-'EOF'
		network:
		  allow: ["198.18.201.0/24"]
		  deny: ["198.18.201.11"]
		command: [sh, -c, 'socat -T2 - TCP:198.18.201.11:8080,connect-timeout=1 </dev/null 2>/dev/null || echo denied-blocked']
	EOF
	runtime kit run "$TEST_DIR/deny.yaml"
	assert_success
	[ "$stdout" = denied-blocked ]
	# and kit run says what was refused, and why
	[[ "$stderr" == *"tcp  198.18.201.11:8080  denied: a deny entry matches"* ]] || fail "$stderr"
	assert_kit_run_clean
}

# A DNS server for the little internet, on 198.18.201.53 (routed like the test
# hosts), answering for *.test only: web.test is the allowed host, other.test
# the denied one (it answers when allowed: see the test).
setup_inet_dns() {
	command -v dnsmasq >/dev/null || skip "needs dnsmasq"
	ip -n "$NS" addr add 198.18.201.53/32 dev lo
	ip netns exec "$NS" dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground \
		--user=root --group=root --bind-interfaces --listen-address=198.18.201.53 \
		--log-queries --log-facility="$TEST_DIR/dnsmasq.log" --local=/test/ \
		--host-record=web.test,198.18.201.10,600 --host-record=other.test,198.18.201.11,600 \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	echo "nameserver 198.18.201.53" >"$TEST_DIR/resolv.conf"
	# slirp4netns forwards 10.0.2.3 to the first nameserver of the host's
	# resolv.conf: the runtime runs in a mount namespace where that is ours
	cat >"$TEST_DIR/with-resolv" <<-EOF2
		#!/bin/sh
		exec unshare -m sh -c 'mount --bind "\$0" /etc/resolv.conf && exec "\$@"' "$TEST_DIR/resolv.conf" "$RUNTIME" "\$@"
	EOF2
	chmod +x "$TEST_DIR/with-resolv"
	local i
	for i in $(seq 50); do
		unshare -m sh -c "mount --bind $TEST_DIR/resolv.conf /etc/resolv.conf && getent hosts web.test" >/dev/null && break
		sleep 0.1
	done
}

@test "kit run: an allowed name resolves with glibc through slirp4netns' resolver and connects; others do not resolve" {
	setup_inet
	setup_inet_dns
	# the test hosts are "benchmarking" addresses (special-purpose): answers
	# pointing there are withheld unless the range is opened for them
	RUNTIME_ARGS+=(--egress-internal 198.18.201.0/24)
	kit names.yaml <<-'EOF'
		network:
		  allow: ["web.test:8080"]
		command:
		  - sh
		  - -c
		  - |
		    grep nameserver /etc/resolv.conf
		    getent hosts web.test || echo web-unresolved
		    socat -T2 - TCP:web.test:8080,connect-timeout=2 </dev/null 2>/dev/null || echo web-failed
		    getent hosts other.test || echo other-unresolved
		    socat -T2 - TCP:other.test:8080,connect-timeout=2 </dev/null 2>/dev/null || echo other-failed
	EOF
	# other.test resolves and answers in a box that allows it: the policy, not the setup, stops it below
	RUNTIME=$TEST_DIR/with-resolv runtime kit run --allow other.test:8080 "$TEST_DIR/names.yaml"
	assert_success
	assert_output_contains "198.18.201.11   other.test"
	[ "$(grep -c hello-from-inet <<<"$stdout")" = 2 ]
	assert_kit_run_clean

	local seen
	seen=$(wc -l <"$TEST_DIR/dnsmasq.log")
	RUNTIME=$TEST_DIR/with-resolv runtime kit run "$TEST_DIR/names.yaml"
	assert_success
	assert_output_contains "nameserver 10.0.2.3"
	# getent is glibc's resolver: it takes only replies from the address it asked
	assert_output_contains "198.18.201.10   web.test"
	[ "$(grep -c hello-from-inet <<<"$stdout")" = 1 ]
	refute_output_contains web-unresolved
	refute_output_contains web-failed
	assert_output_contains other-unresolved
	assert_output_contains other-failed
	refute_output_contains 198.18.201.11
	# the refused name never reached the upstream; the allowed one did
	tail -n +$((seen + 1)) "$TEST_DIR/dnsmasq.log" >"$TEST_DIR/dnsmasq.run2"
	grep -q 'query\[A\] web.test' "$TEST_DIR/dnsmasq.run2"
	! grep -q other.test "$TEST_DIR/dnsmasq.run2" || fail "other.test reached the upstream"
	assert_kit_run_clean
}

@test "kit run: the closing summary says why each attempt was refused and what would allow it; the kit's network.internal does what it says" {
	setup_inet
	setup_inet_dns
	kit why.yaml <<-'EOF2'
		network:
		  allow: ["web.test:8080"]
		  deny: [{entry: 198.18.201.12, reason: off limits}]
		command:
		  - sh
		  - -c
		  - |
		    getent hosts web.test || echo web-unresolved
		    getent hosts other.test || echo other-unresolved
		    socat -T2 - TCP:198.18.201.11:8080,connect-timeout=1 </dev/null 2>/dev/null || echo addr-blocked
	EOF2
	RUNTIME=$TEST_DIR/with-resolv runtime kit run "$TEST_DIR/why.yaml"
	assert_success
	assert_output_contains web-unresolved
	assert_output_contains other-unresolved
	assert_output_contains addr-blocked
	# one line per refusal: what, why, and the fix (the test hosts are
	# special-purpose "benchmarking" addresses)
	grep -qxF '  dns  web.test -> 198.18.201.10  internal-address: the answer points to an internal address [benchmarking]; open 198.18.0.0/15 with --egress-internal 198.18.0.0/15 or the kit'"'"'s network.internal' <<<"$stderr" ||
		fail "no internal-address line: $stderr"
	grep -qxF '  dns  other.test  not-allowed: not on the allowlist; allow it with --allow other.test:PORT or the kit'"'"'s network.allow' <<<"$stderr" ||
		fail "no not-allowed name line: $stderr"
	grep -qxF '  tcp  198.18.201.11:8080  not-allowed: not on the allowlist; allow it with --allow 198.18.201.11:8080 or the kit'"'"'s network.allow' <<<"$stderr" ||
		fail "no not-allowed address line: $stderr"
	assert_kit_run_clean
	# following the first fix in the kit: the name resolves and answers; no such line
	sed 's/^  deny:/  internal: [198.18.0.0\/15]\n  deny:/' "$TEST_DIR/why.yaml" >"$TEST_DIR/why2.yaml"
	runtime kit show --json "$TEST_DIR/why2.yaml"
	[ "$(jq -c .policy.internal <<<"$stdout")" = '["198.18.0.0/15"]' ] || fail "$stdout"
	RUNTIME=$TEST_DIR/with-resolv runtime kit run "$TEST_DIR/why2.yaml" -- sh -c \
		'socat -T5 - TCP:web.test:8080,connect-timeout=4 </dev/null || echo web-failed'
	assert_success
	[ "$stdout" = hello-from-inet ]
	refute_output_contains internal-address
	assert_kit_run_clean
	# a range with a port is no internal entry: one line naming the item
	printf 'network:\n  internal: ["10.0.0.0/8:443"]\n' >"$TEST_DIR/bad.yaml"
	runtime kit show "$TEST_DIR/bad.yaml"
	assert_failure 1
	assert_one_error_line 'bad\.yaml:2:14: network\.internal\[0\]: entry "10\.0\.0\.0/8:443": an internal entry is an address range'
}
