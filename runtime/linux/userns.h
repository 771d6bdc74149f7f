/* User namespaces as the runtime meets them: whether it runs in the initial one
 * (root there is root of the host), and what an id of a process' namespace is in
 * the runtime's own. */
#ifndef AGENTBOX_USERNS_H
#define AGENTBOX_USERNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* True when the calling process is in the initial user namespace (its uid_map is
 * the identity over all ids). Read once. */
bool userns_is_initial(void);

/* True when pid is in the caller's user namespace. */
bool userns_same_as_self(pid_t pid);

/* The id (uid or gid, gid_map when gid) of pid's user namespace as an id of the
 * caller's: itself when pid shares the caller's namespace, else through
 * /proc/PID/uid_map (or gid_map), whose outside ids the kernel gives in the
 * reader's namespace. An id the map does not hold is an error naming it. */
int userns_id_in_self(pid_t pid, bool gid, uint32_t id, uint32_t *ret, struct ab_err *err);

struct oci_id_mapping;

/* Write the uid and gid maps of pid's new user namespace. Root of the host
 * writes them itself. A runtime without that right (rootless) writes a map
 * of its own id alone itself (setgroups denied first for the gid map, as the
 * kernel requires), and any other through the setuid helpers newuidmap and
 * newgidmap (package uidmap), which check /etc/subuid and /etc/subgid; a
 * gid map newgidmap writes leaves setgroups allowed. Errors name the config
 * field and what to change. */
int userns_write_maps(pid_t pid, const struct oci_id_mapping *uids, size_t n_uids,
		      const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err);

#endif
