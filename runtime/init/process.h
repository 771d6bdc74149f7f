/* What init and exec do alike to the process they are about to execve: rlimits,
 * the console, the program lookup, and the privilege sequence ending in seccomp. */
#ifndef AGENTBOX_PROCESS_H
#define AGENTBOX_PROCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "error.h"

struct seccomp_prog;

int process_set_rlimits(const struct oci_process *p, struct ab_err *err);
/* Through procfd, a procfs handle of the process's own (procfs.h). */
int process_set_oom_score_adj(const struct oci_process *p, int procfd, struct ab_err *err);
/* scheduler, ioPriority and execCPUAffinity.initial (final = false, early) or
 * execCPUAffinity.final (final = true, right before execve). */
int process_set_scheduling(const struct oci_process *p, bool final, struct ab_err *err);
/* The environment to exec with: p->env, and HOME from the container's /etc/passwd
 * entry of process.user.uid ("/" without one) when p->env has no non-empty HOME,
 * as runc and crun do. Call it inside the container's root. NULL on failure. */
char *const *process_env_with_home(const struct oci_process *p, struct ab_err *err);
/* PATH lookup of args[0] in the container's view, with the process' own PATH. */
int process_find_executable(const struct oci_process *p, char *buf, size_t len, struct ab_err *err);
/* Create a pty in the devpts at ROOT/dev/pts, send its master over sync_fd, make
 * the slave our stdio and controlling terminal; bind it over ROOT/dev/console when
 * bind_console. root is "/" once inside the container. */
int process_setup_console(const char *root, const struct oci_process *p, int sync_fd,
			  bool bind_console, struct ab_err *err);

/* chdir to process.cwd ("/" when unset) and check that it is inside the root.
 * One that the runtime may not enter but process.user might (EACCES, EPERM) is
 * left for process_finish to enter as the user: *ret_late names it then. */
int process_enter_cwd(const struct oci_process *p, const char **ret_late, struct ab_err *err);

/* The last steps before exec, in order: bounding set; only fds 0-2, the preserved
 * ones and `keep` (close-on-exec) stay open; user and groups; the process' capability
 * sets; umask; no_new_privs; seccomp (before the user switch when no_new_privs is off,
 * since then loading needs CAP_SYS_ADMIN); late_cwd (process_enter_cwd), entered
 * once the user is set. Notify listener fds go over sync_fd. fd_dir: the
 * process's fd directory of a procfs handle (procfs.h), read where
 * close_range is missing (never the container's /proc/self/fd), and closed
 * with the rest.
 * With parent_pidfd >= 0 (a pidfd of the runtime process that cloned us): SIGKILL
 * when that process dies, set after the user switch (which clears it); fails when
 * it is already gone. The fd is closed. */
int process_finish(const struct oci_process *p, int preserve_fds, const int *keep, size_t n_keep, int fd_dir,
		   const struct seccomp_prog *progs, size_t n_progs, int sync_fd, int parent_pidfd,
		   const char *late_cwd, struct ab_err *err);
/* Default dispositions, nothing blocked: as a fresh program expects. */
void process_reset_signals(void);

#endif
