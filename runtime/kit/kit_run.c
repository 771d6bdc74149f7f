/* kit run: builds into a temporary directory (kit_rundir.c), puts a
 * copy-on-write overlay over the rootfs, reads the credentials into memory
 * (kit_secrets.c), hands the lifecycle a config parsed in memory (the one on
 * disk has no secret in it), attaches slirp4netns when the box may reach
 * anything (kit_slirp.c), writes file credentials into the box's tmpfs before
 * its program starts, and removes everything it made at the end. */
#include "kit_run.h"
#include "cgroups_host.h"
#include "cgroups_path.h"
#include "config.h"
#include "kit_box.h"
#include "kit_idmap.h"
#include "kit_placeholders.h"
#include "kit_rundir.h"
#include "kit_secrets.h"
#include "kit_slirp.h"
#include "kit_sweep.h"
#include "log.h"
#include "mounts.h"
#include "rootless.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#define IMAGE_CACHE ".images"

struct run_ctx {
	struct kit *k;
	struct kit_rundir rd;
	uint32_t uid, gid;
	struct kit_secrets secrets;
	bool network;
	struct kit_slirp slirp;
	struct arena arena;             /* the workspace plan */
	char ws[PATH_MAX];              /* the workspace, real path; "" for none */
	struct kit_ws_plan ws_plan;
	struct kit_placeholders placeholders;
	struct kit_sweep sweep;         /* the workspace guard's end of the run */
	struct kit_box box;             /* a named box; box.name[0] == 0 for none */
	bool learn;                     /* learn mode (kit run --learn, --egress-mode learn) */
	char home_source[PATH_MAX + 16];
	char id[KIT_BOX_NAME_MAX + 8];  /* the container's: kit-HEX, or box-NAME */
	bool cgroups_off;               /* rootless without a delegated cgroup */
	/* owned until the end: the egress flags the run gives the runtime, the
	 * header credentials its gateway gets */
	char *allow_list, *deny_list, *internal_list;
	struct gateway_cred *gcreds;
};

/* The box's user: the kit's; else, rootless, root of the user's namespace
 * (the user on the host, the owner of the user's workspace: no capability
 * the kit does not grant); else kit_effective_user's choice. */
static void run_user(const struct kit *k, const char *ws, uint32_t *uid, uint32_t *gid)
{
	if (!k->has_user && rootless_detect()) {
		*uid = *gid = 0;
		return;
	}
	kit_effective_user(k, ws, uid, gid);
}

/* Does the delegated cgroup at path (v2) offer ctrl? Its parent's
 * cgroup.controllers says what a child of it may be given. */
static bool delegated_has(const char *path, const char *ctrl)
{
	char parent[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = 0;
	if (cg_v2_dir(parent, dir, sizeof dir) < 0)
		return false;
	snprintf(file, sizeof file, "%s/cgroup.controllers", dir);
	_cleanup_free_ char *text = NULL;
	struct ab_err e;
	if (read_file_at(AT_FDCWD, file, 4096, &text, NULL, &e) < 0)
		return false;
	size_t n = strlen(ctrl);
	for (char *p = text; (p = strstr(p, ctrl)); p += n)
		if ((p == text || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* Rootless, the kit's limits hold only through a cgroup v2 subtree delegated
 * to the user that offers their controllers. Those that cannot hold are named
 * in one warning and left out, rather than the run refused: the box's other
 * promises do not depend on them. True when there is no cgroup at all (the
 * caller disables cgroups for the run: the warning said so already). */
static bool rootless_limits(const struct global_opts *g, struct kit *k, const char *id)
{
	if (!g->rootless || g->cgroups_disabled)
		return false;
	struct cgroup_ref ref;
	bool skipped = false;
	struct ab_err e;
	if (cgroup_resolve_rootless(NULL, id, g->systemd_cgroup, false, NULL, &ref, &skipped, &e) < 0)
		return false;   /* create says what is wrong */
	struct {
		bool *has;
		const char *ctrl, *name;
		char value[32];
	} limits[] = {
		{&k->resources.has_memory, "memory", "memory", ""},
		{&k->resources.has_cpus, "cpu", "cpus", ""},
		{&k->resources.has_pids, "pids", "pids", ""},
	};
	snprintf(limits[0].value, sizeof limits[0].value, "%s", k->resources.memory_text ? k->resources.memory_text : "");
	snprintf(limits[1].value, sizeof limits[1].value, "%s", k->resources.cpus_text ? k->resources.cpus_text : "");
	snprintf(limits[2].value, sizeof limits[2].value, "%lld", (long long)k->resources.pids);
	char named[256] = "";
	size_t off = 0;
	for (size_t i = 0; i < ARRAY_SIZE(limits); i++) {
		if (!*limits[i].has || (!skipped && delegated_has(ref.path, limits[i].ctrl)))
			continue;
		if (off < sizeof named)
			off += (size_t)snprintf(named + off, sizeof named - off, "%s%s %s", off ? ", " : "",
						limits[i].name, limits[i].value);
		*limits[i].has = false;
	}
	if (skipped && off)
		log_warn("kit: rootless, and no cgroup v2 subtree is delegated to the user: the kit's limits "
			 "(%s) are NOT applied; the box runs without a cgroup (see agentbox-kit(8), ROOTLESS)", named);
	/* (a kit that asks for no limit loses nothing: no warning on every run) */
	else if (off)
		log_warn("kit: rootless, and the cgroup v2 subtree delegated to the user offers no controller for "
			 "the kit's limits (%s): they are NOT applied (see agentbox-kit(8), ROOTLESS)", named);
	return skipped;
}

int kit_resolve_image_cached(const struct global_opts *g, struct kit *k, struct ab_err *err)
{
	if (k->rootfs != KIT_ROOTFS_IMAGE)
		return 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/" IMAGE_CACHE, g->root);
	return kit_resolve_image(k, dir, err);
}

/* slirp4netns as soon as the box's network namespace exists: its start-up
 * overlaps the init's; on_created waits for it to be ready */
static int on_netns(pid_t pid, int netns_fd, void *data, struct ab_err *err)
{
	struct run_ctx *rc = data;
	if (!rc->network)
		return 0;
	return kit_slirp_spawn(&rc->slirp, pid, netns_fd, rc->rd.dir, err);
}

static int on_created(pid_t pid, void *data, struct ab_err *err)
{
	struct run_ctx *rc = data;
	if (kit_secrets_write_files(&rc->secrets, pid, rc->uid, rc->gid, err) < 0)
		return -1;
	if (!rc->network)
		return 0;
	if (rc->slirp.pid <= 0 && kit_slirp_spawn(&rc->slirp, pid, -1, rc->rd.dir, err) < 0)
		return -1;
	return kit_slirp_ready(&rc->slirp, err);
}

/* The overlay's lower layer: the kit's rootfs (for `host`, the skeleton the
 * bundle holds). */
static int rootfs_lower(const struct run_ctx *rc, char lower[PATH_MAX + 8], struct ab_err *err)
{
	if (rc->k->rootfs == KIT_ROOTFS_HOST)
		snprintf(lower, PATH_MAX + 8, "%s/rootfs", rc->rd.bundle);
	else if (rc->k->rootfs == KIT_ROOTFS_IMAGE)
		snprintf(lower, PATH_MAX + 8, "%s", rc->k->image_root);
	else if (!realpath(rc->k->rootfs_path, lower))
		return ab_error(err, errno, "rootfs %s", rc->k->rootfs_path);
	return 0;
}

/* Rootless, a rootfs directory of ids the user's namespace does not map
 * (root's on the host) shows as the overflow id, and nothing in it can be
 * changed, not even by the overlay: the first mount point fails deep in
 * create. Said at once instead. */
static int check_rootless_rootfs(const struct kit *k, struct ab_err *err)
{
	if (k->rootfs != KIT_ROOTFS_DIR || !rootless_detect())
		return 0;
	struct stat st;
	_cleanup_free_ char *text = NULL;
	struct ab_err e;
	long overflow = 65534;
	if (read_file_at(AT_FDCWD, "/proc/sys/kernel/overflowuid", 64, &text, NULL, &e) == 0)
		overflow = strtol(text, NULL, 10);
	if (stat(k->rootfs_path, &st) == 0 && (long)st.st_uid == overflow)
		return ab_error(err, 0, "rootfs %s: rootless, and its owner is not the user nor one of its "
				"subordinate ids (it shows as %ld): the box could not change anything in it; give a "
				"rootfs copied as the user, or an image", k->rootfs_path, overflow);
	return 0;
}

/* The workspace: refused when sensitive (unless allowed), its protections
 * planned, placeholders made for the absent ones. */
static int prepare_workspace(struct run_ctx *rc, const char *ws, bool allow_sensitive, struct ab_err *err)
{
	if (!realpath(ws, rc->ws))
		return ab_error(err, errno, "workspace %s", ws);
	if (!allow_sensitive && !rc->k->ws_allow_sensitive && kit_workspace_check_sensitive(rc->ws, err) < 0)
		return -1;
	/* on a read-only file system nothing can be created: no placeholders */
	struct statvfs sv;
	bool readonly = statvfs(rc->ws, &sv) == 0 && (sv.f_flag & ST_RDONLY);
	if (kit_workspace_plan(rc->k, rc->ws, !readonly, &rc->arena, &rc->ws_plan, err) < 0)
		return -1;
	kit_sweep_begin(&rc->sweep, rc->k, rc->ws, &rc->ws_plan);
	return kit_placeholders_make(&rc->placeholders, rc->ws, &rc->ws_plan, err);
}

/* What a box's layers lie on, as box.json records it. */
static char *box_base(const struct kit *k, struct arena *a, struct ab_err *err)
{
	char real[PATH_MAX];
	switch (k->rootfs) {
	case KIT_ROOTFS_HOST:
		return arena_strdup(a, "host");
	case KIT_ROOTFS_IMAGE: {
		const char *digest = strrchr(k->image_root, '/');
		return arena_printf(a, "image:sha256:%s", digest ? digest + 1 : k->image_root);
	}
	case KIT_ROOTFS_DIR:
		if (!realpath(k->rootfs_path, real)) {
			ab_error(err, errno, "rootfs %s", k->rootfs_path);
			return NULL;
		}
		return arena_printf(a, "dir:%s", real);
	}
	return NULL;
}

/* A named box: taken for this run, on the base it was made on, as its user
 * (the kit's when it says, the box's first run's otherwise). */
static int box_prepare(struct run_ctx *rc, const char *name, const char *kit_file, const char *ws,
		       struct ab_err *err)
{
	const struct kit *k = rc->k;
	if (kit_box_acquire(name, &rc->box, err) < 0)
		return -1;
	run_user(k, ws, &rc->uid, &rc->gid);
	if (!k->has_user && rc->box.has_user) {
		rc->uid = rc->box.uid;
		rc->gid = rc->box.gid;
	}
	const char *base = box_base(k, &rc->arena, err);
	if (!base || kit_box_check_base(&rc->box, base, rc->uid, rc->gid, err) < 0)
		return -1;
	return kit_box_touch(&rc->box, kit_file, rc->learn, err);
}

/* The box's overlay: its layers over the rootfs; a new box's / as the
 * rootfs' is. */
static int box_mount(struct run_ctx *rc, const char *lower, struct ab_err *err)
{
	struct kit_box *b = &rc->box;
	char *lowers, *upper, *work;
	if (kit_box_overlay_dirs(b, lower, &lowers, &upper, &work, err) < 0)
		return -1;
	struct stat st;
	if (b->fresh && (stat(lower, &st) < 0 || fchownat(b->store_fd, upper, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
			 fchmodat(b->store_fd, upper, st.st_mode & 07777, 0) < 0))
		return ab_error(err, errno, "box %s: its upper layer", b->name);
	return kit_rundir_mount_overlay(&rc->rd, lowers, upper, work, b->store_fd, err);
}

/* The box's home in its root, made when missing, the box user's (resolved
 * inside the root: what the box left there cannot lead outside). */
static int box_home(struct run_ctx *rc, struct ab_err *err)
{
	const char *home = kit_home(rc->uid);
	_cleanup_close_ int root = open(rc->rd.merged, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return ab_error(err, errno, "open %s", rc->rd.merged);
	_cleanup_close_ int dir = fcntl(root, F_DUPFD_CLOEXEC, 3);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", home + 1);
	for (char *p = path; dir >= 0;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = 0;
		bool last = !slash;
		if (mkdirat(dir, p, last ? 0700 : 0755) < 0 && errno != EEXIST)
			return ab_error(err, errno, "box %s: mkdir %s", rc->box.name, home);
		int next = -1;
		char sub[PATH_MAX];
		snprintf(sub, sizeof sub, "%.*s", (int)(p - path + strlen(p)), path);
		if (open_in_root(root, sub, O_RDONLY | O_DIRECTORY, &next, err) < 0)
			return ab_wrap(err, "box %s: %s", rc->box.name, home);
		close(dir);
		dir = next;
		if (last)
			break;
		*slash = '/';
		p = slash + 1;
	}
	struct stat st;
	if (fstat(dir, &st) < 0)
		return ab_error(err, errno, "box %s: %s", rc->box.name, home);
	if ((st.st_uid != rc->uid || st.st_gid != rc->gid) && (fchown(dir, rc->uid, rc->gid) < 0 || fchmod(dir, 0700) < 0))
		return ab_error(err, errno, "box %s: chown %s", rc->box.name, home);
	return 0;
}

static void run_cleanup(struct run_ctx *rc)
{
	/* slirp4netns exits while the rest is removed; reaped last */
	kit_slirp_stop_begin(&rc->slirp);
	kit_secrets_wipe(&rc->secrets);
	kit_rundir_remove(&rc->rd);
	kit_placeholders_release(&rc->placeholders);
	if (rc->box.name[0])
		kit_box_release(&rc->box);
	kit_slirp_stop(&rc->slirp);
	arena_free(&rc->arena);
}

/* "a,b" + "c" -> "a,b,c" (NULL when both are empty) */
static char *join_list(char *acc, const char *add)
{
	if (!add || !*add)
		return acc;
	if (!acc)
		return xstrdup(add);
	char *r = xasprintf("%s,%s", acc, add);
	free(acc);
	return r;
}

/* The kit (the file's, or the default one for the workspace), refused
 * rootless on a rootfs the user cannot change, its image unpacked; *ws the
 * workspace it runs on (in ws_real when given), the box's user, a named box
 * taken. */
static int load_kit(struct global_opts *g, const struct kit_run_opts *o, struct run_ctx *rc,
		    char ws_real[PATH_MAX], const char **ws, struct ab_err *err)
{
	const char *workspace = o->workspace;
	if (workspace) {
		if (!realpath(workspace, ws_real))
			return ab_error(err, errno, "--workspace %s", workspace);
		workspace = ws_real;
	}
	if (o->kit_path) {
		if (kit_load(o->kit_path, &rc->k, err) < 0)
			return -1;
	} else {
		rc->k = kit_default(workspace);
	}
	if (check_rootless_rootfs(rc->k, err) < 0 || kit_resolve_image_cached(g, rc->k, err) < 0)
		return -1;
	if (o->ws_guard_set)
		rc->k->ws_guard = o->ws_guard;
	*ws = workspace ? workspace : rc->k->workspace;
	run_user(rc->k, *ws, &rc->uid, &rc->gid);
	if (o->name && box_prepare(rc, o->name, o->kit_path, *ws, err) < 0)
		return -1;
	return 0;
}

/* egress: the operator's flags, the kit's lists and --allow, as the
 * runtime's flags (pointing into rc until the end); slirp4netns found when
 * the box may reach anything; the kit's seccomp profile unless the
 * operator named one. */
static int egress_flags(struct global_opts *g, const struct kit_run_opts *o, struct run_ctx *rc, struct ab_err *err)
{
	const struct kit *k = rc->k;
	bool firewall_off = g->egress_allow && streq(g->egress_allow, "all");
	if (!firewall_off) {
		rc->allow_list = join_list(g->egress_allow ? xstrdup(g->egress_allow) : NULL, NULL);
		for (size_t i = 0; i < k->n_allow; i++)
			rc->allow_list = join_list(rc->allow_list, k->allow[i]);
		for (size_t i = 0; i < o->n_allow; i++)
			rc->allow_list = join_list(rc->allow_list, o->allow[i]);
		g->egress_allow = rc->allow_list;
		/* learning, the box reaches out whatever the kit allows */
		rc->network = rc->allow_list != NULL || rc->learn;
	} else if (rc->learn) {
		return ab_error(err, 0, "kit run --learn: the egress firewall is off (--egress-allow all): there is nothing to learn through");
	} else {
		rc->network = k->n_allow + o->n_allow > 0;
	}
	if (rc->network && kit_slirp_find(&rc->slirp, err) < 0)
		return -1;
	rc->deny_list = join_list(g->egress_deny ? xstrdup(g->egress_deny) : NULL, NULL);
	for (size_t i = 0; i < k->n_deny; i++)
		rc->deny_list = join_list(rc->deny_list, k->deny[i]);
	g->egress_deny = rc->deny_list;
	rc->internal_list = join_list(g->egress_internal ? xstrdup(g->egress_internal) : NULL, NULL);
	for (size_t i = 0; i < k->n_internal; i++)
		rc->internal_list = join_list(rc->internal_list, k->internal[i]);
	g->egress_internal = rc->internal_list;
	if (!g->seccomp_profile)
		g->seccomp_profile = k->seccomp;
	return 0;
}

/* The temporary bundle (bo: how it was built) and the overlay over its
 * rootfs (a box's layers); the run's limits checked against a rootless
 * cgroup. */
static int make_bundle(struct global_opts *g, const struct kit_run_opts *o, struct run_ctx *rc, bool ws,
		       struct kit_build_opts *bo, struct ab_err *err)
{
	const struct kit *k = rc->k;
	if (o->name)
		snprintf(rc->id, sizeof rc->id, BOX_ID_PREFIX "%s", o->name);
	else
		kit_box_new_id(rc->id + 4, 6);
	if (kit_rundir_make(&rc->rd, g, rc->id, err) < 0)
		return -1;
	rc->cgroups_off = rootless_limits(g, rc->k, rc->id);
	if (o->name && k->readonly_rootfs_set && k->readonly_rootfs)
		snprintf(rc->home_source, sizeof rc->home_source, "%s%s", rc->rd.merged, kit_home(rc->uid));
	*bo = (struct kit_build_opts){
		.bundle = rc->rd.bundle,
		.workspace = ws ? rc->ws : NULL,
		.root_path = rc->rd.merged,
		.command = o->command,
		.n_command = o->n_command,
		.terminal = o->tty,
		.network = rc->network,
		.egress_annotations = false,    /* passed as the runtime's flags instead */
		.seccomp_profile = g->seccomp_profile,
		.ws_plan = ws ? &rc->ws_plan : NULL,
		.allow_sensitive_workspace = true,      /* checked before */
		.persistent = o->name != NULL,
		.home_source = rc->home_source[0] ? rc->home_source : NULL,
		.uid = &rc->uid,
		.gid = &rc->gid,
	};
	if (ws && kit_idmap_workspace(rc->ws, rc->uid, rc->gid, bo, err) < 0)
		return -1;
	if (kit_build_bundle(k, bo, err) < 0)
		return -1;
	char lower[PATH_MAX + 8];
	if (rootfs_lower(rc, lower, err) < 0)
		return -1;
	if (o->name ? box_mount(rc, lower, err) < 0 || box_home(rc, err) < 0
		    : kit_rundir_mount_overlay(&rc->rd, lower, NULL, NULL, -1, err) < 0)
		return -1;
	return 0;
}

/* The config with the credentials, in memory only: the JSON wiped once
 * parsed. */
static int config_in_memory(const struct run_ctx *rc, struct kit_build_opts *bo, struct oci_config **config,
			    struct ab_err *err)
{
	bo->secrets = rc->secrets.v;
	bo->n_secrets = rc->secrets.n;
	char *json = NULL;
	if (kit_config_json(rc->k, bo, &json, err) < 0)
		return -1;
	size_t len = strlen(json);
	int r = oci_config_parse(json, "kit config", config, err);
	explicit_bzero(json, len);
	free(json);
	return r;
}

/* Header credentials go to the box's gateway, never into it. */
static size_t gateway_creds(struct run_ctx *rc)
{
	rc->gcreds = xcalloc(rc->secrets.n + 1, sizeof *rc->gcreds);
	size_t n = 0;
	for (size_t i = 0; i < rc->secrets.n; i++) {
		const struct kit_credential *kc = rc->secrets.v[i].cred;
		if (kc->to != KIT_TO_HEADER)
			continue;
		rc->gcreds[n++] = (struct gateway_cred){
			.name = kc->name,
			.hosts = (const char *const *)kc->hosts,
			.n_hosts = kc->n_hosts,
			.header = kc->header,
			.secret = rc->secrets.v[i].value,
			.secret_len = rc->secrets.v[i].len,
		};
	}
	return n;
}

/* Everything before the box runs, into rc and co. Not inlined: its frame
 * (paths, the build options) is gone while kit_run waits for the box,
 * rather than resident in the waiting process. */
static __attribute__((noinline)) int prepare_run(struct global_opts *g, const struct kit_run_opts *o,
						 struct run_ctx *rc, struct create_opts *co, struct ab_err *err)
{
	char ws_real[PATH_MAX];
	const char *ws = NULL;
	if (load_kit(g, o, rc, ws_real, &ws, err) < 0 || egress_flags(g, o, rc, err) < 0)
		return -1;
	/* 1. credentials, read now and kept in memory only */
	if (kit_secrets_read(rc->k, &rc->secrets, err) < 0)
		return -1;
	/* 2. the workspace's protections */
	if (ws && prepare_workspace(rc, ws, o->allow_sensitive_workspace, err) < 0)
		return -1;
	/* 3. the temporary bundle and the overlay over its rootfs (a box's layers) */
	struct kit_build_opts bo;
	if (make_bundle(g, o, rc, ws != NULL, &bo, err) < 0)
		return -1;
	/* 4. the config with the credentials, in memory only */
	struct oci_config *config = NULL;
	if (config_in_memory(rc, &bo, &config, err) < 0)
		return -1;
	/* 5. how it runs; header credentials go to the box's gateway */
	size_t n_gcreds = gateway_creds(rc);
	*co = (struct create_opts){
		.id = rc->id,
		.bundle = rc->rd.bundle,
		.on_created = on_created,
		.on_created_data = rc,
		.on_netns = on_netns,
		.timeout_ms = rc->k->resources.has_timeout ? (int)rc->k->resources.timeout_ms : 0,
		.report_egress = true,
		.config = config,
		.die_with_parent = true,
		.gateway_creds = rc->gcreds,
		.n_gateway_creds = n_gcreds,
		.gateway_upstream_ca = rc->k->upstream_ca,
		.report_learn = rc->learn,
	};
	if (rc->cgroups_off)
		g->cgroups_disabled = true;
	return 0;
}

/* Everything the run made removed; a box made by a run that never started
 * is not kept. */
static void end_run(struct run_ctx *rc, const struct kit_run_opts *o, int ret)
{
	bool drop = ret < 0 && rc->box.name[0] && rc->box.fresh;
	/* the box's processes are gone: what it left in the workspace */
	kit_sweep_end(&rc->sweep, rc->id);
	run_cleanup(rc);
	struct ab_err e;
	if (drop && kit_box_remove(o->name, &e) < 0)
		log_warn("kit run: remove the box %s made for this run: %s", o->name, e.msg);
}

int kit_run(struct global_opts *g, const struct kit_run_opts *o, struct ab_err *err)
{
	struct run_ctx rc = {.slirp = KIT_SLIRP_INIT, .placeholders = KIT_PLACEHOLDERS_INIT,
			     .box = {.store_fd = -1, .lock_fd = -1}, .id = "kit-"};
	/* the global flags the run changes, given back at the end */
	const struct global_opts saved = *g;
	/* the box is its user's: egress allow may widen what the kit allows */
	g->egress_live = true;
	/* learn mode: the operator's flag, or this run's */
	rc.learn = g->egress_learn || o->learn;
	g->egress_learn = rc.learn;
	struct create_opts co;
	int ret = -1;
	if (prepare_run(g, o, &rc, &co, err) == 0) {
		if (rc.learn)
			log_warn("kit run: LEARN MODE: the egress of box %s is OPEN: it may reach any address outside the host's "
				 "networks (deny entries still refuse); its DNS sentry records every name, port and protocol "
				 "it reaches", rc.id);
		ret = container_run(g, &co, err);
	}
	end_run(&rc, o, ret);
	g->egress_allow = saved.egress_allow;
	g->egress_deny = saved.egress_deny;
	g->egress_internal = saved.egress_internal;
	g->seccomp_profile = saved.seccomp_profile;
	g->cgroups_disabled = saved.cgroups_disabled;
	g->egress_live = saved.egress_live;
	g->egress_learn = saved.egress_learn;
	kit_free(rc.k);
	free(rc.allow_list);
	free(rc.deny_list);
	free(rc.internal_list);
	free(rc.gcreds);
	return ret;
}
