#!/usr/bin/env bats
# config.json features, each asserted from inside the container with abtest.

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
	run_container "ct$CT_N"
}

# status_line KEY: the value of KEY from `abtest caps`-style "Key:\tvalue" output.
status_line() {
	awk -v k="$1:" '$1 == k { print $2 }' <<<"$stdout"
}

# mnt MOUNTPOINT: "FSTYPE MOUNT-OPTIONS SUPER-OPTIONS" of the topmost mount at
# MOUNTPOINT in the `abtest mountinfo` output in $stdout.
mnt() {
	awk -v mp="$1" '$5 == mp {
		for (i = 7; i <= NF && $i != "-"; i++) ;
		if (i < NF) line = $(i + 1) " " $6 " " $(i + 3)
	} END { if (line != "") print line }' <<<"$stdout"
}

# has_opt "OPT,OPT,..." OPT
has_opt() {
	[[ ",$1," == *",$2,"* ]]
}

# ---------------------------------------------------------------- process

@test "process.env is the whole environment; nothing from the runtime's leaks" {
	update_config '.process.env = ["FOO=bar baz", "EMPTY=", "PATH=/bin:/sbin"]'
	AB_HOST_SECRET=leaked in_container abtest env
	assert_success
	[[ "$stdout" == *$'FOO=bar baz'* ]]
	grep -qx 'EMPTY=' <<<"$stdout"
	grep -qx 'PATH=/bin:/sbin' <<<"$stdout"
	refute_output_contains AB_HOST_SECRET
	refute_output_contains BATS_
}

@test "process.cwd that does not exist is made (root's, 0755), also in a read-only root, as runc's" {
	update_config '.process.cwd = "/work/a/b" | .root.readonly = true'
	in_container sh -c 'pwd; stat -c "%u %a" /work/a/b /work'
	assert_success
	[ "${lines[0]}" = /work/a/b ] || fail "cwd: $stdout"
	[ "${lines[1]}" = "0 755" ] && [ "${lines[2]}" = "0 755" ] || fail "made as: $stdout"
}

@test "process.env without HOME: HOME from the container's /etc/passwd, as runc's" {
	update_config '.process.env = ["PATH=/bin"]'
	in_container sh -c 'echo "$HOME"'
	assert_success
	[ "$stdout" = /root ] || fail "root: HOME=$stdout"
	update_config '.process.user = {uid: 1000, gid: 1000}'
	in_container sh -c 'echo "$HOME"'
	[ "$stdout" = /tmp ] || fail "uid 1000: HOME=$stdout"
	# no entry for the uid: /
	update_config '.process.user = {uid: 4242, gid: 4242}'
	in_container sh -c 'echo "$HOME"'
	[ "$stdout" = / ] || fail "uid 4242: HOME=$stdout"
	# its entry on a last line without a newline, after a line too long to read
	local passwd=$BUNDLE/rootfs/etc/passwd
	[ -n "$BUNDLE" ] && [ -f "$passwd" ] || fail "no bundle rootfs at '$BUNDLE'"
	{ printf 'long:x:4343:4343:%09000d:/wrong:/bin/sh\n' 0; printf 'u:x:4242:4242::/home/u:/bin/sh'; } >>"$passwd"
	in_container sh -c 'echo "$HOME"'
	[ "$stdout" = /home/u ] || fail "uid 4242, last line: HOME=$stdout"
	# an empty HOME counts as none; a set one is kept
	update_config '.process.user = {uid: 0, gid: 0} | .process.env = ["PATH=/bin", "HOME="]'
	in_container sh -c 'env | grep -c ^HOME=; echo "$HOME"'
	[ "$stdout" = $'1\n/root' ] || fail "empty HOME: $stdout"
	update_config '.process.env = ["PATH=/bin", "HOME=/somewhere"]'
	in_container sh -c 'echo "$HOME"'
	[ "$stdout" = /somewhere ] || fail "a set HOME changed: $stdout"
}

# bats test_tags=agentbox-only
@test "process.env without HOME: a FIFO or a device at /etc/passwd is not read (HOME=/)" {
	# runc 1.1.5 opens /etc/passwd without looking at what it is: it blocks on a FIFO
	update_config '.process.env = ["PATH=/bin"]'
	local passwd=$BUNDLE/rootfs/etc/passwd
	[ -n "$BUNDLE" ] && [ -f "$passwd" ] || fail "no bundle rootfs at '$BUNDLE'"
	rm -f "$passwd"
	mkfifo "$passwd"
	in_container sh -c 'echo "$HOME"'
	assert_success
	[ "$stdout" = / ] || fail "FIFO: HOME=$stdout"
	rm "$passwd"
	ln -s /dev/zero "$passwd"
	in_container sh -c 'echo "$HOME"'
	assert_success
	[ "$stdout" = / ] || fail "/dev/zero: HOME=$stdout"
}

@test "process.cwd is the working directory" {
	update_config '.process.cwd = "/etc"'
	in_container abtest pwd
	assert_success
	[ "$stdout" = /etc ]
}

@test "process.args: args[0] is looked up in the container's PATH" {
	update_config '.process.env = ["PATH=/nowhere:/bin"]'
	in_container abtest echo "two words" '$HOME' ''
	assert_success
	[ "$stdout" = 'two words $HOME ' ]
}

@test "process.user: uid, gid, additionalGids and umask" {
	update_config '.process.user = {uid: 1000, gid: 1000, additionalGids: [10, 20], umask: 63}'
	in_container abtest id
	assert_success
	[ "$stdout" = "uid=1000 gid=1000 groups=10,20 umask=0077" ]
}

@test "process.user: root with no additionalGids has no supplementary groups" {
	update_config '.process.user = {uid: 0, gid: 0}'
	in_container abtest id
	assert_success
	[[ "$stdout" =~ ^uid=0\ gid=0\ groups=\ umask=0[0-7]{3}$ ]]
}

@test "process.capabilities: the bounding set limits even root" {
	update_config '.process.capabilities = {
		bounding: ["CAP_CHOWN", "CAP_KILL"], effective: ["CAP_CHOWN", "CAP_KILL"],
		permitted: ["CAP_CHOWN", "CAP_KILL"], inheritable: [], ambient: []}'
	in_container abtest caps
	assert_success
	[ "$(status_line CapBnd)" = 0000000000000021 ]
	[ "$(status_line CapEff)" = 0000000000000021 ]
	[ "$(status_line CapPrm)" = 0000000000000021 ]
	[ "$(status_line CapAmb)" = 0000000000000000 ]
}

@test "process.capabilities: inheritable and ambient for a non-root user" {
	# CAP_CHOWN=0, CAP_KILL=5, CAP_NET_BIND_SERVICE=10
	update_config '.process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {
		bounding: ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		effective: ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
		permitted: ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
		inheritable: ["CAP_NET_BIND_SERVICE"],
		ambient: ["CAP_NET_BIND_SERVICE"]}'
	in_container abtest caps
	assert_success
	[ "$(status_line CapBnd)" = 0000000000000421 ]
	[ "$(status_line CapInh)" = 0000000000000400 ]
	[ "$(status_line CapAmb)" = 0000000000000400 ]
	# after execve a non-root process keeps only its ambient set
	[ "$(status_line CapPrm)" = 0000000000000400 ]
	[ "$(status_line CapEff)" = 0000000000000400 ]
}

@test "process.capabilities: a non-root user without ambient caps has none" {
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.capabilities.ambient = []'
	in_container abtest caps
	assert_success
	[ "$(status_line CapEff)" = 0000000000000000 ]
	[ "$(status_line CapPrm)" = 0000000000000000 ]
}

@test "process.rlimits: soft and hard limits are set" {
	update_config '.process.rlimits = [
		{type: "RLIMIT_NOFILE", soft: 512, hard: 1024},
		{type: "RLIMIT_CORE", soft: 0, hard: 0},
		{type: "RLIMIT_NPROC", soft: 300, hard: 400}]'
	in_container sh -c 'abtest rlimit NOFILE; abtest rlimit CORE; abtest rlimit NPROC'
	assert_success
	[ "${lines[0]}" = "512 1024" ]
	[ "${lines[1]}" = "0 0" ]
	[ "${lines[2]}" = "300 400" ]
}

@test "process.noNewPrivileges: true sets NoNewPrivs, false leaves it off" {
	update_config '.process.noNewPrivileges = true'
	in_container abtest caps
	assert_success
	[ "$(status_line NoNewPrivs)" = 1 ]

	update_config '.process.noNewPrivileges = false'
	in_container abtest caps
	assert_success
	[ "$(status_line NoNewPrivs)" = 0 ]
}

@test "process.oomScoreAdj is applied" {
	# raising needs no privilege (lowering needs CAP_SYS_RESOURCE, absent here)
	update_config '.process.oomScoreAdj = 500'
	in_container abtest oomscore
	assert_success
	[ "$stdout" = 500 ]
}

@test "the process starts with no blocked or ignored signals" {
	in_container abtest sigmask
	assert_success
	[ "$(status_line SigBlk)" = 0000000000000000 ]
	[ "$(status_line SigIgn)" = 0000000000000000 ]
}

# ---------------------------------------------------------------- identity

@test "hostname in a new UTS namespace" {
	update_config '.hostname = "abhost"'
	in_container abtest hostname
	assert_success
	[ "${lines[0]}" = nodename=abhost ]
	# the host's is untouched
	[ "$(uname -n)" != abhost ]
}

# bats test_tags=agentbox-only
@test "domainname in a new UTS namespace" {
	# runc 1.1.5 ignores .domainname (runc 1.2 sets it)
	requires agentbox
	update_config '.hostname = "abhost" | .domainname = "example.test"'
	in_container abtest hostname
	assert_success
	[ "${lines[0]}" = nodename=abhost ]
	[ "${lines[1]}" = domainname=example.test ]
}

@test "hostname without a UTS namespace is refused, nothing left" {
	update_config '.hostname = "abhost" | del(.linux.namespaces[] | select(.type == "uts"))'
	local before
	before=$(uname -n)
	in_container abtest hostname
	assert_failure 1
	[ "$(uname -n)" = "$before" ]
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "linux.personality LINUX32: uname -m is i686" {
	# runc 1.1.5 ignores linux.personality (support came in runc 1.2)
	requires agentbox
	update_config '.linux.personality = {domain: "LINUX32"}'
	in_container abtest personality
	assert_success
	[ "$stdout" = "personality=0x8 machine=i686" ]
}

@test "annotations are shown by state" {
	update_config '.annotations = {"org.example.key": "value", "io.container.manager": "libpod"}'
	set_args abtest true
	create_container ct
	assert_success
	runtime state ct
	assert_success
	[ "$(jq -r '.annotations["org.example.key"]' <<<"$stdout")" = value ]
	[ "$(jq -r '.annotations["io.container.manager"]' <<<"$stdout")" = libpod ]
}

# ---------------------------------------------------------------- root

@test "root.readonly: the root cannot be written; without it, it can" {
	update_config '.root.readonly = true'
	in_container abtest write /newfile data
	assert_failure 1
	[ "$stdout" = EROFS ]

	update_config '.root.readonly = false'
	in_container abtest write /newfile data
	assert_success
	[ "$(cat "$BUNDLE/rootfs/newfile")" = data ]
}

@test "root.path: absolute, outside the bundle" {
	mv "$BUNDLE/rootfs" "$TEST_DIR/elsewhere"
	update_config '.root.path = $p' --arg p "$TEST_DIR/elsewhere"
	in_container abtest echo ok
	assert_success
	[ "$stdout" = ok ]
}

@test "root.path: relative to the bundle, not to the runtime's cwd" {
	mv "$BUNDLE/rootfs" "$BUNDLE/myroot"
	update_config '.root.path = "myroot"'
	set_args abtest echo ok
	runtime_at / run --bundle "$BUNDLE" ct
	assert_success
	[ "$stdout" = ok ]
}

@test "rootfsPropagation rslave: mounts made on the host later appear inside" {
	setup_shared_rootfs
	update_config '.linux.rootfsPropagation = "rslave"'
	watch_for_late_mount 500
	host_late_mount
	wait_for_status ct stopped
	wait_for_line "$CT_STDOUT" '^seen$'
}

@test "rootfsPropagation private: mounts made on the host later stay outside" {
	setup_shared_rootfs
	update_config '.linux.rootfsPropagation = "private"'
	watch_for_late_mount 25
	host_late_mount
	wait_for_status ct stopped
	wait_for_line "$CT_STDOUT" '^not seen$'
}

# The rootfs on its own shared tmpfs, so propagation from the host is possible.
setup_shared_rootfs() {
	local r=$TEST_DIR/sharedroot
	mkdir -p "$r"
	mount -t tmpfs -o size=64m tmpfs "$r"
	defer umount -R -l "$r"
	mount --make-shared "$r"
	cp -a "$BUNDLE/rootfs/." "$r/"
	mkdir -p "$r/late"
	update_config '.root.path = $p | .root.readonly = false' --arg p "$r"
	SHARED_ROOT=$r
}

# watch_for_late_mount N: start a container polling N*20ms for /late/sub/flag.
watch_for_late_mount() {
	set_args sh -c "echo ready; i=0; while [ ! -e /late/sub/flag ] && [ \$i -lt $1 ]; do sleep 0.02; i=\$((i+1)); done; \
		if [ -e /late/sub/flag ]; then echo seen; else echo not seen; fi"
	run_container ct --detach
	assert_success
	CT_STDOUT=$RT_STDOUT
	wait_for_line "$CT_STDOUT" '^ready$'
}

host_late_mount() {
	mkdir -p "$SHARED_ROOT/late/sub"
	mount -t tmpfs -o size=1m tmpfs "$SHARED_ROOT/late/sub"
	touch "$SHARED_ROOT/late/sub/flag"
}

# ---------------------------------------------------------------- mounts

@test "mounts: the default ones have the right types and options" {
	in_container abtest mountinfo
	assert_success
	local m
	m=$(mnt /proc) && [[ "$m" == "proc "* ]]
	m=$(mnt /dev) && [[ "$m" == "tmpfs "* ]]
	m=$(mnt /dev/pts) && [[ "$m" == "devpts "* ]]
	m=$(mnt /dev/shm) && [[ "$m" == "tmpfs "* ]]
	m=$(mnt /dev/mqueue) && [[ "$m" == "mqueue "* ]]
	m=$(mnt /sys) && [[ "$m" == "sysfs "* ]]
	# sysfs is read-only in the default spec
	has_opt "$(cut -d' ' -f2 <<<"$m")" ro
}

@test "mounts: the default devices exist with the right numbers" {
	in_container sh -c 'for d in null zero full random urandom tty; do abtest stat /dev/$d; done'
	assert_success
	[[ "${lines[0]}" == "type=chr mode=0666 rdev=1:3 "* ]]
	[[ "${lines[1]}" == "type=chr mode=0666 rdev=1:5 "* ]]
	[[ "${lines[2]}" == "type=chr mode=0666 rdev=1:7 "* ]]
	[[ "${lines[3]}" == "type=chr mode=0666 rdev=1:8 "* ]]
	[[ "${lines[4]}" == "type=chr mode=0666 rdev=1:9 "* ]]
	[[ "${lines[5]}" == "type=chr mode=0666 rdev=5:0 "* ]]
}

@test "mounts: /dev/fd, /dev/stdin, /dev/stdout, /dev/stderr, /dev/ptmx links" {
	in_container sh -c 'for l in fd stdin stdout stderr ptmx; do echo "$l $(readlink /dev/$l)"; done'
	assert_success
	grep -qx 'fd /proc/self/fd' <<<"$stdout"
	grep -qx 'stdin /proc/self/fd/0' <<<"$stdout"
	grep -qx 'stdout /proc/self/fd/1' <<<"$stdout"
	grep -qx 'stderr /proc/self/fd/2' <<<"$stdout"
	grep -qx 'ptmx pts/ptmx' <<<"$stdout"
}

@test "mounts: devpts gives a working /dev/ptmx" {
	in_container abtest tryopen /dev/ptmx rw
	assert_success
	[ "$stdout" = ok ]
}

@test "mounts: bind ro: readable, not writable, and the host file is intact" {
	mkdir -p "$TEST_DIR/src"
	echo hello >"$TEST_DIR/src/file"
	add_mount /mnt/ro bind "$TEST_DIR/src" rbind ro
	in_container sh -c 'abtest read /mnt/ro/file; abtest write /mnt/ro/file bad; abtest write /mnt/ro/new bad'
	[ "${lines[0]}" = hello ]
	[ "${lines[1]}" = EROFS ]
	[ "${lines[2]}" = EROFS ]
	[ "$(cat "$TEST_DIR/src/file")" = hello ]
	[ ! -e "$TEST_DIR/src/new" ]
}

@test "mounts: bind rw: writes reach the host" {
	mkdir -p "$TEST_DIR/src"
	add_mount /mnt/rw bind "$TEST_DIR/src" rbind rw
	in_container abtest write /mnt/rw/out from-container
	assert_success
	[ "$(cat "$TEST_DIR/src/out")" = from-container ]
}

@test "mounts: bind of a single file (as docker binds resolv.conf)" {
	echo "nameserver 198.18.0.53" >"$TEST_DIR/resolv.conf"
	add_mount /etc/resolv.conf bind "$TEST_DIR/resolv.conf" rbind rprivate ro
	in_container abtest read /etc/resolv.conf
	assert_success
	[ "$stdout" = "nameserver 198.18.0.53" ]
}

@test "mounts: tmpfs with size, mode, nosuid and noexec" {
	add_mount /scratch tmpfs tmpfs size=1m mode=1750 nosuid noexec nodev
	in_container sh -c 'abtest stat /scratch; abtest mountinfo; cp /bin/abtest /scratch/x && /scratch/x true; echo "exec=$?"'
	[[ "${lines[0]}" == "type=dir mode=1750 "* ]]
	local m
	m=$(mnt /scratch)
	[[ "$m" == "tmpfs "* ]]
	has_opt "$(cut -d' ' -f2 <<<"$m")" nosuid
	has_opt "$(cut -d' ' -f2 <<<"$m")" noexec
	has_opt "$(cut -d' ' -f3 <<<"$m")" size=1024k
	# noexec: the copy cannot run (126: found but not executable)
	grep -qx 'exec=126' <<<"$stdout"
}

@test "mounts: tmpfs size is enforced" {
	add_mount /scratch tmpfs tmpfs size=64k
	in_container sh -c 'dd if=/dev/zero of=/scratch/big bs=1k count=200 2>/dev/null; echo "rc=$?"; abtest stat /scratch/big'
	grep -qx 'rc=1' <<<"$stdout"
}

@test "mounts: bind without rbind does not take submounts; rbind does" {
	local src=$TEST_DIR/src
	mkdir -p "$src/sub"
	mount -t tmpfs -o size=1m tmpfs "$src/sub"
	defer umount -l "$src/sub"
	echo in-submount >"$src/sub/file"
	add_mount /mnt/plain bind "$src" bind
	add_mount /mnt/rec bind "$src" rbind
	in_container sh -c 'abtest read /mnt/plain/sub/file; abtest read /mnt/rec/sub/file'
	[[ "$output" == *"/mnt/plain/sub/file: No such file or directory"* ]]
	grep -qx in-submount <<<"$stdout"
}

@test "mounts: rbind + rslave: host mounts made later propagate into the container" {
	local src=$TEST_DIR/src
	mkdir -p "$src"
	mount -t tmpfs -o size=1m tmpfs "$src"
	defer umount -R -l "$src"
	mount --make-shared "$src"
	mkdir "$src/sub"
	add_mount /mnt/prop bind "$src" rbind rslave
	set_args sh -c 'echo ready; while [ ! -e /mnt/prop/sub/flag ]; do sleep 0.02; done; echo seen'
	run_container ct --detach
	assert_success
	local out=$RT_STDOUT
	wait_for_line "$out" '^ready$'
	mount -t tmpfs -o size=1m tmpfs "$src/sub"
	touch "$src/sub/flag"
	wait_for_line "$out" '^seen$'
	wait_for_status ct stopped
}

@test "mounts: rbind + rprivate: host mounts made later do not propagate" {
	local src=$TEST_DIR/src
	mkdir -p "$src"
	mount -t tmpfs -o size=1m tmpfs "$src"
	defer umount -R -l "$src"
	mount --make-shared "$src"
	mkdir "$src/sub"
	add_mount /mnt/prop bind "$src" rbind rprivate
	set_args sh -c 'echo ready; i=0; while [ ! -e /mnt/prop/sub/flag ] && [ $i -lt 25 ]; do sleep 0.02; i=$((i+1)); done; [ -e /mnt/prop/sub/flag ] && echo seen || echo not seen'
	run_container ct --detach
	assert_success
	local out=$RT_STDOUT
	wait_for_line "$out" '^ready$'
	mount -t tmpfs -o size=1m tmpfs "$src/sub"
	touch "$src/sub/flag"
	wait_for_line "$out" '^not seen$'
}

@test "mounts: tmpcopyup copies the directory's files into the new tmpfs" {
	update_config '.root.readonly = true'
	add_mount /etc tmpfs tmpfs tmpcopyup mode=755
	in_container sh -c 'abtest read /etc/passwd; abtest write /etc/new x; abtest mountinfo'
	assert_success
	grep -q '^root:x:0:0:' <<<"$stdout"
	grep -qx ok <<<"$stdout"
	[[ "$(mnt /etc)" == "tmpfs "* ]]
	# the write went to the tmpfs, not the rootfs
	[ ! -e "$BUNDLE/rootfs/etc/new" ]
}

@test "mounts: destinations that do not exist are created (dir and file)" {
	echo content >"$TEST_DIR/afile"
	mkdir -p "$TEST_DIR/adir"
	add_mount /new/deep/dir bind "$TEST_DIR/adir" rbind
	add_mount /new/deep/file bind "$TEST_DIR/afile" rbind
	in_container sh -c 'abtest stat /new/deep/dir; abtest read /new/deep/file'
	assert_success
	[[ "${lines[0]}" == "type=dir "* ]]
	[ "${lines[1]}" = content ]
}

@test "mounts: type cgroup at /sys/fs/cgroup (docker) is mounted read-only" {
	in_container abtest mountinfo
	assert_success
	# cgroup v1: a tmpfs with one mount per hierarchy below it; v2: one cgroup2
	local cg
	cg=$(awk '$5 ~ "^/sys/fs/cgroup" { for (i = 7; i <= NF && $i != "-"; i++) ;
		if ($(i + 1) ~ /^cgroup2?$/) print $5, $6 }' <<<"$stdout")
	[ -n "$cg" ] || fail "no cgroup mount under /sys/fs/cgroup"
	while read -r mp opts; do
		has_opt "$opts" ro || fail "$mp is not read-only: $opts"
	done <<<"$cg"
	# and writing there fails for lack of a writable fs
	local first
	first=$(head -n1 <<<"$cg" | cut -d' ' -f1)
	in_container abtest write "$first/x" y
	[ "$stdout" = EROFS ]
}

# ---------------------------------------------------------------- masked / readonly

@test "maskedPaths: a file reads empty (/dev/null), a dir is empty; missing ones are skipped" {
	echo secret >"$BUNDLE/rootfs/masked-file"
	mkdir -p "$BUNDLE/rootfs/masked-dir"
	echo secret >"$BUNDLE/rootfs/masked-dir/inner"
	update_config '.linux.maskedPaths = ["/masked-file", "/masked-dir", "/does/not/exist"]'
	in_container sh -c 'echo "[$(abtest read /masked-file)]"; abtest stat /masked-file; echo "[$(ls -A /masked-dir)]"; abtest write /masked-dir/new x; true'
	assert_success
	[ "${lines[0]}" = "[]" ]
	[[ "${lines[1]}" == "type=chr mode=0666 rdev=1:3 "* ]]
	[ "${lines[2]}" = "[]" ]
	[ "${lines[3]}" = EROFS ]
}

# bats test_tags=agentbox-only
@test "maskedPaths: every masked directory is empty, read-only, nosuid, nodev and noexec (one tmpfs shared by all)" {
	mkdir -p "$BUNDLE/rootfs/mask-a" "$BUNDLE/rootfs/mask-b"
	echo secret >"$BUNDLE/rootfs/mask-b/inner"
	update_config '.linux.maskedPaths = ["/mask-a", "/mask-b"]'
	in_container sh -c 'echo "[$(ls -A /mask-a)][$(ls -A /mask-b)]"; abtest write /mask-b/new x; grep -E " /mask-[ab] " /proc/self/mountinfo'
	assert_success
	[ "${lines[0]}" = "[][]" ]
	[ "${lines[1]}" = EROFS ]
	[ "${#lines[@]}" -eq 4 ]
	local a=(${lines[2]}) b=(${lines[3]})
	# same device (one superblock), each mount ro,nosuid,nodev,noexec, mode 500
	[ "${a[2]}" = "${b[2]}" ]
	for m in "${lines[2]}" "${lines[3]}"; do
		[[ "$m" == *" ro,nosuid,nodev,noexec"* ]]
		[[ "$m" == *" - tmpfs "*"mode=500"* ]]
	done
}

@test "maskedPaths: the default spec hides /proc/kcore and friends" {
	in_container sh -c 'for p in /proc/kcore /proc/timer_list /proc/sched_debug; do [ -e $p ] && abtest stat $p; done; echo "[$(ls -A /proc/acpi 2>/dev/null)]"'
	assert_success
	[[ "${lines[0]}" == "type=chr mode=0666 rdev=1:3 "* ]]
	[[ "$stdout" == *"[]"* ]]
}

@test "readonlyPaths: read-only there, writable elsewhere" {
	update_config '.root.readonly = false | .linux.readonlyPaths = ["/rodir", "/does/not/exist"]'
	mkdir -p "$BUNDLE/rootfs/rodir" "$BUNDLE/rootfs/rwdir"
	in_container sh -c 'abtest write /rodir/x y; abtest write /rwdir/x y'
	assert_success
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = ok ]
}

@test "readonlyPaths: the default spec makes /proc/sys read-only" {
	in_container abtest write /proc/sys/kernel/hostname evil
	[ "$stdout" = EROFS ]
}

# ---------------------------------------------------------------- sysctl

@test "linux.sysctl: net.* in the container's netns, kernel.shm* in its ipc ns" {
	local host_fwd host_shm
	host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	host_shm=$(cat /proc/sys/kernel/shmmax)
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmax": "123456789",
		"net.ipv4.ping_group_range": "0 2147483647"}'
	in_container sh -c 'abtest sysctl net.ipv4.ip_forward; abtest sysctl kernel.shmmax; abtest sysctl net.ipv4.ping_group_range'
	assert_success
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 123456789 ]
	[[ "${lines[2]}" =~ ^0[[:space:]]+2147483647$ ]]
	# the host is untouched
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_fwd" ]
	[ "$(cat /proc/sys/kernel/shmmax)" = "$host_shm" ]
}

@test "linux.sysctl: a net.* sysctl with the host's netns is refused, host untouched" {
	local host_fwd
	host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	local want=$((1 - host_fwd))
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": $v}
		| del(.linux.namespaces[] | select(.type == "network"))' --arg v "$want"
	in_container abtest true
	assert_failure 1
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_fwd" ]
	assert_nothing_left
}

# ---------------------------------------------------------------- devices

@test "linux.devices: a char device with fileMode, uid, gid at a custom path" {
	update_config '.linux.devices = [{path: "/dev/abnull", type: "c", major: 1, minor: 3,
		fileMode: 416, uid: 1, gid: 2}]
		| .linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 3, access: "rwm"}]
		| .process.user = {uid: 1, gid: 2}'
	in_container sh -c 'abtest stat /dev/abnull; abtest tryopen /dev/abnull rw'
	assert_success
	[ "${lines[0]}" = "type=chr mode=0640 rdev=1:3 owner=1:2" ]
	# the owner (uid 1) may open it read-write
	[ "${lines[1]}" = ok ]
}

@test "linux.devices: fileMode with the S_IFCHR bits (podman) is accepted" {
	# 8630 = 020666
	update_config '.linux.devices = [{path: "/dev/abzero", type: "c", major: 1, minor: 5,
		fileMode: 8630, uid: 0, gid: 0}]
		| .linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 5, access: "rwm"}]'
	in_container abtest stat /dev/abzero
	assert_success
	[ "$stdout" = "type=chr mode=0666 rdev=1:5 owner=0:0" ]
}

# mknod_and_open: with CAP_MKNOD and a tmpfs without nodev, make /dev/fuse's
# twin (c 10:229, not in any runtime's default allow list) and open it.
mknod_and_open() {
	update_config '.process.capabilities |= with_entries(.value += ["CAP_MKNOD"])'
	add_mount /scratch tmpfs tmpfs mode=755
	in_container sh -c 'mknod /scratch/fuse c 10 229 2>/dev/null && echo mknod=ok || echo mknod=denied;
		abtest tryopen /scratch/fuse rw'
}

@test "linux.resources.devices: deny-all keeps other devices closed" {
	requires cgroups_v1
	# the default spec denies all but the runtime's default devices; runc
	# allows mknod of any node ("c *:* m"), so only the open is checked
	mknod_and_open
	[[ "${lines[1]}" == EPERM || "${lines[1]}" == ENOENT ]] || fail "open: ${lines[1]}"
}

@test "linux.resources.devices: an allow rule lets the device be made and opened" {
	requires cgroups_v1
	[ -c /dev/fuse ] || skip "the host has no /dev/fuse (fuse module not loaded)"
	update_config '.linux.resources.devices += [{allow: true, type: "c", major: 10, minor: 229, access: "rwm"}]'
	mknod_and_open
	[ "${lines[0]}" = mknod=ok ]
	[ "${lines[1]}" = ok ]
}

# ---------------------------------------------------------------- namespaces

# check_new_ns TYPE NSNAME: with TYPE in linux.namespaces the process's NSNAME
# namespace differs from the host's; without it, it is the host's.
check_new_ns() {
	local type=$1 name=$2 inside
	update_config '.linux.namespaces |= (map(select(.type != $t)) + [{type: $t}])' --arg t "$type"
	in_container abtest ns
	assert_success
	inside=$(ns_of "$stdout" "$name")
	[ -n "$inside" ]
	[ "$inside" != "$(host_ns "$name")" ] || fail "$type: new namespace requested, got the host's"

	update_config 'del(.linux.namespaces[] | select(.type == $t))' --arg t "$type"
	in_container abtest ns
	assert_success
	inside=$(ns_of "$stdout" "$name")
	[ "$inside" = "$(host_ns "$name")" ] || fail "$type: host namespace expected, got $inside"
}

@test "namespaces: pid, new vs host (and pid 1 inside a new one)" {
	check_new_ns pid pid
	update_config '.linux.namespaces += [{type: "pid"}]'
	in_container abtest pidns
	assert_success
	[[ "$stdout" == "pid=1 "* ]]
}

@test "namespaces: network, new vs host" {
	check_new_ns network net
}

@test "namespaces: a new network namespace has lo up (127.0.0.1 and ::1), as runc's" {
	# the firewall is off here (permissive config): lo is the runtime's to bring up
	in_container sh -c 'cat /sys/class/net/lo/flags; grep -c " lo$" /proc/net/if_inet6 || true;
		nc -l -p 4711 -w 5 & sleep 0.3; echo hello | nc -w 2 127.0.0.1 4711; wait'
	assert_success
	# IFF_UP is bit 0 of the flags
	(( ${lines[0]} & 1 )) || fail "lo is down: flags ${lines[0]}"
	[ "${lines[1]}" -ge 1 ] || fail "::1 missing on lo: $stdout"
	[ "${lines[2]}" = hello ] || fail "nothing came over 127.0.0.1: $stdout"
}

@test "namespaces: ipc, new vs host" {
	check_new_ns ipc ipc
}

@test "namespaces: uts, new vs host" {
	update_config 'del(.hostname)'
	check_new_ns uts uts
}

@test "namespaces: cgroup, new vs host" {
	check_new_ns cgroup cgroup
}

@test "namespaces: mount, always new" {
	in_container abtest ns
	assert_success
	[ "$(ns_of "$stdout" mnt)" != "$(host_ns mnt)" ]
}

# bats test_tags=agentbox-only
@test "namespaces: time, new vs host" {
	# runc 1.1.5 does not know the time namespace (runc 1.2 does)
	requires agentbox timens
	check_new_ns time time_for_children
}

@test "namespaces: user with uid/gid mappings: root inside, mapped uid outside" {
	requires userns
	# the mapped root must be able to reach the rootfs through our 0700 temp dirs
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
	in_container sh -c 'abtest id; abtest ns'
	assert_success
	[[ "${lines[0]}" == "uid=0 gid=0 "* ]]
	[ "$(ns_of "$stdout" user)" != "$(host_ns user)" ]

	set_args abtest pause ready
	run_container ctu --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid
	pid=$(state_field ctu .pid)
	[[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" == 100000 ]]
	[[ "$(awk '$1 == "Gid:" { print $2 }' "/proc/$pid/status")" == 100000 ]]
	[ "$(awk '{ print $1, $2, $3 }' "/proc/$pid/uid_map")" = "0 100000 65536" ]
}

@test "namespaces: joining another container's netns, ipc and uts by path" {
	set_args abtest true
	create_container a
	assert_success
	local pid
	pid=$(state_field a .pid)
	update_config 'del(.hostname) | .linux.namespaces |= map(
		if .type == "network" then .path = $n
		elif .type == "ipc" then .path = $i
		elif .type == "uts" then .path = $u else . end)' \
		--arg n "/proc/$pid/ns/net" --arg i "/proc/$pid/ns/ipc" --arg u "/proc/$pid/ns/uts"
	# its own cgroup: deleting this container must not touch a's
	update_config '.linux.cgroupsPath += "-b"'
	TEARDOWN_CMDS+=("rmdir /sys/fs/cgroup/*/$CGROUP_NAME-b 2>/dev/null || true")
	in_container abtest ns
	assert_success
	[ "$(ns_of "$stdout" net)" = "$(readlink "/proc/$pid/ns/net")" ]
	[ "$(ns_of "$stdout" ipc)" = "$(readlink "/proc/$pid/ns/ipc")" ]
	[ "$(ns_of "$stdout" uts)" = "$(readlink "/proc/$pid/ns/uts")" ]
	[ "$(ns_of "$stdout" net)" != "$(host_ns net)" ]
	# and not the pid namespace, which was not joined
	[ "$(ns_of "$stdout" pid)" != "$(readlink "/proc/$pid/ns/pid")" ]
}

@test "namespaces: a path that is not a namespace is refused, nothing left" {
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/etc/hostname" else . end)'
	in_container abtest true
	assert_failure 1
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "process.scheduler, ioPriority and execCPUAffinity are applied" {
	# runtime-spec 1.2 fields: runc 1.1.5 ignores them
	requires agentbox
	update_config '.process.scheduler = {policy: "SCHED_BATCH", nice: 7}
		| .process.ioPriority = {class: "IOPRIO_CLASS_BE", priority: 6}
		| .process.execCPUAffinity = {initial: "0", final: "0"}'
	in_container sh -c 'cat /proc/self/sched | grep -E "^policy"; awk "{ print \$19 }" /proc/self/stat; grep Cpus_allowed_list /proc/self/status'
	assert_success
	# SCHED_BATCH is policy 3; field 19 of stat is the nice value
	grep -qE '^policy +: +3$' <<<"$stdout"
	[ "${lines[1]}" = 7 ]
	grep -qE 'Cpus_allowed_list:\s+0$' <<<"$stdout"
}

# bats test_tags=agentbox-only
@test "process.apparmorProfile on a host without AppArmor: refused, not run unconfined; nothing left" {
	# runc 1.1.5 fails too (its write of /proc/self/attr/exec gets EINVAL), in
	# its own words; an engine only sends a profile where AppArmor is enabled
	requires agentbox
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] ||
		skip "AppArmor is enabled on this host: the profile would be applied"
	update_config '.process.apparmorProfile = "docker-default"'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'config\.json: process\.apparmorProfile "docker-default": AppArmor is not enabled on this host'
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "process.selinuxLabel is refused; linux.mountLabel alone is ignored on a host without SELinux" {
	# agentbox applies no SELinux labels: refused wherever SELinux is on, and
	# where it is off as runc refuses it; runc also ignores a lone mountLabel there
	requires agentbox
	[ "$(stat -f -c %T /sys/fs/selinux 2>/dev/null)" != selinuxfs ] ||
		skip "SELinux is enabled on this host: a mount label is refused too"
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2"'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'process\.selinuxLabel "system_u:system_r:container_t:s0:c1,c2": SELinux is not enabled on this host'
	assert_nothing_left
	update_config 'del(.process.selinuxLabel) | .linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2"'
	in_container abtest echo ran
	assert_success
	[ "$stdout" = ran ]
}

# bats test_tags=agentbox-only
@test "linux.netDevices is refused clearly, nothing left" {
	# agentbox's choice (no host interfaces move into a sandbox); runc 1.1.5
	# ignores the field and the message format is agentbox's
	requires agentbox
	update_config '.linux.netDevices = {"abnone0": {}}'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'linux\.netDevices'
	assert_nothing_left
}
