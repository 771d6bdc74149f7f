/* create and run: the options they share, then one call into the lifecycle. */
#include "commands.h"
#include "util.h"

#include <getopt.h>
#include <string.h>

enum { OPT_BUNDLE = 256, OPT_PID_FILE, OPT_CONSOLE, OPT_PRESERVE, OPT_NO_PIVOT, OPT_NO_KEYRING,
       OPT_DETACH, OPT_KEEP };

static const struct option create_options[] = {
	{"bundle", required_argument, NULL, OPT_BUNDLE},
	{"pid-file", required_argument, NULL, OPT_PID_FILE},
	{"console-socket", required_argument, NULL, OPT_CONSOLE},
	{"preserve-fds", required_argument, NULL, OPT_PRESERVE},
	{"no-pivot", no_argument, NULL, OPT_NO_PIVOT},
	{"no-new-keyring", no_argument, NULL, OPT_NO_KEYRING},
	{"detach", no_argument, NULL, OPT_DETACH},
	{"keep", no_argument, NULL, OPT_KEEP},
	{0},
};

static int parse_create(const char *cmd, bool run, int argc, char **argv, struct create_opts *o,
			struct ab_err *err)
{
	*o = (struct create_opts){.bundle = "."};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, run ? "b:d" : "b:", create_options, NULL)) != -1) {
		switch (c) {
		case 'b':
		case OPT_BUNDLE: o->bundle = optarg; break;
		case OPT_PID_FILE: o->pid_file = optarg; break;
		case OPT_CONSOLE: o->console_socket = optarg; break;
		case OPT_PRESERVE: {
			int64_t n;
			if (parse_int64(optarg, 0, 65536, &n) < 0)
				return ab_error(err, 0, "--preserve-fds: invalid number \"%s\"", optarg);
			o->preserve_fds = (int)n;
			break;
		}
		case OPT_NO_PIVOT: o->no_pivot = true; break;
		case OPT_NO_KEYRING: o->no_new_keyring = true; break;
		case 'd':
		case OPT_DETACH:
			if (!run)
				goto unknown;
			o->detach = true;
			break;
		case OPT_KEEP:
			if (!run)
				goto unknown;
			o->keep = true;
			break;
		default:
		unknown:
			return ab_error(err, 0, "%s: unknown or incomplete option \"%s\"", cmd, argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return ab_error(err, 0, "%s: expected exactly one container ID", cmd);
	o->id = argv[optind];
	return 0;
}

int cmd_create(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	struct create_opts o;
	if (parse_create("create", false, argc, argv, &o, err) < 0)
		return -1;
	return container_create(g, &o, err);
}

int cmd_run(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	struct create_opts o;
	if (parse_create("run", true, argc, argv, &o, err) < 0)
		return -1;
	return container_run(g, &o, err);
}
