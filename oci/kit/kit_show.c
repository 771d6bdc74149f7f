/* Kits: `kit show`, the effective kit written back as YAML after a comment
 * block with the policy it implies. */
#include "kit_internal.h"

#include <inttypes.h>
#include <stdio.h>
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

int kit_show(const struct kit *k, char **ret_text, struct ab_err *err)
{
	struct arena a = {0};
	struct yml_node *root = kit_tree(&a, k);
	_cleanup_free_ char *yaml = NULL;
	size_t len;
	if (yml_emit(root, &yaml, &len, err) < 0) {
		arena_free(&a);
		return -1;
	}

	char allow[4096], deny[4096], caps[1024], chain[2048], user[64], protect[4096], opened[4096];
	join(protect, sizeof protect, k->ws_protect, k->n_ws_protect, "");
	join(opened, sizeof opened, k->ws_writable, k->n_ws_writable, "");
	join(allow, sizeof allow, k->allow, k->n_allow, "nothing");
	join(deny, sizeof deny, k->deny, k->n_deny, "nothing");
	join(caps, sizeof caps, k->capabilities, k->n_capabilities, "none");
	chain[0] = 0;
	size_t off = 0;
	for (size_t i = k->n_chain; i-- > 0 && off < sizeof chain;)
		off += (size_t)snprintf(chain + off, sizeof chain - off, "%s%s", i + 1 < k->n_chain ? " extends " : "",
					comment_safe(&a, k->chain[i]));
	uint32_t uid, gid;
	kit_effective_user(k, k->workspace, &uid, &gid);
	snprintf(user, sizeof user, "%u:%u%s", uid, gid, k->has_user ? "" : " (default)");
	char timeout[64];
	snprintf(timeout, sizeof timeout, "%s", k->resources.has_timeout ? k->resources.timeout_text : "none");

	char *text = xasprintf(
		"# The effective kit: %s\n"
		"# Policy it implies:\n"
		"#   network:   %s\n"
		"#   egress allow: %s\n"
		"#   egress deny:  %s\n"
		"#   seccomp profile: %s\n"
		"#   user: %s, capabilities: %s, no new privileges\n"
		"#   rootfs: %s, %s; workspace: %s\n"
		"#   workspace protections: git's hooks and config, .envrc, editors' and agents' settings%s%s%s%s%s\n"
		"#   credentials: %zu, read at start and never written to the bundle\n"
		"%s"
		"#   timeout: %s\n"
		"%s",
		k->n_chain ? chain : "built-in default kit",
		k->n_allow ? "user-mode (slirp4netns) behind a default-deny firewall"
			   : "none (a network namespace with only loopback)",
		comment_safe(&a, allow), comment_safe(&a, deny), k->seccomp, user, caps,
		k->rootfs == KIT_ROOTFS_HOST ? "the host's /usr and a curated /etc"
		: k->rootfs == KIT_ROOTFS_IMAGE ? arena_printf(&a, "the OCI image %s:%s", comment_safe(&a, k->rootfs_path),
							       k->rootfs_tag ? comment_safe(&a, k->rootfs_tag) : "(its only image)")
		: comment_safe(&a, k->rootfs_path),
		k->readonly_rootfs ? "read-only" : "writable",
		k->workspace ? comment_safe(&a, k->workspace) : "none",
		k->n_ws_protect ? ", and " : "", comment_safe(&a, protect),
		k->n_ws_writable ? "; opened: " : "", comment_safe(&a, opened),
		k->ws_allow_sensitive ? "; a home directory, / or one with credentials allowed" : "",
		k->n_credentials, kit_unreachable_credentials(&a, k), comment_safe(&a, timeout), yaml);
	arena_free(&a);
	*ret_text = text;
	return 0;
}
