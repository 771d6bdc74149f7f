/* The cleanup record delete --force falls back on (runtime/state/state_record.h):
 * what it writes reads back, and anything but a whole, unaltered record of
 * the same container is refused. */
#include "state_record.h"
#include "tap.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static int parse(const char *text, const char *id, struct cleanup_record *r, struct ab_err *err)
{
	memset(err, 0, sizeof *err);
	return state_record_parse(text, id, r, err);
}

int main(void)
{
	struct cleanup_record w = {
		.id = "box-1", .pid = 4242, .pid_start_time = 123456789012ULL, .own_pidns = true,
		.cgroup = {.mode = CGROUP_MODE_HYBRID, .path = "/odd name/with\\back\nline"},
		.sentry_pid = 77, .sentry_start_time = 9, .gateway_pid = 0,
	};
	char text[8192];
	size_t n = state_record_text(&w, text, sizeof text);
	ok(n > 0 && n == strlen(text), "a record's text");
	struct cleanup_record r;
	struct ab_err err;
	ok(parse(text, "box-1", &r, &err) == 0, "it reads back%s%s", err.msg[0] ? ": " : "", err.msg);
	ok(r.pid == 4242 && r.pid_start_time == 123456789012ULL && r.own_pidns && r.sentry_pid == 77 &&
	   r.sentry_start_time == 9 && r.gateway_pid == 0 && r.cgroup.mode == CGROUP_MODE_HYBRID,
	   "pids, start times, pid namespace and cgroup layout as written");
	is_str(r.cgroup.path, w.cgroup.path, "a cgroup path with a space, a backslash and a newline");

	ok(parse(text, "box-2", &r, &err) < 0, "another container's record is refused");
	has_substr(err.msg, "another container", "and says so");

	char bad[8192];
	snprintf(bad, sizeof bad, "%s", text);
	*strstr(bad, "4242") = '5';
	ok(parse(bad, "box-1", &r, &err) < 0, "a changed pid is refused");
	has_substr(err.msg, "checksum", "by its checksum");
	snprintf(bad, sizeof bad, "%.*s", (int)(n - 10), text);
	ok(parse(bad, "box-1", &r, &err) < 0, "a record cut short is refused");
	ok(parse("", "box-1", &r, &err) < 0 && parse("garbage\n", "box-1", &r, &err) < 0,
	   "empty text and garbage are refused");
	snprintf(bad, sizeof bad, "%sextra\n", text);
	ok(parse(bad, "box-1", &r, &err) < 0, "anything after the checksum is refused");

	struct cleanup_record first = {.id = "box-1"};
	n = state_record_text(&first, text, sizeof text);
	ok(parse(text, "box-1", &r, &err) == 0 && r.pid == 0 && r.cgroup.mode == CGROUP_MODE_DISABLED &&
	   r.cgroup.path[0] == 0, "the first record names nothing");
	return tap_done();
}
