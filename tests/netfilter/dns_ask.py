#!/usr/bin/env python3
"""dns_ask.py SERVER NAME [A|AAAA] [tcp] [edns]: one query, and what came back
as one JSON line: the rcode, the answer records' count, and the extended DNS
errors (RFC 8914) of the OPT record: [{"code": N, "text": "..."}]; "opt" says
whether the answer carried an OPT record at all. A test helper: it parses
just enough, strictly, and fails loudly on anything else."""
import json
import os
import random
import socket
import struct
import sys


def name_wire(name):
    out = b""
    for label in os.fsencode(name).split(b"."):   # the bytes as given, any of them
        out += bytes([len(label)]) + label
    return out + b"\0"


def skip_name(msg, off):
    while True:
        n = msg[off]
        if n & 0xC0 == 0xC0:
            return off + 2
        off += 1 + n
        if n == 0:
            return off


def main():
    server, name = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    qtype = 28 if "AAAA" in rest else 1
    qid = random.randrange(65536)
    edns = "edns" in rest
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1 if edns else 0)
    q += name_wire(name) + struct.pack(">HH", qtype, 1)
    if edns:
        q += b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0)
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    if "tcp" in rest:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect((server, 53))
        s.sendall(struct.pack(">H", len(q)) + q)
        buf = b""
        while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise SystemExit("connection closed early")
            buf += chunk
        msg = buf[2:]
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(q, (server, 53))
        msg = s.recv(65536)
    rid, flags, qd, an, ns, ar = struct.unpack(">HHHHHH", msg[:12])
    assert rid == qid and flags & 0x8000, "not our answer"
    off = 12
    for _ in range(qd):
        off = skip_name(msg, off) + 4
    opt, ede = False, []
    for i in range(an + ns + ar):
        off = skip_name(msg, off)
        rtype, _, _, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        if rtype == 41 and i >= an + ns:
            opt = True
            o = off
            while o < off + rdlen:
                code, olen = struct.unpack(">HH", msg[o:o + 4])
                data = msg[o + 4:o + 4 + olen]
                if code == 15:
                    # strict: EXTRA-TEXT must be UTF-8
                    ede.append({"code": struct.unpack(">H", data[:2])[0],
                                "text": data[2:].decode("utf-8")})
                o += 4 + olen
        off += rdlen
    assert off == len(msg), "trailing bytes"
    print(json.dumps({"rcode": flags & 0xF, "answers": an, "opt": opt, "ede": ede}))


main()
