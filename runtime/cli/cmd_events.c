/* events: statistics once (--stats) or every --interval, and OOM notifications, as
 * JSON lines like runc's. */
#include "commands.h"
#include "json.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "5s", "500ms", "1m", or plain seconds. */
static int parse_duration_ms(const char *s, int64_t *ret)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	double mult = 1000;
	if (streq(end, "ms"))
		mult = 1;
	else if (streq(end, "m"))
		mult = 60000;
	else if (streq(end, "h"))
		mult = 3600000;
	else if (*end && !streq(end, "s"))
		return -1;
	*ret = (int64_t)(v * mult);
	return *ret > 0 ? 0 : -1;
}

static int print_stats(const struct container_state *s, struct ab_err *err)
{
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "type", "stats");
	json_kv_str(o, "id", s->id);
	json_key(o, "data");
	int r = cgroup_stats(&s->cgroup, o, err);
	json_obj_end(o);
	if (r == 0) {
		printf("%s\n", json_out_text(o, NULL));
		fflush(stdout);
	}
	json_out_free(o);
	return r;
}

/* New deny records from the sentry's log, as {"type":"egress","id":...,"data":{...}}. */
static void print_egress(int fd, const char *id, char *buf, size_t cap, size_t *len)
{
	for (;;) {
		ssize_t n = read(fd, buf + *len, cap - 1 - *len);
		if (n <= 0)
			return;
		*len += (size_t)n;
		buf[*len] = 0;
		char *start = buf, *nl;
		while ((nl = strchr(start, '\n'))) {
			*nl = 0;
			if (*start == '{')
				printf("{\"type\":\"egress\",\"id\":\"%s\",\"data\":%s}\n", id, start);
			start = nl + 1;
		}
		*len -= (size_t)(start - buf);
		memmove(buf, start, *len);
		if (*len == cap - 1)
			*len = 0;
		fflush(stdout);
	}
}

static void print_event(const char *type, const char *id)
{
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "type", type);
	json_kv_str(o, "id", id);
	json_obj_end(o);
	printf("%s\n", json_out_text(o, NULL));
	fflush(stdout);
	json_out_free(o);
}

int cmd_events(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"stats", no_argument, NULL, 's'}, {"interval", required_argument, NULL, 'i'},
		{"json", no_argument, NULL, 'j'}, {0}};
	bool stats_once = false;
	int64_t interval_ms = 5000;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			stats_once = true;
		else if (c == 'j')
			continue;       /* JSON lines are its only output */
		else if (c == 'i') {
			if (parse_duration_ms(optarg, &interval_ms) < 0)
				return ab_error(err, 0, "events: --interval: invalid duration \"%s\" (e.g. 5s, 500ms)", optarg);
		} else
			return ab_error(err, 0, "events: unknown or incomplete option \"%s\"", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ab_error(err, 0, "events: expected exactly one container ID");
	struct container_state s;
	_cleanup_close_ int state_fd = -1;
	char box[PATH_MAX];
	if (container_load(g, container_id_or_box(g, argv[optind], box, sizeof box), false, &state_fd, &s, err) < 0)
		return -1;
	int r = -1;
	_cleanup_close_ int oom_fd = -1, egress_fd = -1, dirfd = -1;
	if (s.cgroup.mode == CGROUP_MODE_DISABLED) {
		ab_error(err, 0, "events: container \"%s\" has no cgroup", s.id);
		goto out;
	}
	if (state_status(&s) == STATUS_STOPPED) {
		ab_error(err, 0, "events: container not running");
		goto out;
	}
	if (stats_once) {
		r = print_stats(&s, err);
		goto out;
	}
	struct ab_err e;
	unblock_termination_signals();
	oom_fd = cgroup_oom_watch(&s.cgroup, &e);
	char logbuf[16384];
	size_t loglen = 0;
	dirfd = TAKE_FD(state_fd);
	egress_fd = openat(dirfd, EGRESS_LOG, O_RDONLY | O_CLOEXEC);
	(void)flock_release(dirfd);
	uint64_t ooms = 0, now_ooms;
	(void)cgroup_oom_count(&s.cgroup, &ooms, &e);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if (print_stats(&s, err) < 0)
			goto out;
		int64_t wait = interval_ms;
		while (wait > 0) {
			struct pollfd p = {.fd = oom_fd, .events = POLLIN};
			int step = wait > 250 ? 250 : (int)wait;
			int n = poll(&p, oom_fd >= 0 ? 1 : 0, step);
			wait -= step;
			if (n > 0) {
				char buf[4096];
				(void)!read(oom_fd, buf, sizeof buf);
			}
			if (egress_fd < 0)
				egress_fd = openat(dirfd, EGRESS_LOG, O_RDONLY | O_CLOEXEC);
			if (egress_fd >= 0)
				print_egress(egress_fd, s.id, logbuf, sizeof logbuf, &loglen);
			if (cgroup_oom_count(&s.cgroup, &now_ooms, &e) == 0 && now_ooms > ooms) {
				ooms = now_ooms;
				print_event("oom", s.id);
			}
			if (state_status(&s) == STATUS_STOPPED) {
				r = 0;
				goto out;
			}
		}
	}
out:
	state_free(&s);
	return r;
}
