#include "kit_idmap.h"
#include "idmap.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/* Can ws be id-mapped (owner -> user)? Asked by making the very tree the
 * workspace's mount ("rbind", "idmap") will take: kept for it (idmap.h), so
 * the probe costs nothing more when it succeeds. 0, or the errno. */
static int probe(const char *ws, const struct oci_id_mapping *u, const struct oci_id_mapping *g)
{
	struct ab_err e = {0};
	if (idmap_tree_prepare(ws, IDMAP_TREE_RECURSIVE_BIND, u, 1, g, 1, &e) < 0)
		return e.code ? e.code : EPERM;
	return 0;
}

static const char *fs_name(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) < 0)
		return "its file system";
	switch ((unsigned long)sf.f_type) {
	case NFS_SUPER_MAGIC: return "nfs";
	case RAMFS_MAGIC: return "ramfs";
	case FUSE_SUPER_MAGIC: return "fuse";
	case SMB_SUPER_MAGIC: return "smb";
	case 0xFE534D42: return "smb2";
	case 0xFF534D42: return "cifs";
	case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
	default: return "its file system";
	}
}

int kit_idmap_workspace(const char *ws, uint32_t uid, uint32_t gid, struct kit_build_opts *o,
			struct ab_err *err)
{
	struct stat st;
	if (stat(ws, &st) < 0)
		return ab_error(err, errno, "workspace %s", ws);
	o->ws_idmap = false;
	if (st.st_uid == uid && st.st_gid == gid)
		return 0;
	struct oci_id_mapping u = {.container_id = st.st_uid, .host_id = uid, .size = 1};
	struct oci_id_mapping g = {.container_id = st.st_gid, .host_id = gid, .size = 1};
	int e = probe(ws, &u, &g);
	if (e) {
		log_warn("kit: workspace %s: %s cannot be id-mapped here (%s); the box's user %u:%u writes it with its "
			 "own permissions, not as its owner %u:%u", ws, fs_name(ws), strerror(e), uid, gid,
			 (unsigned)st.st_uid, (unsigned)st.st_gid);
		return 0;
	}
	o->ws_idmap = true;
	o->ws_owner_uid = st.st_uid;
	o->ws_owner_gid = st.st_gid;
	return 0;
}
