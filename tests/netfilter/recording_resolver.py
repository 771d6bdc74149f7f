#!/usr/bin/env python3
"""A resolver for the egress tests that records what reaches it.

    recording_resolver.py ADDR LOGFILE [delay=SECONDS] [forward=ADDR]
                          [forward:SUFFIX=ADDR]... NAME=IP...

Answers A (and AAAA) queries for the names given, over UDP and TCP on
ADDR port 53, with TTL 600; NXDOMAIN for the rest. Each query it sees is one
line of LOGFILE: "PROTO SRC_ADDR SRC_PORT ID NAME". With delay, each answer
comes that much later (a question stays in flight meanwhile). With forward,
a name it does not know goes to that server (forward:SUFFIX: names at and
below SUFFIX), over the protocol it came by, as Docker's embedded resolver
forwards (SERVFAIL when that server fails). Used to check what the DNS
sentry sends upstream (its ids and ports) and what it does with a forward,
never to stand in for a real one.
"""
import ipaddress
import socket
import struct
import sys
import threading
import time

addr, logfile = sys.argv[1], sys.argv[2]
records = {}
delay = 0.0
forwards = []   # (suffix, server); suffix "" for every name
for arg in sys.argv[3:]:
    name, value = arg.split("=", 1)
    if name == "delay":
        delay = float(value)
    elif name == "forward":
        forwards.append(("", value))
    elif name.startswith("forward:"):
        forwards.insert(0, (name[8:].lower(), value))
    else:
        records.setdefault(name.lower(), []).append(ipaddress.ip_address(value))
family = socket.AF_INET6 if ":" in addr else socket.AF_INET
lock = threading.Lock()


def qname(msg):
    labels, off = [], 12
    while msg[off]:
        n = msg[off]
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += n + 1
    return ".".join(labels).lower(), off + 1


def server_for(name):
    if name in records:
        return None
    for suffix, server in forwards:
        if not suffix or name == suffix or name.endswith("." + suffix):
            return server
    return None


def exchange(server, msg, proto):
    """The answer of server to msg, over proto, or None."""
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    try:
        with socket.socket(fam, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM) as s:
            s.settimeout(3)
            s.connect((server, 53))
            if proto == "udp":
                s.send(msg)
                return s.recv(65535)
            s.sendall(struct.pack(">H", len(msg)) + msg)
            head = s.recv(2)
            n = struct.unpack(">H", head)[0]
            out = b""
            while len(out) < n:
                more = s.recv(n - len(out))
                if not more:
                    return None
                out += more
            return out
    except (OSError, struct.error) as e:
        print("forward to %s: %s" % (server, e), file=sys.stderr, flush=True)
        return None


def answer(msg, proto):
    name, off = qname(msg)
    qtype = struct.unpack(">H", msg[off:off + 2])[0]
    question = msg[12:off + 4]
    server = server_for(name)
    if server:
        out = exchange(server, msg, proto)
        if out:
            return name, out
        return name, msg[:2] + struct.pack(">HHHHH", 0x8182, 1, 0, 0, 0) + question
    want = 4 if qtype == 1 else 16 if qtype == 28 else None
    ips = [ip for ip in records.get(name, []) if want and len(ip.packed) == want]
    flags = 0x8180 if name in records else 0x8183
    head = msg[:2] + struct.pack(">HHHHH", flags, 1, len(ips), 0, 0)
    rrs = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", qtype, 1, 600, len(ip.packed)) + ip.packed for ip in ips)
    return name, head + question + rrs


def record(proto, peer, msg, name):
    with lock, open(logfile, "a") as f:
        f.write("%s %s %d %d %s\n" % (proto, peer[0], peer[1], struct.unpack(">H", msg[:2])[0], name))


def serve_udp_query(s, msg, peer):
    try:
        name, out = answer(msg, "udp")
    except Exception:
        return
    record("udp", peer, msg, name)
    time.sleep(delay)
    s.sendto(out, peer)


def serve_udp(s):
    while True:
        msg, peer = s.recvfrom(4096)
        threading.Thread(target=serve_udp_query, args=(s, msg, peer), daemon=True).start()


def serve_tcp_client(c, peer):
    with c:
        while True:
            head = c.recv(2)
            if len(head) < 2:
                return
            n = struct.unpack(">H", head)[0]
            msg = b""
            while len(msg) < n:
                more = c.recv(n - len(msg))
                if not more:
                    return
                msg += more
            name, out = answer(msg, "tcp")
            record("tcp", peer, msg, name)
            time.sleep(delay)
            c.sendall(struct.pack(">H", len(out)) + out)


def serve_tcp(s):
    while True:
        c, peer = s.accept()
        threading.Thread(target=serve_tcp_client, args=(c, peer), daemon=True).start()


u = socket.socket(family, socket.SOCK_DGRAM)
u.bind((addr, 53))
t = socket.socket(family, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((addr, 53))
t.listen(16)
threading.Thread(target=serve_tcp, args=(t,), daemon=True).start()
print("ready", flush=True)
serve_udp(u)
