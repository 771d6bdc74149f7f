#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int log_file_fd = -1;
static bool log_json;
static bool log_debug_on;

int log_init(const char *path, bool json, bool debug)
{
	log_json = json;
	log_debug_on = debug;
	if (path) {
		log_file_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (log_file_fd < 0)
			return -errno;
	}
	return 0;
}

bool log_debug_enabled(void) { return log_debug_on; }
int log_fd(void) { return log_file_fd; }

static const char *level_name(enum log_level l)
{
	switch (l) {
	case LOG_LVL_ERROR: return "error";
	case LOG_LVL_WARN: return "warning";
	case LOG_LVL_INFO: return "info";
	default: return "debug";
	}
}

/* JSON string escaping for the log line. */
static size_t json_escape(char *out, size_t cap, const char *in)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 7 < cap; p++) {
		if (*p == '"' || *p == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*p;
		} else if (*p < 0x20) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", *p);
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = 0;
	return o;
}

void log_progress(const char *fmt, ...)
{
	if (!isatty(STDERR_FILENO))
		return;
	char msg[1024], line[1100];
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int n = snprintf(line, sizeof line, "agentbox: %s\n", msg);
	(void)write_all(STDERR_FILENO, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
	errno = saved;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char msg[4096], line[9000], now[64];
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	format_rfc3339(now, sizeof now);

	/* Humans read stderr; debug lines go there only when asked for. */
	if (level != LOG_LVL_DEBUG || log_file_fd < 0) {
		int n = snprintf(line, sizeof line, "agentbox: %s%s\n",
				 level == LOG_LVL_ERROR ? "" : level == LOG_LVL_WARN ? "warning: " : "",
				 msg);
		if (level != LOG_LVL_DEBUG || log_debug_on)
			(void)write_all(STDERR_FILENO, line, (size_t)n);
	}
	if (log_file_fd >= 0) {
		int n;
		if (log_json) {
			char esc[8192];
			json_escape(esc, sizeof esc, msg);
			n = snprintf(line, sizeof line, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
				     level_name(level), esc, now);
		} else {
			n = snprintf(line, sizeof line, "time=\"%s\" level=%s msg=\"%s\"\n", now,
				     level_name(level), msg);
		}
		if (n > (int)sizeof line - 1)
			n = (int)sizeof line - 1;
		(void)write_all(log_file_fd, line, (size_t)n);
	}
	errno = saved;
}
