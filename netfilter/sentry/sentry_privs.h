/* The sentry's and its helpers' privileges (sentry_privs.c). */
#ifndef AGENTBOX_SENTRY_PRIVS_H
#define AGENTBOX_SENTRY_PRIVS_H

#include <sys/capability.h>

#include "error.h"

/* no_new_privs, every capability but keep[] dropped (bounding set too), not dumpable */
int sentry_drop_caps(const cap_value_t *keep, int n_keep, struct ab_err *err);
/* chroot into an empty read-only tmpfs */
int sentry_empty_root(struct ab_err *err);

#endif
