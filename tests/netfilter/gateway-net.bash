# The little internet of the SNI and credential gateway tests (gateway.bats,
# tests/security/gateway-*.bats): one "box" namespace and one of test hosts,
# joined by a veth, with HTTPS servers whose certificates come from a test CA
# made here. Addresses from 198.19.96.0/20 and 2001:db8:1996::/48 only, in
# namespaces made here; names start with abgw.
#
#   box  abgw-b$GW_R   veth abgw${GW_R}b  198.19.96.2/24   2001:db8:1996::2/64
#   host abgw-h$GW_R   veth abgw${GW_R}h  198.19.96.1/24   2001:db8:1996::1/64
#        198.19.96.10  api.test    HTTPS/1.1 echo (certificate from the test CA)
#        198.19.96.11  other.test  HTTPS/1.1 echo (also valid for api.test: one server, two names)
#        198.19.96.12  h2.test     nghttpd, HTTP/2 only, -v log of every header
#        198.19.96.13  rogue.test  HTTPS/1.1 echo with a certificate from another CA
#        [2001:db8:1996::10] api.test

GW_DRIVER=${GW_DRIVER:-$BATS_TEST_DIRNAME/gateway-driver}
GW_ECHO=$BATS_TEST_DIRNAME/https-echo.py

gw_box() { ip netns exec "abgw-b$GW_R" "$@"; }
gw_host() { ip netns exec "abgw-h$GW_R" "$@"; }

gw_certs() {
	local d=$1
	mkdir -p "$d"
	(
		cd "$d"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
			-days 2 -subj "/CN=abgw test CA" 2>/dev/null
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout rogue-ca.key -out rogue-ca.pem \
			-days 2 -subj "/CN=abgw rogue CA" 2>/dev/null
		for s in api:"DNS:api.test" other:"DNS:other.test,DNS:api.test" h2:"DNS:h2.test" rogue:"DNS:rogue.test"; do
			local n=${s%%:*} san=${s#*:} ca=ca
			[ "$n" = rogue ] && ca=rogue-ca
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$n.key" -out "$n.csr" \
				-subj "/CN=$n.test" 2>/dev/null
			printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" >"$n.ext"
			openssl x509 -req -in "$n.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -days 2 \
				-extfile "$n.ext" -out "$n.pem" 2>/dev/null
		done
	)
}

gw_net_up() {
	GW_R=$(printf '%04x' $((RANDOM % 65536)))
	export GW_R
	ip netns add "abgw-b$GW_R"
	ip netns add "abgw-h$GW_R"
	ip link add "abgw${GW_R}b" netns "abgw-b$GW_R" type veth peer name "abgw${GW_R}h" netns "abgw-h$GW_R"
	gw_box ip link set lo up
	gw_host ip link set lo up
	gw_box ip addr add 198.19.96.2/24 dev "abgw${GW_R}b"
	gw_box ip -6 addr add 2001:db8:1996::2/64 dev "abgw${GW_R}b" nodad
	gw_box ip link set "abgw${GW_R}b" up
	gw_host ip addr add 198.19.96.1/24 dev "abgw${GW_R}h"
	for a in 10 11 12 13; do gw_host ip addr add "198.19.96.$a/24" dev "abgw${GW_R}h"; done
	gw_host ip -6 addr add 2001:db8:1996::1/64 dev "abgw${GW_R}h" nodad
	gw_host ip -6 addr add 2001:db8:1996::10/64 dev "abgw${GW_R}h" nodad
	gw_host ip link set "abgw${GW_R}h" up
}

gw_net_down() {
	[ -n "${GW_R:-}" ] || return 0
	local pid
	# the servers by the pids they were started with, and whatever else lives
	# in the namespaces (a deleted namespace's processes would keep it alive)
	for pid in $(cat "${GW_PIDS:-/dev/null}" 2>/dev/null) $(ip netns pids "abgw-h$GW_R" 2>/dev/null) \
		$(ip netns pids "abgw-b$GW_R" 2>/dev/null); do
		kill -9 "$pid" 2>/dev/null || true
	done
	ip netns del "abgw-b$GW_R" 2>/dev/null || true
	ip netns del "abgw-h$GW_R" 2>/dev/null || true
}

# the test hosts' servers; their records in $1/records.jsonl, nghttpd's log in $1/h2.log
gw_servers_up() {
	local d=$1 ns="abgw-h$GW_R"
	: >"$d/records.jsonl"
	export GW_PIDS=$d/server.pids
	: >"$GW_PIDS"
	# ip netns exec execs the server: $! is the server itself
	ip netns exec "$ns" python3 "$GW_ECHO" --bind 198.19.96.10 --cert "$d/api.pem" --key "$d/api.key" \
		--record "$d/records.jsonl" --name api --ready "$d/ready.api" >/dev/null 2>&1 &
	echo $! >>"$GW_PIDS"
	ip netns exec "$ns" python3 "$GW_ECHO" --bind 2001:db8:1996::10 --cert "$d/api.pem" --key "$d/api.key" \
		--record "$d/records.jsonl" --name api6 --ready "$d/ready.api6" >/dev/null 2>&1 &
	echo $! >>"$GW_PIDS"
	ip netns exec "$ns" python3 "$GW_ECHO" --bind 198.19.96.11 --cert "$d/other.pem" --key "$d/other.key" \
		--record "$d/records.jsonl" --name other --ready "$d/ready.other" >/dev/null 2>&1 &
	echo $! >>"$GW_PIDS"
	ip netns exec "$ns" python3 "$GW_ECHO" --bind 198.19.96.13 --cert "$d/rogue.pem" --key "$d/rogue.key" \
		--record "$d/records.jsonl" --name rogue --ready "$d/ready.rogue" >/dev/null 2>&1 &
	echo $! >>"$GW_PIDS"
	mkdir -p "$d/htdocs"
	echo "h2 hello" >"$d/htdocs/index.html"
	ip netns exec "$ns" nghttpd -v -a 198.19.96.12 --htdocs="$d/htdocs" 443 "$d/h2.key" "$d/h2.pem" >"$d/h2.log" 2>&1 &
	echo $! >>"$GW_PIDS"
	local i
	for i in $(seq 100); do
		[ -e "$d/ready.api" ] && [ -e "$d/ready.api6" ] && [ -e "$d/ready.other" ] && [ -e "$d/ready.rogue" ] &&
			gw_host bash -c 'exec 3<>/dev/tcp/198.19.96.12/443' 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the test servers did not start" >&2
	return 1
}

# TCP/443 of the box to the driver on PORT, except its own marked connections
gw_redirect() {
	gw_box nft -f - <<EOF
table inet abgw {
	chain out {
		type nat hook output priority -100;
		meta mark != $(printf '0x%08x' 0x0ab0d443) tcp dport 443 redirect to :$1
	}
}
EOF
}
