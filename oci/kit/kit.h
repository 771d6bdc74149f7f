/* Kits: a YAML definition of the box an agent runs in (see agentbox-kit(5)).
 *
 * kit_fields.c reads a kit strictly (unknown fields, wrong types and bad values
 * are errors naming FILE:LINE:COL and the field), kit_values.c the scalars in
 * it; kit_load.c resolves `extends` (maps merge, lists and scalars replace, null
 * removes); kit_show.c writes the effective kit back as YAML. kit_build.c turns
 * a kit into an OCI bundle: config.json plus the rootfs arrangement. Everything
 * a kit owns lives in its arena. */
#ifndef AGENTBOX_KIT_H
#define AGENTBOX_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "util.h"

struct image_config;
struct kit_ws_plan;

enum kit_rootfs { KIT_ROOTFS_HOST, KIT_ROOTFS_DIR, KIT_ROOTFS_IMAGE };

struct kit_mount {
	char *source;           /* absolute host path (bind) or NULL (tmpfs) */
	char *target;           /* absolute path in the box */
	bool tmpfs;
	bool readonly;          /* default true */
	uint64_t size;          /* tmpfs size in bytes, 0 = kernel default */
	char *size_text;
};

/* workspace_guard: what the box may leave behind that carries privilege or
 * runs on the host by itself (agentbox-kit(5), WORKSPACE) */
enum kit_ws_guard {
	KIT_WS_GUARD_QUARANTINE,        /* the default: refused while it runs, held back when it ends */
	KIT_WS_GUARD_OFF,
};

enum kit_cred_from { KIT_FROM_ENV, KIT_FROM_FILE };
enum kit_cred_to { KIT_TO_ENV, KIT_TO_FILE, KIT_TO_HEADER };

struct kit_credential {
	char *name;
	enum kit_cred_from from;
	char *from_ref;         /* the variable name, or an absolute host path */
	enum kit_cred_to to;
	char *to_path;          /* KIT_TO_FILE: absolute path in the box */
	/* KIT_TO_HEADER: the gateway puts it into requests to these hosts
	 * (netfilter/policy/credential.h); the box never sees it */
	char **hosts;           /* "api.github.com", "*.example.com" (lowercase) */
	size_t n_hosts;
	char *header;           /* "Authorization: Bearer {}" */
	char *placeholder_env;  /* a variable the box gets with a placeholder, or NULL */
};

struct kit_file {
	char *path;             /* absolute path in the box */
	char *content;          /* inline, or NULL */
	char *source;           /* absolute host path, or NULL */
	bool has_mode;
	uint32_t mode;
	bool has_owner;
	uint32_t uid, gid;
};

struct kit {
	struct arena arena;
	char *file;             /* the kit file as given (NULL for the built-in default) */
	char **chain;           /* files of the extends chain, base first, this kit last */
	size_t n_chain;

	char *name;
	enum kit_rootfs rootfs;
	char *rootfs_path;      /* DIR / IMAGE: absolute */
	char *rootfs_tag;       /* IMAGE; NULL: the layout's only image */
	char *image_root;       /* IMAGE: the unpacked root in the cache (kit_resolve_image) */
	struct image_config *image; /* IMAGE: what its config says (kit_resolve_image) */
	char *workspace;        /* absolute host path, NULL = none */
	char **ws_protect;      /* workspace_protect: relative paths made read-only */
	size_t n_ws_protect;
	char **ws_writable;     /* workspace_writable: default protections opened */
	size_t n_ws_writable;
	bool ws_allow_sensitive; /* workspace_allow_sensitive: home, "/" or secrets allowed */
	enum kit_ws_guard ws_guard; /* workspace_guard */
	char *upstream_ca;      /* PEM file: more CAs the gateway trusts upstream, or NULL */
	struct kit_mount *mounts;
	size_t n_mounts;
	struct oci_kv *env;     /* in order; later entries of the same name never occur */
	size_t n_env;
	struct kit_credential *credentials;
	size_t n_credentials;
	struct kit_file *files;
	size_t n_files;
	char **allow, **deny;   /* egress entries, one per item */
	char **deny_reasons;    /* n_deny of them, NULL where an entry has none */
	size_t n_allow, n_deny;
	char **internal;        /* address ranges allowed names may resolve into (kit run) */
	size_t n_internal;
	bool proxy;             /* network.proxy: the box's HTTP proxy and its variables (default true) */
	struct {
		bool has_memory, has_cpus, has_pids, has_timeout;
		int64_t memory;         /* bytes */
		uint64_t cpus_milli;    /* thousandths of a CPU */
		int64_t pids;
		int64_t timeout_ms;
		char *memory_text, *cpus_text, *timeout_text;
	} resources;
	bool has_user;
	uint32_t uid, gid;
	char *seccomp;          /* "agent" (default), "default" or "none" */
	char **capabilities;    /* "CAP_NET_BIND_SERVICE", ... */
	size_t n_capabilities;
	bool readonly_rootfs;   /* default true */
	bool readonly_rootfs_set; /* the kit says so (a named box's root is writable otherwise) */
	char **startup;
	size_t n_startup;
	char **command;
	size_t n_command;
};

/* Read the kit at path (and what it extends). */
int kit_load(const char *path, struct kit **ret, struct ab_err *err);
/* The same from text; `file` names it in errors and anchors its relative paths. */
int kit_parse(const char *text, size_t len, const char *file, struct kit **ret, struct ab_err *err);
/* The built-in kit of `kit run` without KIT: host rootfs, workspace (the current
 * directory when NULL), no network. */
struct kit *kit_default(const char *workspace);
void kit_free(struct kit *k);

struct kit_show_opts {
	bool rootless;          /* the box of a kit naming no user runs as root of the user's namespace */
	bool json;              /* one JSON object: {"files", "policy", "kit"} */
};
/* The effective kit as YAML, after a comment block with the policy it implies
 * (o may be NULL: rootful, text). Caller frees. */
int kit_show(const struct kit *k, const struct kit_show_opts *o, char **ret_text, struct ab_err *err);

/* A kit's name: letters, digits, "-", "_", "."; at most 63, starting with a
 * letter or digit. */
bool kit_name_valid(const char *s);

/* workspace_guard's values: "quarantine", "off" (-1 for anything else). */
int kit_ws_guard_parse(const char *s, enum kit_ws_guard *ret);
const char *kit_ws_guard_name(enum kit_ws_guard g);

/* Parse "256m", "2g", "1048576" (bytes; k/m/g/t are powers of 1024, an optional
 * trailing "b"/"ib"/"i" is accepted). */
int kit_parse_size(const char *s, int64_t *ret);
/* Parse "30s", "10m", "1h", "500ms", "90" (seconds). */
int kit_parse_duration_ms(const char *s, int64_t *ret);
/* Parse "1.5", "2", "0.25" as thousandths of a CPU. */
int kit_parse_cpus(const char *s, uint64_t *ret);

/* ---- building (kit_build.c) ---- */

/* Does the kit have a credential the gateway injects (to: header)? */
bool kit_has_header_credentials(const struct kit *k);

/* A credential's value, read at start time by kit run and never written out. */
struct kit_secret {
	const struct kit_credential *cred;
	char *value;
	size_t len;
};

struct kit_build_opts {
	const char *bundle;             /* output directory */
	const char *workspace;          /* overrides the kit's */
	const char *root_path;          /* root.path to write instead of the kit's rootfs
					 * (kit run: the overlay); NULL = the kit's */
	char **command;                 /* overrides the kit's command */
	size_t n_command;
	bool terminal;
	bool network;                   /* resolv.conf for slirp4netns (10.0.2.3) */
	bool egress_annotations;        /* write agentbox.egress.* annotations */
	const char *seccomp_profile;    /* annotation value; NULL = the kit's */
	const struct kit_secret *secrets; /* env credentials to put in process.env */
	size_t n_secrets;
	/* The workspace's protections (kit_workspace.h); NULL: kit_build_bundle
	 * plans them from what exists now. */
	const struct kit_ws_plan *ws_plan;
	bool allow_sensitive_workspace; /* --allow-sensitive-workspace */
	/* A named box (kit run --name): the home is part of its root, which is
	 * writable unless the kit says readonly_rootfs; then home_source (the
	 * home in the box's overlay) is bound there. */
	bool persistent;
	const char *home_source;
	/* The user the box runs as, when the caller has decided (a named box
	 * keeps its first run's); NULL: kit_effective_user. */
	const uint32_t *uid, *gid;
	/* An id-mapped workspace: the owner's files (ws_owner_uid:gid on disk)
	 * show as the box user's, and what the user writes lands as the
	 * owner's; the protections are bound from the mapped workspace. */
	bool ws_idmap;
	uint32_t ws_owner_uid, ws_owner_gid;
};

/* For an IMAGE rootfs: unpack the image into cache_dir (or find it there) and
 * note its root and config in k; nothing to do for other rootfs kinds. Needed
 * before kit_build_bundle and kit_config_json. */
int kit_resolve_image(struct kit *k, const char *cache_dir, struct ab_err *err);

/* Lay out the bundle directory (created if absent; a previous kit build in it is
 * replaced, any other non-empty directory refused): rootfs skeleton and curated
 * /etc for a host rootfs, the `files`, and config.json (without any secret). */
int kit_build_bundle(const struct kit *k, const struct kit_build_opts *o, struct ab_err *err);
/* The config.json text for k (malloc'd). With o->secrets their values are in
 * process.env: such text is for memory only. */
int kit_config_json(const struct kit *k, const struct kit_build_opts *o, char **ret_json,
		    struct ab_err *err);
/* The user the box runs as: the kit's, else the workspace owner when not root,
 * else 1000:1000 (kit_build_opts can say otherwise). */
void kit_effective_user(const struct kit *k, const char *workspace, uint32_t *uid, uint32_t *gid);
/* "/home/agent", or "/root" for uid 0. */
const char *kit_home(uint32_t uid);
/* Directories in the box that get a tmpfs of their own for file credentials
 * (those that are not a tmpfs already), for a box running as uid; strings in a. */
size_t kit_credential_dirs(const struct kit *k, uint32_t uid, struct arena *a, const char **ret,
			   size_t max);

#endif
