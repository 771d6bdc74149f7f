/* config.json "linux.resources" (config_resources.c), for config.c and config_linux.c. */
#ifndef AGENTBOX_OCI_CONFIG_RESOURCES_H
#define AGENTBOX_OCI_CONFIG_RESOURCES_H

#include "config_types.h"

struct walk;
struct yajl_val_s;

/* at: the struct oci_resources to fill (a walk_field parser) */
int parse_resources(struct walk *w, struct yajl_val_s *v, void *at);

#endif
