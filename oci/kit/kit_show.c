/* Kits: `kit show`, the effective kit written back as YAML after a comment
 * block with the policy it implies; or both as one JSON object. */
#include "kit_internal.h"
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct yml_node *str_list(struct arena *a, char **v, size_t n)
{
	struct yml_node *s = yml_new_seq(a);
	for (size_t i = 0; i < n; i++)
		yml_seq_add(a, s, yml_new_str(a, v[i]));
	return s;
}

static void join(char *buf, size_t len, char **v, size_t n, const char *none)
{
	size_t off = 0;
	buf[0] = 0;
	if (n == 0)
		snprintf(buf, len, "%s", none);
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", v[i]);
}

static void add_rootfs(struct arena *a, struct yml_node *root, const struct kit *k)
{
	if (k->rootfs == KIT_ROOTFS_IMAGE) {
		struct yml_node *r = yml_new_map(a);
		yml_map_add(a, r, "image", yml_new_str(a, k->rootfs_path));
		if (k->rootfs_tag)
			yml_map_add(a, r, "tag", yml_new_str(a, k->rootfs_tag));
		yml_map_add(a, root, "rootfs", r);
	} else {
		yml_map_add(a, root, "rootfs", yml_new_str(a, k->rootfs == KIT_ROOTFS_HOST ? "host" : k->rootfs_path));
	}
}

/* workspace, upstream_ca, and the workspace's protections */
static void add_workspace(struct arena *a, struct yml_node *root, const struct kit *k)
{
	if (k->workspace)
		yml_map_add(a, root, "workspace", yml_new_str(a, k->workspace));
	if (k->upstream_ca)
		yml_map_add(a, root, "upstream_ca", yml_new_str(a, k->upstream_ca));
	if (k->n_ws_protect)
		yml_map_add(a, root, "workspace_protect", str_list(a, k->ws_protect, k->n_ws_protect));
	if (k->n_ws_writable)
		yml_map_add(a, root, "workspace_writable", str_list(a, k->ws_writable, k->n_ws_writable));
	if (k->ws_allow_sensitive)
		yml_map_add(a, root, "workspace_allow_sensitive", yml_new_plain(a, "true"));
	if (k->ws_guard != KIT_WS_GUARD_QUARANTINE)
		yml_map_add(a, root, "workspace_guard", yml_new_plain(a, kit_ws_guard_name(k->ws_guard)));
}

static struct yml_node *mounts_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *s = yml_new_seq(a);
	for (size_t i = 0; i < k->n_mounts; i++) {
		const struct kit_mount *m = &k->mounts[i];
		struct yml_node *e = yml_new_map(a);
		if (m->source)
			yml_map_add(a, e, "source", yml_new_str(a, m->source));
		yml_map_add(a, e, "target", yml_new_str(a, m->target));
		yml_map_add(a, e, "type", yml_new_str(a, m->tmpfs ? "tmpfs" : "bind"));
		yml_map_add(a, e, "readonly", yml_new_plain(a, m->readonly ? "true" : "false"));
		if (m->size_text)
			yml_map_add(a, e, "size", yml_new_str(a, m->size_text));
		yml_seq_add(a, s, e);
	}
	return s;
}

static struct yml_node *env_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *e = yml_new_map(a);
	for (size_t i = 0; i < k->n_env; i++)
		yml_map_add(a, e, k->env[i].key, yml_new_str(a, k->env[i].value));
	return e;
}

static struct yml_node *credentials_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *s = yml_new_seq(a);
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		struct yml_node *e = yml_new_map(a);
		yml_map_add(a, e, "name", yml_new_str(a, c->name));
		yml_map_add(a, e, "from", yml_new_str(a, arena_printf(a, "%s:%s", c->from == KIT_FROM_ENV ? "env" : "file", c->from_ref)));
		yml_map_add(a, e, "to", yml_new_str(a, c->to == KIT_TO_ENV ? "env" : c->to == KIT_TO_HEADER ? "header" : arena_printf(a, "file:%s", c->to_path)));
		kit_show_header_credential(a, e, c);
		yml_seq_add(a, s, e);
	}
	return s;
}

static struct yml_node *files_tree(struct arena *a, const struct kit *k)
{
	char buf[128];
	struct yml_node *s = yml_new_seq(a);
	for (size_t i = 0; i < k->n_files; i++) {
		const struct kit_file *f = &k->files[i];
		struct yml_node *e = yml_new_map(a);
		yml_map_add(a, e, "path", yml_new_str(a, f->path));
		if (f->content)
			yml_map_add(a, e, "content", yml_new_str(a, f->content));
		else
			yml_map_add(a, e, "source", yml_new_str(a, f->source));
		if (f->has_mode) {
			snprintf(buf, sizeof buf, "%04o", f->mode);
			yml_map_add(a, e, "mode", yml_new_str(a, buf));
		}
		if (f->has_owner) {
			snprintf(buf, sizeof buf, "%u:%u", f->uid, f->gid);
			yml_map_add(a, e, "owner", yml_new_str(a, buf));
		}
		yml_seq_add(a, s, e);
	}
	return s;
}

/* allow and deny; a deny entry with a reason as {entry, reason} */
static struct yml_node *network_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *net = yml_new_map(a);
	yml_map_add(a, net, "allow", str_list(a, k->allow, k->n_allow));
	struct yml_node *deny = str_list(a, k->deny, k->n_deny);
	for (size_t i = 0; deny->kind == YML_SEQ && i < k->n_deny; i++)
		if (k->deny_reasons && k->deny_reasons[i]) {
			struct yml_node *e = yml_new_map(a);
			yml_map_add(a, e, "entry", yml_new_str(a, k->deny[i]));
			yml_map_add(a, e, "reason", yml_new_str(a, k->deny_reasons[i]));
			deny->items[i] = e;
		}
	yml_map_add(a, net, "deny", deny);
	if (k->n_internal)
		yml_map_add(a, net, "internal", str_list(a, k->internal, k->n_internal));
	yml_map_add(a, net, "proxy", yml_new_plain(a, k->proxy ? "true" : "false"));
	return net;
}

static struct yml_node *resources_tree(struct arena *a, const struct kit *k)
{
	char buf[128];
	struct yml_node *r = yml_new_map(a);
	if (k->resources.has_memory)
		yml_map_add(a, r, "memory", yml_new_str(a, k->resources.memory_text));
	if (k->resources.has_cpus)
		yml_map_add(a, r, "cpus", yml_new_plain(a, k->resources.cpus_text));
	if (k->resources.has_pids) {
		snprintf(buf, sizeof buf, "%" PRId64, k->resources.pids);
		yml_map_add(a, r, "pids", yml_new_plain(a, buf));
	}
	if (k->resources.has_timeout)
		yml_map_add(a, r, "timeout", yml_new_str(a, k->resources.timeout_text));
	return r;
}

static struct yml_node *security_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *sec = yml_new_map(a);
	yml_map_add(a, sec, "seccomp", yml_new_str(a, k->seccomp));
	yml_map_add(a, sec, "capabilities", str_list(a, k->capabilities, k->n_capabilities));
	yml_map_add(a, sec, "readonly_rootfs", yml_new_plain(a, k->readonly_rootfs ? "true" : "false"));
	return sec;
}

/* The effective kit as a YAML tree, field by field. */
static struct yml_node *kit_tree(struct arena *a, const struct kit *k)
{
	struct yml_node *root = yml_new_map(a);
	char buf[128];
	if (k->name)
		yml_map_add(a, root, "name", yml_new_str(a, k->name));
	add_rootfs(a, root, k);
	add_workspace(a, root, k);
	if (k->n_mounts)
		yml_map_add(a, root, "mounts", mounts_tree(a, k));
	if (k->n_env)
		yml_map_add(a, root, "env", env_tree(a, k));
	if (k->n_credentials)
		yml_map_add(a, root, "credentials", credentials_tree(a, k));
	if (k->n_files)
		yml_map_add(a, root, "files", files_tree(a, k));
	yml_map_add(a, root, "network", network_tree(a, k));
	if (k->resources.has_memory || k->resources.has_cpus || k->resources.has_pids || k->resources.has_timeout)
		yml_map_add(a, root, "resources", resources_tree(a, k));
	if (k->has_user) {
		snprintf(buf, sizeof buf, "%u:%u", k->uid, k->gid);
		yml_map_add(a, root, "user", yml_new_str(a, buf));
	}
	yml_map_add(a, root, "security", security_tree(a, k));
	if (k->n_startup)
		yml_map_add(a, root, "startup", str_list(a, k->startup, k->n_startup));
	if (k->n_command)
		yml_map_add(a, root, "command", str_list(a, k->command, k->n_command));
	return root;
}

/* A value for the comment block: control characters and the line breaks YAML
 * knows besides \n (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR — each would end
 * the comment and turn the rest of the line into YAML) shown as '?'. In a. */
static const char *comment_safe(struct arena *a, const char *s)
{
	char *c = arena_strdup(a, s ? s : "");
	char *w = c;
	for (const unsigned char *p = (const unsigned char *)c; *p;) {
		size_t unicode_break = p[0] == 0xc2 && p[1] == 0x85 ? 2
				     : p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9) ? 3 : 0;
		if (unicode_break || *p < 0x20 || *p == 0x7f) {
			*w++ = '?';
			p += unicode_break ? unicode_break : 1;
		} else {
			*w++ = (char)*p++;
		}
	}
	*w = 0;
	return c;
}

/* What the comment block (or the JSON's "policy") says, worked out once. */
struct show_facts {
	char allow[4096], deny[4096], internal[1024], caps[1024], chain[2048], protect[4096], opened[4096], timeout[64];
	uint32_t uid, gid;
	const char *user_from;          /* "kit", "default" or "rootless" */
	const char *network, *rootfs;
};

static void show_facts(struct arena *a, const struct kit *k, const struct kit_show_opts *o, struct show_facts *f)
{
	join(f->protect, sizeof f->protect, k->ws_protect, k->n_ws_protect, "");
	join(f->opened, sizeof f->opened, k->ws_writable, k->n_ws_writable, "");
	join(f->allow, sizeof f->allow, k->allow, k->n_allow, "nothing");
	join(f->deny, sizeof f->deny, k->deny, k->n_deny, "nothing");
	join(f->internal, sizeof f->internal, k->internal, k->n_internal, "");
	join(f->caps, sizeof f->caps, k->capabilities, k->n_capabilities, "none");
	f->chain[0] = 0;
	size_t off = 0;
	for (size_t i = k->n_chain; i-- > 0 && off < sizeof f->chain;)
		off += (size_t)snprintf(f->chain + off, sizeof f->chain - off, "%s%s", i + 1 < k->n_chain ? " extends " : "",
					comment_safe(a, k->chain[i]));
	/* as kit run decides: rootless, a kit that names no user runs as root of
	 * the user's namespace, i.e. the user on the host */
	kit_effective_user(k, k->workspace, &f->uid, &f->gid);
	f->user_from = k->has_user ? "kit" : "default";
	if (!k->has_user && o && o->rootless) {
		f->uid = f->gid = 0;
		f->user_from = "rootless";
	}
	snprintf(f->timeout, sizeof f->timeout, "%s", k->resources.has_timeout ? k->resources.timeout_text : "none");
	f->network = k->n_allow ? "user-mode (slirp4netns) behind a default-deny firewall"
				: "none (a network namespace with only loopback)";
	f->rootfs = k->rootfs == KIT_ROOTFS_HOST ? "the host's /usr and a curated /etc"
		  : k->rootfs == KIT_ROOTFS_IMAGE ? arena_printf(a, "the OCI image %s:%s", comment_safe(a, k->rootfs_path),
								  k->rootfs_tag ? comment_safe(a, k->rootfs_tag) : "(its only image)")
		  : comment_safe(a, k->rootfs_path);
}

/* The text form: the comment block, then the kit as YAML. */
static char *show_text(struct arena *a, const struct kit *k, const struct show_facts *f, const char *yaml)
{
	char user[160];
	if (streq(f->user_from, "rootless"))
		snprintf(user, sizeof user, "0:0 (default rootless: root of your user namespace, you on the host)");
	else
		snprintf(user, sizeof user, "%u:%u%s", f->uid, f->gid, streq(f->user_from, "kit") ? "" : " (default)");
	return xasprintf(
		"# The effective kit: %s\n"
		"# Policy it implies:\n"
		"#   network:   %s\n"
		"#   egress allow: %s\n"
		"#   egress deny:  %s%s%s\n"
		"#   seccomp profile: %s\n"
		"#   user: %s, capabilities: %s, no new privileges\n"
		"#   rootfs: %s, %s; workspace: %s\n"
		"#   workspace protections: git's hooks and config, .envrc, editors' and agents' settings%s%s%s%s%s\n"
		"#   workspace guard: %s\n"
		"#   credentials: %zu, read at start and never written to the bundle\n"
		"%s"
		"#   timeout: %s\n"
		"%s",
		k->n_chain ? f->chain : "built-in default kit", f->network, comment_safe(a, f->allow),
		comment_safe(a, f->deny), k->n_internal ? "\n#   internal ranges allowed names may resolve into: " : "",
		comment_safe(a, f->internal), k->seccomp, user, f->caps, f->rootfs,
		k->readonly_rootfs ? "read-only" : "writable", k->workspace ? comment_safe(a, k->workspace) : "none",
		k->n_ws_protect ? ", and " : "", comment_safe(a, f->protect),
		k->n_ws_writable ? "; opened: " : "", comment_safe(a, f->opened),
		k->ws_allow_sensitive ? "; a home directory, / or one with credentials allowed" : "",
		k->ws_guard == KIT_WS_GUARD_OFF ? "off"
		: "quarantine (no set-id, device or file-capability files; what host tools would run, "
		  "left at any depth, held back at the end)",
		k->n_credentials, kit_unreachable_credentials(a, k), comment_safe(a, f->timeout), yaml);
}

/* A YAML tree as JSON: unquoted true/false, integers and null as such,
 * every other scalar a string. */
static void yml_to_json(struct json_out *o, const struct yml_node *n)
{
	if (n->kind == YML_MAP) {
		json_obj_begin(o);
		for (size_t i = 0; i < n->n_pairs; i++) {
			json_key(o, n->pairs[i].key->str);
			yml_to_json(o, n->pairs[i].value);
		}
		json_obj_end(o);
	} else if (n->kind == YML_SEQ) {
		json_arr_begin(o);
		for (size_t i = 0; i < n->n_items; i++)
			yml_to_json(o, n->items[i]);
		json_arr_end(o);
	} else {
		char *end = NULL;
		long long v = n->plain && n->str[0] ? strtoll(n->str, &end, 10) : 0;
		if (n->plain && yml_is_bool(n))
			json_bool(o, n->str[0] == 't' || n->str[0] == 'T');
		else if (n->plain && yml_is_null(n))
			json_null(o);
		else if (end && !*end)
			json_int(o, v);
		else
			json_str(o, n->str);
	}
}

/* The JSON form: {"files", "policy", "kit"}, one object. */
static char *show_json(const struct kit *k, const struct show_facts *f, const struct yml_node *tree)
{
	struct json_out *o = json_out_new(true);
	json_obj_begin(o);
	json_key(o, "files");           /* the kit given first, then what it extends */
	json_arr_begin(o);
	for (size_t i = k->n_chain; i-- > 0;)
		json_str(o, k->chain[i]);
	json_arr_end(o);
	json_key(o, "policy");
	json_obj_begin(o);
	json_kv_str(o, "network", k->n_allow ? "slirp4netns" : "none");
	json_kv_strs(o, "allow", (const char *const *)k->allow, k->n_allow);
	json_kv_strs(o, "deny", (const char *const *)k->deny, k->n_deny);
	json_kv_strs(o, "internal", (const char *const *)k->internal, k->n_internal);
	json_kv_str(o, "seccomp", k->seccomp);
	json_key(o, "user");
	json_obj_begin(o);
	json_kv_uint(o, "uid", f->uid);
	json_kv_uint(o, "gid", f->gid);
	json_kv_str(o, "from", f->user_from);
	json_obj_end(o);
	json_kv_strs(o, "capabilities", (const char *const *)k->capabilities, k->n_capabilities);
	json_kv_bool(o, "readonly_rootfs", k->readonly_rootfs);
	json_kv_str(o, "workspace", k->workspace);
	json_kv_uint(o, "credentials", k->n_credentials);
	json_kv_str(o, "timeout", k->resources.has_timeout ? k->resources.timeout_text : NULL);
	json_obj_end(o);
	json_key(o, "kit");
	yml_to_json(o, tree);
	json_obj_end(o);
	char *text = xasprintf("%s\n", json_out_text(o, NULL));
	json_out_free(o);
	return text;
}

int kit_show(const struct kit *k, const struct kit_show_opts *o, char **ret_text, struct ab_err *err)
{
	struct arena a = {0};
	struct yml_node *root = kit_tree(&a, k);
	struct show_facts *f = xcalloc(1, sizeof *f);
	show_facts(&a, k, o, f);
	_cleanup_free_ char *yaml = NULL;
	size_t len;
	int r = 0;
	if (o && o->json)
		*ret_text = show_json(k, f, root);
	else if ((r = yml_emit(root, &yaml, &len, err)) == 0)
		*ret_text = show_text(&a, k, f, yaml);
	free(f);
	arena_free(&a);
	return r;
}
