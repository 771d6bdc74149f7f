/* egress log: what the container tried to reach and was refused, from the deny log
 * its DNS sentry writes in the state directory, or once the state is gone,
 * from the durable log (deny_log.h). egress show: the policy in force.
 * egress suggest: the allowlist a learn mode run calls for (egress_suggest.h),
 * from the same places. egress allow/deny: egress_live.h. */
#include "commands.h"
#include "agent_config.h"
#include "deny_log.h"
#include "durable_log.h"
#include "egress_live.h"
#include "egress_suggest.h"
#include "json.h"
#include "policy.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define LEARN_READ_MAX (4u << 20)   /* a learn file's size at most (sentry_learn.h) */

static void print_record(const char *line, bool json)
{
	if (json) {
		printf("%s\n", line);
		return;
	}
	yajl_val v;
	struct ab_err e;
	if (json_parse(line, "egress log", &v, &e) < 0)
		return;   /* a torn last line while the sentry writes */
	const char *f[6] = {0};
	static const char *const keys[] = {"time", "verdict", "proto", "dst", "name", "reason"};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		yajl_val x = json_get(v, keys[i]);
		f[i] = YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
	}
	if (f[1] && streq(f[1], "policy")) {
		/* a live change (egress allow/deny) */
		yajl_val change = json_get(v, "change"), entries = json_get(v, "entries");
		printf("%s  policy %s %s\n", f[0] ? f[0] : "-", YAJL_IS_STRING(change) ? YAJL_GET_STRING(change) : "?",
		       YAJL_IS_STRING(entries) ? YAJL_GET_STRING(entries) : "");
		json_free(v);
		return;
	}
	if (f[1] && streq(f[1], "summary")) {
		/* what the sentry could not write, or the kernel could not pass on */
		static const char *const counts[] = {"lost", "uncounted_repeats", "suppressed", "suppressed_repeats"};
		printf("%s  summary", f[0] ? f[0] : "-");
		for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
			yajl_val x = json_get(v, counts[i]);
			if (YAJL_IS_INTEGER(x))
				printf("  %s %lld", counts[i], YAJL_GET_INTEGER(x));
		}
		yajl_val note = json_get(v, "note");
		printf("%s%s\n", YAJL_IS_STRING(note) ? "  " : "", YAJL_IS_STRING(note) ? YAJL_GET_STRING(note) : "");
		json_free(v);
		return;
	}
	yajl_val port = json_get(v, "port"), repeats = json_get(v, "repeats");
	char dst[128] = "";
	if (f[3] && YAJL_IS_INTEGER(port))
		snprintf(dst, sizeof dst, strchr(f[3], ':') ? "[%s]:%lld" : "%s:%lld", f[3], YAJL_GET_INTEGER(port));
	else if (f[3])
		snprintf(dst, sizeof dst, "%s", f[3]);
	char again[160] = "", why[200] = "";
	if (YAJL_IS_INTEGER(repeats)) {
		/* written later than they happened: when the first and the last were */
		yajl_val first = json_get(v, "first"), last = json_get(v, "last");
		if (YAJL_IS_STRING(first) && YAJL_IS_STRING(last))
			snprintf(again, sizeof again, "  (%lld more times, first %s, last %s)", YAJL_GET_INTEGER(repeats),
				 YAJL_GET_STRING(first), YAJL_GET_STRING(last));
		else
			snprintf(again, sizeof again, "  (%lld more times)", YAJL_GET_INTEGER(repeats));
	}
	/* a credential's use names the credential; the gateway's refusals say more */
	yajl_val cred = json_get(v, "credential"), detail = json_get(v, "detail");
	if (YAJL_IS_STRING(cred))
		snprintf(why, sizeof why, "  credential %s", YAJL_GET_STRING(cred));
	else if (f[5])
		snprintf(why, sizeof why, "  %s%s%s%s", f[5], YAJL_IS_STRING(detail) ? " (" : "",
			 YAJL_IS_STRING(detail) ? YAJL_GET_STRING(detail) : "", YAJL_IS_STRING(detail) ? ")" : "");
	printf("%s  %-5s %-4s %-28s %s%s%s\n", f[0] ? f[0] : "-", f[1] ? f[1] : "deny", f[2] ? f[2] : "-",
	       dst[0] ? dst : "-", f[4] ? f[4] : "", why, again);
	json_free(v);
}

/* Print complete lines from fd; keep a partial tail for the next round. */
static void drain(int fd, char *buf, size_t cap, size_t *len, bool json)
{
	for (;;) {
		ssize_t n = read(fd, buf + *len, cap - 1 - *len);
		if (n <= 0)
			break;
		*len += (size_t)n;
		buf[*len] = 0;
		char *start = buf, *nl;
		while ((nl = strchr(start, '\n'))) {
			*nl = 0;
			if (*start)
				print_record(start, json);
			start = nl + 1;
		}
		*len -= (size_t)(start - buf);
		memmove(buf, start, *len);
		if (*len == cap - 1)
			*len = 0;   /* an absurd line: drop it */
	}
	fflush(stdout);
}

/* After delete: the durable log, the rotated file first (a named box's,
 * for its name, when there is none of that id). */
static int durable_log_print(struct global_opts *g, const char *id, bool json, struct ab_err *err)
{
	struct arena a = {0};
	struct agent_config cfg;
	char base[PATH_MAX], box[PATH_MAX];
	_cleanup_close_ int dirfd = -1;
	int r = agent_config_load(g->config_path, &a, &cfg, err);
	if (r == 0)
		r = deny_log_find(&cfg, id, &dirfd, base, err);
	if (r == 0 && dirfd < 0 && snprintf(box, sizeof box, BOX_ID_PREFIX "%s", id) < (int)sizeof box &&
	    container_id_valid(box))
		r = deny_log_find(&cfg, box, &dirfd, base, err);
	if (r == 0 && dirfd < 0)
		r = ab_error(err, 0, "egress log: container \"%s\" does not exist, and %s holds no log of it", id, base);
	static const char *const files[] = {DURABLE_LOG_OLD, DURABLE_LOG};
	char buf[65536];
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(files); i++) {
		_cleanup_close_ int fd = openat(dirfd, files[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno != ENOENT)
			r = ab_error(err, errno, "egress log: open %s/%s", base, files[i]);
		size_t len = 0;
		if (fd >= 0)
			drain(fd, buf, sizeof buf, &len, json);
	}
	arena_free(&a);
	return r;
}

static int egress_log(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"follow", no_argument, NULL, 'f'}, {0}};
	bool json = false, follow = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jf", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'f')
			follow = true;
		else
			return ab_error(err, 0, "egress log: unknown option \"%s\"", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ab_error(err, 0, "egress log: expected exactly one container ID");
	char box[PATH_MAX];
	const char *id = container_id_or_box(g, argv[optind], box, sizeof box);
	/* no state (deleted, or the engine's shim removed it): what outlives it */
	char path[PATH_MAX];
	struct stat st;
	if (container_id_valid(id) && snprintf(path, sizeof path, "%s/%s", g->root, id) < (int)sizeof path &&
	    lstat(path, &st) < 0 && errno == ENOENT)
		return durable_log_print(g, id, json, err);
	if (follow)
		unblock_termination_signals();
	struct container_state s;
	_cleanup_close_ int dirfd = -1;
	if (container_load(g, id, false, &dirfd, &s, err) < 0)
		return -1;
	/* the lock is not needed to read, and must not stall delete while we follow */
	(void)flock_release(dirfd);
	int r = 0;
	_cleanup_close_ int fd = openat(dirfd, EGRESS_LOG, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		r = ab_error(err, errno, "egress log: open");
		goto out;
	}
	if (!s.egress_policy && fd < 0) {
		r = ab_error(err, 0, "egress log: container \"%s\" has no egress policy", s.id);
		goto out;
	}
	char buf[65536];
	size_t len = 0;
	if (fd >= 0)
		drain(fd, buf, sizeof buf, &len, json);
	while (follow && state_status(&s) != STATUS_STOPPED) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
		if (fd < 0)
			fd = openat(dirfd, EGRESS_LOG, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			drain(fd, buf, sizeof buf, &len, json);
	}
	if (fd >= 0)
		drain(fd, buf, sizeof buf, &len, json);
out:
	state_free(&s);
	return r;
}

/* egress show: the policy in force, as the state records it (live changes
 * included). */
static int egress_show(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	bool json = false;
	const char *id = NULL;
	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--json") || streq(argv[i], "-j"))
			json = true;
		else if (argv[i][0] == '-')
			return ab_error(err, 0, "egress show: unknown option \"%s\"; see agentbox egress show --help",
					argv[i]);
		else if (id)
			return ab_error(err, 0, "egress show: expected exactly one container ID, got \"%s\" and \"%s\"",
					id, argv[i]);
		else
			id = argv[i];
	}
	if (!id)
		return ab_error(err, 0, "egress show: expected a container ID (or a box's name); see agentbox egress show --help");
	char box[PATH_MAX];
	struct container_state s;
	if (container_load(g, container_id_or_box(g, id, box, sizeof box), false, NULL, &s, err) < 0)
		return -1;
	int r = 0;
	struct egress_policy p = {0};
	if (!s.egress_policy)
		r = ab_error(err, 0, "egress show: container \"%s\" has no egress policy (its firewall is off)", s.id);
	else if (strncmp(s.egress_policy, "shared:", 7) == 0 && !json)
		printf("shared    %s\n", s.egress_policy + 7);
	else if (strncmp(s.egress_policy, "shared:", 7) == 0) {
		struct json_out *o = json_out_new(false);
		json_obj_begin(o);
		json_kv_str(o, "shared", s.egress_policy + 7);
		json_obj_end(o);
		printf("%s\n", json_out_text(o, NULL));
		json_out_free(o);
	}
	else if (egress_policy_from_string(s.egress_policy, "egressPolicy", &p, err) < 0)
		r = -1;
	else {
		const struct egress_list *lists[3] = {&p.allow, &p.deny, &p.internal};
		static const char *const names[3] = {"allow", "deny", "internal"};
		struct json_out *o = json ? json_out_new(false) : NULL;
		if (o)
			json_obj_begin(o);
		else {
			if (p.learn)   /* first: what matters most about this box's egress */
				printf("%-8s  learn (egress is open; agentbox egress suggest %s prints what it reached)\n",
				       "mode", s.id);
			if (s.egress_proxy)   /* what HTTPS_PROXY and co. name in the box */
				printf("%-8s  %s%s\n", "proxy", policy_proxy_url(),
				       p.learn ? " (what it lets through is recorded too)" : "");
		}
		for (size_t k = 0; k < 3; k++) {
			if (o) {
				json_key(o, names[k]);
				json_arr_begin(o);
			}
			for (size_t i = 0; i < lists[k]->n; i++) {
				char buf[EGRESS_ENTRY_TEXT];
				egress_entry_to_string(&lists[k]->v[i], buf, sizeof buf);
				if (o)
					json_str(o, buf);
				else
					printf("%-8s  %s\n", names[k], buf);
			}
			if (o)
				json_arr_end(o);
		}
		if (o) {
			json_kv_bool(o, "may_widen", s.egress_may_widen);
			json_kv_str(o, "mode", p.learn ? "learn" : "enforce");
			json_kv_bool(o, "proxy", s.egress_proxy);
			json_obj_end(o);
			printf("%s\n", json_out_text(o, NULL));
			json_out_free(o);
		}
	}
	egress_policy_free(&p);
	state_free(&s);
	return r;
}

/* The learn records of container id: its state's while it has one, else
 * the durable copy. *ret NULL when there are none. */
static int learn_records(struct global_opts *g, const char *id, char **ret, struct ab_err *err)
{
	*ret = NULL;
	char path[PATH_MAX];
	struct stat st;
	if (!container_id_valid(id))
		return ab_error(err, 0, "egress suggest: \"%s\" is not a container ID", id);
	snprintf(path, sizeof path, "%s/%s", g->root, id);
	if (lstat(path, &st) == 0) {
		_cleanup_close_ int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dirfd < 0)
			return ab_error(err, errno, "egress suggest: open %s", path);
		if (read_file_at(dirfd, EGRESS_LEARN, 2 * LEARN_READ_MAX, ret, NULL, err) < 0 && err->code != ENOENT)
			return ab_wrap(err, "egress suggest");
		if (*ret)
			return 0;
	}
	struct arena a = {0};
	struct agent_config cfg;
	char base[PATH_MAX];
	_cleanup_close_ int dirfd = -1;
	int r = agent_config_load(g->config_path, &a, &cfg, err);
	if (r == 0)
		r = deny_log_find(&cfg, id, &dirfd, base, err);
	if (r == 0 && dirfd >= 0 && read_file_at(dirfd, DURABLE_LEARN, 2 * LEARN_READ_MAX, ret, NULL, err) < 0 &&
	    err->code != ENOENT)
		r = ab_wrap(err, "egress suggest");
	arena_free(&a);
	return r;
}

static int egress_suggest(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"wildcards", no_argument, NULL, 'w'}, {0}};
	bool json = false, wildcards = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jw", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'w')
			wildcards = true;
		else
			return ab_error(err, 0, "egress suggest: unknown option \"%s\"", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ab_error(err, 0, "egress suggest: expected exactly one container ID");
	const char *id = argv[optind];
	_cleanup_free_ char *text = NULL;
	if (learn_records(g, id, &text, err) < 0)
		return -1;
	if (!text)
		return ab_error(err, 0, "egress suggest: container \"%s\" has no learn records (run it in learn mode: agentbox kit run --learn, or --egress-mode learn)",
				id);
	struct egress_suggest *sg = egress_suggest_new();
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		(void)egress_suggest_add(sg, line);   /* a torn last line while it runs */
	char *out = egress_suggest_text(sg, id, wildcards, json);
	fputs(out, stdout);
	free(out);
	egress_suggest_free(sg);
	return 0;
}

int cmd_egress(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	if (argc < 2)
		return ab_error(err, 0, "egress: expected a subcommand: log, show, suggest, allow or deny");
	if (streq(argv[1], "log")) {
		if (wants_help(argc - 1, argv + 1)) {
			printf("usage: agentbox egress log [--json] [--follow] ID\n\n"
			       "show what a container tried to reach and was refused.\nSee agentbox-egress(8).\n");
			return 0;
		}
		optind = 0;
		return egress_log(g, argc - 1, argv + 1, err);
	}
	if (streq(argv[1], "show")) {
		if (wants_help(argc - 1, argv + 1)) {
			printf("usage: agentbox egress show [--json] ID\n\n"
			       "show a container's egress policy in force.\nSee agentbox-egress(8).\n");
			return 0;
		}
		return egress_show(g, argc - 1, argv + 1, err);
	}
	if (streq(argv[1], "suggest")) {
		if (wants_help(argc - 1, argv + 1)) {
			printf("usage: agentbox egress suggest [--wildcards] [--json] ID\n\n"
			       "print the network.allow block a learn mode run calls for.\nSee agentbox-egress(8).\n");
			return 0;
		}
		optind = 0;
		return egress_suggest(g, argc - 1, argv + 1, err);
	}
	if (streq(argv[1], "allow") || streq(argv[1], "deny")) {
		bool deny = streq(argv[1], "deny");
		if (wants_help(argc - 1, argv + 1)) {
			printf("usage: agentbox egress %s ID ENTRY...\n\n"
			       "%s the entries in a running container's egress policy, at once.\nSee agentbox-egress(8).\n",
			       argv[1], deny ? "deny" : "allow");
			return 0;
		}
		if (argc >= 3 && argv[2][0] == '-')
			return ab_error(err, 0, "egress %s: unknown option \"%s\"", argv[1], argv[2]);
		if (argc < 4)
			return ab_error(err, 0, "egress %s: expected a container ID and at least one entry", argv[1]);
		char box[PATH_MAX];
		return egress_live_change(g, container_id_or_box(g, argv[2], box, sizeof box), deny, argv + 3,
					  (size_t)argc - 3, err);
	}
	return ab_error(err, 0, "egress: unknown subcommand \"%s\" (log, show, suggest, allow, deny)", argv[1]);
}
