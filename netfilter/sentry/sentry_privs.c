/* The sentry's and its helper's privileges: every capability dropped but the
 * ones a process still needs, and an empty read-only root. */
#include <errno.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry_privs.h"
#include "util.h"

int sentry_drop_caps(const cap_value_t *keep, int n_keep, struct ab_err *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ab_error(err, errno, "set no_new_privs");
	for (cap_value_t c = 0; c <= CAP_LAST_CAP + 8; c++) {
		bool kept = false;
		for (int i = 0; i < n_keep; i++)
			kept |= keep[i] == c;
		/* EINVAL: a capability this kernel does not know. EPERM: we hold no
		 * CAP_SETPCAP (rootless, in the runtime's own user namespace): we hold
		 * nothing then, and no_new_privs keeps it so */
		if (!kept && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			if (errno == EPERM)
				break;
			return ab_error(err, errno, "drop capability %d from the bounding set", c);
		}
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	cap_t caps = cap_init();
	if (!caps)
		return ab_error(err, errno, "cap_init");
	if (n_keep && (cap_set_flag(caps, CAP_EFFECTIVE, n_keep, keep, CAP_SET) < 0 ||
		       cap_set_flag(caps, CAP_PERMITTED, n_keep, keep, CAP_SET) < 0)) {
		cap_free(caps);
		return ab_error(err, errno, "cap_set_flag");
	}
	int r = cap_set_proc(caps);
	int e = errno;
	cap_free(caps);
	if (r < 0)
		return ab_error(err, e, "set capabilities");
	/* no core dumps, no ptrace by same-uid processes, no /proc/PID/mem */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

/* Rootless, a mount needs a mount namespace we own: one of our own, in a user
 * namespace of our own if need be (the net helper, unprivileged in the
 * runtime's). The sockets we hold work on. */
static int own_mount_namespace(struct ab_err *err)
{
	if (unshare(CLONE_NEWNS) == 0 || (errno == EPERM && unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0))
		return 0;
	return ab_error(err, errno, "a mount namespace for the empty root");
}

/* The sentry needs no file after setup. */
int sentry_empty_root(struct ab_err *err)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 && errno == EPERM) {
		if (own_mount_namespace(err) < 0)
			return -1;
		fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	}
	if (fs >= 0) {
		int m = -1;
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
		    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0555", 0) == 0 &&
		    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
			m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
					 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		int e = errno;
		close(fs);
		if (m < 0)
			return ab_error(err, e, "create an empty root (fsmount)");
		/* a detached mount: nothing to unmount later, nobody else sees it */
		int r = fchdir(m) < 0 || chroot(".") < 0 ? -1 : 0;
		e = errno;
		close(m);
		if (r < 0)
			return ab_error(err, e, "chroot into the empty root");
		return 0;
	}
	if (errno != ENOSYS)
		return ab_error(err, errno, "fsopen tmpfs");
	/* before Linux 5.2: a private mount namespace with a tmpfs on /tmp */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0 ||
	    chdir("/tmp") < 0 || chroot(".") < 0)
		return ab_error(err, errno, "create an empty root");
	return 0;
}

