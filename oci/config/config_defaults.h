/* The parts of a default config.json that `agentbox spec` and kit build
 * (kit_build.c) both write, from one source: the standard file systems and
 * the paths masked or made read-only, as runc's template has them; the
 * deny-all device rule, namespaces and id mappings as both spell them. */
#ifndef AGENTBOX_OCI_CONFIG_DEFAULTS_H
#define AGENTBOX_OCI_CONFIG_DEFAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_out;

/* The mount objects of /proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys and
 * /sys/fs/cgroup, into the "mounts" array open on o. devpts_tty_group: give
 * new ptys group 5 (tty), which a rootless container may not have mapped. */
void oci_default_mounts(struct json_out *o, bool devpts_tty_group);
/* "maskedPaths" and "readonlyPaths", into the "linux" object open on o. */
void oci_default_paths(struct json_out *o);
/* "devices": no device allowed (those of the default mounts are the
 * runtime's to make), into the "resources" object open on o. */
void oci_default_device_rules(struct json_out *o);
/* key ("namespaces") with an object {"type": ...} for each of types. */
void oci_namespaces(struct json_out *o, const char *const *types, size_t n);
/* key ("uidMappings" or "gidMappings") with one mapping of size 1:
 * container_id inside is host_id outside. */
void oci_one_id_mapping(struct json_out *o, const char *key, uint32_t container_id, uint32_t host_id);

#endif
