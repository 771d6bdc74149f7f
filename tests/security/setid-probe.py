# Run inside a box, in its workspace (the cwd): every way a process without
# capabilities sets a set-user-ID or set-group-ID bit on a file it makes,
# directly or through the tools that preserve modes. One line per way,
# "NAME: ok" or "NAME: ERRNO"; the host side reads the files s_NAME.
# (kit-workspace-setid.bats.)
import ctypes, errno, os, shutil, struct, subprocess, sys

libc = ctypes.CDLL(None, use_errno=True)
SRC = "/bin/sh"


def run(args):
    """A tool that preserves modes; refused: EPERM, as its message says."""
    r = subprocess.run(args, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise OSError(errno.EPERM if "not permitted" in r.stderr else errno.EIO, r.stderr.strip())


def res(name, fn):
    try:
        fn()
        print(f"{name}: ok", flush=True)
    except OSError as e:
        print(f"{name}: {errno.errorcode.get(e.errno, e.errno)}", flush=True)


def chmod_():
    shutil.copyfile(SRC, "s_chmod")
    os.chmod("s_chmod", 0o4755)


def fchmod_():
    fd = os.open("s_fchmod", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755)
    with open(SRC, "rb") as f:
        os.write(fd, f.read())
    try:
        os.fchmod(fd, 0o6755)
    finally:
        os.close(fd)


def fchmodat_():
    shutil.copyfile(SRC, "s_fchmodat")
    d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.chmod("s_fchmodat", 0o2755, dir_fd=d)
    finally:
        os.close(d)


def fchmodat2_():
    shutil.copyfile(SRC, "s_fchmodat2")
    r = libc.syscall(452, -100, b"s_fchmodat2", 0o4755, 0x100)  # AT_FDCWD, AT_SYMLINK_NOFOLLOW
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def creat_():
    os.umask(0o022)
    os.close(os.open("s_creat", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o6755))


def fifo_():
    os.mknod("s_fifo", 0o4777 | 0o010000)


def fcap():
    # security.capability v2: CAP_SETUID (7) permitted and effective; the
    # kernel wants CAP_SETFCAP, which a box has only when its kit grants it
    shutil.copyfile(SRC, "s_fcap")
    os.setxattr("s_fcap", "security.capability", struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0))


def sgid_dir():
    os.mkdir("s_dir", 0o775)
    os.chmod("s_dir", 0o2775)


def cp_p():
    shutil.copyfile(SRC, "/tmp/s_src")
    os.chmod("/tmp/s_src", 0o4755)
    run(["cp", "-p", "/tmp/s_src", "s_cpp"])


def install_m():
    run(["install", "-m", "4755", SRC, "s_install"])


def tar_xp():
    os.makedirs("/tmp/t", exist_ok=True)
    shutil.copyfile(SRC, "/tmp/t/s_tar")
    os.chmod("/tmp/t/s_tar", 0o4755)
    subprocess.run(["tar", "-C", "/tmp/t", "-cf", "/tmp/t.tar", "s_tar"], check=True)
    run(["tar", "-xpf", "/tmp/t.tar"])


for name, fn in [("chmod", chmod_), ("fchmod", fchmod_), ("fchmodat", fchmodat_), ("fchmodat2", fchmodat2_),
                 ("creat", creat_), ("fifo", fifo_), ("fcap", fcap), ("dir", sgid_dir), ("cpp", cp_p), ("install", install_m),
                 ("tar", tar_xp)]:
    res(name, fn)
sys.exit(0)
