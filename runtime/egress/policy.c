/* The agent policy: the seccomp profile and the egress policy resolved from
 * defaults, config, flags and annotations; the egress ruleset installed in the
 * container's network namespace (and checked against the owner's in a joined
 * one). The DNS sentry's process: sentry_process.c. */
#include "policy.h"
#include "config_linux.h"
#include "deny_log.h"
#include "egress_netns.h"
#include "log.h"
#include "policy_gateway.h"
#include "ruleset.h"
#include "seccomp.h"
#include "seccomp_fileprivs.h"
#include "sentry_process.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#define ANNOTATION_SECCOMP "agentbox.seccomp.profile"
/* "refuse": the file-privileges guard stacked on the profile (seccomp_fileprivs.h) */
#define ANNOTATION_FILE_PRIVILEGES "agentbox.seccomp.file-privileges"

static bool profile_name_valid(const char *n)
{
	return streq(n, "agent") || streq(n, "default") || streq(n, "none");
}

#define ANNOTATION_EGRESS_ALLOW "agentbox.egress.allow"
#define ANNOTATION_EGRESS_DENY "agentbox.egress.deny"
#define ANNOTATION_EGRESS_REASONS "agentbox.egress.reasons"
#define ANNOTATION_EGRESS_PROXY "agentbox.egress.proxy"
#define ANNOTATION_EGRESS_MODE "agentbox.egress.mode"

static int resolve_egress(const struct global_opts *g, const struct oci_config *c,
			  struct agent_policy *ret, struct ab_err *err)
{
	const struct agent_config *cfg = &ret->config;
	if (g->egress_allow && streq(g->egress_allow, "all")) {
		ret->egress_enforced = false;
		return 0;
	}
	/* an admin may turn the firewall off in the config; entries on the command line
	 * turn it back on for that runtime */
	ret->egress_enforced = cfg->egress_enforce || g->egress_allow || g->egress_deny;
	if (!ret->egress_enforced)
		return 0;
	char source[PATH_MAX + 32];
	snprintf(source, sizeof source, "%s: egress.allow", cfg->path ? cfg->path : "config");
	if (cfg->egress_allow && egress_policy_add(&ret->egress, cfg->egress_allow, false, source, err) < 0)
		return -1;
	snprintf(source, sizeof source, "%s: egress.deny", cfg->path ? cfg->path : "config");
	if (cfg->egress_deny && egress_policy_add(&ret->egress, cfg->egress_deny, true, source, err) < 0)
		return -1;
	if (g->egress_allow && egress_policy_add(&ret->egress, g->egress_allow, false, "--egress-allow", err) < 0)
		return -1;
	if (g->egress_deny && egress_policy_add(&ret->egress, g->egress_deny, true, "--egress-deny", err) < 0)
		return -1;
	snprintf(source, sizeof source, "%s: egress.internal", cfg->path ? cfg->path : "config");
	if (cfg->egress_internal && egress_policy_add_internal(&ret->egress, cfg->egress_internal, source, err) < 0)
		return -1;
	if (g->egress_internal &&
	    egress_policy_add_internal(&ret->egress, g->egress_internal, "--egress-internal", err) < 0)
		return -1;
	/* what a live allow (egress allow) must stay within, unless it may widen */
	ret->egress_live = g->egress_live || cfg->egress_live_may_widen;
	if (!ret->egress_live) {
		char *text = egress_policy_to_string(&ret->egress);
		ret->egress_ceiling = arena_strdup(&ret->arena, text);
		free(text);
	}
	const char *ann_allow = oci_annotation(c, ANNOTATION_EGRESS_ALLOW);
	if (ann_allow && *ann_allow) {
		struct egress_policy req = {0};
		if (egress_policy_add(&req, ann_allow, false, "annotation " ANNOTATION_EGRESS_ALLOW, err) < 0)
			return -1;
		if (cfg->egress_annotations_may_widen) {
			for (size_t i = 0; i < req.allow.n; i++) {
				char buf[EGRESS_ENTRY_TEXT];
				egress_entry_to_string(&req.allow.v[i], buf, sizeof buf);
				if (egress_policy_add(&ret->egress, buf, false, "annotation " ANNOTATION_EGRESS_ALLOW, err) < 0) {
					egress_policy_free(&req);
					return -1;
				}
			}
			egress_policy_free(&req);
			goto deny;
		}
		/* the workload's side may only narrow what the admin allowed */
		for (size_t i = 0; i < req.allow.n; i++) {
			if (!egress_entry_covered(&ret->egress.allow, &req.allow.v[i])) {
				char buf[EGRESS_ENTRY_TEXT];
				egress_entry_to_string(&req.allow.v[i], buf, sizeof buf);
				egress_policy_free(&req);
				return ab_error(err, 0, "annotation %s: entry \"%s\" is not within the runtime's allowlist: refused (allow it with --egress-allow, or set egress.annotations_may_widen in %s)",
						ANNOTATION_EGRESS_ALLOW, buf, cfg->path ? cfg->path : DEFAULT_AGENT_CONFIG);
			}
		}
		/* narrowing: the annotation's list replaces the admin's */
		struct egress_list old = ret->egress.allow;
		ret->egress.allow = req.allow;
		req.allow = old;
		egress_policy_free(&req);
	}
deny:;
	const char *ann_deny = oci_annotation(c, ANNOTATION_EGRESS_DENY);
	if (ann_deny && egress_policy_add(&ret->egress, ann_deny, true, "annotation " ANNOTATION_EGRESS_DENY, err) < 0)
		return -1;
	/* words for the agent (a kit's network.deny reasons): they refuse nothing */
	const char *ann_reasons = oci_annotation(c, ANNOTATION_EGRESS_REASONS);
	if (ann_reasons && egress_policy_set_reasons(&ret->egress, ann_reasons, "annotation " ANNOTATION_EGRESS_REASONS,
						     err) < 0)
		return -1;
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	if (!net)
		return ab_error(err, 0, "egress policy: the container has no network namespace of its own, so its egress cannot be policed: refused (give it a network namespace, or turn the firewall off with --egress-allow all or egress.enforce: false in %s)",
				cfg->path ? cfg->path : DEFAULT_AGENT_CONFIG);
	return 0;
}

/* The box's HTTP proxy (agentbox-egress(7), REFUSALS): the admin's
 * egress.proxy, or the annotation either way (it grants nothing the policy
 * does not); only where the firewall is in force. */
static int resolve_proxy(const struct oci_config *c, struct agent_policy *ret, struct ab_err *err)
{
	ret->http_proxy = ret->config.egress_proxy;
	const char *ann = oci_annotation(c, ANNOTATION_EGRESS_PROXY);
	if (ann && streq(ann, "true"))
		ret->http_proxy = true;
	else if (ann && streq(ann, "false"))
		ret->http_proxy = false;
	else if (ann)
		return ab_error(err, 0, "annotation %s: \"%s\" is neither true nor false", ANNOTATION_EGRESS_PROXY, ann);
	ret->http_proxy = ret->http_proxy && ret->egress_enforced;
	return 0;
}

/* What a program's environment must not already name for the proxy's to go
 * in: a kit, an image or an engine with a proxy of its own keeps it. */
static const char *const proxy_vars[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
					  "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy" };

const char *policy_proxy_url(void)
{
	static char url[64];
	if (!url[0])
		snprintf(url, sizeof url, "http://127.0.0.1:%d", EGRESS_HTTP_PROXY_PORT);
	return url;
}

void policy_proxy_env(const struct agent_policy *p, struct oci_process *proc, struct arena *a)
{
	if (!p->http_proxy || !proc)
		return;
	for (size_t i = 0; i < proc->n_env; i++)
		for (size_t k = 0; k < ARRAY_SIZE(proxy_vars); k++) {
			size_t n = strlen(proxy_vars[k]);
			if (strncmp(proc->env[i], proxy_vars[k], n) == 0 && proc->env[i][n] == '=')
				return;
		}
	const char *url = policy_proxy_url();
	/* libcurl (curl, git, cargo) reads only the lower-case http_proxy, npm
	 * never HTTP_PROXY for https: both cases; the box's loopback stays
	 * direct; Node from 22.21 and 24 uses them with NODE_USE_ENV_PROXY */
	const char *add[] = { "HTTPS_PROXY", url, "https_proxy", url, "HTTP_PROXY", url, "http_proxy", url,
			      "NO_PROXY", "localhost,127.0.0.1,::1", "no_proxy", "localhost,127.0.0.1,::1",
			      "NODE_USE_ENV_PROXY", "1" };
	size_t n_add = ARRAY_SIZE(add) / 2;
	char **env = arena_alloc(a, (proc->n_env + n_add + 1) * sizeof *env);
	memcpy(env, proc->env, proc->n_env * sizeof *env);
	for (size_t i = 0; i < n_add; i++)
		env[proc->n_env + i] = arena_printf(a, "%s=%s", add[2 * i], add[2 * i + 1]);
	proc->n_env += n_add;
	env[proc->n_env] = NULL;
	proc->env = env;
}

/* Learn mode (agentbox-egress(7), LEARN MODE): the runtime's flag
 * (--egress-mode learn, which kit run --learn sets), or the workload's
 * annotation where the admin allows it (egress.learn_allowed): it opens
 * egress, which a workload may never do by itself. The floor and the
 * seccomp profile are the same in either mode. */
static int resolve_learn(const struct global_opts *g, const struct oci_config *c, struct agent_policy *ret,
			 struct ab_err *err)
{
	const struct agent_config *cfg = &ret->config;
	const char *mode = oci_annotation(c, ANNOTATION_EGRESS_MODE);
	if (mode && !streq(mode, "learn") && !streq(mode, "enforce"))
		return ab_error(err, 0, "annotation %s: unknown mode \"%s\" (enforce or learn)", ANNOTATION_EGRESS_MODE, mode);
	bool asked = mode && streq(mode, "learn");
	if (!g->egress_learn && !asked)
		return 0;
	if (!ret->egress_enforced) {
		if (g->egress_learn)
			return ab_error(err, 0, "--egress-mode learn: the egress firewall is off (--egress-allow all or egress.enforce: false): there is nothing to learn through");
		log_warn("egress: annotation %s=learn: the egress firewall is off: nothing is recorded", ANNOTATION_EGRESS_MODE);
		return 0;
	}
	if (!g->egress_learn && !cfg->egress_learn_allowed)
		return ab_error(err, 0, "annotation %s=learn: learn mode opens egress, and %s does not allow it: refused (set egress.learn_allowed: true there, or run with --egress-mode learn)",
				ANNOTATION_EGRESS_MODE, cfg->path ? cfg->path : DEFAULT_AGENT_CONFIG);
	ret->egress.learn = true;
	/* kit run says so itself, louder, with the box's name */
	if (!g->egress_live)
		log_warn("egress: LEARN MODE: the container's egress is OPEN (deny entries and internal ranges aside); its DNS sentry records what it reaches: agentbox egress suggest ID prints the allowlist");
	return 0;
}

/* The path of the container's state directory (ROOT/ID), from its fd. */
static int state_dir_path(int state_dirfd, char *dir, size_t len, struct ab_err *err)
{
	char fdlink[64];
	snprintf(fdlink, sizeof fdlink, "/proc/self/fd/%d", state_dirfd);
	ssize_t dl = readlink(fdlink, dir, len - 1);
	if (dl < 0)
		return ab_error(err, errno, "egress: find the state directory");
	dir[dl] = 0;
	return 0;
}

/* The container of ROOT whose state records the pool token TOKEN (its
 * ruleset came from the pool, so the table's comment names the token): its id
 * into id, or -1. States are read without their locks: each is replaced
 * atomically, and only the match is read again properly. */
static int token_owner(const char *root, const char *token, char *id, size_t len)
{
	char **ids;
	size_t n;
	struct ab_err e;
	if (strlen(token) != NETNS_POOL_TOKEN_LEN || state_list_ids(root, &ids, &n, &e) < 0)
		return -1;
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = -1;
	for (size_t i = 0; i < n && r < 0; i++) {
		char path[PATH_MAX], *buf;
		size_t got;
		snprintf(path, sizeof path, "%s/" STATE_FILE, ids[i]);
		if (read_file_at(rootfd, path, STATE_FILE_MAX, &buf, &got, &e) < 0)
			continue;
		if (strstr(buf, token)) {
			snprintf(id, len, "%s", ids[i]);
			r = 0;
		}
		free(buf);
	}
	state_free_ids(ids, n);
	return r;
}

/* The policy of the container whose ruleset polices a joined netns, from its
 * state in the same root (the table comment names it, or the pool token its
 * state records). */
static int owner_policy(int netns, const char *path, const char *self_id, int state_dirfd, char *owner,
			size_t owner_len, struct egress_policy *ret, struct ab_err *err)
{
	int r = egress_table_owner(netns, owner, owner_len, err);
	if (r < 0)
		return ab_wrap(err, "egress: read the ruleset of the network namespace %s", path);
	if (r == 0)
		return 0;
	char dir[PATH_MAX];
	if (state_dir_path(state_dirfd, dir, sizeof dir, err) < 0)
		return -1;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	char token[NETNS_POOL_TOKEN_LEN + 2] = "";
	if (owner[0] == '@') {
		snprintf(token, sizeof token, "%s", owner + 1);
		if (token_owner(dir, token, owner, owner_len) < 0)
			return ab_error(err, 0, "egress: the network namespace %s has an agentbox ruleset of no live container under %s (its table comment names pool token \"%s\"): refused",
					path, dir, token);
	}
	if (!container_id_valid(owner) || streq(owner, self_id))
		return ab_error(err, 0, "egress: the network namespace %s has an agentbox ruleset of no live container (table comment names \"%s\"): refused (delete it with: nft delete table inet agentbox)",
				path, owner);
	int dfd;
	struct container_state ost;
	struct ab_err e;
	if (state_dir_open(dir, owner, false, &dfd, &e) < 0)
		return ab_error(err, 0, "egress: the network namespace %s is policed by container %s, whose state is not under %s (%s): refused",
				path, owner, dir, e.msg);
	r = state_read(dfd, owner, &ost, &e);
	close(dfd);
	if (r < 0)
		return ab_error(err, 0, "egress: the network namespace %s is policed by container %s: %s: refused", path, owner, e.msg);
	r = 1;
	char source[128];
	snprintf(source, sizeof source, "container %s's egressPolicy", owner);
	if (token[0] && !(ost.egress_token && streq(ost.egress_token, token)))
		r = ab_error(err, 0, "egress: the network namespace %s has an agentbox ruleset of no live container under %s (its table comment names pool token \"%s\"): refused",
			     path, dir, token);
	else if (!ost.egress_policy || strncmp(ost.egress_policy, "allow=", 6) != 0)
		r = ab_error(err, 0, "egress: the network namespace %s is policed by container %s, whose state has no egress policy: refused",
			     path, owner);
	else if (egress_policy_from_string(ost.egress_policy, source, ret, err) < 0)
		r = -1;
	state_free(&ost);
	return r;
}

/* Rules are per network namespace: a container that joins one another
 * container polices (a pod's pause container, --network container:X) gets that
 * container's rules and sentry whatever its own flags say. Refuse it when its
 * own policy would let it reach more; say so when it would let it reach less. */
static int check_joined(const struct agent_policy *p, int netns, const char *path, const char *id, int state_dirfd,
			struct ab_err *err)
{
	char owner[256];
	struct egress_policy op = {0};
	int r = owner_policy(netns, path, id, state_dirfd, owner, sizeof owner, &op, err);
	if (r <= 0)
		return r;
	char what[EGRESS_ENTRY_TEXT];
	bool missing_deny = false;
	r = 0;
	if (!p->egress_enforced)
		r = ab_error(err, 0, "egress: the network namespace %s is policed by container %s and this container's firewall is off (it would allow everything): refused (give it the same policy or a narrower one)",
			     path, owner);
	else if (egress_policy_wider(&p->egress, &op, what, sizeof what, &missing_deny))
		r = ab_error(err, 0, missing_deny
			     ? "egress: the network namespace %s is policed by container %s, which denies \"%s\" and this container does not: refused (containers sharing a network namespace share its rules; give it the same policy or a narrower one)"
			     : "egress: the network namespace %s is policed by container %s, whose policy does not allow \"%s\": refused (containers sharing a network namespace share its rules; give it the same policy or a narrower one)",
			     path, owner, what);
	else {
		char *a = egress_policy_to_string(&p->egress), *b = egress_policy_to_string(&op);
		if (streq(a, b))
			log_debug("egress: %s shares the network namespace %s and the policy of container %s", id, path, owner);
		else
			log_warn("egress: container %s joins the network namespace %s of container %s and gets its egress rules (rules are per network namespace): its own narrower policy does not apply",
				 id, path, owner);
		free(a);
		free(b);
	}
	egress_policy_free(&op);
	return r;
}

int policy_netns_owner(const struct agent_policy *p, const char *path, const char *id, int state_dirfd,
		       char *owner, size_t owner_len, bool *ret_same, struct ab_err *err)
{
	*ret_same = false;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open the network namespace %s", path);
	struct egress_policy op = {0};
	int r = owner_policy(fd, path, id, state_dirfd, owner, owner_len, &op, err);
	if (r == 1 && p->egress_enforced) {
		char *a = egress_policy_to_string(&p->egress), *b = egress_policy_to_string(&op);
		*ret_same = streq(a, b);
		free(a);
		free(b);
	}
	egress_policy_free(&op);
	return r;
}

static void record_policy(struct agent_policy *p, struct container_state *st);

const char *policy_egress_text(struct agent_policy *p)
{
	if (!p->egress_enforced)
		return NULL;
	if (!p->egress_text) {
		char *text = egress_policy_to_string(&p->egress);
		p->egress_text = arena_strdup(&p->arena, text);
		free(text);
	}
	return p->egress_text;
}

/* The policy in the state, and what a live change of it must respect. */
static void record_policy(struct agent_policy *p, struct container_state *st)
{
	st->egress_policy = arena_strdup(&st->arena, policy_egress_text(p));
	st->egress_ceiling = p->egress_ceiling ? arena_strdup(&st->arena, p->egress_ceiling) : NULL;
	st->egress_may_widen = p->egress_live;
	st->egress_proxy = p->http_proxy;
}

int policy_install(struct agent_policy *p, const struct oci_config *c, struct container_state *st,
		   int state_dirfd, struct ab_err *err)
{
	const struct oci_namespace *net = oci_namespace_find(c, NS_NETWORK);
	if (!p->egress_enforced) {
		/* without a firewall of its own it would keep CAP_NET_ADMIN in a policed netns */
		if (!net || !net->path)
			return 0;
		_cleanup_close_ int fd = open(net->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;   /* joining it fails with its own error */
		char owner[256];
		struct ab_err e;
		int r = egress_table_owner(fd, owner, sizeof owner, &e);
		if (r < 0) {
			/* a host without nf_tables has no ruleset to widen */
			log_debug("egress: %s: %s", net->path, e.msg);
			return 0;
		}
		return r == 0 ? 0 : check_joined(p, fd, net->path, st->id, state_dirfd, err);
	}
	if (p->config.egress_hook_anchor) {
		struct ab_err e;
		if (egress_hook_anchor_ensure(EGRESS_HOOK_ANCHOR, &e) < 0)
			log_debug("egress: %s (the ruleset works without it, only its install is slower)", e.msg);
	}
	if (p->ruleset_pooled) {
		/* made by the pool's filler for this very policy: only say whose it is */
		st->egress_token = arena_strdup(&st->arena, p->pool_token);
		record_policy(p, st);
		return 0;
	}
	_cleanup_close_ int netns = egress_netns_open(p, c, st->pid, err);
	if (netns < 0)
		return -1;
	if (net && net->path) {
		/* a joined netns (pod, --network container:X) that another container
		 * already polices keeps its rules and its sentry */
		int r = egress_install_new(netns, &p->egress, st->id, EGRESS_SENTRY_PORT, err);
		if (r < 0)
			return ab_wrap(err, "egress: install the firewall");
		if (r == 1) {
			if (check_joined(p, netns, net->path, st->id, state_dirfd, err) < 0)
				return -1;
			/* the owner's sentry takes this namespace's TCP/443, not ours:
			 * the credential would silently not be put in */
			if (p->gateway_started)
				return ab_error(err, 0, "credential gateway: header credentials need a network namespace this container's own firewall polices; %s is policed by another container's: refused (give the credentials to the container that made the namespace)",
						net->path);
			p->egress_shared = true;
			/* policed all the same: exec must keep dropping CAP_NET_RAW/ADMIN */
			st->egress_policy = arena_printf(&st->arena, "shared:%s", net->path);
		} else {
			/* ours: a failed create must not leave it in a namespace that stays */
			p->egress_installed_path = arena_strdup(&p->arena, net->path);
			record_policy(p, st);
		}
		return 0;
	}
	/* A namespace cloned a moment ago holds no table to replace. Replacing
	 * (add + delete + add) would leave a delete in the commit, which the kernel
	 * frees only after an RCU grace period, and closing our socket waits for
	 * that (Linux 6.x: 6-12 ms here under load). */
	int r = egress_install_new(netns, &p->egress, st->id, EGRESS_SENTRY_PORT, err);
	if (r == 1)
		return ab_error(err, 0, "egress: the container's new network namespace already has a ruleset");
	if (r < 0)
		return ab_wrap(err, "egress: install the firewall");
	record_policy(p, st);
	return 0;
}


int policy_resolve(const struct global_opts *g, const struct oci_config *c,
		   struct agent_policy *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	ret->sentry_pidfd = -1;
	if (agent_config_load(g->config_path, &ret->arena, &ret->config, err) < 0)
		return -1;
	/* with nothing selected anywhere every container gets the agent profile */
	const char *profile = ret->config.seccomp_profile;
	if (g->seccomp_profile) {
		if (!profile_name_valid(g->seccomp_profile))
			return ab_error(err, 0, "--seccomp-profile: unknown profile \"%s\" (agent, default, none)", g->seccomp_profile);
		profile = g->seccomp_profile;
	}
	const char *ann = oci_annotation(c, ANNOTATION_SECCOMP);
	if (ann) {
		if (!profile_name_valid(ann))
			return ab_error(err, 0, "annotation %s: unknown profile \"%s\" (agent, default, none)", ANNOTATION_SECCOMP, ann);
		/* annotations come from the workload's side: they may only tighten */
		bool widens = streq(ann, "none") || (streq(ann, "default") && streq(profile, "agent"));
		if (widens)
			return ab_error(err, 0, "annotation %s=%s would weaken the runtime's profile \"%s\": refused (set it with --seccomp-profile)",
					ANNOTATION_SECCOMP, ann, profile);
		profile = ann;
	}
	/* a tightening only: any container may ask for it */
	const char *fp = oci_annotation(c, ANNOTATION_FILE_PRIVILEGES);
	if (fp && !streq(fp, "refuse"))
		return ab_error(err, 0, "annotation %s: unknown value \"%s\" (refuse)", ANNOTATION_FILE_PRIVILEGES, fp);
	ret->refuse_file_privileges = fp != NULL;
	if (resolve_egress(g, c, ret, err) < 0 || resolve_learn(g, c, ret, err) < 0 || resolve_proxy(c, ret, err) < 0)
		return -1;
	ret->seccomp_profile = profile;
	return 0;
}

/* Could the process hold CAP_SETFCAP (and so write security.capability)?
 * Without a capabilities object: assume it could. */
static bool may_set_file_caps(const struct oci_process *proc)
{
	if (!proc || !proc->has_capabilities)
		return true;
	const struct oci_capabilities *k = &proc->caps;
	return ((k->bounding | k->effective | k->permitted | k->inheritable | k->ambient) >> CAP_SETFCAP) & 1;
}

int policy_seccomp_programs(struct agent_policy *p, const struct oci_config *c, const struct oci_process *proc,
			    const char *state_root, struct seccomp_prog *progs, size_t *ret_n, struct ab_err *err)
{
	char cache[PATH_MAX];
	snprintf(cache, sizeof cache, "%s/.seccomp-cache", state_root);
	(void)mkdir(state_root, 0700);   /* the first container on a host fills the cache too */
	size_t n = 0;
	if (c->linux_.seccomp) {
		if (seccomp_compile_cached(c->linux_.seccomp, cache, &progs[n], err) < 0)
			return ab_wrap(err, "config.json: linux.seccomp");
		n++;
	}
	if (!streq(p->seccomp_profile, "none")) {
		if (seccomp_builtin_compile_cached(p->seccomp_profile, cache, &progs[n], err) < 0) {
			for (size_t i = 0; i < n; i++)
				seccomp_prog_free(&progs[i]);
			return ab_wrap(err, "seccomp profile \"%s\"", p->seccomp_profile);
		}
		n++;
	}
	if (p->refuse_file_privileges) {
		unsigned int flags = may_set_file_caps(proc) ? SECCOMP_FILEPRIVS_XATTRS : 0;
		if (seccomp_fileprivs_program(flags, &progs[n], err) < 0) {
			for (size_t i = 0; i < n; i++)
				seccomp_prog_free(&progs[i]);
			return ab_wrap(err, "annotation %s", ANNOTATION_FILE_PRIVILEGES);
		}
		n++;
	}
	*ret_n = n;
	return 0;
}

void policy_cleanup(struct agent_policy *p, struct container_state *st)
{
	policy_gateway_stop(p);
	policy_sentry_cleanup(p);
	if (p->durable_made)
		deny_log_forget(&p->config, st->id);
	if (p->egress_installed_path) {
		_cleanup_close_ int fd = open(p->egress_installed_path, O_RDONLY | O_CLOEXEC);
		struct ab_err e;
		if (fd >= 0 && egress_remove(fd, &e) < 0)
			log_warn("cleanup: %s", e.msg);
		p->egress_installed_path = NULL;
	}
}

void policy_teardown(const struct container_state *s)
{
	policy_gateway_teardown(s);
	policy_sentry_stop(s);
}

void policy_free(struct agent_policy *p)
{
	policy_gateway_forget(p);
	policy_sentry_free(p);
	egress_policy_free(&p->egress);
	if (p->netns_pooled)
		close(p->netns_fd);
	p->netns_pooled = false;
	arena_free(&p->arena);
}
