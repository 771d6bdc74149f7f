/* config.json "linux.seccomp" (config_seccomp.c), for config_linux.c. */
#ifndef AGENTBOX_OCI_CONFIG_SECCOMP_H
#define AGENTBOX_OCI_CONFIG_SECCOMP_H

#include "config_types.h"

struct walk;
struct yajl_val_s;

/* at: the struct oci_seccomp * to set (a walk_field parser) */
int parse_seccomp(struct walk *w, struct yajl_val_s *v, void *at);

#endif
