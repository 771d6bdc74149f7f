#!/usr/bin/env python3
"""Run a command on a new pseudo-terminal, as if typed at an interactive shell.

ptyrun.py [--rows R --cols C] [--input TEXT] [--timeout SECS] -- CMD ARGS...

CMD gets the pty slave as stdin/stdout/stderr and controlling terminal, with
the window size R x C. TEXT is written to the master (as typed; use $'...\n').
Everything CMD writes is copied to our stdout (with the tty's \r\n). Exits with
CMD's exit status (128+N if killed by signal N), or 124 on timeout.
"""
import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--cols", type=int, default=80)
    ap.add_argument("--input", default=None)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")

    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", a.rows, a.cols, 0, 0))
    if a.input is not None:
        os.write(master, a.input.encode())

    deadline = time.monotonic() + a.timeout
    out = sys.stdout.buffer
    status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return 124
        r, _, _ = select.select([master], [], [], min(left, 0.5))
        if not r:
            # the child may be gone while something else holds the slave open
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the slave is closed everywhere
            data = b""
        if not data:
            break
        out.write(data)
        out.flush()

    if status is None:
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
