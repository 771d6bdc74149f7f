#!/bin/sh
# Run inside a kit box by kit-proxy.bats: real clients against the test hosts
# (web.test allowed, registry.test refused), each as
#   == NAME rc=STATUS ms=MILLISECONDS
#      its output, indented
# then the box's refused file. MODE: network, none (a box without network),
# protocol (the proxy's protocol edges, by hand).
mode=$1
P=127.0.0.1:61128
now() { date +%s%N; }
t() {
	n=$1
	shift
	s=$(now)
	"$@" >"/tmp/out.$n" 2>&1
	rc=$?
	echo "== $n rc=$rc ms=$((($(now) - s) / 1000000))"
	awk '{ print "   " $0 }' "/tmp/out.$n"
}
# raw BYTES: what the proxy answers to them (its first line by default)
raw() { printf "$1" | timeout 5 socat -t3 - TCP:$P 2>&1 | head -${2:-1}; }

npm_clients() {
	cd /tmp && echo '{}' >package.json
	t npm-refused npm install --no-audit --no-fund --registry https://registry.test/ left-pad is-odd
	t npm-default npm install --no-audit --no-fund left-pad is-odd
}

network() {
	env | grep -E '^(HTTPS_PROXY|http_proxy|NO_PROXY)='
	npm_clients
	t npm-allowed sh -c 'npm install --no-audit --no-fund --registry https://web.test/npm/ left-pad &&
		test -f node_modules/left-pad/index.js && echo left-pad-installed'
	t pip-allowed sh -c 'python3 -m pip download -q -d /tmp/d --no-cache-dir --index-url https://web.test/simple/ r35pkg && ls /tmp/d'
	t git-refused git ls-remote https://registry.test/git/repo.git
	t git-allowed git ls-remote https://web.test/git/repo.git
	t curl-refused curl -sS -v -o /dev/null https://registry.test/npm/left-pad
	t curl-http-refused curl -sS http://registry.test/npm/left-pad
	t curl-allowed sh -c 'echo $(curl -sS -o /dev/null -w %{http_code} https://web.test/npm/left-pad) $(curl -sS -o /dev/null -w %{http_code} http://web.test/npm/left-pad)'
	t python-refused python3 -c '
import urllib.request
for u in ("https://registry.test/", "http://registry.test/"):
    try:
        urllib.request.urlopen(u)
    except Exception as e:
        print(e)
raise SystemExit(1)'
	t python-allowed python3 -c 'import urllib.request; print(urllib.request.urlopen("https://web.test/npm/left-pad").status)'
	t node-refused node -e 'fetch("https://registry.test/").catch(e => { console.log(e.cause.code); process.exit(1) })'
	t node-allowed node -e 'fetch("https://web.test/npm/left-pad").then(r => console.log(r.status))'
	mkdir -p /tmp/g && cd /tmp/g && go mod init example.com/g >/dev/null 2>&1
	t go-refused env GOPROXY=https://registry.test/goproxy GOSUMDB=off go get web.test/r35mod@v1.0.0
	t go-allowed env GOPROXY=https://web.test/goproxy GOSUMDB=off go get web.test/r35mod@v1.0.0
	t inner curl -sS -v -o /dev/null https://inner.test/
	# an allowed tunnel, then a ClientHello for another name: the SNI check's
	t sni-other-name sh -c "printf 'CONNECT web.test:443 HTTP/1.1\r\n\r\n' | timeout 5 socat -t3 - TCP:$P | head -1;
		echo | timeout 5 openssl s_client -proxy $P -connect web.test:443 -servername registry.test -CAfile /workspace/ca.pem 2>&1 | grep -E '^subject=|errno'"
}

none() {
	npm_clients
	t getaddrinfo python3 -c '
import socket
try:
    socket.getaddrinfo("registry.test", 443)
except socket.gaierror as e:
    print(e.errno)'
	t getent getent hosts registry.test
	t curl-refused curl -sS https://registry.test/
}

protocol() {
	# pip retries a refused tunnel for ~8 s: in the background, while the
	# rest runs (the slow head below takes 10 s anyway)
	(t pip-refused python3 -m pip download -q -d /tmp/d --no-cache-dir --index-url https://registry.test/simple/ r35pkg \
		>/tmp/pip.report) &
	# a head that never ends, watched from the start, in the background
	python3 -c '
import socket, time
s = socket.create_connection(("127.0.0.1", 61128)); s.sendall(b"CONN"); t = time.time()
s.settimeout(30)
try:
    s.recv(1)
except OSError:
    pass
print("closed after %.1f s" % (time.time() - t))' >/tmp/out.slow-head 2>&1 &

	t http10 raw 'CONNECT registry.test:443 HTTP/1.0\r\n\r\n'
	t ipv6 raw 'CONNECT [2001:db8:44::1]:443 HTTP/1.1\r\nHost: [2001:db8:44::1]:443\r\n\r\n' 20
	t literal raw 'CONNECT 198.18.44.65:443 HTTP/1.1\r\n\r\n'
	t loopback raw 'CONNECT 127.0.0.1:61128 HTTP/1.1\r\n\r\n'
	t dns-port raw 'CONNECT web.test:53 HTTP/1.1\r\n\r\n'
	t oversize sh -c "(printf 'CONNECT web.test:443 HTTP/1.1\r\nX: '; head -c 9000 /dev/zero | tr '\0' a; printf '\r\n\r\n') | timeout 5 socat -t3 - TCP:$P | head -1"
	t garbage raw '\026\003\001\002\000\001'
	t origin-form raw 'GET / HTTP/1.1\r\nHost: web.test\r\n\r\n'
	t pipelined raw 'GET http://web.test/npm/left-pad HTTP/1.1\r\nHost: web.test\r\n\r\nGET http://registry.test/second HTTP/1.1\r\nHost: registry.test\r\n\r\n' 100
	t hostcheck raw 'GET http://web.test/hostcheck HTTP/1.1\r\nHost: registry.test\r\nProxy-Authorization: Basic eDp5\r\n\r\n'
	t post raw 'POST http://web.test/post HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /after-body HTTP/1.1\r\nHost: web.test\r\n\r\n' 100
	i=0
	while [ $i -lt 150 ]; do
		i=$((i + 1))
		(printf 'CONNECT registry.test:443 HTTP/1.1\r\n\r\n'; sleep 1) | timeout 6 socat -t3 - TCP:$P 2>/dev/null | head -1 >/tmp/flood.$i &
	done
	wait   # (the slow head too: it ends within the flood's seconds)
	echo "== flood rc=0 ms=0"
	cat /tmp/flood.* | cut -c1-40 | sort | uniq -c
	t after-flood raw 'CONNECT registry.test:443 HTTP/1.1\r\n\r\n'
	echo "== slow-head rc=0 ms=0"
	awk '{ print "   " $0 }' /tmp/out.slow-head
	cat /tmp/pip.report
}

"$mode"
echo "== refused-file rc=0 ms=0"
cat /run/agentbox/refused
