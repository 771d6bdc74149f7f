#!/bin/bash
# bench/run.sh — agentbox against runc, crun, a same-work floor and srt on one busybox bundle.
# See bench/README.md. Needs root. One command:
#
#   bench/run.sh              full run (~5 min on 2 idle cores, srt included)
#   bench/run.sh --quick      smoke run (~1 min): few rounds, 20-container density, no Docker
#
# Options:
#   --rounds N      recorded rounds per comparison (default 50; --quick 5)
#   --warmup N      unrecorded rounds first (default 2; --quick 1)
#   --density N     containers in the density test (default 200; --quick 20; 0 = skip)
#   --no-crun       leave crun out (then the host's cgroup layout, hybrid here, is kept)
#   --no-docker     skip the end-to-end Docker comparison
#   --out DIR       where latest.json / latest.md go (default bench/results)
#   --keep          keep the work directory (bundles, raw files, runtime logs)
#   --no-kit        skip kit run against srt, the machinery's memory, clients
#                   against a refused registry and the HTTP proxy's cost (bench/proxy.sh)
#   --no-gateway    skip the credential gateway's costs (bench/gateway.sh)
#   --no-rootless   no rootless cases (they need a user, made for the run:
#                   abbnbench, removed at the end)
#
# Docker: DOCKER_ROUNDS (default 8), DOCKER_NETWORK (default none; "bridge"
# adds libnetwork's veth setup, the same for both runtimes).
# AGENT_ROUNDS (default 100; --quick 10): rounds of the agent-features section
# (agentbox-agent, agentbox-egress and agentbox-plain alternated: run, and
# create) that the agent-features and egress-policy targets are read from.
#
# Everything but Docker runs in a private mount namespace, with the runtimes'
# state roots on a tmpfs like a production host's /run (BENCH_STATE_FS=disk
# keeps them on /tmp's file system: ext4 here, as is this machine's /run).
#
# Environment: AGENTBOX (default: the repo's ./agentbox, built with make if
# missing; the benchmark runs a copy), AGENTBOX_BASE (an older agentbox binary:
# its cases run beside this one's, so the difference is what changed since),
# RUNC (/usr/sbin/runc), CRUN (/usr/bin/crun), BUSYBOX (/bin/busybox, must be
# static), SRT (srt; installed with npm when missing, SRT= leaves it out),
# KIT_ROUNDS (default 30; --quick 5), MACHINERY_SAMPLES (3; --quick 1),
# REFUSED_ROUNDS (8; --quick 2) and PIP_ROUNDS (3; --quick 1) of the refused
# section (clients against a refused registry, kit run against srt).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

# ================================================================ inner part
# Runs inside `unshare -m` under `abbench reap`: every orphaned container
# process is reaped by the reaper. Configuration comes in BENCH_* variables.

# rt_cmd CASE: the runtime command line (up to the subcommand) of a benchmark case
rt_cmd() {
	case $1 in
	agentbox) echo "$AB --root $WORK/state/agentbox" ;;
	agentbox-ro) echo "$AB_RO --root $WORK/state/agentbox-ro" ;;
	agentbox-nopool) echo "$AB --root $WORK/state/agentbox-nopool --config $WORK/nopool.yaml" ;;
	agentbox-agent) echo "$AB --root $WORK/state/agentbox-agent --seccomp-profile agent --egress-allow $EGRESS20" ;;
	agentbox-plain) echo "$AB --root $WORK/state/agentbox-plain --seccomp-profile none --egress-allow all" ;;
	agentbox-egress) echo "$AB --root $WORK/state/agentbox-egress --seccomp-profile none --egress-allow $EGRESS20" ;;
	agentbox-base) echo "$AB_BASE --root $WORK/state/agentbox-base" ;;
	runc) echo "$RUNC --root $WORK/state/runc" ;;
	crun) echo "$CRUN --root $WORK/state/crun" ;;
	esac
}

# rounds SECTION PLAN [ROUNDS [WARMUP]]
rounds() {
	local section=$1 plan=$2 n=${3:-$BENCH_ROUNDS} w=${4:-$BENCH_WARMUP} t0=$SECONDS
	"$ABBENCH" rounds -n "$n" -w "$w" -s "$section" -l "$WORK/logs/$section.log" "$plan" "$WORK/raw.jsonl" ||
		say "$section: some steps failed (see $WORK/logs/$section.log)"
	say "$section: done in $((SECONDS - t0)) s"
}

# vm PID FIELD: a field of /proc/PID/status in kB (empty if gone)
vm() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }

# pss PID: proportional set size in kB (shared pages divided among their users)
pss() { awk '$1 == "Pss:" { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }

# children PID: the pids of PID's children
children() { cat "/proc/$1/task/$1/children" 2>/dev/null; }

# sentry_pid ROOT ID
sentry_pid() { jq -r '.sentryPid // empty' "$1/$2/state.json" 2>/dev/null; }

# mem_used: the "used" column of free -b (procps-ng 4: MemTotal - MemAvailable),
# 5 samples 0.5 s apart (other work on the machine moves it too), as a JSON
# object {"median","min","max"}
mem_used() {
	local i n=${BENCH_MEM_SAMPLES:-5}
	for ((i = 1; i <= n; i++)); do
		free -b | awk '/^Mem:/ { print $3 }'
		[ $i = "$n" ] || sleep 0.5
	done | sort -n | awk '{ v[NR] = $1 } END { printf "{\"median\":%d,\"min\":%d,\"max\":%d}", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

json_add() { # json_add KEY VALUE(JSON)
	printf '{"%s":%s}\n' "$1" "$2" >>"$WORK/extra.jsonl"
}

# mount_lines CASE...: the lines of /proc/self/mountinfo each case's container
# sees (the bundle's mounts as each one makes them), into WORK/logs/mountinfo-CASE
mount_lines() {
	local c out js="{}" n
	for c in "$@"; do
		case $c in agentbox-ro | agentbox-nopool | agentbox-agent | agentbox-plain | agentbox-egress) continue ;; esac
		out=$WORK/logs/mountinfo-$c
		case $c in
		floor) "$FLOOR" "$WORK/rootfs" /bin/busybox cat /proc/self/mountinfo ;;
		samework) "$SAMEWORK" "$WORK/bundle-mounts" mounts ;;
		*) $(rt_cmd "$c") run --bundle "$WORK/bundle-mounts" "mounts-$c" ;;
		esac >"$out" 2>"$out.err" || { say "mount lines: $c failed: $(head -c 200 "$out.err")"; continue; }
		n=$(grep -c . "$out")
		js=$(jq -c --arg c "$c" --argjson n "$n" '. + {($c): $n}' <<<"$js")
	done
	json_add mount_lines "$js"
}

# kit_cmd CASE: the command line of a kit case, up to and including "--" (the
# program follows); srt cases up to the program
kit_cmd() {
	case $1 in
	kit) echo "$AB --root $WORK/state/kit kit run --workspace $WORK/ws --" ;;
	kit-net) echo "$AB --root $WORK/state/kit kit run --allow $KIT_ALLOW --workspace $WORK/ws --" ;;
	kit-base) echo "$AB_BASE --root $WORK/state/kit-base kit run --workspace $WORK/ws --" ;;
	kit-base-net) echo "$AB_BASE --root $WORK/state/kit-base kit run --allow $KIT_ALLOW --workspace $WORK/ws --" ;;
	kit-rootless) echo "$AS_USER $AB kit run --workspace $WORK/ws-user --" ;;
	kit-net-rootless) echo "$AS_USER $AB kit run --allow $KIT_ALLOW --workspace $WORK/ws-user --" ;;
	srt) echo "$SRT --settings $WORK/srt-none.json" ;;
	srt-net) echo "$SRT --settings $WORK/srt-net.json" ;;
	srt-user) echo "$AS_USER $SRT --settings $WORK/srt-user.json" ;;
	esac
}

# srt_settings FILE WORKSPACE [DOMAIN]: srt's settings: writes only in the
# workspace, no network or one allowed domain
srt_settings() {
	jq -n --arg ws "$2" --arg d "${3:-}" '{network: {allowedDomains: (if $d == "" then [] else [$d] end),
		deniedDomains: []}, filesystem: {denyRead: [], allowWrite: [$ws], denyWrite: []}}' >"$1"
}

# The user's slirp4netns opens /dev/net/tun, which most distributions ship
# 0666; where it is not (0600 on some VMs), a node of the same device the user
# may open is bound over it in this mount namespace only: the host's node and
# its mode stay as they are.
tun_for_user() {
	[ -c /dev/net/tun ] || return 0
	setpriv --reuid="$BENCH_USER" --regid="$BENCH_USER" --init-groups sh -c 'test -r /dev/net/tun && test -w /dev/net/tun' && return 0
	local mode
	mode=$(stat -c %a /dev/net/tun)
	if mknod -m 0666 "$WORK/tun" c 10 200 && mount --bind "$WORK/tun" /dev/net/tun; then
		say "kits: /dev/net/tun is $mode on the host: a 0666 node of it bound over it in the benchmark's mount namespace, for the rootless cases"
		json_add tun_note '"/dev/net/tun not usable by the user on the host: a 0666 node of the same device bound over it in the benchmark'"'"'s private mount namespace (the host'"'"'s node unchanged)"'
	fi
}

# kits: `kit run -- true` against srt (Anthropic's sandbox-runtime: bubblewrap
# and proxies), without and with networking (user-mode networking and one
# allowed name for kit run, the proxies and one allowed domain for srt),
# rootful, and rootless where it works; then the machinery's memory
kits() {
	local c cases=() plan=$WORK/plan-kit i js
	mkdir -p "$WORK/ws" "$WORK/state/kit" "$WORK/state/kit-base"
	# kit run's temporary bundles go to /run/agentbox-kits: on a tmpfs here, as
	# /run is on most hosts (this mount namespace only)
	if [ "$BENCH_STATE_FS" = tmpfs ]; then
		if ! mkdir -p /run/agentbox-kits || ! mount -t tmpfs -o mode=0700,size=256m bench-kits /run/agentbox-kits; then
			say "kits: cannot mount a tmpfs on /run/agentbox-kits"
		fi
	fi
	srt_settings "$WORK/srt-none.json" "$WORK/ws"
	srt_settings "$WORK/srt-net.json" "$WORK/ws" "$KIT_ALLOW"
	local want=(kit kit-net)
	[ -n "$AB_BASE" ] && want+=(kit-base kit-base-net)
	[ -n "$SRT" ] && want+=(srt srt-net)
	if [ -n "${BENCH_USER:-}" ]; then
		mkdir -p "$WORK/ws-user" "$WORK/home-user" "$WORK/xdg-user"
		chown "$BENCH_USER:" "$WORK/ws-user" "$WORK/home-user" "$WORK/xdg-user"
		chmod 0700 "$WORK/xdg-user"
		AS_USER="setpriv --reuid=$BENCH_USER --regid=$BENCH_USER --init-groups env HOME=$WORK/home-user"
		AS_USER+=" XDG_RUNTIME_DIR=$WORK/xdg-user PATH=/usr/local/bin:/usr/bin:/bin"
		tun_for_user
		want+=(kit-rootless kit-net-rootless)
		if [ -n "$SRT" ]; then
			srt_settings "$WORK/srt-user.json" "$WORK/ws-user"
			want+=(srt-user)
		fi
	fi
	for c in "${want[@]}"; do
		# shellcheck disable=SC2046
		if (cd "$WORK/ws" && $(kit_cmd "$c") true) >"$WORK/logs/probe-$c.log" 2>&1; then
			cases+=("$c")
		else
			case $c in
			*rootless) say "$c: skipped until rootless kits work here: $(tail -n 1 "$WORK/logs/probe-$c.log" | head -c 300)" ;;
			*) say "$c cannot run true, leaving it out: $(tail -n 1 "$WORK/logs/probe-$c.log" | head -c 300)" ;;
			esac
			json_add "kit_skip_$c" "$(tail -n 1 "$WORK/logs/probe-$c.log" | head -c 300 | jq -Rs .)"
		fi
	done
	json_add kit_cases "$(printf '%s\n' "${cases[@]}" | jq -R . | jq -sc .)"
	[ ${#cases[@]} -gt 0 ] || return 0
	: >"$plan"
	for c in "${cases[@]}"; do
		printf 'case %s\nstep kit-run %s true\n' "$c" "$(kit_cmd "$c")" >>"$plan"
	done
	(cd "$WORK/ws" && rounds kit "$plan" "$KIT_ROUNDS")

	# the machinery: everything a box runs beside its program, resident
	for c in "${cases[@]}"; do
		js="[]"
		for ((i = 0; i < MACHINERY_SAMPLES; i++)); do
			# shellcheck disable=SC2046
			js=$(jq -c --argjson x "$(cd "$WORK/ws" && python3 "$HERE/machinery.py" sleep -- $(kit_cmd "$c") sleep 4)" \
				'. + [$x]' <<<"$js") || break
		done
		json_add "machinery_$c" "$js"
	done
	say "kits: machinery done"
	refused "${cases[@]}"
}

# refused_scripts DIR: the clients of the refused section, in a workspace.
# Each succeeds when its client failed on the refusal (npm: E403; pip: the
# proxy's 403 in its retries), so a quick failure for another reason (a cache
# it may not write) is no result.
refused_scripts() {
	mkdir -p "$1/npm-refused"
	echo '{}' >"$1/npm-refused/package.json"
	cat >"$1/npm-refused.sh" <<-'EOF'
		cd npm-refused || exit 1
		npm install --cache ../.npm-cache --no-audit --no-fund --no-update-notifier left-pad is-odd >../npm-refused.out 2>&1
		grep -q "code E403" ../npm-refused.out
	EOF
	cat >"$1/pip-refused.sh" <<-'EOF'
		/usr/bin/python3 -m pip download -q --no-cache-dir -d pip-refused.d r35pkg >pip-refused.out 2>&1
		grep -q "403 Forbidden" pip-refused.out
	EOF
	[ -z "${BENCH_USER:-}" ] || chown -R "$BENCH_USER:" "$1/npm-refused" "$1"/*-refused.sh
}

# refused CASE...: a client against a refused registry (issue 35), kit run
# against srt: npm install of two packages from its default registry
# (registry.npmjs.org, which neither allows: 141 s in a kit box before its
# HTTP proxy, npm retrying every DNS error for 70 s a package; srt's proxy
# answers 403 as the box's does now), with networking and without, rootful
# and rootless; and pip download from pypi.org (pip retries a refused tunnel
# ~8 s under both), with networking only
refused() {
	local c plan=$WORK/plan-refused
	command -v npm >/dev/null || { say "refused: no npm, left out"; return 0; }
	refused_scripts "$WORK/ws"
	[ -z "${BENCH_USER:-}" ] || refused_scripts "$WORK/ws-user"
	: >"$plan"
	for c in "$@"; do
		case $c in kit-base*) continue ;; esac   # an older kit box: 141 s a run
		printf 'case %s\nstep npm-refused %s sh npm-refused.sh\n' "$c" "$(kit_cmd "$c")" >>"$plan"
	done
	(cd "$WORK/ws" && rounds refused "$plan" "$REFUSED_ROUNDS" 1)
	: >"$plan-pip"
	for c in "$@"; do
		case $c in kit-net | srt-net) printf 'case %s\nstep pip-refused %s sh pip-refused.sh\n' "$c" "$(kit_cmd "$c")" >>"$plan-pip" ;; esac
	done
	[ -s "$plan-pip" ] && (cd "$WORK/ws" && rounds refused "$plan-pip" "$PIP_ROUNDS" 0)
	say "refused: done"
}

# run_true_cmd CASE: the command line of CASE running /bin/true in the bundle
run_true_cmd() {
	case $1 in
	floor) echo "$FLOOR $WORK/rootfs /bin/true" ;;
	samework) echo "$SAMEWORK $WORK/bundle-true {id}" ;;
	*) echo "$(rt_cmd "$1") run --bundle $WORK/bundle-true {id}" ;;
	esac
}

# busy_ticks: the jiffies all CPUs spent busy so far (user, nice, system, irq,
# softirq, steal; not idle or iowait), from /proc/stat
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# back_to_back CASE...: each case alone, run after run (BENCH_ROUNDS, after 2
# warm-up runs), so that each run competes with whatever the one before left
# working in the background (agentbox's netns pool filler; the kernel's
# teardown of namespaces, which every case leaves). Besides the wall times
# (section b2b-CASE), the whole machine's busy CPU from the first run until
# 1 s after the last, less what the idle machine spends in as long (measured
# for 2 s first), per run: the runtime's own CPU and its background's.
back_to_back() {
	local c plan t0 t1 c0 c1 i0 i1 n=$BENCH_ROUNDS w=2
	i0=$(busy_ticks)
	sleep 2
	i1=$(busy_ticks)
	for c in "$@"; do
		plan=$WORK/plan-b2b-$c
		printf 'case %s\nstep run %s\n' "$c" "$(run_true_cmd "$c")" >"$plan"
		c0=$(busy_ticks)
		t0=$(date +%s%N)
		rounds "b2b-$c" "$plan" "$n" "$w"
		sleep 1
		c1=$(busy_ticks)
		t1=$(date +%s%N)
		json_add "b2b_$c" "{\"runs\":$((n + w)),\"busy_ticks\":$((c1 - c0)),\"elapsed_ns\":$((t1 - t0)),\"idle_busy_ticks\":$((i1 - i0)),\"idle_ns\":2000000000,\"hz\":$(getconf CLK_TCK)}"
	done
}

inner() {
	local c cases_run=(floor samework agentbox agentbox-nopool agentbox-agent agentbox-plain runc) cases_rt=(agentbox agentbox-plain runc)
	mkdir -p "$WORK/logs"
	# agentbox-nopool: the defaults, but every container makes its own network
	# namespace (no pool made ahead of time: agentbox-config(5) runtime.netns_pool)
	printf 'runtime:\n  netns_pool: 0\n' >"$WORK/nopool.yaml"
	# agentbox-ro: the same binary on a read-only bind mount (this private mount
	# namespace only), as on a host with an immutable /usr: no sealed copy
	mkdir -p "$WORK/robin"
	cp "$AB" "$WORK/robin/agentbox"
	if mount --bind "$WORK/robin" "$WORK/robin" && mount -o remount,bind,ro "$WORK/robin"; then
		AB_RO=$WORK/robin/agentbox
		cases_run=(floor samework agentbox agentbox-ro agentbox-nopool agentbox-agent agentbox-plain runc)
	else
		say "cannot make a read-only bind mount, leaving agentbox-ro out"
	fi

	# an older agentbox beside this one: what changed since costs the difference
	[ -n "$AB_BASE" ] && { cases_run+=(agentbox-base); cases_rt+=(agentbox-base); }

	bench_state_fs
	for c in agentbox agentbox-ro agentbox-nopool agentbox-agent agentbox-egress agentbox-plain agentbox-base runc crun; do mkdir -p "$WORK/state/$c"; done
	if [ -n "$CRUN" ]; then
		bench_unmount_unified &&
			json_add cgroup_layout '"cgroup v1 only (the cgroup2 mount at /sys/fs/cgroup/unified unmounted in a private mount namespace, for crun)"'
		if ! $(rt_cmd crun) run --bundle "$WORK/bundle-true" probe >"$WORK/logs/crun-probe.log" 2>&1; then
			say "crun cannot run here, leaving it out: $(head -c 300 "$WORK/logs/crun-probe.log")"
			$(rt_cmd crun) delete --force probe >/dev/null 2>&1
			CRUN=
		fi
	fi
	[ -n "$CRUN" ] && { cases_run+=(crun); cases_rt+=(crun); }
	local have=()
	for c in "${cases_run[@]}"; do
		[ "$c" = floor ] && { have+=(floor); continue; }
		if [ "$c" = samework ]; then
			if "$SAMEWORK" "$WORK/bundle-true" probe >"$WORK/logs/probe-samework.log" 2>&1; then
				have+=(samework)
			else
				say "samework cannot run /bin/true, leaving it out: $(head -c 300 "$WORK/logs/probe-samework.log")"
			fi
			continue
		fi
		if $(rt_cmd "$c") run --bundle "$WORK/bundle-true" probe >"$WORK/logs/probe-$c.log" 2>&1; then
			have+=("$c")
		else
			say "$c cannot run /bin/true, leaving it out: $(head -c 300 "$WORK/logs/probe-$c.log")"
			$(rt_cmd "$c") delete --force probe >/dev/null 2>&1
			case $c in agentbox*) die "agentbox must run for a benchmark" ;; esac
		fi
	done
	cases_run=("${have[@]}")
	say "probes done: ${cases_run[*]}"
	json_add cases "$(printf '%s\n' "${cases_run[@]}" | jq -R . | jq -sc .)"
	mount_lines "${cases_run[@]}"

	# ---- 1 (and 4, 5): run of /bin/true, the floor, peak RSS, agent features on/off
	local plan=$WORK/plan-run
	: >"$plan"
	for c in "${cases_run[@]}"; do
		printf 'case %s\nstep run %s\n' "$c" "$(run_true_cmd "$c")" >>"$plan"
	done
	rounds run "$plan"
	local b2b=()
	for c in agentbox agentbox-nopool samework; do
		[[ " ${cases_run[*]} " == *" $c "* ]] && b2b+=("$c")
	done
	back_to_back "${b2b[@]}"

	# ---- 5 again: the agent features' cost is a few hundred microseconds, less
	# than this VM's minute-to-minute drift over 20 rounds: the cases alone,
	# alternated for AGENT_ROUNDS rounds, give the paired figures the report
	# uses. agentbox-egress is the egress policy alone (20 entries, no seccomp
	# profile), whose budget is its own target. Its create waits for the DNS
	# sentry to serve, so create is timed too, in rounds of its own (then
	# deleted, untimed): a deleted sentry's and netns' teardown runs on after
	# delete returns and would land on the run rounds.
	if [[ " ${cases_run[*]} " == *" agentbox-agent "* && " ${cases_run[*]} " == *" agentbox-plain "* ]]; then
		plan=$WORK/plan-agent
		: >"$plan"
		for c in agentbox-agent agentbox-egress agentbox-plain; do
			printf 'case %s\nstep run %s run --bundle %s {id}\n' "$c" "$(rt_cmd "$c")" "$WORK/bundle-true" >>"$plan"
		done
		rounds agent "$plan" "$AGENT_ROUNDS"
		plan=$WORK/plan-agent-create
		: >"$plan"
		for c in agentbox-egress agentbox-plain; do
			cat >>"$plan" <<-EOF
				case $c
				step create $(rt_cmd "$c") create --bundle $WORK/bundle-true {id}
				step - $(rt_cmd "$c") delete --force {id}
			EOF
		done
		rounds agent-create "$plan" "$AGENT_ROUNDS"
	fi

	# ---- 2: create, start, delete separately
	plan=$WORK/plan-lifecycle
	: >"$plan"
	for c in "${cases_rt[@]}"; do
		cat >>"$plan" <<-EOF
			case $c
			step create $(rt_cmd "$c") create --bundle $WORK/bundle-true {id}
			step start $(rt_cmd "$c") start {id}
			step - @poll stopped $(rt_cmd "$c") state {id}
			step delete $(rt_cmd "$c") delete {id}
		EOF
	done
	rounds lifecycle "$plan"

	# ---- 3: exec into a running container (and 4: the sentry's memory)
	local cases_exec=(agentbox agentbox-agent agentbox-plain runc) ok=()
	[ -n "$CRUN" ] && cases_exec+=(crun)
	for c in "${cases_exec[@]}"; do
		if $(rt_cmd "$c") run -d --bundle "$WORK/bundle-sleep" x-exec >>"$WORK/logs/exec-setup.log" 2>&1; then
			ok+=("$c")
		else
			say "exec: $c: run -d failed, leaving it out (see $WORK/logs/exec-setup.log)"
		fi
	done
	plan=$WORK/plan-exec
	: >"$plan"
	for c in "${ok[@]}"; do
		printf 'case %s\nstep exec %s exec x-exec /bin/true\n' "$c" "$(rt_cmd "$c")" >>"$plan"
	done
	rounds exec "$plan"
	# a sentry gives back what it inherited after its first quiet second
	# (IDLE_RELEASE_MS): read it at rest, not in whatever second the exec
	# rounds happened to end (20 rounds take 0.5-1.5 s on this VM)
	sleep 1.5
	local pid
	for c in agentbox agentbox-agent; do
		pid=$(sentry_pid "$WORK/state/$c" x-exec)
		if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
			# the sentry and its helper process(es)
			local h hs="" hrss=0 hpss=0
			for h in $(children "$pid"); do
				hs+="${hs:+,}{\"pid\":$h,\"vmrss_kb\":$(vm "$h" VmRSS),\"rss_anon_kb\":$(vm "$h" RssAnon),\"pss_kb\":$(pss "$h")}"
			done
			json_add "sentry_$c" "{\"pid\":$pid,\"vmrss_kb\":$(vm "$pid" VmRSS),\"vmhwm_kb\":$(vm "$pid" VmHWM),\"rss_anon_kb\":$(vm "$pid" RssAnon),\"rss_file_kb\":$(vm "$pid" RssFile),\"pss_kb\":$(pss "$pid"),\"helpers\":[$hs]}"
		else
			say "no DNS sentry found for $c (state.json sentryPid)"
		fi
	done
	for c in "${ok[@]}"; do
		$(rt_cmd "$c") delete --force x-exec >>"$WORK/logs/exec-setup.log" 2>&1 || say "exec: $c: delete --force failed"
	done

	# ---- kit run against srt, with and without networking, and the machinery
	[ -z "$BENCH_NO_KIT" ] && kits

	# ---- 6: density
	local n=$BENCH_DENSITY
	if [ "$n" -gt 0 ]; then
		# agentbox-agent: a policy with domain names, so a sentry, its helper
		# and the dynamic sets per container
		for c in agentbox agentbox-agent runc; do
			density "$c" "$n"
		done
	fi
}

# density CASE N: N `run -d` sleep containers one after another, memory, delete all
density() {
	local c=$1 n=$2 plan=$WORK/plan-density-$1 before after afterdel scan
	sync
	sleep 1
	before=$(mem_used)
	printf 'case %s\nstep run-d %s run -d --bundle %s d{round}\n' "$c" "$(rt_cmd "$c")" "$WORK/bundle-sleep" >"$plan"
	rounds "density-$c" "$plan" "$n" 0
	# at rest: a sentry gives back what it inherited after its first quiet second
	sleep 2
	after=$(mem_used)
	$(rt_cmd "$c") list --format json >"$WORK/density-$c-list.json" 2>>"$WORK/logs/density-$c.log"
	scan=$(python3 "$HERE/memscan.py" "$WORK/state/$c" "$WORK/density-$c-list.json") || scan='{}'
	printf 'case %s\nstep delete %s delete --force d{round}\n' "$c" "$(rt_cmd "$c")" >"$plan-del"
	rounds "density-$c" "$plan-del" "$n" 0
	sleep 1
	afterdel=$(mem_used)
	json_add "density_$c" "$(jq -c --argjson n "$n" --argjson b "$before" --argjson a "$after" --argjson d "$afterdel" \
		'. + {n: $n, mem_used_before: $b, mem_used_after: $a, mem_used_after_delete: $d}' <<<"$scan")"
}

if [ "${1:-}" = --inner ]; then
	inner
	exit 0
fi

# ================================================================ outer part

QUICK= ROUNDS= WARMUP= DENSITY= NO_CRUN= NO_DOCKER= OUT=$HERE/results KEEP= NO_KIT= NO_ROOTLESS= NO_GATEWAY=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--rounds) ROUNDS=$2; shift ;;
	--warmup) WARMUP=$2; shift ;;
	--density) DENSITY=$2; shift ;;
	--no-crun) NO_CRUN=1 ;;
	--no-docker) NO_DOCKER=1 ;;
	--out) OUT=$2; shift ;;
	--keep) KEEP=1 ;;
	--no-kit) NO_KIT=1 ;;
	--no-gateway) NO_GATEWAY=1 ;;
	--no-rootless) NO_ROOTLESS=1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
if [ -n "$QUICK" ]; then
	ROUNDS=${ROUNDS:-5} WARMUP=${WARMUP:-1} DENSITY=${DENSITY:-20} NO_DOCKER=1 BENCH_MEM_SAMPLES=3
	AGENT_ROUNDS=${AGENT_ROUNDS:-10} KIT_ROUNDS=${KIT_ROUNDS:-5} MACHINERY_SAMPLES=${MACHINERY_SAMPLES:-1}
fi
KIT_ROUNDS=${KIT_ROUNDS:-30} MACHINERY_SAMPLES=${MACHINERY_SAMPLES:-3}
# the refused section: npm ~1 s a run, pip ~9 s
REFUSED_ROUNDS=${REFUSED_ROUNDS:-$([ -n "$QUICK" ] && echo 2 || echo 8)}
PIP_ROUNDS=${PIP_ROUNDS:-$([ -n "$QUICK" ] && echo 1 || echo 3)}
# the one name kit-net and srt-net allow (never asked: the program is true)
KIT_ALLOW=api.example.test
AGENT_ROUNDS=${AGENT_ROUNDS:-100}
ROUNDS=${ROUNDS:-50} WARMUP=${WARMUP:-2} DENSITY=${DENSITY:-200}
DOCKER_ROUNDS=${DOCKER_ROUNDS:-8}
# none: the engine and runtime path without libnetwork's veth setup (the same for
# both runtimes), and no dependence on a bridge another engine run may share
DOCKER_NETWORK=${DOCKER_NETWORK:-none}
BENCH_STATE_FS=${BENCH_STATE_FS:-tmpfs}

[ "$(id -u)" = 0 ] || die "needs root"
for t in jq python3 unshare cc free; do
	command -v "$t" >/dev/null || die "needs $t"
done

WORK=$(mktemp -d /tmp/agentbox-bench.XXXXXX) || die "mktemp"
SAMPLER=
ENGINES_DIR=
MADE_USER='' BENCH_USER=''
# the netfilter hook anchor the Docker runs pin in the host's mount namespace
# goes again at the end, unless it was there before
# shellcheck source=scripts/host-pins.sh
. "$REPO/scripts/host-pins.sh"
cleanup() {
	[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
	[ -n "$ENGINES_DIR" ] && "$REPO/tests/engines/engines-down.sh" "$ENGINES_DIR" >/dev/null 2>&1
	host_pins_cleanup
	[ -n "$MADE_USER" ] && userdel "$BENCH_USER" 2>/dev/null
	if [ -n "$KEEP" ]; then
		say "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -n "$NO_CRUN" ] && CRUN=
bench_setup

# the rootless cases' user (with subordinate ids, as rootless tools need), made
# for this run unless it is there; WORK must be traversable for it
if [ -z "$NO_KIT$NO_ROOTLESS" ]; then
	BENCH_USER=abbnbench
	if ! id "$BENCH_USER" >/dev/null 2>&1; then
		if useradd -M -d /nonexistent -s /usr/sbin/nologin "$BENCH_USER" 2>"$WORK/useradd.err"; then
			MADE_USER=1
			usermod --add-subuids 2190000000-2190065535 --add-subgids 2190000000-2190065535 "$BENCH_USER" 2>/dev/null ||
				say "no subordinate ids for $BENCH_USER"
		else
			say "cannot make the user $BENCH_USER, no rootless cases: $(cat "$WORK/useradd.err")"
			BENCH_USER=
		fi
	fi
	[ -n "$BENCH_USER" ] && chmod 0711 "$WORK"
fi

# ---- machine and load
{
	echo "{\"meta\":$(jq -nc --arg date "$(date -u +%FT%TZ)" --arg host "$(uname -n)" \
		--arg kernel "$(uname -r)" --arg cpu "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
		--argjson ncpu "$(nproc)" --argjson mem "$(free -b | awk '/^Mem:/ { print $2 }')" \
		--arg agentbox "$("$AB" --version 2>&1 | tr '\n' ' ')" --arg agentbox_src "$SRC_AB" \
		--arg git "$(git -C "$REPO" describe --always --dirty 2>/dev/null)" \
		--arg runc "$("$RUNC" --version 2>&1 | head -1)" --arg crun "${CRUN:+$("$CRUN" --version 2>&1 | head -1)}" \
		--arg agentbox_base "${AB_BASE:+$("$AB_BASE" --version 2>&1 | tr '\n' ' ') ($AGENTBOX_BASE)}" \
		--arg srt "${SRT:+srt $("$SRT" --version 2>&1 | head -1), $(bwrap --version 2>&1 | head -1)}" \
		--arg mode "${QUICK:+quick}" --argjson rounds "$ROUNDS" --argjson warmup "$WARMUP" \
		--argjson density "$DENSITY" --arg egress "$EGRESS20" --arg statefs "$BENCH_STATE_FS" \
		'{date: $date, host: $host, kernel: $kernel, cpu: $cpu, ncpu: $ncpu, mem_bytes: $mem,
		  agentbox: $agentbox, agentbox_src: $agentbox_src, git: $git, runc: $runc, crun: $crun,
		  agentbox_base: $agentbox_base, srt: $srt,
		  mode: (if $mode == "" then "full" else $mode end), rounds: $rounds, warmup: $warmup,
		  density: $density, egress_allow_20: $egress, state_fs: $statefs}')}"
} >"$WORK/extra.jsonl"
# load: /proc/loadavg and the machine's busy CPU share, every 2 s (this benchmark included)
(
	prev=$(awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6 }' /proc/stat)
	while sleep 2; do
		cur=$(awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6 }' /proc/stat)
		echo "$(cut -d' ' -f1-4 /proc/loadavg) $prev $cur" >>"$WORK/load"
		prev=$cur
	done
) &
SAMPLER=$!
echo "$(cut -d' ' -f1-4 /proc/loadavg)" >"$WORK/load-start"

export WORK AB AB_BASE RUNC CRUN FLOOR SAMEWORK SRT ABBENCH EGRESS20 AGENT_ROUNDS KIT_ROUNDS KIT_ALLOW REFUSED_ROUNDS PIP_ROUNDS \
	MACHINERY_SAMPLES BENCH_USER BENCH_NO_KIT=$NO_KIT BENCH_STATE_FS=${BENCH_STATE_FS:-tmpfs} BENCH_ROUNDS=$ROUNDS BENCH_WARMUP=$WARMUP BENCH_DENSITY=$DENSITY BENCH_MEM_SAMPLES=${BENCH_MEM_SAMPLES:-5}
say "setup done in $SECONDS s; work directory $WORK; $ROUNDS rounds (+$WARMUP warm-up), density $DENSITY; load $(cut -d' ' -f1-3 /proc/loadavg)"
T0=$SECONDS
mkdir -p "$WORK/logs"
unshare -m --propagation private "$ABBENCH" reap -- bash "$0" --inner || die "the benchmark failed"

# ---- 7: end to end through Docker (a private dockerd from tests/engines/engines-up.sh)
if [ -z "$NO_DOCKER" ]; then
	UP=$REPO/tests/engines/engines-up.sh
	if [ ! -x "$UP" ]; then
		say "docker: skipped: $UP is not there"
		json_add docker_skip '"tests/engines/engines-up.sh is not there"'
	elif ! command -v dockerd >/dev/null; then
		say "docker: skipped: no dockerd"
		json_add docker_skip '"no dockerd installed"'
	else
		say "docker: starting a private dockerd (tests/engines/engines-up.sh)"
		ENGINES_DIR=$(AGENTBOX=$AB "$UP" docker 2>"$WORK/logs/engines-up.log" | tail -n 1)
		if [ -n "$ENGINES_DIR" ] && [ -f "$ENGINES_DIR/env" ]; then
			(
				# shellcheck disable=SC1091
				. "$ENGINES_DIR/env"
				if [ "${DOCKER_OK:-}" != 1 ]; then
					say "docker: skipped: ${DOCKER_SKIP:-engines-up.sh did not start dockerd}"
					json_add docker_skip "$(jq -n --arg s "${DOCKER_SKIP:-dockerd did not start}" '$s')"
					exit 0
				fi
				export DOCKER_HOST
				plan=$WORK/plan-docker
				for c in agentbox runc; do
					printf 'case %s\nstep docker-run %s run --rm --network=%s --runtime=%s %s /bin/true\n' \
						"$c" "$DOCKER" "$DOCKER_NETWORK" "$c" "$TEST_IMAGE" >>"$plan"
				done
				t0=$SECONDS
				"$ABBENCH" rounds -n "$DOCKER_ROUNDS" -w 1 -s docker -l "$WORK/logs/docker.log" "$plan" "$WORK/raw.jsonl" ||
					say "docker: some runs failed (see $WORK/logs/docker.log)"
				say "docker: done in $((SECONDS - t0)) s"
			)
		else
			say "docker: skipped: engines-up.sh failed (see $WORK/logs/engines-up.log)"
			json_add docker_skip '"engines-up.sh failed"'
		fi
		"$REPO/tests/engines/engines-down.sh" "$ENGINES_DIR" >/dev/null 2>&1
		ENGINES_DIR=
	fi
else
	json_add docker_skip '"--no-docker or --quick"'
fi

kill "$SAMPLER" 2>/dev/null
SAMPLER=
echo "$(cut -d' ' -f1-4 /proc/loadavg)" >"$WORK/load-end"
json_add elapsed_s "$((SECONDS - T0))"
mkdir -p "$OUT"
python3 "$HERE/report.py" "$WORK" "$OUT" || die "report failed"
# header credentials: the gateway's first request and memory (its own network)
if [ -z "$NO_GATEWAY" ]; then
	"$HERE/gateway.sh" --rounds "$([ -n "$QUICK" ] && echo 10 || echo 50)" --out "$OUT" >/dev/null &&
		{ echo; cat "$OUT/gateway.md"; } >>"$OUT/latest.md" && cat "$OUT/gateway.md" ||
		say "gateway: failed (bench/gateway.sh)"
fi
# allowed traffic through the box's HTTP proxy against the same directly (its own network)
if [ -z "$NO_KIT" ]; then
	AGENTBOX=$AB "$HERE/proxy.sh" --rounds "$([ -n "$QUICK" ] && echo 5 || echo 20)" --out "$OUT" >/dev/null &&
		{ echo; cat "$OUT/proxy.md"; } >>"$OUT/latest.md" && cat "$OUT/proxy.md" ||
		say "proxy: failed (bench/proxy.sh)"
fi
say "raw figures: $OUT/latest.json; table: $OUT/latest.md; total $((SECONDS - T0)) s"
