#include "lsm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

#define SELINUX_MAGIC 0xf97cff8c

bool lsm_apparmor_enabled(void)
{
	if (access("/sys/kernel/security/apparmor", F_OK) < 0)
		return false;
	char c = 0;
	int fd = open("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, &c, 1);
	close(fd);
	return n == 1 && c == 'Y';
}

bool lsm_selinux_enabled(void)
{
	struct statfs sf;
	return statfs("/sys/fs/selinux", &sf) == 0 && (unsigned long)sf.f_type == SELINUX_MAGIC;
}

int lsm_check(const struct oci_process *p, const char *mount_label, const char *where,
	      struct ab_err *err)
{
	const char *profile = p->apparmor_profile;
	if (profile && *profile) {
		/* the kernel takes one line: a newline would end the command early */
		if (strchr(profile, '\n') || strlen(profile) > 4096)
			return ab_error(err, 0, "%sapparmorProfile \"%.64s\": not a profile name", where, profile);
		/* refused, as runc fails: running unconfined instead would be silent */
		if (!lsm_apparmor_enabled())
			return ab_error(err, 0, "%sapparmorProfile \"%s\": AppArmor is not enabled on this host",
					where, profile);
	}
	const char *label = p->selinux_label;
	bool selinux = (label && *label) || (mount_label && *mount_label) ? lsm_selinux_enabled() : false;
	if (label && *label && !selinux)
		return ab_error(err, 0, "%sselinuxLabel \"%s\": SELinux is not enabled on this host", where, label);
	if (label && *label)
		return ab_error(err, 0, "%sselinuxLabel \"%s\": SELinux labels are not supported by agentbox (podman: --security-opt label=disable)",
				where, label);
	if (mount_label && *mount_label && selinux)
		return ab_error(err, 0, "config.json: linux.mountLabel \"%s\": SELinux labels are not supported by agentbox (podman: --security-opt label=disable)",
				mount_label);
	return 0;
}

/* The attribute file of this thread: DIR/apparmor/exec, or DIR/exec on
 * kernels before 5.8; DIR is thread-self/attr of a procfs handle (procfd
 * >= 0: procfs.h, nothing followed, nothing of the container on the way),
 * else the directory itself (the tests). */
static int open_exec_attr(int procfd, const char *dir, char *shown, size_t len, struct ab_err *err)
{
	static const char *const names[] = {"apparmor/exec", "exec"};
	struct ab_err e;
	int fd = -1;
	for (size_t i = 0; i < ARRAY_SIZE(names) && fd < 0; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		snprintf(shown, len, "%s%s", procfd >= 0 ? "/proc/thread-self/" : "", path);
		fd = procfd >= 0 ? procfs_open_self(procfd, true, path, O_WRONLY, &e) : open(path, O_WRONLY | O_CLOEXEC);
		int code = procfd >= 0 ? (fd < 0 ? e.code : 0) : errno;
		if (fd < 0 && code != ENOENT)
			return ab_error(err, code, "open %s", shown);
	}
	if (fd < 0)
		return ab_error(err, ENOENT, "open %s", shown);
	return fd;
}

static int apparmor_exec(int procfd, const char *dir, const char *profile, struct ab_err *err)
{
	if (!profile || !*profile)
		return 0;
	char shown[PATH_MAX + 32];
	int fd = open_exec_attr(procfd, dir, shown, sizeof shown, err);
	if (fd < 0)
		return ab_wrap(err, "process.apparmorProfile \"%s\"", profile);
	char cmd[4200];
	int len = snprintf(cmd, sizeof cmd, "exec %s", profile);
	ssize_t n = (len > 0 && (size_t)len < sizeof cmd) ? write(fd, cmd, (size_t)len) : -1;
	int e = n < 0 ? errno : EIO;
	close(fd);
	if (n != len)
		return ab_error(err, e, "process.apparmorProfile \"%s\": apply (is the profile loaded?)", profile);
	return 0;
}

int lsm_apparmor_exec_at(const char *attr_dir, const char *profile, struct ab_err *err)
{
	return apparmor_exec(-1, attr_dir, profile, err);
}

int lsm_apply(const struct oci_process *p, int procfd, struct ab_err *err)
{
	return apparmor_exec(procfd, "attr", p->apparmor_profile, err);
}
