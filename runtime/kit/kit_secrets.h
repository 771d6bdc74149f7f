/* A kit run's credentials (agentbox-kit(5) `credentials`): read from the host
 * when the run starts, kept in memory only, put into the box as environment
 * variables (through the config in memory) or as files on a tmpfs, and wiped. */
#ifndef AGENTBOX_KIT_SECRETS_H
#define AGENTBOX_KIT_SECRETS_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "kit.h"

struct kit_secrets {
	struct kit_secret *v;
	size_t n;
};

/* Read every credential of k now (the host's environment or a file). */
int kit_secrets_read(const struct kit *k, struct kit_secrets *s, struct ab_err *err);
/* Write the file credentials into the box's tmpfs, through /proc/PID/root,
 * before its program runs, owned by uid:gid: never a symlink, never a disk. */
int kit_secrets_write_files(const struct kit_secrets *s, pid_t pid, uid_t uid, gid_t gid,
			    struct ab_err *err);
/* Zero and free the values. */
void kit_secrets_wipe(struct kit_secrets *s);

#endif
