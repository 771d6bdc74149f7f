/* Id-mapped mounts: made by the runtime before clone (idmap.c), attached by
 * the init (mounts.c). */
#ifndef AGENTBOX_IDMAP_H
#define AGENTBOX_IDMAP_H

#include "config.h"
#include "error.h"

/* For each mount of c that is id-mapped, a detached, id-mapped tree of its
 * source (an fd >= min_fd, close-on-exec); *ret_fds has one entry a mount,
 * -1 for the others, or is NULL when no mount is id-mapped. */
int idmap_prepare(const struct oci_config *c, const char *bundle, int min_fd, int **ret_fds,
		  struct ab_err *err);
void idmap_close(const struct oci_config *c, int *fds);
/* A user namespace with these mappings ("containerID hostID size"), as an fd
 * for MOUNT_ATTR_IDMAP (also kit run's probe of a workspace, kit_idmap.c). */
int idmap_userns(const struct oci_id_mapping *uids, size_t n_uids, const struct oci_id_mapping *gids,
		 size_t n_gids, struct ab_err *err);
/* Attach the tree on target (an O_PATH fd of the mount point). */
int idmap_attach(int tree, int target, const char *dest, struct ab_err *err);

#endif
