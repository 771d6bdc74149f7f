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

/* exec's status when the runtime itself fails (no such container, no such
 * program, a refused setting), as runc's: a caller tells it from the
 * program's own status (docs/ERRORS.md). A mistake on its command line stays 1. */
#define EXEC_RUNTIME_FAILURE 255

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
