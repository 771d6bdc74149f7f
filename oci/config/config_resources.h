/* config.json "linux.resources" (config_resources.c), for config.c and config_linux.c. */
#ifndef AGENTBOX_OCI_CONFIG_RESOURCES_H
#define AGENTBOX_OCI_CONFIG_RESOURCES_H

#include "config_types.h"

struct walk;
struct yajl_val_s;

int parse_resources(struct walk *w, struct yajl_val_s *v, struct oci_resources *r);

#endif
