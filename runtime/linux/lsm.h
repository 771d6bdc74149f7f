/* Linux security modules: the AppArmor profile a container's process runs
 * under, and SELinux labels, which this runtime does not apply and therefore
 * refuses wherever they would mean something. */
#ifndef AGENTBOX_LSM_H
#define AGENTBOX_LSM_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

/* AppArmor is loaded and enabled on this host (as runc decides it). */
bool lsm_apparmor_enabled(void);
/* selinuxfs is mounted: SELinux is enabled on this host. */
bool lsm_selinux_enabled(void);

/* Before anything is made: a process that names an AppArmor profile or an
 * SELinux label the host cannot honour is an error that starts with WHERE
 * ("config.json: process.", "process.json: ", "exec: process."). mount_label is linux.mountLabel (NULL for
 * exec); like runc, it is ignored on a host without SELinux. */
int lsm_check(const struct oci_process *p, const char *mount_label, const char *where,
	      struct ab_err *err);

/* In the child, before its capabilities and no_new_privs go: the profile the
 * next execve switches to ("exec PROFILE" to thread-self/attr/apparmor/exec,
 * or to attr/exec on kernels before 5.8), through procfd, a procfs handle of
 * its own (procfs.h): a mount over /proc/thread-self/attr in the container
 * would otherwise swallow the profile. Nothing to do without a profile. */
int lsm_apply(const struct oci_process *p, int procfd, struct ab_err *err);
/* The same into ATTR_DIR/apparmor/exec or ATTR_DIR/exec by path: for tests. */
int lsm_apparmor_exec_at(const char *attr_dir, const char *profile, struct ab_err *err);

#endif
