/* config.json "mounts" (config_mounts.c): the parser, for config.c, and the
 * options parser its users share. */
#ifndef AGENTBOX_OCI_CONFIG_MOUNTS_H
#define AGENTBOX_OCI_CONFIG_MOUNTS_H

#include <stddef.h>

#include "config_types.h"
#include "error.h"

struct walk;
struct yajl_val_s;

/* One item of mounts[] (a WALK_LIST item parser; at: its struct oci_mount). */
int parse_mount(struct walk *w, struct yajl_val_s *v, void *at);

/* Derive flags, propagation, rec_attr_set/clr, data, ... of m from m->options and m->type
 * (oci_config_parse does this for every mount). `where` prefixes errors, e.g.
 * "config.json: mounts[3]" -> "config.json: mounts[3].options: conflicting ...". */
int oci_mount_parse_options(struct oci_mount *m, struct arena *arena, const char *where,
			    struct ab_err *err);

/* Where a mount's destination lies with respect to /proc, taken lexically
 * ("..", "//", "." resolved as text): outside it; /proc itself; one of the
 * files lxcfs emulates, which runc lets a mount cover (/proc/cpuinfo,
 * /proc/meminfo, ...); or anywhere else inside it, which runc refuses: a
 * mount there redirects what a runtime writes in /proc (CVE-2025-52881). */
enum oci_proc_dest { PROC_DEST_OUTSIDE, PROC_DEST_ROOT, PROC_DEST_OVERMOUNT, PROC_DEST_INSIDE };
enum oci_proc_dest oci_mount_proc_dest(const char *dest);
/* Those files, for messages. */
const char *oci_proc_overmounts_text(void);

#endif
