/* The user namespace of an id mapping (idmap.c), for id-mapped mounts
 * (mount_trees.c) and kit run's probe of a workspace (kit_idmap.c). */
#ifndef AGENTBOX_IDMAP_H
#define AGENTBOX_IDMAP_H

#include <stddef.h>

#include "config.h"
#include "error.h"

/* A user namespace with these mappings ("containerID hostID size"), as an fd
 * for MOUNT_ATTR_IDMAP. */
int idmap_userns(const struct oci_id_mapping *uids, size_t n_uids, const struct oci_id_mapping *gids,
		 size_t n_gids, struct ab_err *err);

#endif
