/* The command table: one handler per subcommand, each in its own cmd_<name>.c.
 * A handler returns the exit status (>= 0) or a negative error with err set.
 * A command's options may come before or after its operands (getopt's
 * permuting order), as runc's command line allows ("update ID --memory M");
 * exec and ps stop at the container ID (an optstring starting with "+"),
 * since what follows it is the command and its arguments. */
#ifndef AGENTBOX_COMMANDS_H
#define AGENTBOX_COMMANDS_H

#include "container.h"
#include "error.h"

typedef int (*command_fn)(struct global_opts *g, int argc, char **argv, struct ab_err *err);

struct command {
	const char *name;
	command_fn fn;
	const char *summary;
	const char *usage;      /* printed by `agentbox NAME --help` */
};

#define DECLARE_COMMAND(n) int cmd_##n(struct global_opts *g, int argc, char **argv, struct ab_err *err)
DECLARE_COMMAND(create);
DECLARE_COMMAND(start);
DECLARE_COMMAND(run);
DECLARE_COMMAND(state);
DECLARE_COMMAND(list);
DECLARE_COMMAND(kill);
DECLARE_COMMAND(delete);
DECLARE_COMMAND(spec);
DECLARE_COMMAND(features);
DECLARE_COMMAND(exec);
DECLARE_COMMAND(pause);
DECLARE_COMMAND(resume);
DECLARE_COMMAND(update);
DECLARE_COMMAND(ps);
DECLARE_COMMAND(events);
DECLARE_COMMAND(kit);
DECLARE_COMMAND(egress);
DECLARE_COMMAND(setup);

/* setup's edits of an engine's file, text in and text out (cmd_setup.c;
 * tests/unit/test_setup.c). text NULL: no file. Returns 1 with *ret the
 * change (before/after NULL: no file before/after), 0 when there is nothing
 * to change, or a negative error naming `what`. */
struct setup_change {
	char *before;       /* what the preview shows as the old text */
	char *after;
	const char *note;   /* said before the preview, or NULL */
};
int setup_edit_docker(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err);
int setup_edit_podman(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err);
int setup_edit_containerd(const char *text, const char *what, const char *bin, bool undo,
			  struct setup_change *ret, struct ab_err *err);
void setup_change_free(struct setup_change *c);

/* Shared by handlers: print usage of the current command and return 0. */
int command_help(const char *name);
/* "--help"/"-h" anywhere before "--"? */
bool wants_help(int argc, char **argv);
/* Long-running readers (events, egress log --follow) end on Ctrl-C / SIGTERM:
 * main() blocks every signal for the lifecycle commands. */
void unblock_termination_signals(void);
/* Parse a signal given as a number or a name (KILL, SIGKILL, TERM...). */
int parse_signal(const char *s, int *ret);
/* o's text and a newline on stdout; o is freed. */
struct json_out;
void print_json(struct json_out *o);

#endif
