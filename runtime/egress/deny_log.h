/* Where a container's durable egress log lives (netfilter/sentry/durable_log.h
 * writes it): one directory per container id under the log directory, kept
 * after delete, bounded per container (two files of log.max_bytes) and as a
 * whole (log.max_total: the logs least recently written go first). See
 * agentbox-egress(7), "The durable log", and agentbox-config(5), "log". */
#ifndef AGENTBOX_DENY_LOG_H
#define AGENTBOX_DENY_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_config.h"
#include "error.h"

#define DENY_LOG_DIR_DEFAULT "/var/log/agentbox"
#define DENY_LOG_TOTAL_DEFAULT (256ull << 20)
#define DENY_LOG_COUNT_MAX 10000          /* containers' logs kept at most */
#define DENY_LOG_PRUNE_EVERY_S 60         /* the directory is looked over at most this often */

/* The log directory: root's runtime log.dir (default DENY_LOG_DIR_DEFAULT);
 * a rootless one $XDG_STATE_HOME/agentbox/log, else ~/.local/state/agentbox/log
 * (the admin's directory is not the user's to write). A test build takes
 * AGENTBOX_LOG_DIR first. */
int deny_log_base(const struct agent_config *cfg, char *buf, size_t len, struct ab_err *err);

/* The container's directory, made if need be (0700, its parents too), opened
 * and locked shared for as long as it is open: the pruning passes over it
 * then. May prune the others first. */
int deny_log_open_dir(const struct agent_config *cfg, const char *id, int *ret_dirfd, bool *ret_made,
		      struct ab_err *err);
/* A failed create's log, made by it and still empty, goes again. */
void deny_log_forget(const struct agent_config *cfg, const char *id);

/* The container's directory for reading: *ret_dirfd -1 when there is none.
 * ret_base (PATH_MAX) gets the log directory, for messages. */
int deny_log_find(const struct agent_config *cfg, const char *id, int *ret_dirfd, char *ret_base,
		  struct ab_err *err);

/* One line appended to the container's log by the runtime itself (a policy
 * change), with the sentry's rotation. Best effort: false if not written. */
bool deny_log_append(const struct agent_config *cfg, const char *id, const char *line, size_t len);

#endif
