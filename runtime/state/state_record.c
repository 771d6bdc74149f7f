/* The cleanup record: see state_record.h. One "key value..." line per
 * member, in a fixed order, the last the SHA-256 of the lines above:
 *
 *   agentbox cleanup record 1
 *   id ID
 *   init PID START-TIME
 *   pidns own|shared
 *   cgroup MODE PATH          (PATH "-" when none; "\\" and newline escaped)
 *   sentry PID START-TIME
 *   gateway PID START-TIME
 *   sha256 HEX
 */
#include "state_record.h"
#include "cgroups_host.h"
#include "sha256.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define RECORD_MAX (PATH_MAX * 2 + 512)
#define RECORD_HEAD "agentbox cleanup record 1\n"

/* PATH with "\\" and newline escaped, into buf ("-" when empty). */
static void escape_path(const char *path, char *buf, size_t len)
{
	size_t o = 0;
	if (!*path)
		path = "-";
	for (const char *p = path; *p && o + 3 < len; p++) {
		if (*p == '\\' || *p == '\n') {
			buf[o++] = '\\';
			buf[o++] = *p == '\n' ? 'n' : '\\';
		} else {
			buf[o++] = *p;
		}
	}
	buf[o] = 0;
}

static void unescape_path(const char *text, char *buf, size_t len)
{
	size_t o = 0;
	for (const char *p = text; *p && o + 1 < len; p++) {
		if (*p == '\\' && (p[1] == 'n' || p[1] == '\\'))
			buf[o++] = *++p == 'n' ? '\n' : '\\';
		else
			buf[o++] = *p;
	}
	buf[o] = 0;
	if (streq(buf, "-"))
		buf[0] = 0;
}

static void digest_hex(const char *text, size_t n, char hex[65])
{
	struct sha256 h;
	uint8_t d[32];
	sha256_init(&h);
	sha256_update(&h, text, n);
	sha256_final(&h, d);
	sha256_hex(d, hex);
}

size_t state_record_text(const struct cleanup_record *s, char *buf, size_t len)
{
	char path[PATH_MAX * 2];
	escape_path(s->cgroup.path, path, sizeof path);
	int n = snprintf(buf, len,
			 RECORD_HEAD "id %s\ninit %d %" PRIu64 "\npidns %s\ncgroup %s %s\nsentry %d %" PRIu64
			 "\ngateway %d %" PRIu64 "\n",
			 s->id, (int)s->pid, s->pid_start_time, s->own_pidns ? "own" : "shared",
			 cgroup_mode_name(s->cgroup.mode), path, (int)s->sentry_pid, s->sentry_start_time,
			 (int)s->gateway_pid, s->gateway_start_time);
	if (n < 0 || (size_t)n + 80 > len)
		return 0;
	char hex[65];
	digest_hex(buf, (size_t)n, hex);
	n += snprintf(buf + n, len - (size_t)n, "sha256 %s\n", hex);
	return (size_t)n;
}

int state_record_write(int dirfd, const struct cleanup_record *s, struct ab_err *err)
{
	char text[RECORD_MAX];
	size_t n = state_record_text(s, text, sizeof text);
	if (!n)
		return ab_error(err, ENAMETOOLONG, "cleanup record of container \"%s\"", s->id);
	_cleanup_free_ char *old = NULL;
	struct ab_err e;
	size_t old_n = 0;
	if (read_file_at(dirfd, CLEANUP_RECORD, RECORD_MAX, &old, &old_n, &e) == 0 && old_n == n &&
	    memcmp(old, text, n) == 0)
		return 0;
	/* replaced whole, not made durable: it names live processes, which a
	 * crash of the machine ends anyway (an fsync here was ~5 ms a create) */
	if (write_file_replace_at(dirfd, CLEANUP_RECORD, text, n, 0600, err) < 0)
		return ab_wrap(err, "save the cleanup record of container \"%s\"", s->id);
	return 0;
}

/* The next line of the record, which must start with "KEY ": its value, or
 * NULL. *p moves past the line (whose newline becomes a NUL). */
static char *field(char **p, const char *key)
{
	size_t k = strlen(key);
	char *line = *p, *nl = strchr(line, '\n');
	if (!nl || strncmp(line, key, k) != 0 || line[k] != ' ')
		return NULL;
	*nl = 0;
	*p = nl + 1;
	return line + k + 1;
}

static bool pid_and_time(const char *v, pid_t *pid, uint64_t *t)
{
	int p;
	char end;
	if (!v || sscanf(v, "%d %" SCNu64 "%c", &p, t, &end) != 2 || p < 0)
		return false;
	*pid = p;
	return true;
}

/* The members after the checksum matched: text is a copy we may cut up. */
static int parse_fields(char *text, const char *id, struct cleanup_record *r, struct ab_err *err)
{
	char *p = text + strlen(RECORD_HEAD);
	const char *rid = field(&p, "id");
	if (!rid || !streq(rid, id))
		return ab_error(err, 0, "cleanup record: it is another container's");
	memset(r, 0, sizeof *r);
	char *pidns, *cg, *mode_end;
	if (!pid_and_time(field(&p, "init"), &r->pid, &r->pid_start_time) || !(pidns = field(&p, "pidns")) ||
	    !(cg = field(&p, "cgroup")) || !(mode_end = strchr(cg, ' ')) ||
	    !pid_and_time(field(&p, "sentry"), &r->sentry_pid, &r->sentry_start_time) ||
	    !pid_and_time(field(&p, "gateway"), &r->gateway_pid, &r->gateway_start_time))
		return ab_error(err, 0, "cleanup record: a line is missing or malformed");
	*mode_end = 0;
	if (cgroup_mode_from_name(cg, &r->cgroup.mode) < 0)
		return ab_error(err, 0, "cleanup record: unknown cgroup mode \"%s\"", cg);
	unescape_path(mode_end + 1, r->cgroup.path, sizeof r->cgroup.path);
	r->own_pidns = streq(pidns, "own");
	return 0;
}

int state_record_parse(const char *text, const char *id, struct cleanup_record *s, struct ab_err *err)
{
	const char *sum = strstr(text, "\nsha256 ");
	size_t head = strlen(RECORD_HEAD);
	if (strncmp(text, RECORD_HEAD, head) != 0 || !sum)
		return ab_error(err, 0, "cleanup record: not one (damaged)");
	size_t body = (size_t)(sum - text) + 1;
	char hex[65];
	digest_hex(text, body, hex);
	if (strncmp(sum + 8, hex, 64) != 0 || sum[8 + 64] != '\n' || sum[8 + 65] != 0)
		return ab_error(err, 0, "cleanup record: its checksum does not match (damaged)");
	_cleanup_free_ char *copy = xstrdup(text);
	return parse_fields(copy, id, s, err);
}

int state_record_read(int dirfd, const char *id, struct cleanup_record *s, struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	if (read_file_at(dirfd, CLEANUP_RECORD, RECORD_MAX, &text, NULL, err) < 0)
		return ab_wrap(err, "cleanup record");
	return state_record_parse(text, id, s, err);
}
