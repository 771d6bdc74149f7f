/* The one error convention of agentbox (see docs/ERRORS.md):
 * a fallible function returns a negative value and fills the struct ab_err passed
 * last; callers add context with ab_wrap(); only main() prints and exits.
 * The message lives in a fixed buffer so a raw clone child can fill it without
 * allocating. */
#ifndef AGENTBOX_ERROR_H
#define AGENTBOX_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define AB_ERR_MSG_MAX 2048

struct ab_err {
	int code;                   /* errno of the root cause, 0 if none */
	int status;                 /* the exit status main gives it, 0 = 1 (exec's
				     * failures of the runtime: 255, docs/ERRORS.md) */
	char msg[AB_ERR_MSG_MAX];
};

/* Set err to "fmt[: strerror(errnum)]"; returns -1 (or -errnum when errnum > 0). */
int ab_error(struct ab_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ab_verror(struct ab_err *err, int errnum, const char *fmt, va_list ap);
/* Prefix the existing message with "fmt: "; returns -1 (or -code). */
int ab_wrap(struct ab_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* What cannot be an error return: memory exhausted, or a library refusing
 * what only a bug could ask of it. One line naming what, through the hook main
 * sets (the engine's log and stderr; stderr alone before that), then exit
 * status 1. Never abort(): no core file, nothing half-printed. */
__attribute__((noreturn)) void ab_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ab_set_fatal_hook(void (*print)(const char *msg));
static inline void ab_err_clear(struct ab_err *err) { err->code = 0; err->status = 0; err->msg[0] = 0; }
static inline int ab_err_is_set(const struct ab_err *err) { return err->msg[0] != 0; }

#endif
