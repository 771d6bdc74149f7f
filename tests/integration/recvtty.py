#!/usr/bin/env python3
"""Console-socket receiver for the terminal tests (like runc's recvtty).

recvtty.py SOCKET OUTFILE [--input TEXT] [--timeout SECS]

Listens on the AF_UNIX stream socket SOCKET (it appears only once listening),
accepts ONE connection, and expects ONE message carrying exactly one fd by
SCM_RIGHTS: the pty master. Writes OUTFILE.meta with the message payload, the
number of fds received and the master's device numbers, writes TEXT (if any)
to the master, then copies everything read from the master to OUTFILE until
the slave side is closed by everyone (EIO) or the timeout. Exits 0 when a
master was received, 1 otherwise.
"""
import argparse
import array
import os
import select
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("outfile")
    ap.add_argument("--input", default=None)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()

    deadline = time.monotonic() + a.timeout
    tmp = a.socket + ".tmp"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(tmp)
    srv.listen(1)
    os.rename(tmp, a.socket)
    srv.settimeout(a.timeout)
    conn, _ = srv.accept()

    fds = array.array("i")
    payload = b""
    nfds = 0
    conn.settimeout(max(0.1, deadline - time.monotonic()))
    msg, anc, _flags, _addr = conn.recvmsg(4096, socket.CMSG_SPACE(16 * fds.itemsize))
    payload = msg
    for level, typ, data in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    nfds = len(fds)
    # anything more on the connection would break the one-message contract
    conn.close()

    meta = {"payload": payload.decode(errors="replace"), "fds": nfds}
    if nfds:
        st = os.fstat(fds[0])
        meta["master"] = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    with open(a.outfile + ".meta", "w") as f:
        for k, v in meta.items():
            f.write("%s=%s\n" % (k, v))
    if nfds != 1:
        return 1

    master = fds[0]
    if a.input is not None:
        os.write(master, a.input.encode())
    with open(a.outfile, "wb") as out:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([master], [], [], left)
            if not r:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every slave fd is closed
                break
            if not data:
                break
            out.write(data)
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
