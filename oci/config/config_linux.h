/* config.json "linux" (config_linux.c): its parser, for config.c, and the
 * namespace helpers its users share. */
#ifndef AGENTBOX_OCI_CONFIG_LINUX_H
#define AGENTBOX_OCI_CONFIG_LINUX_H

#include <stddef.h>

#include "config_types.h"

struct walk;
struct yajl_val_s;

/* at: the struct oci_linux to fill (a walk_field parser) */
int parse_linux(struct walk *w, struct yajl_val_s *v, void *at);
/* One item of uidMappings / gidMappings, of the container or of one mount
 * (a WALK_LIST item parser; at: its struct oci_id_mapping). */
int parse_id_mapping(struct walk *w, struct yajl_val_s *v, void *at);

const struct oci_namespace *oci_namespace_find(const struct oci_config *c, enum oci_ns_kind kind);
const char *oci_ns_kind_name(enum oci_ns_kind kind);   /* "pid", "network", ... */
/* linux.memoryPolicy's modes and flags by index ("MPOL_BIND", ...); NULL past the last. */
const char *oci_mempolicy_mode_name(size_t i);
const char *oci_mempolicy_flag_name(size_t i);

#endif
