/* The one-argument commands: start, state, pause, resume, delete, kill. */
#include "commands.h"
#include "util.h"

#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

static int one_id(const char *cmd, int argc, char **argv, const char **ret, struct ab_err *err)
{
	/* state prints JSON only: --json, asked for as elsewhere, changes nothing */
	if (argc == 3 && streq(cmd, "state") && (streq(argv[1], "--json") || streq(argv[2], "--json"))) {
		*ret = streq(argv[1], "--json") ? argv[2] : argv[1];
		return (*ret)[0] == '-' ? ab_error(err, 0, "%s: expected exactly one container ID", cmd) : 0;
	}
	if (argc != 2 || argv[1][0] == '-')
		return ab_error(err, 0, "%s: expected exactly one container ID", cmd);
	*ret = argv[1];
	return 0;
}

/* The one option of delete (--force) and kill (--all): a flag, --NAME or
 * -LETTER, that sets *on. */
static int flag_option(const char *cmd, const char *name, int letter, int argc, char **argv, bool *on,
		       struct ab_err *err)
{
	const struct option opts[] = {{name, no_argument, NULL, letter}, {0}};
	const char short_opts[] = {(char)letter, 0};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, opts, NULL)) != -1) {
		if (c != letter)
			return ab_error(err, 0, "%s: unknown option \"%s\"", cmd, argv[optind - 1]);
		*on = true;
	}
	return 0;
}

int cmd_start(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	const char *id = NULL;
	if (one_id("start", argc, argv, &id, err) < 0)
		return -1;
	return container_start(g, id, err);
}

int cmd_state(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	const char *id = NULL;
	if (one_id("state", argc, argv, &id, err) < 0)
		return -1;
	return container_print_state(g, id, err);
}

int cmd_pause(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	const char *id = NULL;
	if (one_id("pause", argc, argv, &id, err) < 0)
		return -1;
	return container_pause(g, id, true, err);
}

int cmd_resume(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	const char *id = NULL;
	if (one_id("resume", argc, argv, &id, err) < 0)
		return -1;
	return container_pause(g, id, false, err);
}

int cmd_delete(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	bool force = false;
	if (flag_option("delete", "force", 'f', argc, argv, &force, err) < 0)
		return -1;
	if (optind != argc - 1)
		return ab_error(err, 0, "delete: expected exactly one container ID");
	return container_delete(g, argv[optind], force, err);
}

static const struct {
	const char *name;
	int sig;
} signal_names[] = {
	{"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"ILL", SIGILL}, {"TRAP", SIGTRAP},
	{"ABRT", SIGABRT}, {"IOT", SIGIOT}, {"BUS", SIGBUS}, {"FPE", SIGFPE}, {"KILL", SIGKILL},
	{"USR1", SIGUSR1}, {"SEGV", SIGSEGV}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},
	{"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},
	{"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"URG", SIGURG},
	{"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
	{"WINCH", SIGWINCH}, {"IO", SIGIO}, {"POLL", SIGPOLL}, {"PWR", SIGPWR}, {"SYS", SIGSYS},
};

/* A signal number (0 checks the process exists, as kill(1) and runc take it)
 * or a name. */
int parse_signal(const char *s, int *ret)
{
	int64_t n;
	if (parse_int64(s, 0, SIGRTMAX, &n) == 0) {
		*ret = (int)n;
		return 0;
	}
	const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
	for (size_t i = 0; i < ARRAY_SIZE(signal_names); i++)
		if (strcasecmp(name, signal_names[i].name) == 0) {
			*ret = signal_names[i].sig;
			return 0;
		}
	/* RTMIN+N / RTMAX-N */
	if (strncasecmp(name, "RTMIN", 5) == 0) {
		int64_t off = 0;
		if (name[5] == 0 || (name[5] == '+' && parse_int64(name + 6, 0, SIGRTMAX - SIGRTMIN, &off) == 0)) {
			*ret = SIGRTMIN + (int)off;
			return 0;
		}
	}
	if (strncasecmp(name, "RTMAX", 5) == 0) {
		int64_t off = 0;
		if (name[5] == 0 || (name[5] == '-' && parse_int64(name + 6, 0, SIGRTMAX - SIGRTMIN, &off) == 0)) {
			*ret = SIGRTMAX - (int)off;
			return 0;
		}
	}
	return -1;
}

int cmd_kill(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	bool all = false;
	if (flag_option("kill", "all", 'a', argc, argv, &all, err) < 0)
		return -1;
	int n = argc - optind;
	if (n < 1 || n > 2)
		return ab_error(err, 0, "kill: expected a container ID and an optional signal");
	int sig = SIGTERM;
	if (n == 2 && parse_signal(argv[optind + 1], &sig) < 0)
		return ab_error(err, 0, "kill: invalid signal \"%s\"", argv[optind + 1]);
	return container_kill(g, argv[optind], sig, all, err);
}
