/* exec: --process FILE or runc's individual flags, then one call into the
 * lifecycle. The program's status is exec's; a failure of the runtime is 255
 * (EXEC_RUNTIME_FAILURE), one of the command line 1, as in runc. */
#include "commands.h"
#include "util.h"

#include <getopt.h>
#include <string.h>

enum { OPT_PROCESS = 256, OPT_CONSOLE, OPT_TTY, OPT_DETACH, OPT_PID_FILE, OPT_PRESERVE, OPT_CWD,
       OPT_ENV, OPT_USER, OPT_CAP, OPT_NNP, OPT_LABEL, OPT_APPARMOR, OPT_GIDS, OPT_CGROUP,
       OPT_IGNORE_PAUSED };

int cmd_exec(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"process", required_argument, NULL, OPT_PROCESS},
		{"console-socket", required_argument, NULL, OPT_CONSOLE},
		{"tty", no_argument, NULL, OPT_TTY},
		{"detach", no_argument, NULL, OPT_DETACH},
		{"pid-file", required_argument, NULL, OPT_PID_FILE},
		{"preserve-fds", required_argument, NULL, OPT_PRESERVE},
		{"cwd", required_argument, NULL, OPT_CWD},
		{"env", required_argument, NULL, OPT_ENV},
		{"user", required_argument, NULL, OPT_USER},
		{"additional-gids", required_argument, NULL, OPT_GIDS},
		{"cap", required_argument, NULL, OPT_CAP},
		{"no-new-privs", no_argument, NULL, OPT_NNP},
		{"process-label", required_argument, NULL, OPT_LABEL},
		{"apparmor", required_argument, NULL, OPT_APPARMOR},
		{0},
	};
	struct exec_opts o = {0};
	char *env[256], *caps[64];
	uint32_t gids[64];
	o.env = env;
	o.caps = caps;
	o.additional_gids = gids;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:tde:u:c:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case OPT_PROCESS: o.process_path = optarg; break;
		case OPT_CONSOLE: o.console_socket = optarg; break;
		case 't':
		case OPT_TTY: o.tty = true; break;
		case 'd':
		case OPT_DETACH: o.detach = true; break;
		case OPT_PID_FILE: o.pid_file = optarg; break;
		case OPT_PRESERVE: {
			int64_t n;
			if (parse_int64(optarg, 0, 65536, &n) < 0)
				return ab_error(err, 0, "exec: --preserve-fds: invalid number \"%s\"", optarg);
			o.preserve_fds = (int)n;
			break;
		}
		case OPT_CWD: o.cwd = optarg; break;
		case 'e':
		case OPT_ENV:
			if (o.n_env >= ARRAY_SIZE(env))
				return ab_error(err, 0, "exec: too many --env");
			env[o.n_env++] = optarg;
			break;
		case 'u':
		case OPT_USER: o.user = optarg; break;
		case 'c':
		case OPT_CAP:
			if (o.n_caps >= ARRAY_SIZE(caps))
				return ab_error(err, 0, "exec: too many --cap");
			caps[o.n_caps++] = optarg;
			break;
		case OPT_NNP: o.no_new_privs = true; break;
		case OPT_LABEL: o.process_label = optarg; break;
		case OPT_APPARMOR: o.apparmor = optarg; break;
		case OPT_GIDS: {
			int64_t gid;
			if (o.n_additional_gids >= ARRAY_SIZE(gids))
				return ab_error(err, 0, "exec: too many --additional-gids");
			if (parse_int64(optarg, 0, UINT32_MAX - 1, &gid) < 0)
				return ab_error(err, 0, "exec: --additional-gids \"%s\": expected a gid as a number", optarg);
			gids[o.n_additional_gids++] = (uint32_t)gid;
			break;
		}
		default:
			return ab_error(err, 0, "exec: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return ab_error(err, 0, "exec: expected a container ID");
	char box[PATH_MAX];
	o.id = container_id_or_box(g, argv[optind], box, sizeof box);
	o.args = argv + optind + 1;
	o.n_args = (size_t)(argc - optind - 1);
	/* the command line is read: from here on a failure is the runtime's */
	int r = o.process_path && o.n_args ? ab_error(err, 0, "exec: give either --process FILE or a COMMAND, not both")
					   : container_exec(g, &o, err);
	if (r < 0)
		err->status = EXEC_RUNTIME_FAILURE;
	return r;
}
