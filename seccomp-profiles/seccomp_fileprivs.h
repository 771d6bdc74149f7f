/* The file-privileges guard: a small seccomp program stacked on the profiles
 * for a box whose files land on the host (a kit's workspace and writable
 * mounts, a named box's layer). A mount's nosuid stays in the box; the mode
 * bits travel with the file. So the box may not make what would carry
 * privilege on the host: it refuses with EPERM
 *
 *   chmod, fchmod, fchmodat, fchmodat2           mode & 06000 (set-user-ID, set-group-ID)
 *   open, openat, creat                          O_CREAT or O_TMPFILE with mode & 06000
 *   mknod, mknodat                               mode & 06000, or a character or block device
 *   renameat2                                    RENAME_WHITEOUT (a 0:0 device node)
 *   io_uring_setup                               its operations pass no filter
 *   setxattr, lsetxattr, fsetxattr, setxattrat   only with SECCOMP_FILEPRIVS_XATTRS: the
 *                                                process may hold CAP_SETFCAP, and the name
 *                                                (security.capability) is out of the filter's reach
 *
 * and answers openat2 with ENOSYS, since its mode sits in a struct the filter
 * cannot read: libc and language runtimes fall back to openat. Written by
 * hand (libseccomp does not know every name here, fchmodat2 among them), for
 * x86-64 with its x32 and i386 ABIs, AArch64, Arm and RISC-V 64; an
 * architecture it does not know passes (the profiles judge it). */
#ifndef AGENTBOX_SECCOMP_FILEPRIVS_H
#define AGENTBOX_SECCOMP_FILEPRIVS_H

#include "error.h"
#include "seccomp_types.h"

#define SECCOMP_FILEPRIVS_XATTRS 1u

int seccomp_fileprivs_program(unsigned int flags, struct seccomp_prog *ret, struct ab_err *err);

#endif
