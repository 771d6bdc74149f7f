#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ab_verror(struct ab_err *err, int errnum, const char *fmt, va_list ap)
{
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	if (n < 0)
		n = 0;
	if (errnum > 0 && (size_t)n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", strerror(errnum));
	err->code = errnum > 0 ? errnum : 0;
	return errnum > 0 ? -errnum : -1;
}

int ab_error(struct ab_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = ab_verror(err, errnum, fmt, ap);
	va_end(ap);
	return r;
}

int ab_wrap(struct ab_err *err, const char *fmt, ...)
{
	char prefix[512], old[AB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	size_t n = strlen(prefix), m = strnlen(old, sizeof old - 1);
	if (n > sizeof err->msg - 3)
		n = sizeof err->msg - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	if (m > sizeof err->msg - n - 3)
		m = sizeof err->msg - n - 3;
	memcpy(err->msg + n + 2, old, m);
	err->msg[n + 2 + m] = 0;
	return err->code > 0 ? -err->code : -1;
}

static void (*fatal_print)(const char *msg);

void ab_set_fatal_hook(void (*print)(const char *msg)) { fatal_print = print; }

void ab_fatal(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (fatal_print) {
		fatal_print(msg);
	} else {
		char line[600];
		int n = snprintf(line, sizeof line, "agentbox: %s\n", msg);
		if (n > (int)sizeof line - 1)
			n = (int)sizeof line - 1;
		(void)!write(STDERR_FILENO, line, (size_t)n);
	}
	_exit(1);
}
