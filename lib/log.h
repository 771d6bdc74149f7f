/* Runtime log: stderr for humans, and the engine's --log file (text or JSON lines). */
#ifndef AGENTBOX_LOG_H
#define AGENTBOX_LOG_H

#include <stdbool.h>

enum log_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* path NULL = stderr only. json selects {"level","msg","time"} lines. */
int log_init(const char *path, bool json, bool debug);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool log_debug_enabled(void);
/* A step a person waits on (an image unpacked the first time, ...): one
 * "agentbox: ..." line on stderr when it is a terminal; a pipe, a log file
 * or an engine gets none, and neither does a step that is fast. */
void log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fd of the log file or -1; kept open across clone so the child can log too. */
int log_fd(void);

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_debug_enabled()) log_msg(LOG_LVL_DEBUG, __VA_ARGS__); } while (0)

#endif
