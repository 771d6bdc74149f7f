/* procfs by handle (runtime/linux/procfs.h), with openat2 and with the walk
 * that stands in for it, and where mount destinations lie with respect to
 * /proc (oci/config/config_mounts.h). */
#include "config_mounts.h"
#include "procfs.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern bool util_force_fallbacks;

static void path_names(void)
{
	ok(procfs_path_valid("sys/kernel/ostype") == 0, "a plain relative path is taken");
	static const char *const bad[] = {"", "/sys/kernel", "sys/../self", "sys/./kernel", "sys//kernel",
					  "sys/kernel/", "..", "."};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ok(procfs_path_valid(bad[i]) == -EINVAL, "\"%s\" is refused", bad[i]);
}

/* What reads fine, and what must be refused, through a handle. */
static void through(int procfd, const char *how)
{
	struct ab_err err = {0};
	char buf[64] = "";
	int fd = procfs_openat(procfd, "sys/kernel/ostype", O_RDONLY, &err);
	ok(fd >= 0 && read(fd, buf, sizeof buf - 1) > 0 && strncmp(buf, "Linux", 5) == 0,
	   "%s: sys/kernel/ostype reads \"Linux\"", how);
	if (fd >= 0)
		close(fd);
	fd = procfs_openat(procfd, "self/status", O_RDONLY, &err);
	ok(fd < 0 && err.code == ELOOP, "%s: the \"self\" link is not followed on the way", how);
	has_substr(err.msg, "a symlink or another mount is on the way: refused", "%s: and the error says why", how);
	memset(&err, 0, sizeof err);
	fd = procfs_openat(procfd, "mounts", O_RDONLY, &err);
	ok(fd < 0 && err.code == ELOOP, "%s: nor a link at the end (mounts -> self/mounts)", how);
	fd = procfs_open_self(procfd, false, "status", O_RDONLY, &err);
	memset(buf, 0, sizeof buf);
	ok(fd >= 0 && read(fd, buf, 5) == 5 && streq(buf, "Name:"), "%s: this process's own status", how);
	if (fd >= 0)
		close(fd);
	fd = procfs_open_self(procfd, true, "comm", O_RDONLY, &err);
	ok(fd >= 0, "%s: this thread's own files (thread-self)", how);
	if (fd >= 0)
		close(fd);
	/* the magic link of an fd of ours, and only it, is followed */
	int dir = procfs_open_self(procfd, false, "fd", O_RDONLY | O_DIRECTORY, &err);
	int path_fd = open("/etc/hostname", O_PATH | O_CLOEXEC);
	int reopened = dir >= 0 && path_fd >= 0 ? procfs_reopen(dir, path_fd, O_RDONLY, &err) : -1;
	struct stat a, b;
	ok(reopened >= 0 && fstat(path_fd, &a) == 0 && fstat(reopened, &b) == 0 && a.st_ino == b.st_ino,
	   "%s: an O_PATH fd reopened through the fd directory is the same file", how);
	if (reopened >= 0)
		close(reopened);
	if (path_fd >= 0)
		close(path_fd);
	if (dir >= 0)
		close(dir);
}

/* In a mount namespace of its own: a tmpfs over /proc/sys/kernel of a
 * procfs of ours must stop the walk there (RESOLVE_NO_XDEV, or the walk's
 * check of each component's file system and mount). */
static int crossing_child(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return 2;
	char dir[] = "/tmp/agentbox-test-procfs-XXXXXX";
	if (!mkdtemp(dir) || mount("proc", dir, "proc", 0, NULL) < 0)
		return 2;
	char over[PATH_MAX];
	snprintf(over, sizeof over, "%s/sys/kernel", dir);
	int r = mount("tmpfs", over, "tmpfs", 0, NULL) < 0 ? 2 : 0;
	int procfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int fb = 0; r == 0 && fb < 2; fb++) {
		util_force_fallbacks = fb;
		struct ab_err err = {0};
		int fd = procfs_openat(procfd, "sys/kernel", O_PATH, &err);
		if (fd >= 0 || err.code != EXDEV)
			r = 1;
	}
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	return r;
}

static void crossing(void)
{
	if (geteuid() != 0) {
		printf("ok %d - # SKIP mounts need root\n", ++tap_n);
		return;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(crossing_child());
	int status = 0;
	waitpid(pid, &status, 0);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
	if (code == 2)
		printf("ok %d - # SKIP no mount namespace for the test\n", ++tap_n);
	else
		ok(code == 0, "another mount inside the procfs is not crossed (openat2, and the walk)");
}

static void destinations(void)
{
	static const struct {
		const char *dest;
		enum oci_proc_dest want;
	} cases[] = {
		{"/proc", PROC_DEST_ROOT},           {"/proc/", PROC_DEST_ROOT},
		{"/proc/sys/net", PROC_DEST_INSIDE}, {"/proc/self/fd", PROC_DEST_INSIDE},
		{"/proc/cpuinfo", PROC_DEST_OVERMOUNT}, {"/proc/sys/kernel/ns_last_pid", PROC_DEST_OVERMOUNT},
		{"/proc/net/dev", PROC_DEST_OVERMOUNT}, {"/proc/net/dev/x", PROC_DEST_INSIDE},
		{"/tmp/../proc/sys", PROC_DEST_INSIDE}, {"/../../proc//sys/", PROC_DEST_INSIDE},
		{"/proc/./cpuinfo", PROC_DEST_OVERMOUNT}, {"/proc/x/../cpuinfo", PROC_DEST_OVERMOUNT},
		{"/proc2", PROC_DEST_OUTSIDE},       {"/procfs/sys", PROC_DEST_OUTSIDE},
		{"/x/proc/sys", PROC_DEST_OUTSIDE},  {"/proc/..", PROC_DEST_OUTSIDE},
		{"/", PROC_DEST_OUTSIDE},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ok(oci_mount_proc_dest(cases[i].dest) == cases[i].want, "destination %s: %d", cases[i].dest,
		   (int)cases[i].want);
}

int main(void)
{
	path_names();
	destinations();
	struct ab_err err = {0};
	int procfd = procfs_open_private(&err);
	struct statfs sf;
	ok(procfd >= 0 && fstatfs(procfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC,
	   "a private procfs handle%s%s", procfd < 0 ? ": " : "", procfd < 0 ? err.msg : "");
	if (procfd >= 0)
		through(procfd, "openat2");
	util_force_fallbacks = true;
	int plain = procfs_open_private(&err);
	ok(plain >= 0, "without the mount API: /proc itself, checked");
	if (plain >= 0)
		through(plain, "the walk");
	util_force_fallbacks = false;
	crossing();
	return tap_done();
}
