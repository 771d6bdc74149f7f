/* Capabilities: the bounding set, then the four process sets, raw syscalls so the
 * child allocates nothing. */
#ifndef AGENTBOX_CAPS_H
#define AGENTBOX_CAPS_H

#include <stdint.h>

#include "config.h"
#include "error.h"

/* Highest capability number the kernel knows. */
int caps_last_cap(void);
/* Drop every capability not in keep from the bounding set (needs CAP_SETPCAP). */
int caps_drop_bounding(uint64_t keep, struct ab_err *err);
/* Set effective/permitted/inheritable, then raise the ambient ones. */
int caps_set_process(const struct oci_capabilities *c, struct ab_err *err);

#endif
