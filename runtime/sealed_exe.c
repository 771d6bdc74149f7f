/* CVE-2019-5736: a container whose entrypoint is "#!/proc/self/exe" makes the kernel
 * run /proc/self/exe of the init — the runtime's binary, since init is a clone of
 * the runtime — and from inside it can open that binary for writing. Before any
 * command that starts container processes, the runtime moves itself into a sealed
 * memfd copy (re-executing once), so /proc/self/exe is a file nobody can write. */
#include "sealed_exe.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

int sealed_exe_ensure(char **argv, struct ab_err *err)
{
	if (running_sealed())
		return 0;
	_cleanup_close_ int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return ab_error(err, errno, "open /proc/self/exe");
	struct stat st;
	if (fstat(src, &st) < 0)
		return ab_error(err, errno, "stat /proc/self/exe");
	_cleanup_close_ int mfd = memfd_create("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return ab_error(err, errno, "memfd_create");
	off_t off = 0;
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, src, &off, (size_t)(st.st_size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ab_error(err, n < 0 ? errno : EIO, "copy the runtime binary to a sealed memfd");
	}
	if (fcntl(mfd, F_ADD_SEALS, SEALS) < 0)
		return ab_error(err, errno, "seal the runtime's memfd");
	syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
	return ab_error(err, errno, "re-execute from the sealed memfd");
}
