/* config.json (OCI runtime-spec 1.2, Linux): parse, load and free a config, a
 * process.json or an update's resources (config.c). The types are in
 * config_types.h; the "linux" object's helpers in config_linux.h, the mounts'
 * in config_mounts.h. */
#ifndef AGENTBOX_OCI_CONFIG_H
#define AGENTBOX_OCI_CONFIG_H

#include "config_types.h"
#include "error.h"

/* Parse and validate config.json text. `what` names the source in errors
 * ("config.json"). Errors name the JSON path: "config.json: linux.namespaces[2].type:
 * unknown namespace type \"foo\"". Unknown fields are errors. */
int oci_config_parse(const char *text, const char *what, struct oci_config **ret,
		     struct ab_err *err);
int oci_config_load(const char *path, struct oci_config **ret, struct ab_err *err);
void oci_config_free(struct oci_config *c);

/* A process.json (for exec): the "process" object on its own. */
int oci_process_parse(const char *text, const char *what, struct arena *arena,
		      struct oci_process **ret, struct ab_err *err);

/* linux.resources payload of `update` (the LinuxResources object on its own). */
int oci_resources_parse(const char *text, const char *what, struct arena *arena,
			struct oci_resources *ret, struct ab_err *err);

/* The value of annotation key, or NULL. */
const char *oci_annotation(const struct oci_config *c, const char *key);

#endif
