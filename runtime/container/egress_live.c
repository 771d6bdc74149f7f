/* egress allow/deny ID ENTRY...: a running container's policy changed at once.
 *
 *   1. the container's state, locked: its own firewall, its sentry alive
 *   2. the entries parsed as at create; a live allow stays within the admin's
 *      policy (egressCeiling) unless the box may widen (a kit box, or
 *      egress.live_may_widen in the config)
 *   3. the ruleset replaced in one batch, the sentry's set elements carried
 *      over (after a deny, but for the addresses of allowed names)
 *   4. the sentry told through EGRESS_POLICY_FILE and SIGHUP; if it refuses,
 *      the old ruleset goes back
 *   5. after a deny, the conntrack entries of flows to a denied CIDR, and to
 *      the addresses the sentry learnt for a denied name, deleted, so
 *      established connections end too
 *   6. the state, and a "policy" record in both deny logs */
#include "egress_live.h"
#include "agent_config.h"
#include "container.h"
#include "deny_log.h"
#include "egress.h"
#include "ruleset.h"
#include "json.h"
#include "log.h"
#include "netns_pool.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SENTRY_ANSWER_MS 5000

/* Canonical texts of a list's entries. */
static char **texts(const struct egress_list *l)
{
	char **v = calloc(l->n + 1, sizeof *v);
	for (size_t i = 0; v && i < l->n; i++) {
		char buf[EGRESS_ENTRY_TEXT];
		v[i] = xstrdup(egress_entry_to_string(&l->v[i], buf, sizeof buf));
	}
	return v;
}

static void texts_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static bool texts_have(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (streq(v[i], s))
			return true;
	return false;
}

/* "a,b,c" of the entries of v not in drop, then those of add not in v. */
static char *joined(char *const *v, char *const *drop, char *const *add)
{
	size_t len = 1;
	for (size_t i = 0; v[i]; i++)
		len += strlen(v[i]) + 1;
	for (size_t i = 0; add && add[i]; i++)
		len += strlen(add[i]) + 1;
	char *out = xmalloc(len);
	out[0] = 0;
	for (size_t i = 0; v[i]; i++)
		if (!texts_have(drop, v[i]))
			strcat(strcat(out, out[0] ? "," : ""), v[i]);
	for (size_t i = 0; add && add[i]; i++)
		if (!texts_have(v, add[i]))
			strcat(strcat(out, out[0] ? "," : ""), add[i]);
	return out;
}

/* The new policy: the requested entries added to one list and taken off the
 * other (an allow undoes a deny of the same entry, and the reverse). */
static int changed_policy(const struct egress_policy *cur, bool deny, char *const *req, struct egress_policy *ret,
			  struct ab_err *err)
{
	char **allow = texts(&cur->allow), **denied = texts(&cur->deny), **internal = texts(&cur->internal);
	char *a = joined(allow, deny ? req : NULL, deny ? NULL : req);
	char *d = joined(denied, deny ? NULL : req, deny ? req : NULL);
	char *in = joined(internal, NULL, NULL);
	*ret = (struct egress_policy){0};
	int r = 0;
	if (egress_policy_add(ret, a, false, "the changed policy", err) < 0 ||
	    egress_policy_add(ret, d, true, "the changed policy", err) < 0 ||
	    egress_policy_add_internal(ret, in, "the changed policy", err) < 0)
		r = -1;
	ret->learn = cur->learn;   /* a live change keeps the mode */
	free(a);
	free(d);
	free(in);
	texts_free(allow);
	texts_free(denied);
	texts_free(internal);
	return r;
}

/* A live allow may only narrow an engine-run container's policy: within the
 * admin's allowlist, and no undoing of the admin's deny entries. */
static int check_within(const struct container_state *s, const struct egress_policy *req, bool deny,
			const char *config_name, struct ab_err *err)
{
	if (deny)
		return 0;
	struct egress_policy ceiling = {0};
	char source[300];
	snprintf(source, sizeof source, "container %s's egressCeiling", s->id);
	if (!s->egress_ceiling || egress_policy_from_string(s->egress_ceiling, source, &ceiling, err) < 0)
		return s->egress_ceiling ? -1
					 : ab_error(err, 0, "egress allow: container \"%s\" was created before live changes: its policy may not be widened",
						    s->id);
	char **admin_deny = texts(&ceiling.deny);
	int r = 0;
	for (size_t i = 0; i < req->allow.n && r == 0; i++) {
		char buf[EGRESS_ENTRY_TEXT];
		egress_entry_to_string(&req->allow.v[i], buf, sizeof buf);
		if (!egress_entry_covered(&ceiling.allow, &req->allow.v[i]))
			r = ab_error(err, 0, "egress allow: entry \"%s\" is not within the runtime's allowlist for container \"%s\": refused (allow it with --egress-allow, or set egress.live_may_widen in %s)",
				     buf, s->id, config_name);
		else if (texts_have(admin_deny, buf))
			r = ab_error(err, 0, "egress allow: entry \"%s\" is denied by the runtime's policy for container \"%s\": refused (set egress.live_may_widen in %s)",
				     buf, s->id, config_name);
	}
	texts_free(admin_deny);
	egress_policy_free(&ceiling);
	return r;
}

/* The sentry's answer in the policy file: 1 "applied N", -1 "refused N why"
 * (why in err), 0 not yet. */
static int sentry_answer(int fd, unsigned long want, struct ab_err *err)
{
	char buf[400];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	unsigned long got;
	int off = 0;
	if (sscanf(buf, "applied %lu%n", &got, &off) == 1 && got == want)
		return 1;
	if (sscanf(buf, "refused %lu %n", &got, &off) == 1 && got == want && off > 0) {
		buf[strcspn(buf, "\n")] = 0;
		return ab_error(err, 0, "the DNS sentry refused the change: %s", buf + off);
	}
	return 0;
}

/* Wait for the sentry's word on change want (0: that it listens at all). */
static int sentry_wait(int fd, const struct container_state *s, unsigned long want, struct ab_err *err)
{
	for (int waited = 0; waited < SENTRY_ANSWER_MS; waited += 20) {
		int r = sentry_answer(fd, want, err);
		if (r != 0)
			return r < 0 ? -1 : 0;
		if (!proc_is(s->sentry_pid, s->sentry_start_time))
			return ab_error(err, 0, "the DNS sentry exited");
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return ab_error(err, ETIMEDOUT, "the DNS sentry did not answer within %d s", SENTRY_ANSWER_MS / 1000);
}

/* Tell the sentry: "pending N\n<policy>", SIGHUP, its answer. */
static int sentry_change(int dirfd, const struct container_state *s, const char *policy, struct ab_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, EGRESS_POLICY_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ab_error(err, errno, "open %s (a container created before live changes?)", EGRESS_POLICY_FILE);
	char head[64];
	ssize_t n = pread(fd, head, sizeof head - 1, 0);
	head[n > 0 ? n : 0] = 0;
	unsigned long last = 0;
	/* a sentry still starting has not said "applied 0" yet */
	if (sscanf(head, "applied %lu", &last) != 1 && sentry_wait(fd, s, 0, err) < 0)
		return -1;
	size_t len = strlen(policy) + 32;
	_cleanup_free_ char *text = xmalloc(len);
	int tl = snprintf(text, len, "pending %lu\n%s", last + 1, policy);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)tl, 0) != tl)
		return ab_error(err, errno, "write %s", EGRESS_POLICY_FILE);
	if (kill(s->sentry_pid, SIGHUP) < 0)
		return ab_error(err, errno, "signal the DNS sentry");
	return sentry_wait(fd, s, last + 1, err);
}

/* {"time":...,"container":...,"verdict":"policy","change":"allow","entries":"a,b","uid":N} */
static void log_change(const struct agent_config *cfg, int dirfd, const char *id, bool deny, const char *entries)
{
	char ts[64];
	format_rfc3339(ts, sizeof ts);
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "time", ts);
	json_kv_str(o, "container", id);
	json_kv_str(o, "verdict", "policy");
	json_kv_str(o, "change", deny ? "deny" : "allow");
	json_kv_str(o, "entries", entries);
	json_kv_int(o, "uid", (int64_t)getuid());
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	char *line = xmalloc(len + 1);
	memcpy(line, text, len);
	line[len] = '\n';
	json_out_free(o);
	int fd = openat(dirfd, EGRESS_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		(void)!write(fd, line, len + 1);
		close(fd);
	}
	(void)deny_log_append(cfg, id, line, len + 1);
	free(line);
}

/* What egress_live_change has loaded and made, freed by live_free. */
struct live {
	const char *verb;               /* "egress allow" or "egress deny" */
	bool deny;
	struct arena a;
	struct agent_config cfg;
	struct container_state s;
	bool loaded;                    /* s is the container's */
	struct egress_policy cur, req, np;      /* as it is, the request, as it becomes */
	char **req_texts, *list, *old_text, *new_text;
	int dirfd, netns;
	char owner[NETNS_POOL_TOKEN_LEN + 300]; /* the ruleset's owner */
};

/* A foreground run forks its sentry only once something needs it, or
 * SENTRY_LAZY_MS after its program started: a change that comes sooner
 * waits for it (up to LAZY_SENTRY_WAIT_MS), with the state's lock let go
 * meanwhile, since the run records the sentry under that lock. */
#define LAZY_SENTRY_WAIT_MS 2000

static int live_load_state(struct live *l, const struct global_opts *g, const char *id, struct ab_err *err)
{
	for (int waited = 0;; waited += 10) {
		if (container_load(g, id, true, &l->dirfd, &l->s, err) < 0)
			return -1;
		const struct container_state *s = &l->s;
		bool pending = s->egress_policy && s->sentry_pid <= 0 && state_status(s) != STATUS_STOPPED;
		if (!pending || waited >= LAZY_SENTRY_WAIT_MS)
			return 0;
		state_free(&l->s);
		close(l->dirfd);
		l->dirfd = -1;
		(void)usleep(10 * 1000);
	}
}

/* 1. the container: its own firewall, its sentry alive */
static int live_load(struct live *l, const struct global_opts *g, const char *id, struct ab_err *err)
{
	if (agent_config_load(g->config_path, &l->a, &l->cfg, err) < 0)
		return -1;
	if (live_load_state(l, g, id, err) < 0)
		return -1;
	l->loaded = true;
	const struct container_state *s = &l->s;
	if (!s->egress_policy || strncmp(s->egress_policy, "shared:", 7) == 0)
		return ab_error(err, 0, s->egress_policy
			? "%s: container \"%s\" shares the firewall of the network namespace %s: change the policy of the container that made it"
			: "%s: container \"%s\" has no egress policy (its firewall is off)",
			l->verb, s->id, s->egress_policy ? s->egress_policy + 7 : "");
	if (state_status(s) == STATUS_STOPPED || !proc_is(s->sentry_pid, s->sentry_start_time) || s->sentry_pid <= 0)
		return ab_error(err, 0, "%s: container \"%s\" is not running with its DNS sentry: nothing to change", l->verb,
				s->id);
	return 0;
}

/* 2. the entries, as at create, and the policy they make: 1 when that is
 * the policy as it is already */
static int live_new_policy(struct live *l, char *const *entries, size_t n, struct ab_err *err)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(entries[i]) + 1;
	l->list = xmalloc(len);
	l->list[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (streq(entries[i], "all"))
			return ab_error(err, 0, "%s: \"all\" is not an entry (a firewall is not turned off while the box runs)",
					l->verb);
		strcat(strcat(l->list, i ? "," : ""), entries[i]);
	}
	if (egress_policy_add(&l->req, l->list, l->deny, l->verb, err) < 0)
		return -1;
	if (egress_policy_is_empty(&l->req))
		return ab_error(err, 0, "%s: no entry given", l->verb);
	char source[300];
	snprintf(source, sizeof source, "container %s's egressPolicy", l->s.id);
	if (egress_policy_from_string(l->s.egress_policy, source, &l->cur, err) < 0)
		return -1;
	if (!(l->s.egress_may_widen || l->cfg.egress_live_may_widen) &&
	    check_within(&l->s, &l->req, l->deny, agent_config_name(&l->cfg), err) < 0)
		return -1;
	l->req_texts = texts(l->deny ? &l->req.deny : &l->req.allow);
	if (changed_policy(&l->cur, l->deny, l->req_texts, &l->np, err) < 0)
		return -1;
	l->old_text = egress_policy_to_string(&l->cur);
	l->new_text = egress_policy_to_string(&l->np);
	return streq(l->old_text, l->new_text) ? 1 : 0;
}

/* 3. the ruleset, replaced in the container's network namespace */
static int live_ruleset(struct live *l, struct ab_err *err)
{
	const struct container_state *s = &l->s;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/net", (int)s->pid);
	l->netns = open(path, O_RDONLY | O_CLOEXEC);
	if (l->netns < 0 || !state_init_alive(s))
		return ab_error(err, l->netns < 0 ? errno : ESRCH, "%s: the network namespace of container \"%s\"", l->verb,
				s->id);
	snprintf(l->owner, sizeof l->owner, "%s%s", s->egress_token ? "@" : "", s->egress_token ? s->egress_token : s->id);
	if (egress_reinstall(l->netns, &l->np, l->owner, EGRESS_SENTRY_PORT, !l->deny, err) < 0) {
		ab_wrap(err, "%s", l->verb);
		return -1;
	}
	return 0;
}

/* 4. the sentry; on its refusal the old rules go back */
static int live_sentry(struct live *l, struct ab_err *err)
{
	if (sentry_change(l->dirfd, &l->s, l->new_text, err) < 0) {
		struct ab_err e;
		if (egress_reinstall(l->netns, &l->cur, l->owner, EGRESS_SENTRY_PORT, false, &e) < 0)
			ab_wrap(err, "%s (and the old ruleset could not be put back: %s)", l->verb, e.msg);
		else
			ab_wrap(err, "%s: nothing changed", l->verb);
		return -1;
	}
	return 0;
}

/* The addresses the sentry learnt for the names just denied: its answer's
 * "cut ENTRY" lines (sentry_reload.c), as deny entries into cuts. */
static void learnt_addresses(const struct live *l, struct egress_policy *cuts)
{
	char *text = NULL;
	struct ab_err e;
	if (read_file_at(l->dirfd, EGRESS_POLICY_FILE, 1 << 20, &text, NULL, &e) < 0)
		return;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (strncmp(line, "cut ", 4) == 0 && egress_policy_add(cuts, line + 4, true, "the DNS sentry", &e) < 0)
			log_debug("%s: %s", l->verb, e.msg);
	free(text);
}

/* 5. flows open to what is now denied end here: to a denied CIDR, and to
 * what a denied name's answers held */
static void live_cut_denied(const struct live *l)
{
	struct egress_policy cuts = {0};
	char *list = egress_policy_to_string(&l->req);
	struct ab_err e;
	/* the request's own entries first (the CIDRs among them are cut) */
	if (egress_policy_from_string(list, "the request", &cuts, &e) < 0)
		cuts = (struct egress_policy){0};
	free(list);
	learnt_addresses(l, &cuts);
	size_t cut = 0;
	if (egress_conntrack_cut(l->netns, &cuts.deny, &cut, &e) < 0)
		log_warn("%s: established connections were not cut: %s", l->verb, e.msg);
	else if (cut)
		log_debug("%s: %zu established connections cut", l->verb, cut);
	egress_policy_free(&cuts);
}

/* 6. the state and the logs */
static int live_record(struct live *l, struct ab_err *err)
{
	l->s.egress_policy = arena_strdup(&l->s.arena, l->new_text);
	if (state_write(l->dirfd, &l->s, err) < 0)
		return -1;
	char *canon = joined(l->req_texts, NULL, NULL);
	log_change(&l->cfg, l->dirfd, l->s.id, l->deny, canon);
	free(canon);
	return 0;
}

static void live_free(struct live *l)
{
	free(l->list);
	free(l->old_text);
	free(l->new_text);
	texts_free(l->req_texts);
	egress_policy_free(&l->cur);
	egress_policy_free(&l->req);
	egress_policy_free(&l->np);
	if (l->loaded)
		state_free(&l->s);
	arena_free(&l->a);
	/* last, as the locals they were: the state's lock goes with dirfd */
	if (l->netns >= 0)
		close(l->netns);
	if (l->dirfd >= 0)
		close(l->dirfd);
}

int egress_live_change(const struct global_opts *g, const char *id, bool deny, char *const *entries, size_t n,
		       struct ab_err *err)
{
	struct live l = {.verb = deny ? "egress deny" : "egress allow", .deny = deny, .dirfd = -1, .netns = -1};
	int r = -1;
	if (live_load(&l, g, id, err) < 0)
		goto out;
	int same = live_new_policy(&l, entries, n, err);
	if (same != 0) {
		r = same > 0 ? 0 : -1;   /* 1: in the policy as it is already */
		goto out;
	}
	if ((r = live_ruleset(&l, err)) < 0 || (r = live_sentry(&l, err)) < 0)
		goto out;
	if (deny)
		live_cut_denied(&l);
	r = live_record(&l, err);
out:
	live_free(&l);
	return r;
}
