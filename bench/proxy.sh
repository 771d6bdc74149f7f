#!/bin/bash
# bench/proxy.sh — does allowed traffic get slower through the box's HTTP
# proxy (issue 35)? In one kit box (rootful, slirp4netns, the firewall and
# the DNS sentry), curl fetches from an allowed host directly (its own lookup
# through the sentry; HTTPS through the SNI check's redirect, spliced) and
# through the proxy (CONNECT or an absolute URL; the proxy's lookup through
# the sentry, then the same splice): a small request's time_total and a
# large file's throughput, over HTTPS and plain HTTP, the two ways rotated
# round by round. Needs root, curl, openssl, python3, dnsmasq, slirp4netns.
#
#   bench/proxy.sh [--rounds N] [--mib N] [--out DIR]   (run.sh calls it; see bench/README.md)
#
# Its network: netns abbp-inet-PID joined to the host by a veth
# (198.18.44.9/30 here, .10 there), web.test on 198.18.44.193 (HTTP on 80,
# HTTPS on 443 with a CA made here: tests/integration/proxy_www.py), a DNS
# server on .250, routed by 198.18.44.192/26; the runtime in a mount
# namespace whose /etc/resolv.conf names that server.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
ROUNDS=20 MIB=50 OUT=$HERE/results
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--mib) MIB=$2; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: $0 [--rounds N] [--mib N] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
say() { echo "bench proxy: $*" >&2; }
[ "$(id -u)" = 0 ] || { say "needs root"; exit 1; }
for t in curl openssl python3 dnsmasq slirp4netns jq; do command -v $t >/dev/null || { say "needs $t"; exit 1; }; done
AB=${AGENTBOX:-$REPO/agentbox}
[ -x "$AB" ] || make -C "$REPO" -s agentbox >/dev/null || exit 1
mkdir -p "$OUT"

NS=abbp-inet-$$ HV=abbp$(($$ % 100000))
W=$(mktemp -d /tmp/abbp-bench.XXXXXX)
cleanup() {
	local f
	for f in "$W/www.pid" "$W/dnsmasq.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	ip route del 198.18.44.192/26 2>/dev/null
	ip link del "$HV" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$W/ca" "$W/www" "$W/ws" "$W/state"
(
	cd "$W/ca" || exit 1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 \
		-subj "/CN=bench proxy CA" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj "/CN=web.test" 2>/dev/null
	printf 'subjectAltName=DNS:web.test\n' >ext
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext 2>/dev/null
)
head -c $((MIB << 20)) /dev/urandom >"$W/www/big"
echo small >"$W/www/small"
ip netns add "$NS"
ip link add "$HV" type veth peer name n0 netns "$NS"
ip addr add 198.18.44.9/30 dev "$HV"
ip link set "$HV" up
ip -n "$NS" addr add 198.18.44.10/30 dev n0
ip -n "$NS" link set n0 up
ip -n "$NS" link set lo up
ip -n "$NS" addr add 198.18.44.193/32 dev lo
ip -n "$NS" addr add 198.18.44.250/32 dev lo
ip -n "$NS" route add default via 198.18.44.9
ip route add 198.18.44.192/26 via 198.18.44.10 dev "$HV"
ip netns exec "$NS" dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root --group=root \
	--bind-interfaces --listen-address=198.18.44.250 --local=/test/ --host-record=web.test,198.18.44.193,600 \
	--pid-file="$W/dnsmasq.pid" </dev/null >/dev/null 2>&1 &
ip netns exec "$NS" python3 "$REPO/tests/integration/proxy_www.py" --root "$W/www" --cert "$W/ca/srv.pem" \
	--key "$W/ca/srv.key" --log /dev/null 198.18.44.193 </dev/null >"$W/www.err" 2>&1 &
echo $! >"$W/www.pid"
echo "nameserver 198.18.44.250" >"$W/resolv.conf"
for i in $(seq 100); do
	curl -sf -o /dev/null --cacert "$W/ca/ca.pem" --resolve web.test:443:198.18.44.193 https://web.test/small && break
	sleep 0.05
done
cp "$W/ca/ca.pem" "$W/ws/ca.pem"

# In the box: each round, each case (rotated), one curl; "CASE KIND VALUE"
cat >"$W/ws/rounds.sh" <<'EOF'
export CURL_CA_BUNDLE=/workspace/ca.pem
one() {
	way=$1 what=$2
	np=; [ "$way" = direct ] && np="--noproxy *"
	case $what in
	small-https) curl -sS $np -o /dev/null -w '%{time_total}' https://web.test/small ;;
	small-http) curl -sS $np -o /dev/null -w '%{time_total}' http://web.test/small ;;
	big-https) curl -sS $np -o /dev/null -w '%{speed_download}' https://web.test/big ;;
	big-http) curl -sS $np -o /dev/null -w '%{speed_download}' http://web.test/big ;;
	esac
}
set -f
r=0
while [ $r -lt $((ROUNDS + 1)) ]; do
	for what in small-https small-http big-https big-http; do
		if [ $((r % 2)) = 0 ]; then order="direct proxy"; else order="proxy direct"; fi
		for way in $order; do
			v=$(one $way $what) || continue
			[ $r -gt 0 ] && echo "$way $what $v"   # round 0 warms up
		done
	done
	r=$((r + 1))
done
EOF
chmod -R a+rX "$W/ws"
printf 'rootfs: host\nenv:\n  ROUNDS: "%s"\n' "$ROUNDS" >"$W/kit.yaml"
say "$ROUNDS rounds of 4 fetches each way ($MIB MiB files)"
unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$W/resolv.conf" \
	"$AB" --root "$W/state" --egress-internal 198.18.44.192/26 kit run --workspace "$W/ws" \
	--allow web.test:443 --allow web.test:80 "$W/kit.yaml" -- sh /workspace/rounds.sh >"$W/times" 2>"$W/run.err" ||
	{ say "the kit run failed: $(tail -3 "$W/run.err")"; exit 1; }

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
m() { awk -v w="$1" -v k="$2" '$1 == w && $2 == k {print $3}' "$W/times" | median; }
js='{}'
{
	echo "## Allowed traffic through the box's HTTP proxy (bench/proxy.sh, $ROUNDS rounds)"
	echo
	echo "One kit box (rootful, slirp4netns, --allow web.test:443,web.test:80): curl directly (its lookup"
	echo "through the DNS sentry, HTTPS redirected to the SNI check and spliced) and through the proxy"
	echo "(HTTPS_PROXY / http_proxy: CONNECT or an absolute URL, the proxy's lookup, the same splice),"
	echo "rotated round by round; medians."
	echo
	echo "| fetch | direct | through the proxy | proxy / direct | target |"
	echo "| --- | ---: | ---: | ---: | --- |"
	for k in small-https small-http big-https big-http; do
		d=$(m direct $k) p=$(m proxy $k)
		[ -n "$d" ] && [ -n "$p" ] || { echo "| $k | not measured | | | |"; continue; }
		js=$(jq -c --arg k "$k" --argjson d "$d" --argjson p "$p" '. + {($k): {direct: $d, proxy: $p}}' <<<"$js")
		case $k in
		small-*) r=$(awk -v a="$p" -v b="$d" 'BEGIN {printf "%.2f", a / b}')
			ok=$(awk -v r="$r" 'BEGIN {print (r <= 1.1) ? "PASS" : "FAIL"}')
			printf '| %s (time_total) | %.2f ms | %.2f ms | %sx | <= 1.1x: %s |\n' "$k" \
				"$(awk -v x="$d" 'BEGIN {print x * 1000}')" "$(awk -v x="$p" 'BEGIN {print x * 1000}')" "$r" "$ok" ;;
		big-*) r=$(awk -v a="$p" -v b="$d" 'BEGIN {printf "%.2f", a / b}')
			ok=$(awk -v r="$r" 'BEGIN {print (r >= 0.9) ? "PASS" : "FAIL"}')
			printf '| %s, %d MiB (throughput) | %.0f MB/s | %.0f MB/s | %sx | >= 0.9x: %s |\n' "$k" "$MIB" \
				"$(awk -v x="$d" 'BEGIN {print x / 1e6}')" "$(awk -v x="$p" 'BEGIN {print x / 1e6}')" "$r" "$ok" ;;
		esac
	done
} | tee "$OUT/proxy.md"
jq -n --argjson rounds "$ROUNDS" --argjson mib "$MIB" --argjson m "$js" '{rounds: $rounds, mib: $mib, median: $m}' >"$OUT/proxy.json"
