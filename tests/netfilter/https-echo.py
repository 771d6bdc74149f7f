#!/usr/bin/env python3
"""A small HTTPS test host for the gateway tests: HTTP/1.1 with keep-alive,
Content-Length and chunked bodies, and an Upgrade that switches to echoing
bytes (what a WebSocket needs of the path). Every request is recorded as a
JSON line (method, path, headers, body length and SHA-256) and answered
with that same record; GET /bytes/N answers N random bytes and /text/N N
bytes of base64 text instead (the downloads of bench/gateway.sh).

  https-echo.py --bind ADDR --port N --cert PEM --key PEM --record FILE [--ready FILE]
"""
import argparse
import base64
import hashlib
import json
import os
import socket
import ssl
import threading


def read_line(f):
    line = f.readline(65537)
    if not line.endswith(b"\n"):
        raise EOFError
    return line.rstrip(b"\r\n").decode("latin-1")


def read_body(f, headers):
    h = hashlib.sha256()
    n = 0
    te = headers.get("transfer-encoding", [""])[-1].lower()
    if "chunked" in te:
        while True:
            size = int(read_line(f).split(";")[0], 16)
            if size == 0:
                while read_line(f):
                    pass
                break
            left = size
            while left:
                chunk = f.read(min(left, 1 << 16))
                if not chunk:
                    raise EOFError
                h.update(chunk)
                left -= len(chunk)
            n += size
            read_line(f)
    else:
        left = int(headers.get("content-length", ["0"])[-1])
        while left:
            chunk = f.read(min(left, 1 << 16))
            if not chunk:
                raise EOFError
            h.update(chunk)
            left -= len(chunk)
            n += len(chunk)
    return n, h.hexdigest()


BLOCK = os.urandom(1 << 20)
TEXT = base64.b64encode(BLOCK)[:1 << 20]


def send_bytes(conn, path):
    """/bytes/N: N random bytes; /text/N: N bytes of base64 text (bench/gateway.sh)"""
    kind, n = path.split("/")[1], int(path.split("/")[2])
    block = BLOCK if kind == "bytes" else TEXT
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                 + str(n).encode() + b"\r\n\r\n")
    while n > 0:
        piece = block[:min(n, len(block))]
        conn.sendall(piece)
        n -= len(piece)


def serve(conn, args, lock):
    f = conn.makefile("rb")
    try:
        while True:
            try:
                request = read_line(f)
            except EOFError:
                return
            if not request:
                continue
            method, path, _ = request.split(" ", 2)
            headers = {}
            while True:
                line = read_line(f)
                if not line:
                    break
                name, _, value = line.partition(":")
                headers.setdefault(name.strip().lower(), []).append(value.strip())
            n, digest = read_body(f, headers)
            rec = {"method": method, "path": path, "headers": headers, "body_len": n, "body_sha256": digest,
                   "server": args.name}
            with lock, open(args.record, "a") as out:
                out.write(json.dumps(rec) + "\n")
            if headers.get("upgrade"):
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: "
                             + headers["upgrade"][0].encode() + b"\r\nConnection: Upgrade\r\n\r\n")
                while True:
                    data = conn.recv(65536)
                    if not data:
                        return
                    conn.sendall(data)
            if path.startswith("/bytes/") or path.startswith("/text/"):
                send_bytes(conn, path)
                continue
            body = json.dumps(rec).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + (b"" if method == "HEAD" else body))
    except (EOFError, ConnectionError, ssl.SSLError, ValueError):
        return
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", required=True)
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--name", default="")
    ap.add_argument("--ready")
    args = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    ctx.set_alpn_protocols(["http/1.1"])
    fam = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((args.bind, args.port))
    s.listen(64)
    if args.ready:
        open(args.ready, "w").close()
    lock = threading.Lock()
    while True:
        raw, _ = s.accept()
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            conn = ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            continue
        threading.Thread(target=serve, args=(conn, args, lock), daemon=True).start()


if __name__ == "__main__":
    main()
