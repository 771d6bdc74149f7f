/* What the files of the kit reader share (kit_values.c, kit_fields.c,
 * kit_load.c, kit_show.c); not for use outside oci/kit*.c. */
#ifndef AGENTBOX_KIT_INTERNAL_H
#define AGENTBOX_KIT_INTERNAL_H

#include "kit.h"
#include "yml.h"

#define KIT_MAX_ITEMS 4096

/* A field's path in errors, like "mounts[2].target". */
#define PATHBUF 256
#define SUBPATH(buf, ...) snprintf((buf), sizeof(buf), __VA_ARGS__)

/* ---- kit_values.c: paths and scalar values ---- */

/* Lexically normalise an absolute path: no "//", ".", trailing "/"; ".." pops. */
char *kit_normalize_abs(struct arena *a, const char *path);
/* A host path as written in a kit: relative to the directory of the kit file
 * the node came from. */
char *kit_host_path(struct arena *a, const struct yml_node *n, const char *text);
/* A path inside the box: absolute, no "." or ".." components, not "/". */
int kit_box_path(struct arena *a, const struct yml_node *n, const char *path, const char *text,
		 char **ret, struct ab_err *err);
bool kit_path_under(const char *path, const char *dir);
bool kit_env_name_valid(const char *s);
/* "UID" or "UID:GID", decimal. */
int kit_parse_user(const char *s, uint32_t *uid, uint32_t *gid);

/* ---- kit_fields.c: the fields of one mapping ---- */

/* A list of strings copied into the kit's arena (the trees go away after loading). */
int kit_str_list_copy(struct arena *a, const struct yml_node *n, const char *path, char ***ret,
		      size_t *ret_n, struct ab_err *err);
/* Fill k from a mapping (after extends). Absent and null fields keep defaults. */
int kit_from_tree(struct kit *k, const struct yml_node *root, struct ab_err *err);

/* ---- kit_credentials.c: a `to: header` credential's fields ---- */

/* hosts, header and env of kc at path p (and none of them unless it is to: header) */
int kit_read_header_credential(struct kit *k, const struct yml_node *c, const char *p, struct kit_credential *kc,
			       struct ab_err *err);
/* kit show: those fields into the credential's mapping e */
void kit_show_header_credential(struct arena *a, struct yml_node *e, const struct kit_credential *c);
const char *kit_unreachable_credentials(struct arena *a, const struct kit *k);

/* ---- kit_load.c ---- */

/* An empty kit with the defaults. */
struct kit *kit_new(void);

#endif
