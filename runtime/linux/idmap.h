/* The user namespace of an id mapping and the id-mapped tree made with it
 * (idmap.c), for id-mapped mounts (mount_trees.c) and kit run's probe of a
 * workspace (kit_idmap.c). */
#ifndef AGENTBOX_IDMAP_H
#define AGENTBOX_IDMAP_H

#include <stddef.h>

#include "config.h"
#include "error.h"

/* A user namespace with these mappings ("containerID hostID size"), as an fd
 * for MOUNT_ATTR_IDMAP. */
int idmap_userns(const struct oci_id_mapping *uids, size_t n_uids, const struct oci_id_mapping *gids,
		 size_t n_gids, struct ab_err *err);

#define IDMAP_TREE_RECURSIVE_BIND 1u    /* the clone takes the mounts below src ("rbind") */
#define IDMAP_TREE_RECURSIVE_IDMAP 2u   /* and they are id-mapped too ("ridmap") */

/* A detached clone of src (open_tree), id-mapped with these mappings: an fd
 * to attach with move_mount, or -1 with the reason (err->code EINVAL, EPERM
 * or ENOSYS where the kernel or the file system cannot id-map it). Gives the
 * tree idmap_tree_prepare made for the same src, flags and mappings, if any,
 * instead of making another. */
int idmap_tree(const char *src, unsigned flags, const struct oci_id_mapping *uids, size_t n_uids,
	       const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err);

/* Make that tree now and keep it for the mount that will ask for it: kit
 * run's probe of whether its workspace can be id-mapped is the very tree its
 * workspace mount needs (one user namespace and clone, not two). A later
 * prepare replaces what was kept; a tree never asked for goes at exit. */
int idmap_tree_prepare(const char *src, unsigned flags, const struct oci_id_mapping *uids, size_t n_uids,
		       const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err);

#endif
