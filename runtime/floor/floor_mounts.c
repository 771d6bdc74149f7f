/* Mounts inside /proc: see floor_mounts.h. */
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>

#include "config_mounts.h"
#include "floor_mounts.h"
#include "test_hooks.h"
#include "util.h"

int floor_proc_mounts(const struct oci_config *c, struct ab_err *err)
{
	/* tests/security shows the attacks working this way first (procfs.h) */
	if (test_hook("AGENTBOX_TEST_PROC_BY_PATH"))
		return 0;
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct oci_mount *m = &c->mounts[i];
		const char *type = m->type ? m->type : "";
		bool bind = (m->flags & MS_BIND) || streq(type, "bind");
		switch (oci_mount_proc_dest(m->destination)) {
		case PROC_DEST_OUTSIDE:
		case PROC_DEST_OVERMOUNT:
			break;
		case PROC_DEST_ROOT: {
			/* as runc: a procfs, or a bind of one (the floor refuses the
			 * host's: floor.c) */
			struct statfs sf;
			if (!bind && streq(type, "proc"))
				break;
			if (bind && m->source && statfs(m->source, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC)
				break;
			return ab_error(err, 0, "config.json: mounts[%zu]: /proc must be a proc file system (type proc, or a bind of one), not %s: refused",
					i, bind ? "a bind of another" : type);
		}
		case PROC_DEST_INSIDE:
			return ab_error(err, 0, "config.json: mounts[%zu]: destination %s is inside /proc: refused (a mount may cover only %s)",
					i, m->destination, oci_proc_overmounts_text());
		}
	}
	return 0;
}
