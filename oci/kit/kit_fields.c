/* Kits: the fields of a kit mapping, read strictly (unknown fields, wrong
 * types and bad values are errors naming FILE:LINE:COL and the field). */
#include "kit_internal.h"
#include "egress.h"
#include "kit_workspace.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

static const char *const top_fields[] = {
	"name", "extends", "rootfs", "workspace", "workspace_protect", "workspace_writable",
	"workspace_allow_sensitive", "workspace_guard", "mounts", "env", "credentials", "files", "upstream_ca", "network", "resources",
	"user", "security", "startup", "command", NULL,
};

/* A list of strings copied into the kit's arena (the trees go away after loading). */
int kit_str_list_copy(struct arena *a, const struct yml_node *n, const char *path, char ***ret,
			 size_t *ret_n, struct ab_err *err)
{
	if (yml_get_str_list(a, n, path, ret, ret_n, err) < 0)
		return -1;
	for (size_t i = 0; i < *ret_n; i++)
		(*ret)[i] = arena_strdup(a, (*ret)[i]);
	return 0;
}

static int read_name(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	const char *s;
	if (yml_get_str(n, "name", &s, err) < 0)
		return -1;
	if (!kit_name_valid(s))
		return yml_error(err, n, "name", "\"%s\" is not a valid name (letters, digits, - _ . ; at most 63, starting with a letter or digit)", s);
	k->name = arena_strdup(&k->arena, s);
	return 0;
}

static int read_rootfs(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	if (n->kind == YML_MAP) {
		static const char *const fields[] = {"image", "tag", NULL};
		if (yml_check_map(n, "rootfs", fields, err) < 0)
			return -1;
		const struct yml_node *img = yml_map_get(n, "image"), *tag = yml_map_get(n, "tag");
		const char *s;
		if (!img || yml_is_null(img))
			return yml_error(err, n, "rootfs", "an image needs \"image\" (the OCI image layout directory)");
		if (yml_get_str(img, "rootfs.image", &s, err) < 0)
			return -1;
		k->rootfs = KIT_ROOTFS_IMAGE;
		k->rootfs_path = kit_host_path(a, img, s);
		k->rootfs_tag = NULL;
		if (tag && !yml_is_null(tag)) {
			if (yml_get_str(tag, "rootfs.tag", &s, err) < 0)
				return -1;
			if (!*s)
				return yml_error(err, tag, "rootfs.tag", "an empty tag");
			k->rootfs_tag = arena_strdup(a, s);
		}
		return 0;
	}
	const char *s;
	if (yml_get_str(n, "rootfs", &s, err) < 0)
		return -1;
	if (streq(s, "host")) {
		k->rootfs = KIT_ROOTFS_HOST;
		return 0;
	}
	char *p = kit_host_path(a, n, s);
	/* DIR:TAG naming an image layout, or a directory that is one */
	char *colon = strrchr(p, ':');
	struct stat st;
	char *layout = arena_printf(a, "%s/oci-layout", p);
	bool image = stat(layout, &st) == 0;
	if (image) {
		k->rootfs = KIT_ROOTFS_IMAGE;
		k->rootfs_path = p;
		k->rootfs_tag = NULL;
		return 0;
	}
	if (colon && colon[1] && !strchr(colon, '/')) {
		char *dir = arena_strndup(a, p, (size_t)(colon - p));
		if (stat(arena_printf(a, "%s/oci-layout", dir), &st) == 0) {
			k->rootfs = KIT_ROOTFS_IMAGE;
			k->rootfs_path = dir;
			k->rootfs_tag = arena_strdup(a, colon + 1);
			return 0;
		}
	}
	k->rootfs = KIT_ROOTFS_DIR;
	k->rootfs_path = p;
	return 0;
}

/* workspace_guard: quarantine or off */
static int read_ws_guard(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	const char *s;
	if (yml_get_str(n, "workspace_guard", &s, err) < 0)
		return -1;
	if (kit_ws_guard_parse(s, &k->ws_guard) < 0)
		return yml_error(err, n, "workspace_guard", "\"%s\": give quarantine or off", s);
	return 0;
}

/* workspace_protect / workspace_writable: paths relative to the workspace. */
static int read_ws_paths(struct kit *k, const struct yml_node *n, const char *field, char ***ret,
			 size_t *ret_n, struct ab_err *err)
{
	char **list;
	size_t len;
	if (kit_str_list_copy(&k->arena, n, field, &list, &len, err) < 0)
		return -1;
	if (len > KIT_MAX_ITEMS)
		return yml_error(err, n, field, "too many entries (at most %d)", KIT_MAX_ITEMS);
	bool writable = streq(field, "workspace_writable");
	for (size_t i = 0; i < len; i++) {
		char p[PATHBUF], norm[PATH_MAX];
		SUBPATH(p, "%s[%zu]", field, i);
		const char *why;
		if (kit_workspace_rel_path(list[i], norm, sizeof norm, &why) < 0)
			return yml_error(err, n->items[i], p, "\"%s\": %s", list[i], why);
		if (writable && !kit_workspace_default_name(norm))
			return yml_error(err, n->items[i], p, "\"%s\" is not protected by default (see agentbox-kit(5), "
					 "WORKSPACE; nothing to open)", list[i]);
		list[i] = arena_strdup(&k->arena, norm);
		for (size_t j = 0; j < i; j++)
			if (streq(list[j], list[i]))
				return yml_error(err, n->items[i], p, "%s is listed twice", list[i]);
	}
	*ret = list;
	*ret_n = len;
	return 0;
}

/* The items of a list of mappings (mounts, credentials, files): a sequence
 * of at most KIT_MAX_ITEMS, whose array (one more, zeroed) comes from the
 * kit's arena; NULL with err filled otherwise. */
static void *list_items(struct kit *k, const struct yml_node *n, const char *field, size_t size,
			struct ab_err *err)
{
	if (yml_expect(n, YML_SEQ, field, err) < 0)
		return NULL;
	if (n->n_items > KIT_MAX_ITEMS) {
		yml_error(err, n, field, "too many entries (at most %d)", KIT_MAX_ITEMS);
		return NULL;
	}
	return arena_alloc(&k->arena, (n->n_items + 1) * size);
}

/* Item i of such a list, a mapping of the given fields; its path "field[i]" into p. */
static int list_item(const struct yml_node *n, size_t i, const char *field, const char *const *fields,
		     char *p, size_t len, struct ab_err *err)
{
	snprintf(p, len, "%s[%zu]", field, i);
	return yml_check_map(n->items[i], p, fields, err);
}

/* Field key of mapping m (at path p), a string that must be there: its node
 * and text, and its path into fp; "<fp>: missing<why>" when absent. */
static int required_str(const struct yml_node *m, const char *p, const char *key, const char *why,
			char *fp, size_t fp_len, const struct yml_node **v, const char **s, struct ab_err *err)
{
	*v = yml_map_get(m, key);
	snprintf(fp, fp_len, "%s.%s", p, key);
	if (!*v || yml_is_null(*v))
		return yml_error(err, m, fp, "missing%s", why);
	return yml_get_str(*v, fp, s, err);
}

static int read_mounts(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"source", "target", "type", "readonly", "size", NULL};
	if (!(k->mounts = list_items(k, n, "mounts", sizeof *k->mounts, err)))
		return -1;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct yml_node *m = n->items[i];
		struct kit_mount *km = &k->mounts[i];
		char p[64], fp[PATHBUF];
		if (list_item(n, i, "mounts", fields, p, sizeof p, err) < 0)
			return -1;
		km->readonly = true;
		const struct yml_node *v;
		const char *s;
		if ((v = yml_map_get(m, "type")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.type", p);
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (streq(s, "tmpfs"))
				km->tmpfs = true;
			else if (!streq(s, "bind"))
				return yml_error(err, v, fp, "unknown type \"%s\" (bind or tmpfs)", s);
		}
		if (required_str(m, p, "target", "", fp, sizeof fp, &v, &s, err) < 0 ||
		    kit_box_path(a, v, fp, s, &km->target, err) < 0)
			return -1;
		if (streq(km->target, "/workspace") || kit_path_under(km->target, "/proc") ||
		    kit_path_under(km->target, "/sys") || kit_path_under(km->target, "/dev"))
			return yml_error(err, v, fp, "%s is reserved", km->target);
		v = yml_map_get(m, "source");
		SUBPATH(fp, "%s.source", p);
		if (km->tmpfs) {
			if (v && !yml_is_null(v))
				return yml_error(err, v, fp, "a tmpfs mount has no source");
		} else {
			if (!v || yml_is_null(v))
				return yml_error(err, m, fp, "missing (a bind mount needs a host path)");
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			km->source = kit_host_path(a, v, s);
		}
		if ((v = yml_map_get(m, "readonly")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.readonly", p);
			if (yml_get_bool(v, fp, &km->readonly, err) < 0)
				return -1;
		}
		if ((v = yml_map_get(m, "size")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.size", p);
			if (!km->tmpfs)
				return yml_error(err, v, fp, "only a tmpfs mount has a size");
			int64_t sz;
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (kit_parse_size(s, &sz) < 0 || sz <= 0)
				return yml_error(err, v, fp, "\"%s\" is not a size (like 64m or 1g)", s);
			km->size = (uint64_t)sz;
			km->size_text = arena_strdup(a, s);
		}
		for (size_t j = 0; j < i; j++)
			if (streq(k->mounts[j].target, km->target))
				return yml_error(err, m, p, "target %s is mounted twice", km->target);
	}
	k->n_mounts = n->n_items;
	return 0;
}

static int read_env(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	if (yml_expect(n, YML_MAP, "env", err) < 0)
		return -1;
	k->env = arena_alloc(a, (n->n_pairs + 1) * sizeof *k->env);
	k->n_env = 0;
	for (size_t i = 0; i < n->n_pairs; i++) {
		const struct yml_pair *pr = &n->pairs[i];
		char p[PATHBUF];
		SUBPATH(p, "env.%s", pr->key->str);
		if (!kit_env_name_valid(pr->key->str))
			return yml_error(err, pr->key, p, "not a valid variable name");
		if (yml_is_null(pr->value))
			continue;   /* unset (removes an inherited value) */
		const char *s;
		if (yml_get_str(pr->value, p, &s, err) < 0)
			return -1;
		k->env[k->n_env].key = arena_strdup(a, pr->key->str);
		k->env[k->n_env].value = arena_strdup(a, s);
		k->n_env++;
	}
	return 0;
}

static int read_credentials(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"name", "from", "to", "hosts", "header", "env", NULL};
	if (!(k->credentials = list_items(k, n, "credentials", sizeof *k->credentials, err)))
		return -1;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct yml_node *c = n->items[i];
		struct kit_credential *kc = &k->credentials[i];
		char p[64], fp[PATHBUF];
		if (list_item(n, i, "credentials", fields, p, sizeof p, err) < 0)
			return -1;
		const struct yml_node *v;
		const char *s;
		if (required_str(c, p, "name", "", fp, sizeof fp, &v, &s, err) < 0)
			return -1;
		if (!kit_env_name_valid(s))
			return yml_error(err, v, fp, "\"%s\" is not a valid name (letters, digits and _, not starting with a digit)", s);
		kc->name = arena_strdup(a, s);
		for (size_t j = 0; j < i; j++)
			if (streq(k->credentials[j].name, s))
				return yml_error(err, v, fp, "credential \"%s\" is defined twice", s);

		if (required_str(c, p, "from", " (env:VARIABLE or file:PATH)", fp, sizeof fp, &v, &s, err) < 0)
			return -1;
		if (strncmp(s, "env:", 4) == 0) {
			kc->from = KIT_FROM_ENV;
			if (!kit_env_name_valid(s + 4))
				return yml_error(err, v, fp, "\"%s\": not a valid variable name", s + 4);
			kc->from_ref = arena_strdup(a, s + 4);
		} else if (strncmp(s, "file:", 5) == 0 && s[5]) {
			kc->from = KIT_FROM_FILE;
			kc->from_ref = kit_host_path(a, v, s + 5);
		} else {
			return yml_error(err, v, fp, "\"%s\": expected env:VARIABLE or file:PATH", s);
		}

		kc->to = KIT_TO_ENV;
		v = yml_map_get(c, "to");
		SUBPATH(fp, "%s.to", p);
		if (v && !yml_is_null(v)) {
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (streq(s, "env")) {
				kc->to = KIT_TO_ENV;
			} else if (strncmp(s, "file:", 5) == 0) {
				kc->to = KIT_TO_FILE;
				if (kit_box_path(a, v, fp, s + 5, &kc->to_path, err) < 0)
					return -1;
				const char *last = strrchr(kc->to_path, '/');
				if (last == kc->to_path)
					return yml_error(err, v, fp, "%s: a credential file needs a directory of its own, not /", kc->to_path);
				if (kit_path_under(kc->to_path, "/workspace"))
					return yml_error(err, v, fp, "%s is in the workspace, which is on the host's disk", kc->to_path);
				if (kit_path_under(kc->to_path, "/proc") || kit_path_under(kc->to_path, "/sys") ||
				    kit_path_under(kc->to_path, "/dev"))
					return yml_error(err, v, fp, "%s is reserved", kc->to_path);
				for (size_t j = 0; j < i; j++)
					if (k->credentials[j].to == KIT_TO_FILE && streq(k->credentials[j].to_path, kc->to_path))
						return yml_error(err, v, fp, "%s is the file of credential \"%s\" already", kc->to_path, k->credentials[j].name);
			} else if (streq(s, "header")) {
				kc->to = KIT_TO_HEADER;
			} else {
				return yml_error(err, v, fp, "\"%s\": expected env, file:/PATH or header", s);
			}
		}
		if (kit_read_header_credential(k, c, p, kc, err) < 0)
			return -1;
	}
	k->n_credentials = n->n_items;
	return 0;
}

static int read_files(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"path", "content", "source", "mode", "owner", NULL};
	if (!(k->files = list_items(k, n, "files", sizeof *k->files, err)))
		return -1;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct yml_node *f = n->items[i];
		struct kit_file *kf = &k->files[i];
		char p[64], fp[PATHBUF];
		if (list_item(n, i, "files", fields, p, sizeof p, err) < 0)
			return -1;
		const struct yml_node *v;
		const char *s;
		if (required_str(f, p, "path", "", fp, sizeof fp, &v, &s, err) < 0 ||
		    kit_box_path(a, v, fp, s, &kf->path, err) < 0)
			return -1;
		if (kit_path_under(kf->path, "/proc") || kit_path_under(kf->path, "/sys") || kit_path_under(kf->path, "/dev") ||
		    kit_path_under(kf->path, "/workspace"))
			return yml_error(err, v, fp, "%s is reserved", kf->path);
		for (size_t j = 0; j < i; j++)
			if (streq(k->files[j].path, kf->path))
				return yml_error(err, v, fp, "%s is given twice", kf->path);
		const struct yml_node *c = yml_map_get(f, "content");
		const struct yml_node *src = yml_map_get(f, "source");
		if (c && yml_is_null(c))
			c = NULL;
		if (src && yml_is_null(src))
			src = NULL;
		if (!c == !src)
			return yml_error(err, f, p, "give exactly one of content and source");
		if (c) {
			SUBPATH(fp, "%s.content", p);
			if (yml_get_str(c, fp, &s, err) < 0)
				return -1;
			kf->content = arena_strdup(a, s);
		} else {
			SUBPATH(fp, "%s.source", p);
			if (yml_get_str(src, fp, &s, err) < 0)
				return -1;
			kf->source = kit_host_path(a, src, s);
		}
		if ((v = yml_map_get(f, "mode")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.mode", p);
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			size_t len = strlen(s);
			if (len < 3 || len > 4 || strspn(s, "01234567") != len)
				return yml_error(err, v, fp, "\"%s\" is not an octal mode like \"0644\"", s);
			unsigned long m = strtoul(s, NULL, 8);
			if (m & 07000)
				return yml_error(err, v, fp, "\"%s\": setuid, setgid and sticky bits are not allowed", s);
			kf->has_mode = true;
			kf->mode = (uint32_t)m;
		}
		if ((v = yml_map_get(f, "owner")) && !yml_is_null(v)) {
			SUBPATH(fp, "%s.owner", p);
			if (yml_get_str(v, fp, &s, err) < 0)
				return -1;
			if (kit_parse_user(s, &kf->uid, &kf->gid) < 0)
				return yml_error(err, v, fp, "\"%s\" is not UID:GID", s);
			kf->has_owner = true;
		}
	}
	k->n_files = n->n_items;
	return 0;
}

/* A deny item may be a mapping {entry: ..., reason: ...}: the reason is what
 * the agent is shown when the entry refuses something. */
static int read_deny_item(struct kit *k, const struct yml_node *item, const char *p, const char **ret_entry,
			  const char **ret_reason, struct ab_err *err)
{
	static const char *const fields[] = {"entry", "reason", NULL};
	*ret_reason = NULL;
	if (item->kind != YML_MAP) {
		if (yml_get_str(item, p, ret_entry, err) < 0)
			return -1;
		*ret_entry = arena_strdup(&k->arena, *ret_entry);
		return 0;
	}
	if (yml_check_map(item, p, fields, err) < 0)
		return -1;
	const struct yml_node *e = yml_map_get(item, "entry"), *r = yml_map_get(item, "reason");
	char sub[PATHBUF + 16];
	if (!e || yml_is_null(e))
		return yml_error(err, item, p, "an entry with a reason needs \"entry\"");
	if (!r || yml_is_null(r))
		return yml_error(err, item, p, "\"reason\" is missing (or write the entry as a plain string)");
	SUBPATH(sub, "%s.entry", p);
	if (yml_get_str(e, sub, ret_entry, err) < 0)
		return -1;
	SUBPATH(sub, "%s.reason", p);
	if (yml_get_str(r, sub, ret_reason, err) < 0)
		return -1;
	size_t n = strlen(*ret_reason);
	bool ok = n > 0 && n <= EGRESS_REASON_MAX;
	for (size_t i = 0; i < n && ok; i++)
		ok = (unsigned char)(*ret_reason)[i] >= 0x20 && (*ret_reason)[i] != 0x7f;
	if (!ok)
		return yml_error(err, r, sub, "a reason is 1 to %d bytes of text on one line, without control characters",
				 EGRESS_REASON_MAX);
	*ret_entry = arena_strdup(&k->arena, *ret_entry);
	*ret_reason = arena_strdup(&k->arena, *ret_reason);
	return 0;
}

static int read_egress_list(struct kit *k, const struct yml_node *n, bool deny, struct ab_err *err)
{
	const char *path = deny ? "network.deny" : "network.allow";
	char **list, **reasons = NULL;
	size_t len;
	if (!deny && kit_str_list_copy(&k->arena, n, path, &list, &len, err) < 0)
		return -1;
	if (deny) {
		if (yml_expect(n, YML_SEQ, path, err) < 0)
			return -1;
		len = n->n_items;
		list = arena_alloc(&k->arena, (len + 1) * sizeof *list);
		reasons = arena_alloc(&k->arena, (len + 1) * sizeof *reasons);
	}
	if (len > EGRESS_MAX_ENTRIES)
		return yml_error(err, n, path, "too many entries (at most %d)", EGRESS_MAX_ENTRIES);
	for (size_t i = 0; i < len; i++) {
		const struct yml_node *item = n->items[i];
		char p[PATHBUF];
		SUBPATH(p, "%s[%zu]", path, i);
		if (deny) {
			const char *entry, *reason;
			if (read_deny_item(k, item, p, &entry, &reason, err) < 0)
				return -1;
			list[i] = (char *)entry;
			reasons[i] = (char *)reason;
			if (item->kind == YML_MAP)
				item = yml_map_get(item, "entry");
		}
		if (strchr(list[i], ','))
			return yml_error(err, item, p, "one entry per item (\"%s\" has a comma)", list[i]);
		if (streq(list[i], "all"))
			return yml_error(err, item, p, "\"all\" is not an entry: a kit cannot turn the firewall off");
		struct egress_policy tmp = {0};
		char src[PATH_MAX + PATHBUF];
		snprintf(src, sizeof src, "%s:%u:%u: %s", item->file ? item->file : "kit", item->line, item->col, p);
		int r = egress_policy_add(&tmp, list[i], deny, src, err);
		egress_policy_free(&tmp);
		if (r < 0)
			return -1;
	}
	if (deny) {
		k->deny = list;
		k->deny_reasons = reasons;
		k->n_deny = len;
	} else {
		k->allow = list;
		k->n_allow = len;
	}
	return 0;
}

/* network.internal: address ranges, as --egress-internal takes them */
static int read_internal(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	const char *path = "network.internal";
	if (kit_str_list_copy(&k->arena, n, path, &k->internal, &k->n_internal, err) < 0)
		return -1;
	for (size_t i = 0; i < k->n_internal; i++) {
		const struct yml_node *item = n->items[i];
		char p[PATHBUF], src[PATH_MAX + PATHBUF];
		SUBPATH(p, "%s[%zu]", path, i);
		snprintf(src, sizeof src, "%s:%u:%u: %s", item->file ? item->file : "kit", item->line, item->col, p);
		struct egress_policy tmp = {0};
		int r = strchr(k->internal[i], ',')
				? yml_error(err, item, p, "one range per item (\"%s\" has a comma)", k->internal[i])
				: egress_policy_add_internal(&tmp, k->internal[i], src, err);
		egress_policy_free(&tmp);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int read_network(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	static const char *const fields[] = {"allow", "deny", "internal", "proxy", NULL};
	if (yml_check_map(n, "network", fields, err) < 0)
		return -1;
	const struct yml_node *v;
	if ((v = yml_map_get(n, "internal")) && !yml_is_null(v) && read_internal(k, v, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "proxy")) && !yml_is_null(v) && yml_get_bool(v, "network.proxy", &k->proxy, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "allow")) && !yml_is_null(v) && read_egress_list(k, v, false, err) < 0)
		return -1;
	if ((v = yml_map_get(n, "deny")) && !yml_is_null(v) && read_egress_list(k, v, true, err) < 0)
		return -1;
	return 0;
}

static int read_resources(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"memory", "cpus", "pids", "timeout", NULL};
	if (yml_check_map(n, "resources", fields, err) < 0)
		return -1;
	const struct yml_node *v;
	const char *s;
	if ((v = yml_map_get(n, "memory")) && !yml_is_null(v)) {
		if (yml_get_str(v, "resources.memory", &s, err) < 0)
			return -1;
		if (kit_parse_size(s, &k->resources.memory) < 0)
			return yml_error(err, v, "resources.memory", "\"%s\" is not a size (like 256m or 2g)", s);
		if (k->resources.memory < (4 << 20))
			return yml_error(err, v, "resources.memory", "%s is below the minimum of 4m", s);
		k->resources.has_memory = true;
		k->resources.memory_text = arena_strdup(a, s);
	}
	if ((v = yml_map_get(n, "cpus")) && !yml_is_null(v)) {
		if (yml_get_str(v, "resources.cpus", &s, err) < 0)
			return -1;
		if (kit_parse_cpus(s, &k->resources.cpus_milli) < 0)
			return yml_error(err, v, "resources.cpus", "\"%s\" is not a number of CPUs (like 1.5; 0.001 to 1024)", s);
		k->resources.has_cpus = true;
		k->resources.cpus_text = arena_strdup(a, s);
	}
	if ((v = yml_map_get(n, "pids")) && !yml_is_null(v)) {
		if (yml_get_int(v, "resources.pids", 1, 4194304, &k->resources.pids, err) < 0)
			return -1;
		k->resources.has_pids = true;
	}
	if ((v = yml_map_get(n, "timeout")) && !yml_is_null(v)) {
		if (yml_get_str(v, "resources.timeout", &s, err) < 0)
			return -1;
		if (kit_parse_duration_ms(s, &k->resources.timeout_ms) < 0)
			return yml_error(err, v, "resources.timeout", "\"%s\" is not a duration (like 30s, 10m, 1h or 500ms; at most 596h)", s);
		k->resources.has_timeout = true;
		k->resources.timeout_text = arena_strdup(a, s);
	}
	return 0;
}

static int read_security(struct kit *k, const struct yml_node *n, struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const fields[] = {"seccomp", "capabilities", "readonly_rootfs", NULL};
	if (yml_check_map(n, "security", fields, err) < 0)
		return -1;
	const struct yml_node *v;
	const char *s;
	if ((v = yml_map_get(n, "seccomp")) && !yml_is_null(v)) {
		if (yml_get_str(v, "security.seccomp", &s, err) < 0)
			return -1;
		if (!streq(s, "agent") && !streq(s, "default") && !streq(s, "none"))
			return yml_error(err, v, "security.seccomp", "unknown profile \"%s\" (agent, default or none)", s);
		k->seccomp = arena_strdup(a, s);
	}
	if ((v = yml_map_get(n, "capabilities")) && !yml_is_null(v)) {
		char **list;
		size_t len;
		if (yml_get_str_list(a, v, "security.capabilities", &list, &len, err) < 0)
			return -1;
		for (size_t i = 0; i < len; i++) {
			char p[PATHBUF], name[64];
			SUBPATH(p, "security.capabilities[%zu]", i);
			const char *c = list[i];
			if (strncasecmp(c, "CAP_", 4) == 0)
				c += 4;
			if (strlen(c) > 40)
				return yml_error(err, v->items[i], p, "unknown capability \"%s\"", list[i]);
			size_t o = (size_t)snprintf(name, sizeof name, "cap_");
			for (const char *q = c; *q; q++)
				name[o++] = (char)tolower((unsigned char)*q);
			name[o] = 0;
			cap_value_t cv;
			if (cap_from_name(name, &cv) < 0)
				return yml_error(err, v->items[i], p, "unknown capability \"%s\"", list[i]);
			for (char *q = name; *q; q++)
				*q = (char)toupper((unsigned char)*q);
			list[i] = arena_strdup(a, name);
			for (size_t j = 0; j < i; j++)
				if (streq(list[j], list[i]))
					return yml_error(err, v->items[i], p, "%s is listed twice", list[i]);
		}
		k->capabilities = list;
		k->n_capabilities = len;
	}
	if ((v = yml_map_get(n, "readonly_rootfs")) && !yml_is_null(v)) {
		if (yml_get_bool(v, "security.readonly_rootfs", &k->readonly_rootfs, err) < 0)
			return -1;
		k->readonly_rootfs_set = true;
	}
	return 0;
}

/* Fill k from a mapping (after extends). Absent and null fields keep defaults. */
int kit_from_tree(struct kit *k, const struct yml_node *root, struct ab_err *err)
{
	struct arena *a = &k->arena;
	if (yml_check_map(root, NULL, top_fields, err) < 0)
		return -1;
	k->rootfs = KIT_ROOTFS_HOST;
	k->readonly_rootfs = true;
	k->seccomp = arena_strdup(a, "agent");
	for (size_t i = 0; i < root->n_pairs; i++) {
		const char *key = root->pairs[i].key->str;
		const struct yml_node *v = root->pairs[i].value;
		if (yml_is_null(v))
			continue;
		int r = 0;
		const char *s;
		if (streq(key, "name")) {
			r = read_name(k, v, err);
		} else if (streq(key, "extends")) {
			r = yml_get_str(v, "extends", &s, err);   /* followed by the loader */
		} else if (streq(key, "rootfs")) {
			r = read_rootfs(k, v, err);
		} else if (streq(key, "workspace")) {
			if ((r = yml_get_str(v, "workspace", &s, err)) == 0)
				k->workspace = kit_host_path(a, v, s);
		} else if (streq(key, "workspace_protect")) {
			r = read_ws_paths(k, v, key, &k->ws_protect, &k->n_ws_protect, err);
		} else if (streq(key, "workspace_writable")) {
			r = read_ws_paths(k, v, key, &k->ws_writable, &k->n_ws_writable, err);
		} else if (streq(key, "workspace_allow_sensitive")) {
			r = yml_get_bool(v, key, &k->ws_allow_sensitive, err);
		} else if (streq(key, "workspace_guard")) {
			r = read_ws_guard(k, v, err);
		} else if (streq(key, "mounts")) {
			r = read_mounts(k, v, err);
		} else if (streq(key, "env")) {
			r = read_env(k, v, err);
		} else if (streq(key, "credentials")) {
			r = read_credentials(k, v, err);
		} else if (streq(key, "files")) {
			r = read_files(k, v, err);
		} else if (streq(key, "upstream_ca")) {
			if ((r = yml_get_str(v, "upstream_ca", &s, err)) == 0)
				k->upstream_ca = kit_host_path(a, v, s);
		} else if (streq(key, "network")) {
			r = read_network(k, v, err);
		} else if (streq(key, "resources")) {
			r = read_resources(k, v, err);
		} else if (streq(key, "user")) {
			if ((r = yml_get_str(v, "user", &s, err)) == 0) {
				if (kit_parse_user(s, &k->uid, &k->gid) < 0)
					r = yml_error(err, v, "user", "\"%s\" is not UID or UID:GID (numbers)", s);
				k->has_user = true;
			}
		} else if (streq(key, "security")) {
			r = read_security(k, v, err);
		} else if (streq(key, "startup")) {
			r = kit_str_list_copy(a, v, "startup", &k->startup, &k->n_startup, err);
		} else if (streq(key, "command")) {
			r = kit_str_list_copy(a, v, "command", &k->command, &k->n_command, err);
			if (r == 0 && k->n_command == 0)
				r = yml_error(err, v, "command", "empty (leave it out for the default /bin/sh)");
		}
		if (r < 0)
			return -1;
	}
	/* cross-field checks */
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		if (c->to != KIT_TO_FILE)
			continue;
		for (size_t j = 0; j < k->n_mounts; j++)
			if (!k->mounts[j].tmpfs && kit_path_under(c->to_path, k->mounts[j].target)) {
				const struct yml_node *cn = yml_map_get(root, "credentials");
				return yml_error(err, cn && cn->kind == YML_SEQ && i < cn->n_items ? cn->items[i] : root,
						 "credentials", "%s is inside the bind mount %s, which is on the host's disk",
						 c->to_path, k->mounts[j].target);
			}
	}
	return 0;
}