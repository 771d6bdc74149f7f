/* CVE-2019-5736: a container whose entrypoint is "#!/proc/self/exe" makes the kernel
 * run /proc/self/exe of the init — the runtime's binary, since init is a clone of
 * the runtime — and from inside it can open that binary for writing. Before any
 * command that starts container processes, the runtime moves itself into a sealed
 * memfd copy (re-executing once), so /proc/self/exe is a file nobody can write —
 * unless the binary already is such a file, on a read-only mount. */
#include "sealed_exe.h"
#include "log.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

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
