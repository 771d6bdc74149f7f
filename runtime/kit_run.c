/* kit run: builds into a temporary directory (kit_rundir.c), puts a
 * copy-on-write overlay over the rootfs, reads the credentials into memory
 * (kit_secrets.c), hands the lifecycle a config parsed in memory (the one on
 * disk has no secret in it), attaches slirp4netns when the box may reach
 * anything (kit_slirp.c), writes file credentials into the box's tmpfs before
 * its program starts, and removes everything it made at the end. */
#include "kit_run.h"
#include "config.h"
#include "kit_placeholders.h"
#include "kit_rundir.h"
#include "kit_secrets.h"
#include "kit_slirp.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

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
};

int kit_resolve_image_cached(const struct global_opts *g, struct kit *k, struct ab_err *err)
{
	if (k->rootfs != KIT_ROOTFS_IMAGE)
		return 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/" IMAGE_CACHE, g->root);
	return kit_resolve_image(k, dir, err);
}

static int on_created(pid_t pid, void *data, struct ab_err *err)
{
	struct run_ctx *rc = data;
	if (kit_secrets_write_files(&rc->secrets, pid, rc->uid, rc->gid, err) < 0)
		return -1;
	if (rc->network && kit_slirp_start(&rc->slirp, pid, rc->rd.dir, err) < 0)
		return -1;
	return 0;
}

static void random_hex(char *buf, size_t bytes)
{
	unsigned char r[32];
	if (bytes > sizeof r)
		bytes = sizeof r;
	if (getrandom(r, bytes, 0) != (ssize_t)bytes) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
		for (size_t i = 0; i < bytes; i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
			r[i] = (unsigned char)(x >> 56);
	}
	for (size_t i = 0; i < bytes; i++)
		sprintf(buf + 2 * i, "%02x", r[i]);
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

/* The workspace: refused when sensitive (unless allowed), its protections
 * planned, placeholders made for the absent ones. */
static int prepare_workspace(struct run_ctx *rc, const char *ws, bool allow_sensitive, struct ab_err *err)
{
	if (!realpath(ws, rc->ws))
		return ab_error(err, errno, "workspace %s", ws);
	if (!allow_sensitive && !rc->k->ws_allow_sensitive && kit_workspace_check_sensitive(rc->ws, err) < 0)
		return -1;
	if (kit_workspace_plan(rc->k, rc->ws, true, &rc->arena, &rc->ws_plan, err) < 0)
		return -1;
	return kit_placeholders_make(&rc->placeholders, rc->ws, &rc->ws_plan, err);
}

static void run_cleanup(struct run_ctx *rc)
{
	kit_slirp_stop(&rc->slirp);
	kit_secrets_wipe(&rc->secrets);
	kit_rundir_remove(&rc->rd);
	kit_placeholders_release(&rc->placeholders);
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

int kit_run(struct global_opts *g, const struct kit_run_opts *o, struct ab_err *err)
{
	struct run_ctx rc = {.slirp = KIT_SLIRP_INIT, .placeholders = KIT_PLACEHOLDERS_INIT};
	char *allow_list = NULL, *deny_list = NULL;
	const char *saved_allow = g->egress_allow, *saved_deny = g->egress_deny;
	const char *saved_seccomp = g->seccomp_profile;
	char ws_real[PATH_MAX];
	const char *workspace = o->workspace;
	int ret = -1;
	if (workspace) {
		if (!realpath(workspace, ws_real)) {
			ab_error(err, errno, "--workspace %s", workspace);
			goto out;
		}
		workspace = ws_real;
	}
	if (o->kit_path) {
		if (kit_load(o->kit_path, &rc.k, err) < 0)
			goto out;
	} else {
		rc.k = kit_default(workspace);
	}
	if (kit_resolve_image_cached(g, rc.k, err) < 0)
		goto out;
	const struct kit *k = rc.k;
	const char *ws = workspace ? workspace : k->workspace;
	kit_effective_user(k, ws, &rc.uid, &rc.gid);

	/* egress: the operator's flags, the kit's lists and --allow, as the runtime's flags */
	bool firewall_off = g->egress_allow && streq(g->egress_allow, "all");
	if (!firewall_off) {
		allow_list = join_list(g->egress_allow ? xstrdup(g->egress_allow) : NULL, NULL);
		for (size_t i = 0; i < k->n_allow; i++)
			allow_list = join_list(allow_list, k->allow[i]);
		for (size_t i = 0; i < o->n_allow; i++)
			allow_list = join_list(allow_list, o->allow[i]);
		g->egress_allow = allow_list;
		rc.network = allow_list != NULL;
	} else {
		rc.network = k->n_allow + o->n_allow > 0;
	}
	deny_list = join_list(g->egress_deny ? xstrdup(g->egress_deny) : NULL, NULL);
	for (size_t i = 0; i < k->n_deny; i++)
		deny_list = join_list(deny_list, k->deny[i]);
	g->egress_deny = deny_list;
	if (!g->seccomp_profile)
		g->seccomp_profile = k->seccomp;

	/* 1. credentials, read now and kept in memory only */
	if (kit_secrets_read(k, &rc.secrets, err) < 0)
		goto out;

	/* 2. the workspace's protections */
	if (ws && prepare_workspace(&rc, ws, o->allow_sensitive_workspace, err) < 0)
		goto out;

	/* 3. the temporary bundle and the overlay over its rootfs */
	char id[32] = "kit-";
	random_hex(id + 4, 6);
	if (kit_rundir_make(&rc.rd, g, id, err) < 0)
		goto out;
	struct kit_build_opts bo = {
		.bundle = rc.rd.bundle,
		.workspace = ws ? rc.ws : NULL,
		.root_path = rc.rd.merged,
		.command = o->command,
		.n_command = o->n_command,
		.terminal = o->tty,
		.network = rc.network,
		.egress_annotations = false,    /* passed as the runtime's flags instead */
		.seccomp_profile = g->seccomp_profile,
		.ws_plan = ws ? &rc.ws_plan : NULL,
		.allow_sensitive_workspace = true,      /* checked above */
	};
	if (kit_build_bundle(k, &bo, err) < 0)
		goto out;
	char lower[PATH_MAX + 8];
	if (rootfs_lower(&rc, lower, err) < 0 || kit_rundir_mount_overlay(&rc.rd, lower, NULL, NULL, err) < 0)
		goto out;

	/* 4. the config with the credentials, in memory only */
	struct oci_config *config = NULL;
	{
		bo.secrets = rc.secrets.v;
		bo.n_secrets = rc.secrets.n;
		char *json = NULL;
		if (kit_config_json(k, &bo, &json, err) < 0)
			goto out;
		size_t len = strlen(json);
		int r = oci_config_parse(json, "kit config", &config, err);
		explicit_bzero(json, len);
		free(json);
		if (r < 0)
			goto out;
	}

	/* 5. run it */
	struct create_opts co = {
		.id = id,
		.bundle = rc.rd.bundle,
		.on_created = on_created,
		.on_created_data = &rc,
		.timeout_ms = k->resources.has_timeout ? (int)k->resources.timeout_ms : 0,
		.report_egress = true,
		.config = config,
		.die_with_parent = true,
	};
	ret = container_run(g, &co, err);
out:
	run_cleanup(&rc);
	g->egress_allow = saved_allow;
	g->egress_deny = saved_deny;
	g->seccomp_profile = saved_seccomp;
	kit_free(rc.k);
	free(allow_list);
	free(deny_list);
	return ret;
}
