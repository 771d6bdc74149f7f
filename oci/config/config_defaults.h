/* The parts of a default config.json that `agentbox spec` and kit build
 * (kit_build.c) both write, from one source: the standard file systems and
 * the paths masked or made read-only, as runc's template has them. */
#ifndef AGENTBOX_OCI_CONFIG_DEFAULTS_H
#define AGENTBOX_OCI_CONFIG_DEFAULTS_H

#include <stdbool.h>

struct json_out;

/* The mount objects of /proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys and
 * /sys/fs/cgroup, into the "mounts" array open on o. devpts_tty_group: give
 * new ptys group 5 (tty), which a rootless container may not have mapped. */
void oci_default_mounts(struct json_out *o, bool devpts_tty_group);
/* "maskedPaths" and "readonlyPaths", into the "linux" object open on o. */
void oci_default_paths(struct json_out *o);

#endif
