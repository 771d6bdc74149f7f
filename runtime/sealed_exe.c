/* CVE-2019-5736: a container whose entrypoint is "#!/proc/self/exe" makes the kernel
 * run /proc/self/exe of the init — the runtime's binary, since init is a clone of
 * the runtime — and from inside it can open that binary for writing. Before any
 * command that starts container processes, the runtime re-executes itself from a
 * file nobody can write: the same file seen through a private read-only overlay
 * mount (Linux 6.8+), else a sealed memfd copy — unless the binary already is on
 * a read-only mount. */
#include "sealed_exe.h"
#include "log.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern bool util_force_fallbacks;

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

static bool running_sealed(void)
{
	_cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & SEALS) == SEALS;
}

/* How much of the binary execve needs: everything up to the end of the last
 * segment (and of the program headers). Section headers and debug info (-g makes
 * them two thirds of the file) are only for debuggers; copying them cost about
 * 2 ms of every run. 0 when the file does not look like our own ELF: copy it all. */
static off_t loadable_size(int fd, off_t file_size, Elf64_Ehdr *eh)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)fd, (void)file_size, (void)eh;
	return 0; /* the sanitizers' symbolizer reads the sections of /proc/self/exe */
#else
	if (pread(fd, eh, sizeof *eh, 0) != (ssize_t)sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phnum > 64)
		return 0;
	Elf64_Phdr ph[64];
	size_t ph_bytes = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (pread(fd, ph, ph_bytes, (off_t)eh->e_phoff) != (ssize_t)ph_bytes)
		return 0;
	uint64_t end = eh->e_phoff + ph_bytes;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_filesz > 0 && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end < (uint64_t)file_size ? (off_t)end : 0;
#endif
}

/* An empty read-only tmpfs, detached: overlayfs wants two lower layers when it
 * has no upper one, and they must not overlap. */
static int empty_tmpfs(void)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	int mnt = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0555", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
	close(fs);
	return mnt;
}

/* Re-execute through an overlay of the binary's own directory (over an empty
 * layer) with no upper layer, mounted detached (no mount table sees it; it goes
 * with the last process mapping it): every open for writing gets EROFS, and nothing is copied —
 * all containers share the binary's page cache, where a memfd copy stays pinned
 * by each container's DNS sentry. Only where overlayfs takes "lowerdir+" (Linux
 * 6.8, the release since which /proc/PID/map_files of such a mapping also name
 * the overlay file, not the writable one below). Returns only on failure, for
 * the memfd copy to take over. */
static void exec_via_overlay(int src, char **argv)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	char *slash = strrchr(path, '/');
	if (path[0] != '/' || !slash || strstr(path, " (deleted)"))
		return;   /* replaced since we started: the memfd copies what we run */
	*slash = 0;
	const char *dir = slash == path ? "/" : path, *base = slash + 1;
	_cleanup_close_ int empty = empty_tmpfs();
	if (empty < 0)
		return;
	char empty_path[32];
	snprintf(empty_path, sizeof empty_path, "/proc/self/fd/%d", empty);
	int fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		return;
	int mnt = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir+", dir, 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir+", empty_path, 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	close(fs);
	if (mnt < 0)
		return;
	_cleanup_close_ int fd = openat(mnt, base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	close(mnt);
	struct stat a, b;
	/* the very file we run, not one renamed over it in between */
	if (fd < 0 || fstat(fd, &a) < 0 || fstat(src, &b) < 0 || a.st_ino != b.st_ino || a.st_size != b.st_size ||
	    a.st_mtim.tv_sec != b.st_mtim.tv_sec || a.st_mtim.tv_nsec != b.st_mtim.tv_nsec)
		return;
	syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
	log_debug("re-execute through a read-only overlay: %s; using a sealed memfd copy", strerror(errno));
}

int sealed_exe_ensure(char **argv, struct ab_err *err)
{
	if (running_sealed())
		return 0;
	_cleanup_close_ int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return ab_error(err, errno, "open /proc/self/exe");
	/* On a read-only mount (an immutable /usr, or `mount --bind -o ro`) nobody in
	 * a container can open the binary for writing: EROFS, and the container cannot
	 * remount the host's mount. No copy and no second exec then. */
	struct statvfs vfs;
	if (fstatvfs(src, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		log_debug("runtime binary is on a read-only mount: no sealed copy needed");
		return 0;
	}
	if (!util_force_fallbacks)
		exec_via_overlay(src, argv);
	struct stat st;
	if (fstat(src, &st) < 0)
		return ab_error(err, errno, "stat /proc/self/exe");
	_cleanup_close_ int mfd = memfd_create("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return ab_error(err, errno, "memfd_create");
	Elf64_Ehdr eh;
	off_t size = loadable_size(src, st.st_size, &eh);
	bool trimmed = size > 0;
	if (!trimmed)
		size = st.st_size;
	off_t off = 0;
	while (off < size) {
		ssize_t n = sendfile(mfd, src, &off, (size_t)(size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ab_error(err, n < 0 ? errno : EIO, "copy the runtime binary to a sealed memfd");
	}
	if (trimmed) {
		/* the copy ends before the section headers: say there are none */
		eh.e_shoff = 0;
		eh.e_shnum = 0;
		eh.e_shstrndx = SHN_UNDEF;
		if (pwrite(mfd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
			return ab_error(err, errno, "copy the runtime binary to a sealed memfd");
	}
	if (fcntl(mfd, F_ADD_SEALS, SEALS) < 0)
		return ab_error(err, errno, "seal the runtime's memfd");
	syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
	return ab_error(err, errno, "re-execute from the sealed memfd");
}
