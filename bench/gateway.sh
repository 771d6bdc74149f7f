#!/bin/bash
# bench/gateway.sh — what header credentials cost (issue 26 item 6): the
# first request of a connection through the credential gateway against the
# same request made directly, and through the SNI check alone (spliced);
# downloads of 16 MiB through it (its response scan reads every byte, issue
# 34) against the same made directly; and the gateway's resident memory.
# Needs root, curl, openssl, python3 and
# `make agentbox-gateway tests/netfilter/gateway-driver`.
#
#   bench/gateway.sh [--rounds N] [--dl-rounds N] [--out DIR]   (run.sh calls it; see bench/README.md)
#
# Each round runs the three cases in a rotated order, each a fresh curl
# process and connection (TLS handshake, one GET, the answer): curl's own
# time_total, so process start-up is left out. The test network is the one
# of tests/netfilter/gateway-net.bash (abgw* names, 198.19.96.0/24): the
# "direct" client runs as uid 4242, which the redirect lets through, on
# the same path as the others.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
ROUNDS=50
DL_ROUNDS=10
OUT=$HERE/results
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--dl-rounds) DL_ROUNDS=$2; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: $0 [--rounds N] [--dl-rounds N] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
say() { echo "bench gateway: $*" >&2; }
[ "$(id -u)" = 0 ] || { say "needs root"; exit 1; }
for t in curl openssl python3 jq; do command -v $t >/dev/null || { say "needs $t"; exit 1; }; done
[ -x "$REPO/agentbox-gateway" ] && [ -x "$REPO/tests/netfilter/gateway-driver" ] ||
	make -C "$REPO" -s agentbox-gateway tests/netfilter/gateway-driver >/dev/null || exit 1
mkdir -p "$OUT"

BATS_TEST_DIRNAME=$REPO/tests/netfilter
GW_DRIVER=$REPO/tests/netfilter/gateway-driver
# shellcheck source=tests/netfilter/gateway-net.bash
. "$REPO/tests/netfilter/gateway-net.bash"
W=$(mktemp -d /tmp/abgw-bench.XXXXXX)
cleanup() {
	[ -n "${DRV:-}" ] && kill "$DRV" 2>/dev/null && wait "$DRV" 2>/dev/null
	gw_net_down
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM   # the EXIT trap runs then too
gw_certs "$W"
gw_net_up
gw_servers_up "$W" || exit 1
gw_box nft -f - <<EOF
table inet abgw {
	chain out {
		type nat hook output priority -100;
		meta skuid 4242 accept
		meta mark != 0x0ab0d443 tcp dport 443 redirect to :8443
	}
}
EOF
export AGENTBOX_GATEWAY=$REPO/agentbox-gateway BENCH_SECRET=ghp_bench_not_a_secret
# a binary just built sits dirty in the page cache until it is written back,
# and its mapped pages then count as the gateway's Private_Dirty (4.4 MiB
# measured right after make, 0.9 MiB once written): write it out first
sync "$AGENTBOX_GATEWAY"
ip netns exec "abgw-b$GW_R" "$GW_DRIVER" 8443 "allow=api.test,other.test;deny=" "$W/log.jsonl" --ca-out "$W/boxca.pem" \
	--upstream-ca "$W/ca.pem" --cred BENCH api.test "Authorization: Bearer {}" BENCH_SECRET >"$W/driver.out" 2>&1 &
DRV=$!
for i in $(seq 100); do grep -q ready "$W/driver.out" 2>/dev/null && break; sleep 0.05; done
GWPID=$(awk '/ready/ {print $2}' "$W/driver.out")
[ -n "$GWPID" ] || { say "the gateway did not start: $(cat "$W/driver.out")"; exit 1; }
cat "$W/ca.pem" "$W/boxca.pem" >"$W/bundle.pem"
chmod 0644 "$W"/*.pem
chmod 0755 "$W"

one() {
	case $1 in
	direct) gw_box setpriv --reuid 4242 --regid 4242 --clear-groups curl -sS -o /dev/null -w '%{time_total}' \
		--cacert "$W/ca.pem" --resolve api.test:443:198.19.96.10 https://api.test/ ;;
	splice) gw_box curl -sS -o /dev/null -w '%{time_total}' --cacert "$W/ca.pem" \
		--resolve other.test:443:198.19.96.11 https://other.test/ ;;
	gateway) gw_box curl -sS -o /dev/null -w '%{time_total}' --cacert "$W/bundle.pem" \
		--resolve api.test:443:198.19.96.10 https://api.test/ ;;
	esac
}

cases=(direct splice gateway)
rss_first=""
: >"$W/times"
for ((r = 0; r < ROUNDS + 2; r++)); do
	for ((k = 0; k < 3; k++)); do
		c=${cases[$(((r + k) % 3))]}
		t=$(one "$c") || { say "$c failed in round $r"; continue; }
		[ $r -ge 2 ] && echo "$c $t" >>"$W/times"   # two warm-up rounds
		[ -z "$rss_first" ] && [ "$c" = gateway ] && rss_first=$(awk '/^VmRSS:/ {print $2}' "/proc/$GWPID/status")
	done
done
# downloads: 16 MiB of random bytes and of base64 text (the scan's worst
# case: every byte may start a base64 copy), in MB/s, rotated likewise
DL=16777216
dl() {
	local who=$1 kind=$2
	case $who in
	direct) gw_box setpriv --reuid 4242 --regid 4242 --clear-groups curl -sS -o /dev/null -w '%{speed_download}' \
		--cacert "$W/ca.pem" --resolve api.test:443:198.19.96.10 "https://api.test/$kind/$DL" ;;
	gateway) gw_box curl -sS -o /dev/null -w '%{speed_download}' --cacert "$W/bundle.pem" \
		--resolve api.test:443:198.19.96.10 "https://api.test/$kind/$DL" ;;
	esac
}
dl_cases=(direct:bytes gateway:bytes direct:text gateway:text)
: >"$W/speeds"
for ((r = 0; r < DL_ROUNDS + 1; r++)); do
	for ((k = 0; k < 4; k++)); do
		c=${dl_cases[$(((r + k) % 4))]}
		v=$(dl "${c%%:*}" "${c#*:}") || { say "download $c failed in round $r"; continue; }
		[ $r -ge 1 ] && echo "$c $v" >>"$W/speeds"   # one warm-up round
	done
done
sleep 2
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$GWPID/status")
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$GWPID/status")
pss=$(awk '/^Pss:/ {print $2}' "/proc/$GWPID/smaps_rollup")
# what each more box adds: the pages only this gateway has written (heap,
# stacks, locked secrets); its code is the binary's, shared by every gateway
priv=$(awk '/^Private_Dirty:/ {print $2}' "/proc/$GWPID/smaps_rollup")

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
d=$(awk '$1 == "direct" {print $2}' "$W/times" | median)
s=$(awk '$1 == "splice" {print $2}' "$W/times" | median)
g=$(awk '$1 == "gateway" {print $2}' "$W/times" | median)
ratio_g=$(awk -v a="$g" -v b="$d" 'BEGIN {printf "%.2f", a / b}')
mbs() { awk -v c="$1" '$1 == c {print $2 / 1e6}' "$W/speeds" | median; }
dl_db=$(mbs direct:bytes) dl_gb=$(mbs gateway:bytes) dl_dt=$(mbs direct:text) dl_gt=$(mbs gateway:text)
ratio_s=$(awk -v a="$s" -v b="$d" 'BEGIN {printf "%.2f", a / b}')
pass_t=$(awk -v r="$ratio_g" 'BEGIN {print (r <= 1.5) ? "PASS" : "FAIL"}')
pass_m=$(awk -v k="$priv" 'BEGIN {print (k <= 1024) ? "PASS" : "FAIL"}')
jq -n --argjson rounds "$ROUNDS" --argjson d "$d" --argjson s "$s" --argjson g "$g" --argjson rss "$rss" \
	--argjson rss_first "${rss_first:-0}" --argjson hwm "$hwm" --argjson pss "$pss" --argjson priv "$priv" \
	--argjson dl_db "${dl_db:-0}" --argjson dl_gb "${dl_gb:-0}" --argjson dl_dt "${dl_dt:-0}" --argjson dl_gt "${dl_gt:-0}" \
	'{rounds: $rounds, median_s: {direct: $d, sni_splice: $s, gateway: $g},
	  download_16mib_mb_s: {direct_bytes: $dl_db, gateway_bytes: $dl_gb, direct_text: $dl_dt, gateway_text: $dl_gt},
	  gateway_kib: {rss_after_first: $rss_first, rss_at_rest: $rss, hwm: $hwm, pss_at_rest: $pss, private_dirty: $priv}}' >"$OUT/gateway.json"
{
	echo "## Credential gateway (bench/gateway.sh, $ROUNDS rounds)"
	echo
	echo "| first request of a connection (TLS handshake + GET) | median | vs direct | target |"
	echo "| --- | --- | --- | --- |"
	printf '| direct | %.2f ms | 1.00x | |\n' "$(awk -v x="$d" 'BEGIN {print x * 1000}')"
	printf '| SNI check (spliced) | %.2f ms | %sx | |\n' "$(awk -v x="$s" 'BEGIN {print x * 1000}')" "$ratio_s"
	printf '| through the gateway | %.2f ms | %sx | <= 1.5x: %s |\n' "$(awk -v x="$g" 'BEGIN {print x * 1000}')" "$ratio_g" "$pass_t"
	echo
	echo "| download of 16 MiB, one connection ($DL_ROUNDS rounds) | direct | through the gateway (scanned) | ratio |"
	echo "| --- | --- | --- | --- |"
	printf '| random bytes | %.0f MB/s | %.0f MB/s | %.2fx |\n' "${dl_db:-0}" "${dl_gb:-0}" \
		"$(awk -v a="${dl_gb:-0}" -v b="${dl_db:-1}" 'BEGIN {print a / b}')"
	printf '| base64 text | %.0f MB/s | %.0f MB/s | %.2fx |\n' "${dl_dt:-0}" "${dl_gt:-0}" \
		"$(awk -v a="${dl_gt:-0}" -v b="${dl_dt:-1}" 'BEGIN {print a / b}')"
	echo
	echo "| gateway process | KiB |"
	echo "| --- | --- |"
	echo "| private dirty at rest: what each more box adds (target <= 1024: $pass_m) | $priv |"
	echo "| VmRSS after its first request | ${rss_first:-?} |"
	echo "| VmRSS at rest after $((3 * (ROUNDS + 2))) requests (with the binary's code, shared by all gateways) | $rss |"
	echo "| VmHWM | $hwm |"
	echo "| PSS at rest (one gateway: the shared code is all its own) | $pss |"
} | tee "$OUT/gateway.md"
