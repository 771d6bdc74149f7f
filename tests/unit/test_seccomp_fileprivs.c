/* Unit tests for the file-privileges guard (seccomp-profiles/seccomp_fileprivs.c):
 * loaded into a forked child, each call that would make a set-user-ID,
 * set-group-ID or device file is refused, and the same call without those
 * bits goes through; also through the i386 and x32 entry points of x86-64. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "seccomp.h"
#include "seccomp_fileprivs.h"
#include "tap.h"
#include "util.h"

static char dir[PATH_MAX];

/* each probe: the call's result as 0 or an errno */
static int res(long r)
{
	return r < 0 ? errno : 0;
}

static char *at(const char *name)
{
	static char buf[4][PATH_MAX + 32];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

static void touch(const char *name)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd >= 0)
		close(fd);
}

static int p_chmod_setuid(void) { touch("a"); return res(chmod(at("a"), 04755)); }
static int p_chmod_plain(void) { touch("a"); return res(chmod(at("a"), 0755)); }
static int p_chmod_sticky(void) { touch("a"); return res(chmod(at("a"), 01755)); }
static int p_fchmod_setgid(void)
{
	int fd = open(at("b"), O_RDWR | O_CREAT, 0644);
	int r = res(fchmod(fd, 02755));
	close(fd);
	return r;
}
static int p_fchmodat_setuid(void) { touch("a"); return res(fchmodat(AT_FDCWD, at("a"), 04700, 0)); }
static int p_fchmodat2_setuid(void)
{
	touch("a");
	return res(syscall(452, AT_FDCWD, at("a"), 04755, AT_SYMLINK_NOFOLLOW));
}
static int p_fchmodat2_plain(void)
{
	touch("a");
	long r = syscall(452, AT_FDCWD, at("a"), 0700, 0);
	return r < 0 && errno == ENOSYS ? 0 : res(r);  /* an older kernel */
}
static int p_open_creat_setuid(void) { return res(open(at("c"), O_WRONLY | O_CREAT, 06755)); }
static int p_openat_creat_setgid(void) { return res(openat(AT_FDCWD, at("c2"), O_WRONLY | O_CREAT, 02644)); }
static int p_open_creat_plain(void) { return res(open(at("c3"), O_WRONLY | O_CREAT, 0755)); }
/* without O_CREAT the mode is not used: whatever it holds passes */
static int p_open_nocreat(void) { touch("a"); return res(open(at("a"), O_RDONLY, 06777)); }
static int p_tmpfile_setuid(void) { return res(open(dir, O_TMPFILE | O_WRONLY, 04755)); }
static int p_creat_setuid(void) { return res(creat(at("d"), 04755)); }
static int p_mknod_fifo(void) { return res(mknod(at("f1"), S_IFIFO | 0644, 0)); }
static int p_mknod_fifo_setuid(void) { return res(mknod(at("f2"), S_IFIFO | 04644, 0)); }
static int p_mknod_chr(void) { return res(mknodat(AT_FDCWD, at("n1"), S_IFCHR | 0666, makedev(1, 3))); }
static int p_mknod_whiteout(void) { return res(mknod(at("n2"), S_IFCHR | 0600, makedev(0, 0))); }
static int p_mknod_blk(void) { return res(mknod(at("n3"), S_IFBLK | 0600, makedev(8, 0))); }
static int p_rename_whiteout(void)
{
	touch("r1");
	return res(syscall(SYS_renameat2, AT_FDCWD, at("r1"), AT_FDCWD, at("r2"), 4 /* RENAME_WHITEOUT */));
}
static int p_rename_plain(void)
{
	touch("r3");
	return res(syscall(SYS_renameat2, AT_FDCWD, at("r3"), AT_FDCWD, at("r4"), 0));
}
static int p_openat2(void)
{
	struct { unsigned long long flags, mode, resolve; } how = {O_RDONLY, 0, 0};
	return res(syscall(437, AT_FDCWD, dir, &how, sizeof how));
}
static int p_io_uring(void)
{
	char params[120] = {0};
	long r = syscall(425, 1, params);
	if (r >= 0)
		close((int)r);
	return res(r);
}
static int p_setxattr_user(void)
{
	touch("x");
	long r = setxattr(at("x"), "user.agentbox", "1", 1, 0);
	return r < 0 && errno == EOPNOTSUPP ? 0 : res(r);
}
static int p_mkdir_setgid(void) { return res(mkdir(at("dd"), 02755)); }

#if defined(__x86_64__)
/* chmod(path, mode) through the i386 entry point: the path below 4 GiB */
static int p_i386_chmod_setuid(void)
{
	touch("a");
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED)
		return -1;
	snprintf(low, 4096, "%s", at("a"));
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(15L), "b"((long)low), "c"(04755L) : "memory");
	return r < 0 ? (int)-r : 0;
}
static int p_x32_chmod_setuid(void) { touch("a"); return res(syscall(0x40000000 + 90, at("a"), 04755)); }
#endif

struct probe {
	const char *name;
	int (*fn)(void);
	int want;               /* with the guard */
	unsigned int flags;     /* SECCOMP_FILEPRIVS_* */
	bool bare;              /* it succeeds without the guard (as root, on any kernel) */
};

static const struct probe probes[] = {
	{"chmod 04755", p_chmod_setuid, EPERM, 0, true},
	{"chmod 0755", p_chmod_plain, 0, 0, false},
	{"chmod 01755 (sticky)", p_chmod_sticky, 0, 0, false},
	{"fchmod 02755", p_fchmod_setgid, EPERM, 0, true},
	{"fchmodat 04700", p_fchmodat_setuid, EPERM, 0, true},
	{"fchmodat2 04755", p_fchmodat2_setuid, EPERM, 0, true},
	{"fchmodat2 0700", p_fchmodat2_plain, 0, 0, false},
	{"open O_CREAT 06755", p_open_creat_setuid, EPERM, 0, true},
	{"openat O_CREAT 02644", p_openat_creat_setgid, EPERM, 0, true},
	{"open O_CREAT 0755", p_open_creat_plain, 0, 0, false},
	{"open without O_CREAT, mode 06777", p_open_nocreat, 0, 0, false},
	{"open O_TMPFILE 04755", p_tmpfile_setuid, EPERM, 0, true},
	{"creat 04755", p_creat_setuid, EPERM, 0, true},
	{"mknod fifo 0644", p_mknod_fifo, 0, 0, false},
	{"mknod fifo 04644", p_mknod_fifo_setuid, EPERM, 0, true},
	{"mknodat char 1:3", p_mknod_chr, EPERM, 0, false},
	{"mknod char 0:0 (whiteout)", p_mknod_whiteout, EPERM, 0, true},
	{"mknod block 8:0", p_mknod_blk, EPERM, 0, false},
	{"renameat2 RENAME_WHITEOUT", p_rename_whiteout, EPERM, 0, true},
	{"renameat2 0", p_rename_plain, 0, 0, false},
	{"openat2 (ENOSYS: libc falls back)", p_openat2, ENOSYS, 0, false},
	{"io_uring_setup", p_io_uring, EPERM, 0, false},
	{"setxattr user.*", p_setxattr_user, 0, 0, false},
	{"setxattr user.* with XATTRS", p_setxattr_user, EPERM, SECCOMP_FILEPRIVS_XATTRS, false},
	{"mkdir 02755 (the kernel drops the bits)", p_mkdir_setgid, 0, 0, false},
#if defined(__x86_64__)
	{"i386 chmod 04755", p_i386_chmod_setuid, EPERM, 0, true},
	{"x32 chmod 04755", p_x32_chmod_setuid, EPERM, 0, false},
#endif
};

/* The probe's result in a child with the guard loaded (guard) or not. */
static int run(const struct probe *p, bool guard)
{
	struct seccomp_prog prog;
	struct ab_err err;
	if (guard && seccomp_fileprivs_program(p->flags, &prog, &err) < 0) {
		printf("# %s\n", err.msg);
		return -2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (guard && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_prog_load(&prog, NULL, &err) < 0))
			_exit(254);
		int r = p->fn();
		_exit(r < 0 ? 253 : r);
	}
	if (guard)
		seccomp_prog_free(&prog);
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -3;
	return WEXITSTATUS(st);
}

static void reset_dir(void)
{
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
	if (system(cmd) != 0)
		exit(2);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root (the probes make set-user-ID files and device nodes)\n");
		return 0;
	}
	snprintf(dir, sizeof dir, "/tmp/ab-fileprivs.XXXXXX");
	if (!mkdtemp(dir))
		return 2;
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		const struct probe *p = &probes[i];
		reset_dir();
		int bare = run(p, false);
		/* the probe does what it says where nothing stops it */
		if (p->bare)
			ok(bare == 0, "without the guard: %s succeeds (got %d)", p->name, bare);
		reset_dir();
		int got = run(p, true);
		ok(got == p->want, "with the guard: %s -> %s (got %d)", p->name, p->want ? strerror(p->want) : "ok", got);
	}
	struct seccomp_prog a, b;
	struct ab_err err;
	ok(seccomp_fileprivs_program(0, &a, &err) == 0 && seccomp_fileprivs_program(SECCOMP_FILEPRIVS_XATTRS, &b, &err) == 0 &&
	   a.len == b.len && a.len < 400, "the program is small (%u instructions) and its size does not depend on the flags", a.len);
	seccomp_prog_free(&a);
	seccomp_prog_free(&b);
	reset_dir();
	rmdir(dir);
	return tap_done();
}
