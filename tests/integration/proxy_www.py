#!/usr/bin/env python3
"""Static test hosts for kit-proxy.bats: plain HTTP on port 80 and HTTPS on
443 of each address given, files from a directory (an npm registry, a pip
index, a dumb-HTTP git repository, a Go module proxy), every request recorded
as a JSON line (address, method, Host, path) so a test can tell which
requests reached which host.

  proxy_www.py --root DIR --cert PEM --key PEM --log FILE [--stubs] ADDR...

With --stubs it first writes the stubs into DIR: npm's packument and tarball
of left-pad, a wheel of r35pkg and its simple index, the Go module
web.test/r35mod (names the stubs of issue 35's research share)."""
import argparse
import base64
import functools
import hashlib
import http.server
import socketserver
import io
import json
import os
import ssl
import tarfile
import threading
import zipfile


def npm_stub(root):
    os.makedirs(f"{root}/npm", exist_ok=True)
    os.makedirs(f"{root}/tgz", exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in (("package/package.json", b'{"name":"left-pad","version":"1.0.0","main":"index.js"}'),
                           ("package/index.js", b"module.exports=(s,n)=>String(s).padStart(n)\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    tgz = buf.getvalue()
    open(f"{root}/tgz/left-pad-1.0.0.tgz", "wb").write(tgz)
    doc = {"name": "left-pad", "dist-tags": {"latest": "1.0.0"},
           "versions": {"1.0.0": {"name": "left-pad", "version": "1.0.0", "dist": {
               "tarball": "https://web.test/tgz/left-pad-1.0.0.tgz", "shasum": hashlib.sha1(tgz).hexdigest(),
               "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}}}}
    open(f"{root}/npm/left-pad", "w").write(json.dumps(doc))


def pip_stub(root):
    os.makedirs(f"{root}/simple/r35pkg", exist_ok=True)
    os.makedirs(f"{root}/wheels", exist_ok=True)
    wheel = f"{root}/wheels/r35pkg-1.0-py3-none-any.whl"
    files = {"r35pkg/__init__.py": b"X = 1\n",
             "r35pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: r35pkg\nVersion: 1.0\n",
             "r35pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                                           b"Tag: py3-none-any\n"}
    record = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},"
                     f"{len(v)}\n" for k, v in files.items())
    with zipfile.ZipFile(wheel, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
        z.writestr("r35pkg-1.0.dist-info/RECORD", record + "r35pkg-1.0.dist-info/RECORD,,\n")
    digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
    open(f"{root}/simple/r35pkg/index.html", "w").write(
        f'<a href="/wheels/r35pkg-1.0-py3-none-any.whl#sha256={digest}">r35pkg-1.0-py3-none-any.whl</a>\n')


def go_stub(root):
    d = f"{root}/goproxy/web.test/r35mod/@v"
    os.makedirs(d, exist_ok=True)
    mod = "module web.test/r35mod\n\ngo 1.19\n"
    with zipfile.ZipFile(f"{d}/v1.0.0.zip", "w") as z:
        z.writestr("web.test/r35mod@v1.0.0/go.mod", mod)
        z.writestr("web.test/r35mod@v1.0.0/x.go", "package r35mod\n\nconst X = 1\n")
    open(f"{d}/list", "w").write("v1.0.0\n")
    open(f"{d}/v1.0.0.mod", "w").write(mod)
    open(f"{d}/v1.0.0.info", "w").write('{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}')


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, "": "application/json"}
    log_lock = threading.Lock()

    def log_message(self, fmt, *args):
        pass

    def record(self):
        line = json.dumps({"addr": self.server.server_address[0], "tls": self.server.tls, "method": self.command,
                           "host": self.headers.get("Host"), "path": self.path,
                           "connection": self.headers.get("Connection")})
        with self.log_lock, open(self.server.log, "a") as f:
            f.write(line + "\n")

    def do_GET(self):
        self.record()
        super().do_GET()

    def do_HEAD(self):
        self.record()
        super().do_HEAD()

    def do_POST(self):
        self.record()
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def server_bind(self):
        # HTTPServer's asks DNS for its own name (getfqdn): nothing answers that here
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def serve(addr, port, root, log, ctx):
    srv = Server((addr, port), functools.partial(Handler, directory=root))
    srv.log, srv.tls = log, ctx is not None
    if ctx:
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--stubs", action="store_true")
    ap.add_argument("addrs", nargs="+")
    a = ap.parse_args()
    if a.stubs:
        npm_stub(a.root)
        pip_stub(a.root)
        go_stub(a.root)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    for addr in a.addrs:
        serve(addr, 80, a.root, a.log, None)
        serve(addr, 443, a.root, a.log, ctx)
    threading.Event().wait()


if __name__ == "__main__":
    main()
