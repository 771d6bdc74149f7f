/* What a kit run's box was refused, said when the run ends: one line per
 * refusal on the user's terminal, with why (the deny log's reason) and what
 * would let it through, so the user need not go and read the log. */
#ifndef AGENTBOX_REFUSED_SUMMARY_H
#define AGENTBOX_REFUSED_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

/* The refusals of the deny log at log_path (container id), as lines on out;
 * nothing when there were none. */
void egress_refused_summary(FILE *out, const char *log_path, const char *id);

/* One deny-log record (a JSON line) as the summary's line, without the
 * newline: 1 when written into buf, 0 for a record that is no refusal to
 * show (a credential's use, a policy change, a summary, a repeat). */
int egress_refused_line(const char *json_line, char *buf, size_t len);

#endif
