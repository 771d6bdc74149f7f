#!/usr/bin/env python3
"""An HTTPS test host that gives requests back, the way real servers do (each
a way for a box to read the secret the credential gateway put into its
request). HTTP/1.1, and HTTP/2 by ALPN when the python3-h2 module is there.

  TRACE, TRACK /*      200 message/http: the request as received (Apache
                       with TraceEnable on, appliances)
  OPTIONS with Max-Forwards: the same (a proxy on the way that echoes)
  GET /headers         200 JSON of the headers (httpbin, postman-echo)
  HEAD /headers        the Authorization header in X-Echo-Authorization,
                       Set-Cookie, WWW-Authenticate and Link
  GET /redirect        302 to https://other.test/landing?auth=<header>
  GET /401             401 JSON {"message": "bad credentials", "got": <header>}
  GET /gzip            /headers gzip-compressed if the request accepts gzip
  GET /gzip-always     /headers gzip-compressed whatever the request accepts
  GET /b64, /b64url    /headers base64 (standard, URL-safe) encoded
  GET /b64wrap         /headers base64 wrapped at 76 columns
  GET /escaped         JSON with \\/ and \\u escapes; /html: HTML entities;
                       /percent: the header percent-encoded
  GET /chunked         /headers in chunks (HTTP/2: DATA frames) of 3 bytes
  GET /split           /headers in two writes 0.2 s apart, cut inside the secret
  GET /trailer         chunked, the header echoed in a trailer (h1) / trailers (h2)
  GET /introspect      {"active": true, "token": <the token>, "scope": "repo"}
  GET /sse?gate=FILE   two events; the second once FILE exists
  GET /ws              (Upgrade) 101, then the request head into the tunnel
  Upgrade: h2c         101, then the request's headers HPACK-coded (as HTTP/2 would send them)
  any path, with Range: bytes=A-B   206 with those bytes of /headers
  POST /echo-body      the request body
Every request is appended, as JSON, to --record.

  leaky-https.py --bind ADDR [--port 443] --cert PEM --key PEM --record FILE [--ready FILE]
"""
import argparse
import base64
import gzip
import json
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse

try:
    import hpack
except ImportError:
    hpack = None
try:
    import h2.config
    import h2.connection
    import h2.events
    HAVE_H2 = True
except ImportError:
    HAVE_H2 = False


def route(method, path, headers, raw, body):
    """(status, headers, body, mode): mode is one of plain, chunked3, split,
    sse:FILE, trailer, ws"""
    auth = headers.get("authorization", "")
    js = json.dumps({"headers": {k: v for k, v in headers.items() if k != "range"}}).encode()
    p, _, query = path.partition("?")
    q = urllib.parse.parse_qs(query)
    rng = re.fullmatch(r"bytes=(\d+)-(\d+)", headers.get("range", ""))
    if method in ("TRACE", "TRACK") or (method == "OPTIONS" and "max-forwards" in headers):
        return "200 OK", [("content-type", "message/http")], raw, "plain"
    if rng:
        a, b = int(rng.group(1)), int(rng.group(2))
        return "206 Partial Content", [("content-type", "application/json"),
                                       ("content-range", f"bytes {a}-{b}/{len(js)}")], js[a:b + 1], "plain"
    if method == "HEAD" and p == "/headers":
        return "200 OK", [("x-echo-authorization", auth), ("set-cookie", f"seen={auth}; Secure"),
                          ("www-authenticate", f'Bearer error="invalid_token", token="{auth}"'),
                          ("link", f"<https://other.test/?{urllib.parse.quote(auth)}>; rel=next")], b"", "plain"
    if p == "/headers":
        return "200 OK", [("content-type", "application/json")], js, "plain"
    if p == "/redirect":
        return "302 Found", [("location", "https://other.test/landing?auth=" + urllib.parse.quote(auth))], b"", "plain"
    if p == "/401":
        return "401 Unauthorized", [("content-type", "application/json")], \
            json.dumps({"message": "bad credentials", "got": auth}).encode(), "plain"
    if p == "/gzip" and "gzip" in headers.get("accept-encoding", ""):
        return "200 OK", [("content-type", "application/json"), ("content-encoding", "gzip")], gzip.compress(js), "plain"
    if p == "/gzip-always":
        return "200 OK", [("content-type", "application/json"), ("content-encoding", "gzip")], gzip.compress(js), "plain"
    if p in ("/gzip",):
        return "200 OK", [("content-type", "application/json")], js, "plain"
    if p == "/b64":
        return "200 OK", [("content-type", "text/plain")], base64.b64encode(js), "plain"
    if p == "/b64url":
        return "200 OK", [("content-type", "text/plain")], base64.urlsafe_b64encode(b"xy" + js), "plain"
    if p == "/b64wrap":
        return "200 OK", [("content-type", "text/plain")], base64.encodebytes(b"z" + js), "plain"
    if p == "/escaped":
        return "200 OK", [("content-type", "application/json")], \
            json.dumps({"got": auth}, ensure_ascii=True).replace("/", "\\/").replace("_", "\\u005f").encode(), "plain"
    if p == "/html":
        esc = "".join(f"&#{ord(c)};" if c in "_+/=" else c for c in auth)
        return "200 OK", [("content-type", "text/html")], f"<p>Bad token: {esc}</p>".encode(), "plain"
    if p == "/percent":
        return "200 OK", [("content-type", "text/plain")], urllib.parse.quote(auth, safe="").encode(), "plain"
    if p == "/chunked":
        return "200 OK", [("content-type", "application/json")], js, "chunked3"
    if p == "/split":
        return "200 OK", [("content-type", "application/json")], js, "split"
    if p == "/trailer":
        return "200 OK", [("content-type", "text/plain"), ("trailer", "x-echo")], b"see the trailer\n", "trailer"
    if p == "/introspect":
        token = auth.split(" ", 1)[-1]
        return "200 OK", [("content-type", "application/json")], \
            json.dumps({"active": True, "token": token, "scope": "repo"}).encode(), "plain"
    if p == "/sse":
        return "200 OK", [("content-type", "text/event-stream")], b"", "sse:" + q.get("gate", [""])[0]
    if headers.get("upgrade", "").lower() == "h2c" and hpack:
        # HTTP/2 over the upgraded connection: its headers HPACK-coded (Huffman)
        block = hpack.Encoder().encode([(":status", "200")] + list(headers.items()), huffman=True)
        return "101 Switching Protocols", [("upgrade", "h2c"), ("connection", "Upgrade")], block, "ws"
    if p == "/ws" and headers.get("upgrade"):
        return "101 Switching Protocols", [("upgrade", headers["upgrade"]), ("connection", "Upgrade")], raw, "ws"
    if p == "/echo-body":
        return "200 OK", [("content-type", "application/octet-stream")], body, "plain"
    return "404 Not Found", [], b"", "plain"


def sse_events(gate):
    yield b"data: first\n\n"
    for _ in range(300):
        if gate and os.path.exists(gate):
            break
        time.sleep(0.05)
    yield b"data: second\n\n"


def sse_events_lazy(gate, send):
    for ev in sse_events(gate):
        send(ev)
        yield ev


def split_at_secret(body, auth):
    """two pieces of body, cut in the middle of the token"""
    token = auth.split(" ", 1)[-1].encode()
    i = body.find(token)
    cut = i + len(token) // 2 if i >= 0 else len(body) // 2
    return body[:cut], body[cut:]


# ---- HTTP/1.1 ----

def read_line(f):
    line = f.readline(65537)
    if not line.endswith(b"\n"):
        raise EOFError
    return line


def read_body(f, headers):
    if "chunked" in headers.get("transfer-encoding", "").lower():
        out = b""
        while True:
            size = int(read_line(f).split(b";")[0], 16)
            if size == 0:
                while read_line(f).strip():
                    pass
                return out
            out += f.read(size)
            read_line(f)
    n = int(headers.get("content-length", "0") or 0)
    return f.read(n) if n else b""


def h1_send(conn, method, status, hdrs, body, mode, auth):
    head = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in hdrs]
    if mode in ("chunked3", "trailer") or mode.startswith("sse:"):
        head.append("Transfer-Encoding: chunked")
    elif mode != "ws" and not status.startswith("304"):
        head.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
    if method == "HEAD":
        conn.sendall(data)
    elif mode == "chunked3":
        for i in range(0, len(body), 3):
            data += b"%x\r\n" % len(body[i:i + 3]) + body[i:i + 3] + b"\r\n"
        conn.sendall(data + b"0\r\n\r\n")
    elif mode == "trailer":
        conn.sendall(data + b"%x\r\n" % len(body) + body + b"\r\n0\r\nX-Echo: " + auth.encode() + b"\r\n\r\n")
    elif mode == "split":
        a, b = split_at_secret(body, auth)
        conn.sendall(data + a)
        time.sleep(0.2)
        conn.sendall(b)
    elif mode.startswith("sse:"):
        conn.sendall(data)
        for ev in sse_events(mode[4:]):
            conn.sendall(b"%x\r\n" % len(ev) + ev + b"\r\n")
        conn.sendall(b"0\r\n\r\n")
    elif mode == "ws":
        conn.sendall(data)
        conn.sendall(body)   # the handshake's head, as a server that echoes it would
        return False
    else:
        conn.sendall(data + body)
    return True


def serve_h1(conn, args, lock):
    f = conn.makefile("rb")
    while True:
        try:
            first = read_line(f)
        except EOFError:
            return
        if not first.strip():
            continue
        raw = first
        method, path, _ = first.decode("latin-1").rstrip("\r\n").split(" ", 2)
        headers = {}
        while True:
            line = read_line(f)
            raw += line
            s = line.decode("latin-1").rstrip("\r\n")
            if not s:
                break
            name, _, value = s.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = read_body(f, headers)
        record(args, lock, "1.1", method, path, headers, body)
        status, hdrs, rbody, mode = route(method, path, headers, raw, body)
        if not h1_send(conn, method, status, hdrs, rbody, mode, headers.get("authorization", "")):
            return


def record(args, lock, version, method, path, headers, body):
    with lock, open(args.record, "a") as out:
        out.write(json.dumps({"http": version, "method": method, "path": path, "headers": headers,
                              "body": body.decode("latin-1")}) + "\n")


# ---- HTTP/2 ----

def serve_h2(conn, args, lock):
    h2c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="latin-1"))
    h2c.initiate_connection()
    conn.sendall(h2c.data_to_send())
    streams = {}
    while True:
        data = conn.recv(65536)
        if not data:
            return
        for ev in h2c.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                streams[ev.stream_id] = [dict(ev.headers), b""]
            elif isinstance(ev, h2.events.DataReceived):
                streams[ev.stream_id][1] += ev.data
                h2c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                hd, body = streams.pop(ev.stream_id)
                h2_answer(conn, h2c, ev.stream_id, hd, body, args, lock)
        conn.sendall(h2c.data_to_send())


def h2_answer(conn, h2c, sid, hd, body, args, lock):
    method, path = hd.get(":method", ""), hd.get(":path", "")
    headers = {k: v for k, v in hd.items() if not k.startswith(":")}
    raw = (f"{method} {path} HTTP/2\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode("latin-1")
    record(args, lock, "2", method, path, headers, body)
    status, hdrs, rbody, mode = route(method, path, headers, raw, body)
    auth = headers.get("authorization", "")
    end_now = method == "HEAD" or (not rbody and mode == "plain")
    h2c.send_headers(sid, [(":status", status.split()[0])] + hdrs, end_stream=end_now)
    if end_now:
        return
    if mode == "chunked3":
        for i in range(0, len(rbody), 3):
            h2c.send_data(sid, rbody[i:i + 3])
        h2c.end_stream(sid)
    elif mode == "split":
        a, b = split_at_secret(rbody, auth)
        h2c.send_data(sid, a)
        conn.sendall(h2c.data_to_send())
        time.sleep(0.2)
        h2c.send_data(sid, b, end_stream=True)
    elif mode == "trailer":
        h2c.send_data(sid, rbody)
        h2c.send_headers(sid, [("x-echo", auth)], end_stream=True)
    elif mode.startswith("sse:"):
        events = list(sse_events_lazy(mode[4:], lambda ev: (h2c.send_data(sid, ev), conn.sendall(h2c.data_to_send()))))
        h2c.end_stream(sid)
    else:
        h2c.send_data(sid, rbody, end_stream=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", required=True)
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--ready")
    args = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    ctx.set_alpn_protocols(["h2", "http/1.1"] if HAVE_H2 else ["http/1.1"])
    s = socket.socket(socket.AF_INET6 if ":" in args.bind else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((args.bind, args.port))
    s.listen(64)
    if args.ready:
        with open(args.ready, "w") as r:
            r.write("h2\n" if HAVE_H2 else "h1\n")
    lock = threading.Lock()
    while True:
        raw, _ = s.accept()
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            conn = ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            continue
        serve = serve_h2 if conn.selected_alpn_protocol() == "h2" else serve_h1
        threading.Thread(target=guarded, args=(serve, conn, args, lock), daemon=True).start()


def guarded(serve, conn, args, lock):
    try:
        serve(conn, args, lock)
    except (EOFError, ConnectionError, ssl.SSLError, ValueError, OSError, KeyError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


if __name__ == "__main__":
    main()
