/* Rootless: the runtime run by a user who is not root of the host — directly
 * (agentbox run as a user, with a user namespace in the config) or by an
 * engine that made a user namespace for it first (rootless Podman runs its
 * runtime as uid 0 of the user's namespace). What changes then, as in runc and
 * crun: the state lives under the user's runtime directory, cgroups are used
 * only through a subtree delegated to the user, and nothing is made in
 * host-wide places (/run/agentbox-*). The agent policy does not change. */
#ifndef AGENTBOX_ROOTLESS_H
#define AGENTBOX_ROOTLESS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Not root in the initial user namespace: euid != 0, or any euid in a user
 * namespace of its own. Decided once. */
bool rootless_detect(void);

/* Where a rootless user's runtime directory is when the environment names
 * none of the user's (agentbox(8), FILES). */
#define ROOTLESS_FALLBACK_TMP "/tmp"

/* The user's runtime directory: $XDG_RUNTIME_DIR when it is a directory of
 * the user's; else /run/user/UID when that is the user's own (a login
 * session's, named or not), else /tmp/agentbox-UID, made 0700 and refused
 * unless it is a directory of the user's alone. Decided once per process,
 * so that it stays the user's after rootless_enter_userns. */
int rootless_user_runtime_dir(char *buf, size_t len, struct ab_err *err);

/* The default --root: /run/agentbox for root of the host (and for root of a
 * container's user namespace whose $USER is root, or that has no
 * $XDG_RUNTIME_DIR: a runtime inside a container); else
 * USER_RUNTIME_DIR/agentbox. Decided once, like the runtime directory; the
 * durable egress log's place follows it (deny_log.h). The returned string
 * is static. */
const char *rootless_default_state_root(struct ab_err *err);

/* Why this host refuses user namespaces to unprivileged users, as one
 * sentence saying what to change (a sysctl), or NULL when it does not say. */
const char *rootless_userns_refused(void);

/* Make the calling process root of a new user namespace of the user's, with
 * a mount namespace of its own (mounts made now stay in it): uid and gid 0
 * map to the user's own, 1 and up to the user's range in /etc/subuid and
 * /etc/subgid (written by newuidmap/newgidmap, as for a container's maps);
 * without a range, 0 alone, or (need_range: to run a box, which has ids
 * besides root's) an error saying how to give one. The same process goes on: no exit status or
 * signal to pass along. For commands that need root's powers over the
 * user's own files and mounts (agentbox kit, rootless). */
int rootless_enter_userns(bool need_range, struct ab_err *err);

#endif
