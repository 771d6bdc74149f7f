/* Kits to OCI bundles: config.json with hardened defaults, and the rootfs
 * arrangement (for a `host` rootfs: a skeleton with the host's /usr and /lib*
 * bound read-only, the /bin-style symlinks recreated, and a curated /etc). */
#include "credential.h"
#include "kit.h"
#include "config_defaults.h"
#include "image.h"
#include "json.h"
#include "kit_workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#define MARKER ".agentbox-kit"
#define DEFAULT_UID 1000
#define DEFAULT_GID 1000
#define CPU_PERIOD 100000

/* Top-level host directories a `host` rootfs takes: bound read-only when they are
 * directories, recreated when they are symlinks (Debian's merged /usr). */
static const char *const host_tops[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL};

/* Small host files copied into the curated /etc (those that exist). */
static const char *const etc_copies[] = {
	"ld.so.cache", "ld.so.conf", "localtime", "timezone", "protocols", "services", "mime.types",
	"os-release", "debian_version", "host.conf", "gai.conf", "inputrc", "shells", "bash.bashrc",
	"profile", "ssl/openssl.cnf", "ca-certificates.conf", NULL,
};
/* Host directories of /etc bound read-only into the curated one. */
static const char *const etc_binds[] = {"ssl/certs", "alternatives", "ld.so.conf.d", "ca-certificates", NULL};

/* ---------------------------------------------------------------- decisions */

const char *kit_home(uint32_t uid)
{
	return uid == 0 ? "/root" : "/home/agent";
}

void kit_effective_user(const struct kit *k, const char *workspace, uint32_t *uid, uint32_t *gid)
{
	if (k->has_user) {
		*uid = k->uid;
		*gid = k->gid;
		return;
	}
	struct stat st;
	if (workspace && stat(workspace, &st) == 0 && st.st_uid != 0) {
		*uid = st.st_uid;
		*gid = st.st_gid;
		return;
	}
	*uid = DEFAULT_UID;
	*gid = DEFAULT_GID;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static bool is_std_tmpfs(const char *dir, uint32_t uid)
{
	return streq(dir, "/tmp") || streq(dir, "/run") || streq(dir, "/dev/shm") || streq(dir, kit_home(uid));
}

size_t kit_credential_dirs(const struct kit *k, uint32_t uid, struct arena *a, const char **ret,
			   size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		if (c->to != KIT_TO_FILE)
			continue;
		const char *slash = strrchr(c->to_path, '/');
		char *dir = arena_strndup(a, c->to_path, (size_t)(slash - c->to_path));
		if (is_std_tmpfs(dir, uid))
			continue;
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup |= streq(ret[j], dir);
		if (!dup && n < max)
			ret[n++] = dir;
	}
	return n;
}

/* A path inside the host's read-only parts of a `host` rootfs? */
static const char *in_host_part(const char *path)
{
	static const char *const parts[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
					    "/etc/ssl/certs", "/etc/alternatives", "/etc/ld.so.conf.d",
					    "/etc/ca-certificates", NULL};
	for (const char *const *p = parts; *p; p++)
		if (path_under(path, *p))
			return *p;
	return NULL;
}

int kit_resolve_image(struct kit *k, const char *cache_dir, struct ab_err *err)
{
	if (k->rootfs != KIT_ROOTFS_IMAGE || k->image_root)
		return 0;
	struct image_config *ic = arena_alloc(&k->arena, sizeof *ic);
	bool cached;
	if (image_prepare(k->rootfs_path, k->rootfs_tag, cache_dir, &k->arena, &k->image_root, ic, &cached, err) < 0)
		return ab_wrap(err, "rootfs");
	k->image = ic;
	return 0;
}

static int check_layout(const struct kit *k, const struct kit_build_opts *o, struct ab_err *err)
{
	if (k->rootfs == KIT_ROOTFS_IMAGE && !k->image_root)
		return ab_error(err, 0, "rootfs: the image %s is not unpacked yet", k->rootfs_path);
	if (k->rootfs == KIT_ROOTFS_DIR) {
		struct stat st;
		if (stat(k->rootfs_path, &st) < 0)
			return ab_error(err, errno, "rootfs %s", k->rootfs_path);
		if (!S_ISDIR(st.st_mode))
			return ab_error(err, 0, "rootfs %s: not a directory", k->rootfs_path);
	}
	const char *ws = o->workspace ? o->workspace : k->workspace;
	if (ws) {
		struct stat st;
		if (stat(ws, &st) < 0)
			return ab_error(err, errno, "workspace %s", ws);
		if (!S_ISDIR(st.st_mode))
			return ab_error(err, 0, "workspace %s: not a directory", ws);
		if (!o->allow_sensitive_workspace && !k->ws_allow_sensitive &&
		    kit_workspace_check_sensitive(ws, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < k->n_mounts; i++) {
		const struct kit_mount *m = &k->mounts[i];
		struct stat st;
		if (m->source && stat(m->source, &st) < 0)
			return ab_error(err, errno, "mounts[%zu].source %s", i, m->source);
		const char *part = in_host_part(m->target);
		if (k->rootfs == KIT_ROOTFS_HOST && part)
			return ab_error(err, 0, "mounts[%zu].target %s: inside the host's read-only %s", i, m->target, part);
	}
	for (size_t i = 0; i < k->n_files; i++) {
		const struct kit_file *f = &k->files[i];
		const char *part = in_host_part(f->path);
		if (k->rootfs == KIT_ROOTFS_HOST && part)
			return ab_error(err, 0, "files[%zu].path %s: inside the host's read-only %s", i, f->path, part);
		for (size_t j = 0; j < k->n_mounts; j++)
			if (!k->mounts[j].tmpfs && path_under(f->path, k->mounts[j].target))
				return ab_error(err, 0, "files[%zu].path %s: inside the bind mount %s (the host's disk)",
						i, f->path, k->mounts[j].target);
	}
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		const char *part = c->to == KIT_TO_FILE ? in_host_part(c->to_path) : NULL;
		if (k->rootfs == KIT_ROOTFS_HOST && part)
			return ab_error(err, 0, "credentials[%zu].to %s: inside the host's read-only %s", i, c->to_path, part);
	}
	return 0;
}

/* ---------------------------------------------------------------- config.json */

static void mount_obj(struct json_out *j, const char *dest, const char *type, const char *src,
		      const char *const *opts)
{
	json_obj_begin(j);
	json_kv_str(j, "destination", dest);
	json_kv_str(j, "type", type);
	json_kv_str(j, "source", src);
	json_key(j, "options");
	json_arr_begin(j);
	for (; *opts; opts++)
		json_str(j, *opts);
	json_arr_end(j);
	json_obj_end(j);
}

static void bind_ro(struct json_out *j, const char *dest, const char *src)
{
	static const char *const ro[] = {"bind", "ro", "nosuid", "nodev", NULL};
	mount_obj(j, dest, "bind", src, ro);
}

/* The script that runs the startup commands, then the command, in one shell (so a
 * step's cd or export carries on). A failing step, also one that calls exit, ends
 * the run with its status and a line naming it. */
static char *startup_script(const struct kit *k)
{
	static const char head[] =
		"trap 's=$?; if [ $s -ne 0 ] && [ -n \"$__kit_step\" ]; then "
		"echo \"agentbox: kit startup[$__kit_step] failed with status $s\" >&2; fi' EXIT\n";
	static const char tail[] = "__kit_step=; trap - EXIT\nexec \"$@\"";
	size_t cap = sizeof head + sizeof tail;
	for (size_t i = 0; i < k->n_startup; i++)
		cap += strlen(k->startup[i]) + 64;
	char *s = xmalloc(cap);
	size_t off = (size_t)snprintf(s, cap, "%s", head);
	for (size_t i = 0; i < k->n_startup; i++)
		off += (size_t)snprintf(s + off, cap - off, "__kit_step=%zu\n{ %s\n} || exit $?\n", i, k->startup[i]);
	snprintf(s + off, cap - off, "%s", tail);
	return s;
}

static bool host_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The box's user: the caller's decision, else kit_effective_user. */
static void box_user(const struct kit *k, const struct kit_build_opts *o, const char *ws, uint32_t *uid,
		     uint32_t *gid)
{
	kit_effective_user(k, ws, uid, gid);
	if (o->uid && o->gid) {
		*uid = *o->uid;
		*gid = *o->gid;
	}
}

/* The workspace at /workspace, id-mapped when its owner is not the box's
 * user; then its protections: directories pinned, entries read-only, parents
 * first. Id-mapped, the protections are bound from the workspace as the box
 * will see it (the root's /workspace, already mounted when they are), so
 * they carry its mapping: one user namespace for all of them. */
static void workspace_mounts(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
			     const char *ws, uint32_t uid, uint32_t gid, struct arena *a)
{
	static const char *const pin[] = {"bind", "rw", "nosuid", "nodev", NULL};
	static const char *const ro[] = {"bind", "ro", "nosuid", "nodev", NULL};
	/* a workspace read-only on the host stays so (and needs no protection) */
	struct statvfs sv;
	bool host_ro = statvfs(ws, &sv) == 0 && (sv.f_flag & ST_RDONLY);
	const char *const rw[] = {"rbind", host_ro ? "ro" : "rw", "nosuid", "nodev", NULL};
	const char *const rw_idmap[] = {"rbind", host_ro ? "ro" : "rw", "nosuid", "nodev", "idmap", NULL};
	if (!o->ws_idmap) {
		mount_obj(j, "/workspace", "bind", ws, rw);
	} else {
		json_obj_begin(j);
		json_kv_str(j, "destination", "/workspace");
		json_kv_str(j, "type", "bind");
		json_kv_str(j, "source", ws);
		json_key(j, "options");
		json_arr_begin(j);
		for (const char *const *p = rw_idmap; *p; p++)
			json_str(j, *p);
		json_arr_end(j);
		oci_one_id_mapping(j, "uidMappings", o->ws_owner_uid, uid);
		oci_one_id_mapping(j, "gidMappings", o->ws_owner_gid, gid);
		json_obj_end(j);
	}
	const char *from = ws;
	if (o->ws_idmap) {
		const char *root = o->root_path ? o->root_path
				 : k->rootfs == KIT_ROOTFS_HOST ? arena_printf(a, "%s/rootfs", o->bundle)
				 : k->rootfs == KIT_ROOTFS_IMAGE ? k->image_root : k->rootfs_path;
		from = arena_printf(a, "%s/workspace", root);
	}
	for (size_t i = 0; o->ws_plan && i < o->ws_plan->n; i++) {
		const struct kit_ws_entry *e = &o->ws_plan->v[i];
		mount_obj(j, arena_printf(a, "/workspace/%s", e->rel), "bind", arena_printf(a, "%s/%s", from, e->rel),
			  e->action == KIT_WS_PIN ? pin : ro);
	}
}

/* What the parts of config.json share, decided once before the first. */
struct box {
	const char *ws;                 /* the workspace on the host, or NULL */
	uint32_t uid, gid;              /* the box's user */
	const char *home;
	const struct image_config *img; /* an image rootfs's config, or NULL */
	struct arena *a;                /* strings that live until the text is made */
};

/* process.args: the command (the caller's, the kit's, the image's
 * Entrypoint + Cmd, or /bin/sh), behind the startup script if any. */
static void process_args(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
			 const struct box *b)
{
	json_key(j, "args");
	json_arr_begin(j);
	char **cmd = o->n_command ? o->command : k->command;
	size_t n_cmd = o->n_command ? o->n_command : k->n_command;
	static char *const default_cmd[] = {"/bin/sh"};
	const struct image_config *img = b->img;
	if (!n_cmd && img && img->n_entrypoint + img->n_cmd) {
		/* the image's Entrypoint + Cmd, only when neither the kit nor the caller gives one */
		n_cmd = img->n_entrypoint + img->n_cmd;
		cmd = arena_alloc(b->a, n_cmd * sizeof *cmd);
		/* either list may be absent (NULL): memcpy must not see it */
		if (img->n_entrypoint)
			memcpy(cmd, img->entrypoint, img->n_entrypoint * sizeof *cmd);
		if (img->n_cmd)
			memcpy(cmd + img->n_entrypoint, img->cmd, img->n_cmd * sizeof *cmd);
	}
	if (!n_cmd) {
		cmd = (char **)default_cmd;
		n_cmd = 1;
	}
	if (k->n_startup) {
		char *script = startup_script(k);
		json_str(j, "/bin/sh");
		json_str(j, "-c");
		json_str(j, script);
		json_str(j, "sh");
		free(script);
	}
	for (size_t i = 0; i < n_cmd; i++)
		json_str(j, cmd[i]);
	json_arr_end(j);
}

/* The box's environment as it is built: a later name replaces an earlier one
 * in its place. */
struct env_list {
	struct oci_kv *v;
	size_t n;
};

static void env_set(struct env_list *e, const char *key, const char *value)
{
	size_t i;
	for (i = 0; i < e->n && !streq(e->v[i].key, key); i++)
		;
	e->v[i].key = (char *)key;
	e->v[i].value = (char *)value;
	if (i == e->n)
		e->n++;
}

/* process.env: defaults, then the image's, the kit's, then credentials */
static void process_env(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
			const struct box *b)
{
	const struct image_config *img = b->img;
	size_t cap_env = 8 + k->n_env + o->n_secrets + k->n_credentials + (img ? img->n_env : 0);
	struct env_list env = { arena_alloc(b->a, cap_env * sizeof *env.v), 0 };
	env_set(&env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	env_set(&env, "HOME", b->home);
	env_set(&env, "LANG", "C.UTF-8");
	if (o->terminal)
		env_set(&env, "TERM", "xterm");
	/* the image's Env over the defaults, under the kit's; HOME stays the box's */
	for (size_t i = 0; img && i < img->n_env; i++) {
		const char *eq = strchr(img->env[i], '=');
		if (!eq || eq == img->env[i])
			continue;
		char *name = arena_strndup(b->a, img->env[i], (size_t)(eq - img->env[i]));
		if (!streq(name, "HOME"))
			env_set(&env, name, eq + 1);
	}
	for (size_t i = 0; i < k->n_env; i++)
		env_set(&env, k->env[i].key, k->env[i].value);
	for (size_t i = 0; i < o->n_secrets; i++)
		if (o->secrets[i].cred->to == KIT_TO_ENV)
			env_set(&env, o->secrets[i].cred->name, o->secrets[i].value);
	/* a header credential's variable holds a placeholder: the secret stays
	 * with the gateway */
	for (size_t i = 0; i < k->n_credentials; i++)
		if (k->credentials[i].to == KIT_TO_HEADER && k->credentials[i].placeholder_env)
			env_set(&env, k->credentials[i].placeholder_env,
				arena_printf(b->a, CRED_PLACEHOLDER_PREFIX "%s", k->credentials[i].name));
	json_key(j, "env");
	json_arr_begin(j);
	for (size_t i = 0; i < env.n; i++) {
		size_t len = strlen(env.v[i].key) + strlen(env.v[i].value) + 2;
		char *kv = xmalloc(len);
		snprintf(kv, len, "%s=%s", env.v[i].key, env.v[i].value);
		json_str(j, kv);
		explicit_bzero(kv, len);
		free(kv);
	}
	json_arr_end(j);
}

static void process_obj(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
			const struct box *b)
{
	const struct image_config *img = b->img;
	json_key(j, "process");
	json_obj_begin(j);
	json_kv_bool(j, "terminal", o->terminal);
	json_key(j, "user");
	json_obj_begin(j);
	json_kv_uint(j, "uid", b->uid);
	json_kv_uint(j, "gid", b->gid);
	json_obj_end(j);
	process_args(j, k, o, b);
	process_env(j, k, o, b);
	json_kv_str(j, "cwd", b->ws ? "/workspace" : img && img->workdir && img->workdir[0] == '/' ? img->workdir : b->home);
	json_key(j, "capabilities");
	json_obj_begin(j);
	const char *const *caps = (const char *const *)k->capabilities;
	json_kv_strs(j, "bounding", caps, k->n_capabilities);
	json_kv_strs(j, "effective", caps, k->n_capabilities);
	json_kv_strs(j, "inheritable", caps, k->n_capabilities);
	json_kv_strs(j, "permitted", caps, k->n_capabilities);
	json_kv_strs(j, "ambient", caps, k->n_capabilities);
	json_obj_end(j);
	json_kv_bool(j, "noNewPrivileges", true);
	json_obj_end(j);
}

static void root_obj(struct json_out *j, const struct kit *k, const struct kit_build_opts *o)
{
	json_key(j, "root");
	json_obj_begin(j);
	if (o->root_path)
		json_kv_str(j, "path", o->root_path);
	else
		json_kv_str(j, "path", k->rootfs == KIT_ROOTFS_HOST ? "rootfs"
				       : k->rootfs == KIT_ROOTFS_IMAGE ? k->image_root : k->rootfs_path);
	json_kv_bool(j, "readonly", o->persistent && !k->readonly_rootfs_set ? false : k->readonly_rootfs);
	json_obj_end(j);
}

/* A host directory with what is mounted below it (a /usr/local of its own),
 * all read-only. Recursive: in a user namespace (a rootless run) a bind
 * without the mounts below it is refused (EINVAL: they are locked there). */
static void rbind_ro(struct json_out *j, const char *path)
{
	static const char *const ro[] = {"rbind", "ro", "rro", "nosuid", "rnosuid", "nodev", "rnodev", NULL};
	mount_obj(j, path, "bind", path, ro);
}

/* A `host` rootfs: the host's system directories and /etc parts, read-only. */
static void host_mounts(struct json_out *j)
{
	char buf[PATH_MAX + 64];
	for (const char *const *t = host_tops; *t; t++) {
		snprintf(buf, sizeof buf, "/%s", *t);
		if (host_dir(buf))
			rbind_ro(j, buf);
	}
	for (const char *const *e = etc_binds; *e; e++) {
		snprintf(buf, sizeof buf, "/etc/%s", *e);
		if (host_dir(buf))
			rbind_ro(j, buf);
	}
}

/* /tmp, /run and the home: tmpfs, or a named box's home as part of its root
 * (bound from home_source when given) */
static void tmpfs_mounts(struct json_out *j, const struct kit_build_opts *o, const struct box *b)
{
	char *o_home[] = {"nosuid", "nodev", "mode=700", arena_printf(b->a, "uid=%u", b->uid),
			  arena_printf(b->a, "gid=%u", b->gid), NULL};
	static const char *const tmp[] = {"nosuid", "nodev", "mode=1777", NULL};
	static const char *const run[] = {"nosuid", "nodev", "mode=755", NULL};
	mount_obj(j, "/tmp", "tmpfs", "tmpfs", tmp);
	mount_obj(j, "/run", "tmpfs", "tmpfs", run);
	if (!o->persistent) {
		mount_obj(j, b->home, "tmpfs", "tmpfs", (const char *const *)o_home);
	} else if (o->home_source) {
		static const char *const rw[] = {"bind", "rw", "nosuid", "nodev", NULL};
		mount_obj(j, b->home, "bind", o->home_source, rw);
	}
}

/* The kit's mounts, a tmpfs per directory of file credentials, its files. */
static void kit_mounts(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
		       const struct box *b)
{
	struct arena *a = b->a;
	for (size_t i = 0; i < k->n_mounts; i++) {
		const struct kit_mount *m = &k->mounts[i];
		if (m->tmpfs) {
			const char *opts[] = {"nosuid", "nodev", m->readonly ? "ro" : "rw", "mode=1777",
					      m->size ? arena_printf(a, "size=%llu", (unsigned long long)m->size) : NULL, NULL};
			mount_obj(j, m->target, "tmpfs", "tmpfs", opts);
		} else {
			const char *opts[] = {"rbind", m->readonly ? "ro" : "rw", "nosuid", "nodev", NULL};
			mount_obj(j, m->target, "bind", m->source, opts);
		}
	}
	const char *dirs[64];
	size_t n = kit_credential_dirs(k, b->uid, a, dirs, ARRAY_SIZE(dirs));
	for (size_t i = 0; i < n; i++) {
		const char *opts[] = {"nosuid", "nodev", "noexec", "mode=700", arena_printf(a, "uid=%u", b->uid),
				      arena_printf(a, "gid=%u", b->gid), "size=1m", NULL};
		mount_obj(j, dirs[i], "tmpfs", "tmpfs", opts);
	}
	for (size_t i = 0; i < k->n_files; i++)
		bind_ro(j, k->files[i].path, arena_printf(a, "%s/files/%zu", o->bundle, i));
}

static void mounts_arr(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
		       const struct box *b)
{
	json_key(j, "mounts");
	json_arr_begin(j);
	oci_default_mounts(j, true);
	if (k->rootfs == KIT_ROOTFS_HOST)
		host_mounts(j);
	tmpfs_mounts(j, o, b);
	if (k->rootfs != KIT_ROOTFS_HOST) {
		bind_ro(j, "/etc/resolv.conf", arena_printf(b->a, "%s/resolv.conf", o->bundle));
		bind_ro(j, "/etc/hosts", arena_printf(b->a, "%s/hosts", o->bundle));
	}
	if (b->ws)
		workspace_mounts(j, k, o, b->ws, b->uid, b->gid, b->a);
	kit_mounts(j, k, o, b);
	json_arr_end(j);
}

/* agentbox.kit.credentials: what each credential is, never its value */
static void credentials_annotation(struct json_out *j, const struct kit *k, struct arena *a)
{
	struct json_out *c = json_out_new(false);
	json_arr_begin(c);
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *cr = &k->credentials[i];
		json_obj_begin(c);
		json_kv_str(c, "name", cr->name);
		json_kv_str(c, "from", arena_printf(a, "%s:%s", cr->from == KIT_FROM_ENV ? "env" : "file", cr->from_ref));
		json_kv_str(c, "to", cr->to == KIT_TO_ENV ? "env" : cr->to == KIT_TO_HEADER ? "header" : arena_printf(a, "file:%s", cr->to_path));
		json_obj_end(c);
	}
	json_arr_end(c);
	json_kv_str(j, "agentbox.kit.credentials", json_out_text(c, NULL));
	json_out_free(c);
}

/* agentbox.egress.allow and .deny: the entries joined by commas */
static void egress_annotations(struct json_out *j, const struct kit *k, struct arena *a)
{
	for (int d = 0; d < 2; d++) {
		char **v = d ? k->deny : k->allow;
		size_t n = d ? k->n_deny : k->n_allow;
		if (!n)
			continue;
		size_t len = 1;
		for (size_t i = 0; i < n; i++)
			len += strlen(v[i]) + 1;
		char *list = arena_alloc(a, len);
		for (size_t i = 0; i < n; i++) {
			if (i)
				strcat(list, ",");
			strcat(list, v[i]);
		}
		json_kv_str(j, d ? "agentbox.egress.deny" : "agentbox.egress.allow", list);
	}
}

/* the deny entries' reasons: "ENTRY=REASON" lines (agentbox-egress(7)),
 * also when kit run passes the entries as the runtime's flags */
static void reasons_annotation(struct json_out *j, const struct kit *k, struct arena *a)
{
	size_t rlen = 1;
	for (size_t i = 0; i < k->n_deny; i++)
		if (k->deny_reasons && k->deny_reasons[i])
			rlen += strlen(k->deny[i]) + strlen(k->deny_reasons[i]) + 2;
	if (rlen > 1) {
		char *text = arena_alloc(a, rlen);
		for (size_t i = 0; i < k->n_deny; i++)
			if (k->deny_reasons[i]) {
				strcat(text, k->deny[i]);
				strcat(text, "=");
				strcat(text, k->deny_reasons[i]);
				strcat(text, "\n");
			}
		json_kv_str(j, "agentbox.egress.reasons", text);
	}
}

/* annotations: references only, never a credential's value */
static void annotations_obj(struct json_out *j, const struct kit *k, const struct kit_build_opts *o,
			    struct arena *a)
{
	json_key(j, "annotations");
	json_obj_begin(j);
	if (k->name)
		json_kv_str(j, "agentbox.kit.name", k->name);
	json_kv_str(j, "agentbox.seccomp.profile", o->seccomp_profile ? o->seccomp_profile : k->seccomp);
	/* what the box writes lands on the host: no set-id bit, device or file capability */
	if (k->ws_guard != KIT_WS_GUARD_OFF)
		json_kv_str(j, "agentbox.seccomp.file-privileges", "refuse");
	if (k->n_credentials)
		credentials_annotation(j, k, a);
	if (o->egress_annotations)
		egress_annotations(j, k, a);
	reasons_annotation(j, k, a);
	/* the box's HTTP proxy: agentbox's to act on, nothing for another runtime */
	json_kv_str(j, "agentbox.egress.proxy", k->proxy ? "true" : "false");
	json_obj_end(j);
}

/* key: {"limit": limit} */
static void limit_obj(struct json_out *j, const char *key, int64_t limit)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kv_int(j, "limit", limit);
	json_obj_end(j);
}

/* linux.resources: no device but the defaults, and the kit's limits */
static void resources_obj(struct json_out *j, const struct kit *k)
{
	json_key(j, "resources");
	json_obj_begin(j);
	oci_default_device_rules(j);
	if (k->resources.has_memory)
		limit_obj(j, "memory", k->resources.memory);
	if (k->resources.has_cpus) {
		json_key(j, "cpu");
		json_obj_begin(j);
		json_kv_int(j, "quota", (int64_t)(k->resources.cpus_milli * (CPU_PERIOD / 1000)));
		json_kv_uint(j, "period", CPU_PERIOD);
		json_obj_end(j);
	}
	if (k->resources.has_pids)
		limit_obj(j, "pids", k->resources.pids);
	json_obj_end(j);
}

static void linux_obj(struct json_out *j, const struct kit *k)
{
	json_key(j, "linux");
	json_obj_begin(j);
	resources_obj(j, k);
	static const char *const ns[] = {"pid", "ipc", "uts", "mount", "network", "cgroup"};
	oci_namespaces(j, ns, ARRAY_SIZE(ns));
	oci_default_paths(j);
	json_obj_end(j);
}

/* The generator's text, with a newline, malloc'd; the generator's buffer
 * may hold credential values: wiped, and the generator freed. */
static char *finish_text(struct json_out *j)
{
	size_t len;
	const char *text = json_out_text(j, &len);
	char *out = xmalloc(len + 2);
	memcpy(out, text, len);
	out[len] = '\n';
	out[len + 1] = 0;
	explicit_bzero((char *)text, len);
	json_out_free(j);
	return out;
}

int kit_config_json(const struct kit *k, const struct kit_build_opts *o, char **ret_json,
		    struct ab_err *err)
{
	struct arena a = {0};
	struct box b = { .ws = o->workspace ? o->workspace : k->workspace, .a = &a };
	box_user(k, o, b.ws, &b.uid, &b.gid);
	b.home = kit_home(b.uid);
	b.img = k->rootfs == KIT_ROOTFS_IMAGE ? k->image : NULL;
	struct json_out *j = json_out_new(true);

	json_obj_begin(j);
	json_kv_str(j, "ociVersion", "1.2.0");
	process_obj(j, k, o, &b);
	root_obj(j, k, o);
	json_kv_str(j, "hostname", k->name ? k->name : "agentbox");
	mounts_arr(j, k, o, &b);
	annotations_obj(j, k, o, &a);
	linux_obj(j, k);
	json_obj_end(j);

	char *out = finish_text(j);
	arena_free(&a);
	*ret_json = out;
	return 0;
}

/* ---------------------------------------------------------------- the bundle */

static int write_text(int dirfd, const char *path, const char *text, mode_t mode, struct ab_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return ab_error(err, errno, "create %s", path);
	if (write_all(fd, text, strlen(text)) < 0)
		return ab_error(err, errno, "write %s", path);
	if (fchmod(fd, mode) < 0)
		return ab_error(err, errno, "chmod %s", path);
	return 0;
}

static int mkdirs_at(int dirfd, const char *path, mode_t mode, struct ab_err *err)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			if (*buf && mkdirat(dirfd, buf, mode) < 0 && errno != EEXIST)
				return ab_error(err, errno, "mkdir %s", buf);
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* Copy a host file (or symlink, as a symlink) into dirfd/path. */
static int copy_host_file(const char *src, int dirfd, const char *path, mode_t mode, bool keep_mode,
			  struct ab_err *err)
{
	struct stat st;
	if (lstat(src, &st) < 0)
		return ab_error(err, errno, "%s", src);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(src, target, sizeof target - 1);
		if (n < 0)
			return ab_error(err, errno, "readlink %s", src);
		target[n] = 0;
		if (symlinkat(target, dirfd, path) < 0)
			return ab_error(err, errno, "symlink %s", path);
		return 0;
	}
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return ab_error(err, errno, "open %s", src);
	if (fstat(in, &st) < 0)
		return ab_error(err, errno, "stat %s", src);
	if (!S_ISREG(st.st_mode))
		return ab_error(err, 0, "%s: not a regular file", src);
	_cleanup_close_ int out = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return ab_error(err, errno, "create %s", path);
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ab_error(err, errno, "read %s", src);
		if (n == 0)
			break;
		if (write_all(out, buf, (size_t)n) < 0)
			return ab_error(err, errno, "write %s", path);
	}
	if (fchmod(out, keep_mode ? (st.st_mode & 0777) : mode) < 0)
		return ab_error(err, errno, "chmod %s", path);
	return 0;
}

static int prepare_dir(const char *bundle, int *ret_fd, struct ab_err *err)
{
	if (mkdir(bundle, 0700) < 0 && errno != EEXIST)
		return ab_error(err, errno, "mkdir %s", bundle);
	_cleanup_close_ int fd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open %s", bundle);
	bool marker = faccessat(fd, MARKER, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	_cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d)
		return ab_error(err, errno, "read %s", bundle);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (!marker)
			return ab_error(err, 0, "%s: exists and is not empty (and not a kit build to replace)", bundle);
		if (rm_rf_at(fd, de->d_name, err) < 0)
			return ab_wrap(err, "replace the kit build in %s", bundle);
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int build_host_rootfs(const struct kit *k, const struct kit_build_opts *o, int bfd,
			     uint32_t uid, uint32_t gid, struct ab_err *err)
{
	if (mkdirat(bfd, "rootfs", 0755) < 0)
		return ab_error(err, errno, "mkdir rootfs");
	_cleanup_close_ int r = openat(bfd, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0 || fchmod(r, 0755) < 0)
		return ab_error(err, errno, "open rootfs");
	static const char *const dirs[] = {"proc", "sys", "dev", "run", "tmp", "etc", "home", "var", "mnt", "workspace", NULL};
	for (const char *const *d = dirs; *d; d++)
		if (mkdirat(r, *d, 0755) < 0)
			return ab_error(err, errno, "mkdir rootfs/%s", *d);
	if (fchmodat(r, "tmp", 01777, 0) < 0)
		return ab_error(err, errno, "chmod rootfs/tmp");
	if (symlinkat("../tmp", r, "var/tmp") < 0)
		return ab_error(err, errno, "symlink rootfs/var/tmp");
	const char *home = kit_home(uid);
	if (mkdirs_at(r, home + 1, 0755, err) < 0)
		return -1;
	char path[PATH_MAX];
	for (const char *const *t = host_tops; *t; t++) {
		snprintf(path, sizeof path, "/%s", *t);
		struct stat st;
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			if (copy_host_file(path, r, *t, 0, false, err) < 0)
				return -1;
		} else if (S_ISDIR(st.st_mode) && mkdirat(r, *t, 0755) < 0) {
			return ab_error(err, errno, "mkdir rootfs/%s", *t);
		}
	}

	/* the curated /etc */
	_cleanup_close_ int e = openat(r, "etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e < 0)
		return ab_error(err, errno, "open rootfs/etc");
	const char *host = k->name ? k->name : "agentbox";
	char text[4096];
	if (uid == 0)
		snprintf(text, sizeof text, "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	else
		snprintf(text, sizeof text,
			 "root:x:0:0:root:/root:/bin/sh\nagent:x:%u:%u:agent:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			 uid, gid, home);
	if (write_text(e, "passwd", text, 0644, err) < 0)
		return -1;
	if (gid == 0)
		snprintf(text, sizeof text, "root:x:0:\ntty:x:5:\nnogroup:x:65534:\n");
	else if (gid == 5 || gid == 65534)
		snprintf(text, sizeof text, "root:x:0:\n%s:x:%u:agent\n", gid == 5 ? "tty" : "nogroup", gid);
	else
		snprintf(text, sizeof text, "root:x:0:\ntty:x:5:\nagent:x:%u:\nnogroup:x:65534:\n", gid);
	if (write_text(e, "group", text, 0644, err) < 0)
		return -1;
	snprintf(text, sizeof text, "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t%s\n", host);
	if (write_text(e, "hosts", text, 0644, err) < 0)
		return -1;
	snprintf(text, sizeof text, "%s\n", host);
	if (write_text(e, "hostname", text, 0644, err) < 0)
		return -1;
	if (write_text(e, "nsswitch.conf",
		       "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\n"
		       "protocols: files\nservices: files\nethers: files\nrpc: files\n", 0644, err) < 0)
		return -1;
	if (write_text(e, "resolv.conf", o->network ? "nameserver 10.0.2.3\n" : "# no network in this box\n", 0644, err) < 0)
		return -1;
	for (const char *const *c = etc_copies; *c; c++) {
		snprintf(path, sizeof path, "/etc/%s", *c);
		struct stat st;
		if (lstat(path, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		const char *slash = strrchr(*c, '/');
		if (slash) {
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%.*s", (int)(slash - *c), *c);
			if (mkdirs_at(e, dir, 0755, err) < 0)
				return -1;
		}
		if (copy_host_file(path, e, *c, 0644, true, err) < 0)
			return -1;
	}
	for (const char *const *b = etc_binds; *b; b++) {
		snprintf(path, sizeof path, "/etc/%s", *b);
		if (host_dir(path) && mkdirs_at(e, *b, 0755, err) < 0)
			return -1;
	}
	return 0;
}

static int write_files(const struct kit *k, int bfd, struct ab_err *err)
{
	if (!k->n_files)
		return 0;
	if (mkdirat(bfd, "files", 0755) < 0)
		return ab_error(err, errno, "mkdir files");
	_cleanup_close_ int fd = openat(bfd, "files", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open files");
	for (size_t i = 0; i < k->n_files; i++) {
		const struct kit_file *f = &k->files[i];
		char name[32];
		snprintf(name, sizeof name, "%zu", i);
		mode_t mode = f->has_mode ? f->mode : 0644;
		int r = f->content ? write_text(fd, name, f->content, mode, err)
				   : copy_host_file(f->source, fd, name, mode, false, err);
		if (r < 0)
			return ab_wrap(err, "files[%zu]", i);
		struct stat st;
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			return ab_error(err, 0, "files[%zu]: %s is not a regular file", i, f->source ? f->source : name);
		uint32_t uid = f->has_owner ? f->uid : 0, gid = f->has_owner ? f->gid : 0;
		if (fchownat(fd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			return ab_error(err, errno, "files[%zu]: chown %u:%u", i, uid, gid);
		if (fchmodat(fd, name, mode, 0) < 0)
			return ab_error(err, errno, "files[%zu]: chmod", i);
	}
	return 0;
}

int kit_build_bundle(const struct kit *k, const struct kit_build_opts *o, struct ab_err *err)
{
	if (check_layout(k, o, err) < 0)
		return -1;
	_cleanup_close_ int bfd = -1;
	if (prepare_dir(o->bundle, &bfd, err) < 0)
		return -1;
	/* config.json names files in the bundle by absolute path */
	char abs_bundle[PATH_MAX];
	if (!realpath(o->bundle, abs_bundle))
		return ab_error(err, errno, "%s", o->bundle);
	if (write_text(bfd, MARKER, k->name ? k->name : "default", 0644, err) < 0)
		return -1;
	const char *ws = o->workspace ? o->workspace : k->workspace;
	uint32_t uid, gid;
	box_user(k, o, ws, &uid, &gid);
	if (k->rootfs == KIT_ROOTFS_HOST) {
		if (build_host_rootfs(k, o, bfd, uid, gid, err) < 0)
			return ab_wrap(err, "build the host rootfs in %s", o->bundle);
	} else {
		char text[512];
		const char *host = k->name ? k->name : "agentbox";
		if (write_text(bfd, "resolv.conf", o->network ? "nameserver 10.0.2.3\n" : "# no network in this box\n", 0644, err) < 0)
			return -1;
		snprintf(text, sizeof text, "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t%s\n", host);
		if (write_text(bfd, "hosts", text, 0644, err) < 0)
			return -1;
	}
	if (write_files(k, bfd, err) < 0)
		return -1;
	/* the protections of what exists now, unless the caller planned them */
	struct arena plan_arena = {0};
	struct kit_ws_plan plan;
	struct kit_build_opts disk = *o;
	if (ws && !o->ws_plan) {
		char real[PATH_MAX];
		if (!realpath(ws, real))
			return ab_error(err, errno, "workspace %s", ws);
		if (kit_workspace_plan(k, real, false, &plan_arena, &plan, err) < 0) {
			arena_free(&plan_arena);
			return -1;
		}
		disk.ws_plan = &plan;
	}
	/* on disk: never a secret, whatever the caller passed */
	disk.bundle = abs_bundle;
	disk.secrets = NULL;
	disk.n_secrets = 0;
	_cleanup_free_ char *json = NULL;
	int r = kit_config_json(k, &disk, &json, err);
	arena_free(&plan_arena);
	if (r < 0)
		return -1;
	return write_file_atomic_at(bfd, "config.json", json, strlen(json), 0644, err);
}
