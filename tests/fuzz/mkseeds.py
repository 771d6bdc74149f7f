#!/usr/bin/env python3
"""Write the hand-made seeds of the binary and small text fuzz targets into
tests/fuzz/corpus/TARGET/ (DNS messages, nfnetlink_log messages, egress lists,
state files). Run it again after changing it; the files are committed."""
import ipaddress
import json
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus")


def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- DNS -------------------------------------------------------------------
def qname(name):
    b = b""
    for label in name.split(".") if name else []:
        b += bytes([len(label)]) + label.encode()
    return b + b"\0"


def header(id_, flags, qd=1, an=0, ns=0, ar=0):
    return struct.pack(">HHHHHH", id_, flags, qd, an, ns, ar)


def question(name, qtype=1):
    return qname(name) + struct.pack(">HH", qtype, 1)


def rr(owner, rtype, ttl, rdata):
    return owner + struct.pack(">HHIH", rtype, 1, ttl, len(rdata)) + rdata


PTR_Q = b"\xc0\x0c"  # the question's name
put("dns", "query-a", header(0x1234, 0x0100) + question("example.com"))
put("dns", "query-aaaa", header(0x1235, 0x0100) + question("api.example.com", 28))
put("dns", "query-root", header(1, 0x0100) + question(""))
put("dns", "query-underscore", header(2, 0x0100) + question("_srv._tcp.example.org", 33))
put("dns", "query-bad-byte", header(3, 0x0100) + b"\x03a\x00b\x03com\x00" + struct.pack(">HH", 1, 1))
put("dns", "query-edns", header(4, 0x0100, ar=1) + question("example.com") +
    b"\x00" + struct.pack(">HHIH", 41, 4096, 0, 0))
put("dns", "query-two-questions", header(5, 0x0100, qd=2) + question("a.example") + question("b.example"))
put("dns", "query-opcode-status", header(6, 0x1000) + question("example.com"))
a = header(0x1234, 0x8180, an=1) + question("example.com") + rr(PTR_Q, 1, 300, bytes([198, 18, 0, 7]))
put("dns", "answer-a", a)
cname = (header(7, 0x8180, an=3) + question("www.example.com") +
         rr(PTR_Q, 5, 60, qname("cdn.example.net")) +
         rr(qname("cdn.example.net"), 5, 60, qname("edge.example.org")) +
         rr(qname("edge.example.org"), 28, 0x80000001, ipaddress.ip_address("2001:db8::7").packed))
put("dns", "answer-cname-chain", cname)
loop = (header(8, 0x8180, an=2) + question("a.example") +
        rr(PTR_Q, 5, 60, qname("b.example")) + rr(qname("b.example"), 5, 60, b"\xc0\x0c"))
put("dns", "answer-cname-loop", loop)
put("dns", "answer-nxdomain", header(9, 0x8183) + question("nope.example"))
put("dns", "answer-truncated", a[:-3])
put("dns", "answer-forward-pointer", header(10, 0x8180, an=1) + b"\xc0\x20" + struct.pack(">HH", 1, 1))
many = header(11, 0x8180, an=70) + question("many.example")
for i in range(70):
    many += rr(PTR_Q, 1, 30 + i, bytes([198, 18, 1, i]))
put("dns", "answer-many-addrs", many)
put("dns", "short", b"\x12\x34\x01")

# ---- nfnetlink_log -------------------------------------------------------------
NFNL_SUBSYS_ULOG = 4
NFULNL_MSG_PACKET = 0
NFULA_PAYLOAD, NFULA_PREFIX = 9, 10


def nla(t, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, t) + data + b"\0" * ((4 - n % 4) % 4)


def nlmsg(payload, prefix=b"agentbox deny\0", mtype=(NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET):
    body = struct.pack("=BBH", 2, 0, struct.unpack("<H", struct.pack(">H", 171))[0])
    body += nla(NFULA_PREFIX, prefix) if prefix is not None else b""
    body += nla(NFULA_PAYLOAD, payload) if payload is not None else b""
    return struct.pack("=IHHII", 16 + len(body), mtype, 0, 0, 0) + body


def ipv4(proto, dst, l4, frag=0, ihl=5):
    h = bytes([0x40 | ihl, 0]) + struct.pack(">HHH", 20 + len(l4), 0, frag) + bytes([64, proto, 0, 0])
    h += ipaddress.ip_address("198.18.0.2").packed + ipaddress.ip_address(dst).packed
    return h + b"\0" * ((ihl - 5) * 4) + l4


def ipv6(next_hdr, dst, rest):
    h = b"\x60\0\0\0" + struct.pack(">HBB", len(rest), next_hdr, 64)
    return h + ipaddress.ip_address("2001:db8::2").packed + ipaddress.ip_address(dst).packed + rest


tcp = struct.pack(">HH", 40000, 443) + b"\0" * 16
udp = struct.pack(">HHHH", 40001, 53, 8, 0)
icmp = bytes([8, 0, 0, 0, 0, 1, 0, 1])
put("nflog", "tcp4", nlmsg(ipv4(6, "198.18.0.9", tcp)))
put("nflog", "udp4-fragment", nlmsg(ipv4(17, "198.18.0.9", udp, frag=0x2001)))
put("nflog", "icmp4-options", nlmsg(ipv4(1, "198.18.0.9", icmp, ihl=6)))
put("nflog", "udp6-hbh", nlmsg(ipv6(0, "2001:db8::9", bytes([17, 0]) + b"\0" * 6 + udp)))
put("nflog", "tcp6-frag-ah", nlmsg(ipv6(44, "2001:db8::9", bytes([51, 0, 0, 0, 0, 0, 0, 1]) +
                                        bytes([6, 1, 0, 0]) + b"\0" * 8 + tcp)))
put("nflog", "icmp6", nlmsg(ipv6(58, "2001:db8::9", bytes([128, 0, 0, 0]))))
put("nflog", "two-messages", nlmsg(ipv4(6, "198.18.0.9", tcp)) + nlmsg(ipv6(17, "2001:db8::9", udp), prefix=None))
put("nflog", "no-payload", nlmsg(None))
put("nflog", "unterminated-prefix", nlmsg(ipv4(6, "198.18.0.9", tcp), prefix=b"x" * 80))
put("nflog", "other-type", nlmsg(ipv4(6, "198.18.0.9", tcp), mtype=0x0401))
put("nflog", "bare-ipv4", ipv4(6, "198.18.0.9", tcp))

# ---- egress lists (first byte: bit 0 = deny; a newline starts the other list) --
for i, s in enumerate([
        "\0example.com,*.example.org:443/tcp,198.51.100.0/24",
        "\x01[2001:db8::1]:22,2001:db8::/32/udp,198.51.100.7:5432",
        "\0 Example.COM. , api.example.com:8080\n*.bad.example.com",
        "\0198.51.100.7/24",
        "\0*.,*,a..b,-a.example,a-.example,1.2.3.4.5,::ffff:198.51.100.1",
        "\0example.com:0,example.com:65536,example.com/sctp,[2001:db8::1]x",
        "\0" + "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61 + ":443/udp",
        "\0*." + "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61 + ":65535/tcp",
        "\0,",
]):
    put("egress", "list-%d" % i, s)

# ---- state.json ---------------------------------------------------------------
st = {"id": "fuzz", "pid": 1, "pidStartTime": 12345, "bundle": "/b", "rootfs": "/b/rootfs",
      "created": "2024-01-01T00:00:00Z", "started": True, "cgroupMode": "v1",
      "cgroupPath": "/agentbox/fuzz", "systemdCgroup": False, "ownPidNs": True,
      "sentryPid": 0, "sentryStartTime": 0, "egressPolicy": "allow=;deny=",
      "seccompProfile": "agent", "annotations": {"a": "b"}}
put("state", "good", json.dumps(st))
put("state", "truncated", json.dumps(st)[:57])
put("state", "empty", "")
put("state", "wrong-id", json.dumps(dict(st, id="other")))
put("state", "creating", json.dumps(dict(st, pid=0)))
put("state", "negative-pid", json.dumps(dict(st, pid=-4)))
put("state", "no-pid", json.dumps({k: v for k, v in st.items() if k != "pid"}))
put("state", "truncated-in-annotations", json.dumps(st, separators=(",", ":"))[:-4])
put("state", "types", json.dumps(dict(st, pid="1", annotations={"a": 1}, cgroupMode=7)))
