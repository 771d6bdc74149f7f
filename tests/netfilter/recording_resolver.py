#!/usr/bin/env python3
"""A resolver for the egress tests that records what reaches it.

    recording_resolver.py ADDR LOGFILE NAME=IP...

Answers A (and AAAA) queries for the names given, over UDP and TCP on
ADDR port 53, with TTL 600; NXDOMAIN for the rest. Each query it sees is one
line of LOGFILE: "PROTO SRC_ADDR SRC_PORT ID NAME". Used to check what the DNS
sentry sends upstream (its ids and ports), never to stand in for a real one.
"""
import ipaddress
import socket
import struct
import sys
import threading

addr, logfile = sys.argv[1], sys.argv[2]
records = {}
for arg in sys.argv[3:]:
    name, ip = arg.split("=", 1)
    records.setdefault(name.lower(), []).append(ipaddress.ip_address(ip))
family = socket.AF_INET6 if ":" in addr else socket.AF_INET
lock = threading.Lock()


def qname(msg):
    labels, off = [], 12
    while msg[off]:
        n = msg[off]
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += n + 1
    return ".".join(labels).lower(), off + 1


def answer(msg):
    name, off = qname(msg)
    qtype = struct.unpack(">H", msg[off:off + 2])[0]
    question = msg[12:off + 4]
    want = 4 if qtype == 1 else 16 if qtype == 28 else None
    ips = [ip for ip in records.get(name, []) if want and len(ip.packed) == want]
    flags = 0x8180 if name in records else 0x8183
    head = msg[:2] + struct.pack(">HHHHH", flags, 1, len(ips), 0, 0)
    rrs = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", qtype, 1, 600, len(ip.packed)) + ip.packed for ip in ips)
    return name, head + question + rrs


def record(proto, peer, msg, name):
    with lock, open(logfile, "a") as f:
        f.write("%s %s %d %d %s\n" % (proto, peer[0], peer[1], struct.unpack(">H", msg[:2])[0], name))


def serve_udp(s):
    while True:
        msg, peer = s.recvfrom(4096)
        try:
            name, out = answer(msg)
        except Exception:
            continue
        record("udp", peer, msg, name)
        s.sendto(out, peer)


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
            name, out = answer(msg)
            record("tcp", peer, msg, name)
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
