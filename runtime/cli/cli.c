/* Small helpers the subcommands share. */
#include "commands.h"
#include "json.h"
#include "util.h"

#include <signal.h>
#include <string.h>

void unblock_termination_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--"))
			return false;
		if (streq(argv[i], "--help") || streq(argv[i], "-h"))
			return true;
		if (argv[i][0] != '-')
			return false;   /* past the options: "-h" belongs to the program */
	}
	return false;
}

void print_json(struct json_out *o)
{
	size_t n;
	const char *t = json_out_text(o, &n);
	fwrite(t, 1, n, stdout);
	fputc('\n', stdout);
	json_out_free(o);
}
