#!/usr/bin/env python3
"""Test hosts for egress-learn.bats: static files over HTTPS on each
--https ADDR[:PORT] (port 443 unless given; an npm registry, a git
repository served dumb, an API's JSON are files in --root), the same over
plain HTTP on each --http ADDR:PORT, a plain TCP greeting on each --tcp
ADDR:PORT, and a UDP echo on each --udp ADDR:PORT. Writes --ready once
every socket listens.

  learn_servers.py --root DIR --cert PEM --key PEM --ready FILE
                   [--https ADDR[:PORT]]... [--http ADDR:PORT]...
                   [--tcp ADDR:PORT]... [--udp ADDR:PORT]...
"""
import argparse
import functools
import http.server
import socket
import socketserver
import ssl
import threading


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Greeting(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"hello-tcp\n")


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        sock.sendto(b"hello-udp " + data, self.client_address)


class ThreadingTCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True


class ThreadingUDP(socketserver.ThreadingMixIn, socketserver.UDPServer):
    allow_reuse_address = True
    daemon_threads = True


def addr_port(text):
    host, port = text.rsplit(":", 1)
    return host, int(port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--https", action="append", default=[])
    ap.add_argument("--http", action="append", default=[])
    ap.add_argument("--tcp", action="append", default=[])
    ap.add_argument("--udp", action="append", default=[])
    a = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    servers = []
    handler = functools.partial(Quiet, directory=a.root)
    for where in a.https:
        s = http.server.ThreadingHTTPServer(addr_port(where) if ":" in where else (where, 443), handler)
        s.daemon_threads = True
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
        servers.append(s)
    for where in a.http:
        s = http.server.ThreadingHTTPServer(addr_port(where), handler)
        s.daemon_threads = True
        servers.append(s)
    servers += [ThreadingTCP(addr_port(t), Greeting) for t in a.tcp]
    servers += [ThreadingUDP(addr_port(u), Echo) for u in a.udp]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    with open(a.ready, "w") as f:
        f.write("ready\n")
    threading.Event().wait()


if __name__ == "__main__":
    main()
