/* agentbox: global flags, the command table, and the only place that prints an
 * error and chooses the exit status. */
#include "commands.h"
#include "test_hooks.h"
#include "log.h"
#include "sealed_exe.h"
#include "netns_pool.h"
#include "rootless.h"
#include "procfs.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef AGENTBOX_VERSION
#define AGENTBOX_VERSION "0.0.0"
#endif
#ifndef AGENTBOX_COMMIT
#define AGENTBOX_COMMIT "unknown"
#endif
#define SPEC_VERSION "1.2.0"

extern bool util_force_fallbacks;

static const struct command commands[] = {
	{"create", cmd_create, "create a container from a bundle, blocked before its program",
	 "agentbox create [--bundle DIR] [--pid-file FILE] [--console-socket SOCK] [--preserve-fds N] [--no-pivot] [--no-new-keyring] ID"},
	{"start", cmd_start, "start the program of a created container",
	 "agentbox start ID"},
	{"run", cmd_run, "create and start a container, in the foreground unless --detach",
	 "agentbox run [--bundle DIR] [--pid-file FILE] [--console-socket SOCK] [--preserve-fds N] [--detach] [--keep] [--no-pivot] [--no-new-keyring] ID"},
	{"state", cmd_state, "print the OCI state of a container as JSON",
	 "agentbox state ID"},
	{"list", cmd_list, "list containers",
	 "agentbox list [-q|--quiet] [--json] [--format table|json]"},
	{"kill", cmd_kill, "send a signal to the container's init (or all its processes)",
	 "agentbox kill [--all] ID [SIGNAL]"},
	{"delete", cmd_delete, "delete a container and everything it holds",
	 "agentbox delete [--force] ID"},
	{"spec", cmd_spec, "write a default config.json",
	 "agentbox spec [--bundle DIR] [--rootless]"},
	{"features", cmd_features, "print the features this runtime supports as JSON",
	 "agentbox features"},
	{"exec", cmd_exec, "run a new process in a running container",
	 "agentbox exec [--process FILE] [--console-socket SOCK] [--tty] [--detach] [--pid-file FILE] [--preserve-fds N] [--cwd DIR] [--env K=V]... [--user UID[:GID]] [--additional-gids GID]... [--cap CAP]... [--no-new-privs] [--process-label L] [--apparmor P] ID [COMMAND [ARG...]]"},
	{"pause", cmd_pause, "freeze every process of a container",
	 "agentbox pause ID"},
	{"resume", cmd_resume, "thaw a paused container",
	 "agentbox resume ID"},
	{"update", cmd_update, "change the resource limits of a container",
	 "agentbox update [--resources FILE|-] [--memory N] [--memory-reservation N] [--memory-swap N] [--cpu-quota N] [--cpu-period N] [--cpu-share N] [--cpu-rt-runtime N] [--cpu-rt-period N] [--cpuset-cpus L] [--cpuset-mems L] [--pids-limit N] [--blkio-weight N] ID"},
	{"ps", cmd_ps, "list the processes of a container",
	 "agentbox ps [--json] [--format table|json] ID [PS_ARGS...]"},
	{"events", cmd_events, "print container statistics and events as JSON lines",
	 "agentbox events [--stats] [--interval DURATION] ID"},
	{"kit", cmd_kit, "build, run or show a kit (a YAML definition of an agent's box); list, remove and fork named boxes",
	 "agentbox kit build [--allow-sensitive-workspace] KIT -o BUNDLE | agentbox kit run [--name NAME] [--allow ENTRY]... [--learn] [--workspace DIR] [--allow-sensitive-workspace] [--workspace-guard quarantine|off] [-t|--tty] [KIT] [-- COMMAND [ARG...]] | agentbox kit show [--json] [KIT] | agentbox kit ls [-q|--json] | agentbox kit rm NAME... | agentbox kit fork NAME NEW"},
	{"egress", cmd_egress, "show what a container tried to reach and was refused; show, allow or deny its policy while it runs; suggest the allowlist learn mode calls for",
	 "agentbox egress log [--json] [--follow] ID | agentbox egress show [--json] ID | agentbox egress suggest [--wildcards] [--json] ID | agentbox egress allow ID ENTRY... | agentbox egress deny ID ENTRY..."},
	{"setup", cmd_setup, "register agentbox with Docker, Podman or containerd, or take it back",
	 "agentbox setup [--dry-run] [--undo] [--path PATH] [--config FILE] docker|podman|containerd"},
};

static const char global_usage[] =
	"usage: agentbox [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
	"\n"
	"An OCI runtime for AI coding agents: default-deny egress, a strict seccomp\n"
	"profile and a hardening floor on every container.\n"
	"\n"
	"Global options:\n"
	"  --root DIR                state directory (default /run/agentbox; rootless:\n"
	"                            $XDG_RUNTIME_DIR/agentbox, else /run/user/UID/agentbox\n"
	"                            or /tmp/agentbox-UID/agentbox)\n"
	"  --rootless true|false|auto  rootless cgroup handling (default auto: when not\n"
	"                            root of the host)\n"
	"  --log FILE                also write log lines to FILE\n"
	"  --log-format text|json    format of the --log file (default text)\n"
	"  --debug                   log debug messages\n"
	"  --systemd-cgroup          cgroupsPath is systemd style (slice:prefix:name)\n"
	"  --cgroup-manager M        cgroupfs, systemd or disabled\n"
	"  --config FILE             agent policy file (default /etc/agentbox/config.yaml)\n"
	"  --seccomp-profile NAME    agent seccomp profile: agent (default), default, none\n"
	"  --egress-allow LIST       comma-separated egress allow entries\n"
	"  --egress-deny LIST        comma-separated egress deny entries\n"
	"  --egress-internal LIST    address ranges allowed names may resolve into\n"
	"  --egress-mode enforce|learn  enforce (default), or learn: egress open and recorded\n"
	"  --credentials LIST        header credentials of the config file to inject (or none)\n"
	"  -v, --version             print the version\n"
	"  -h, --help                print this help\n"
	"\n"
	"Commands:\n";

static void print_usage(FILE *f)
{
	fputs(global_usage, f);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nSee agentbox(8) and agentbox-COMMAND(8).\n", f);
}

/* "usage: A | agentbox B": one synopsis a line, under each other */
static void print_synopses(const char *usage)
{
	static const char sep[] = " | agentbox ";
	fputs("usage: ", stdout);
	for (const char *s = usage, *next; s; s = next ? next + 3 : NULL) {
		next = strstr(s, sep);
		printf("%s%.*s\n", s == usage ? "" : "       ", next ? (int)(next - s) : (int)strlen(s), s);
	}
}

int command_help(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(commands[i].name, name)) {
			print_synopses(commands[i].usage);
			printf("\n%s.\nSee agentbox-%s(8).\n", commands[i].summary, name);
			return 0;
		}
	return 0;
}

enum {
	OPT_ROOT = 256, OPT_LOG, OPT_LOG_FORMAT, OPT_DEBUG, OPT_SYSTEMD, OPT_CGMGR, OPT_CONFIG,
	OPT_SECCOMP, OPT_EGRESS_ALLOW, OPT_EGRESS_DENY, OPT_EGRESS_INTERNAL, OPT_ROOTLESS,
	OPT_CREDENTIALS, OPT_EGRESS_MODE,
};

static const struct option global_options[] = {
	{"root", required_argument, NULL, OPT_ROOT},
	{"log", required_argument, NULL, OPT_LOG},
	{"log-format", required_argument, NULL, OPT_LOG_FORMAT},
	{"debug", no_argument, NULL, OPT_DEBUG},
	{"systemd-cgroup", no_argument, NULL, OPT_SYSTEMD},
	{"cgroup-manager", required_argument, NULL, OPT_CGMGR},
	{"config", required_argument, NULL, OPT_CONFIG},
	{"seccomp-profile", required_argument, NULL, OPT_SECCOMP},
	{"egress-allow", required_argument, NULL, OPT_EGRESS_ALLOW},
	{"egress-deny", required_argument, NULL, OPT_EGRESS_DENY},
	{"egress-internal", required_argument, NULL, OPT_EGRESS_INTERNAL},
	{"rootless", required_argument, NULL, OPT_ROOTLESS},
	{"credentials", required_argument, NULL, OPT_CREDENTIALS},
	{"egress-mode", required_argument, NULL, OPT_EGRESS_MODE},
	{"version", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

extern uintptr_t util_main_frame;

/* ab_fatal's line goes where every other error goes */
static void log_fatal_line(const char *msg) { log_error("%s", msg); }

/* What main keeps of the global flags besides struct global_opts. */
struct main_opts {
	const char *rootless;           /* "true", "false" or "auto" */
	const char *log_path;
	bool log_json, debug;
};

/* The global flags, before the command, into g and m: -1 to go on, else
 * main's exit status (--version, --help, a bad flag, said on stderr). */
static int parse_global_flags(int argc, char **argv, struct global_opts *g, struct main_opts *m)
{
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+vh", global_options, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT: g->root = optarg; break;
		case OPT_LOG: m->log_path = optarg; break;
		case OPT_LOG_FORMAT:
			if (streq(optarg, "json"))
				m->log_json = true;
			else if (!streq(optarg, "text")) {
				fprintf(stderr, "agentbox: --log-format: unknown format \"%s\" (text or json)\n", optarg);
				return 1;
			}
			break;
		case OPT_DEBUG: m->debug = true; break;
		case OPT_SYSTEMD: g->systemd_cgroup = true; break;
		case OPT_CGMGR:
			if (streq(optarg, "systemd"))
				g->systemd_cgroup = true;
			else if (streq(optarg, "disabled"))
				g->cgroups_disabled = true;
			else if (!streq(optarg, "cgroupfs")) {
				fprintf(stderr, "agentbox: --cgroup-manager: unknown manager \"%s\" (cgroupfs, systemd or disabled)\n", optarg);
				return 1;
			}
			break;
		case OPT_CONFIG: g->config_path = optarg; break;
		case OPT_SECCOMP: g->seccomp_profile = optarg; break;
		case OPT_EGRESS_ALLOW: g->egress_allow = optarg; break;
		case OPT_EGRESS_DENY: g->egress_deny = optarg; break;
		case OPT_EGRESS_INTERNAL: g->egress_internal = optarg; break;
		case OPT_ROOTLESS:
			if (!streq(optarg, "true") && !streq(optarg, "false") && !streq(optarg, "auto")) {
				fprintf(stderr, "agentbox: --rootless: unknown value \"%s\" (true, false or auto)\n", optarg);
				return 1;
			}
			m->rootless = optarg;
			break;
		case OPT_CREDENTIALS: g->credentials = optarg; break;
		case OPT_EGRESS_MODE:
			if (!streq(optarg, "learn") && !streq(optarg, "enforce")) {
				fprintf(stderr, "agentbox: --egress-mode: unknown mode \"%s\" (enforce or learn)\n", optarg);
				return 1;
			}
			g->egress_learn = streq(optarg, "learn");
			break;
		case 'v':
			printf("agentbox version %s\ncommit: %s\nspec: %s\n", AGENTBOX_VERSION, AGENTBOX_COMMIT, SPEC_VERSION);
#ifdef AGENTBOX_TEST_HOOKS
			printf("build: test hooks (AGENTBOX_FAULT_*; not for production)\n");
#endif
			return 0;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			if (optopt)
				fprintf(stderr, "agentbox: unknown or incomplete global option \"-%c\"; see agentbox --help\n", optopt);
			else
				fprintf(stderr, "agentbox: unknown or incomplete global option \"%s\"; see agentbox --help\n", argv[optind - 1]);
			return 1;
		}
	}
	return -1;
}

static const struct command *find_command(const char *name)
{
	const struct command *cmd = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(commands[i].name, name))
			cmd = &commands[i];
	return cmd;
}

/* Commands that start container processes: no image of our binary may
 * enter a container (sealed_exe.h). */
static bool starts_containers(const char *name)
{
	return streq(name, "create") || streq(name, "run") || streq(name, "exec") || streq(name, "kit");
}

/* The command's exit status: done without libc's exit handlers and
 * destructors, which would only write to pages the fork of the init or the
 * sentry left write-protected, a page fault each. Our own handlers are none;
 * stdio is flushed here. */
static int finish(int r)
{
#if !defined(__SANITIZE_ADDRESS__)
	fflush(NULL);
	netns_pool_exiting();
	_exit(r);
#endif
	return r;
}

int main(int argc, char **argv)
{
	util_main_frame = (uintptr_t)__builtin_frame_address(0);
	/* the argument strings lie end to end: room for a filler's command line */
	if (argc > 0 && argv[argc - 1] >= argv[0]) {
		netns_pool_arg_area = argv[0];
		netns_pool_arg_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	}
	/* the pool's filler, started by a create or run (runtime/egress/netns_pool.h) */
	if ((argc == 3 || argc == 4) && streq(argv[1], NETNS_POOL_FILL_COMMAND))
		return netns_pool_fill(NETNS_POOL_DIR, argv[2], argc == 4 ? argv[3] : NULL);
	struct global_opts g = {0};
	struct main_opts m = {.rootless = "auto"};
	struct ab_err err = {0};

	/* Block every signal now so none is lost between clone and the handlers; the
	 * container's init unblocks them before exec. */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (test_hook("AGENTBOX_FORCE_FALLBACKS"))
		util_force_fallbacks = true;
#ifdef AGENTBOX_TEST_HOOKS
	if (test_hook("AGENTBOX_TEST_PROC_BY_PATH"))
		procfs_test_by_path = true;
#endif

	int status = parse_global_flags(argc, argv, &g, &m);
	if (status >= 0)
		return status;
	if (log_init(m.log_path, m.log_json, m.debug) < 0) {
		fprintf(stderr, "agentbox: --log %s: %s\n", m.log_path, strerror(errno));
		return 1;
	}
	ab_set_fatal_hook(log_fatal_line);
	if (optind >= argc) {
		print_usage(stderr);
		log_error("no command given");
		return 1;
	}
	g.rootless = streq(m.rootless, "auto") ? rootless_detect() : streq(m.rootless, "true");
	if (!g.root && !(g.root = rootless_default_state_root(&err))) {
		log_error("%s", err.msg);
		return 1;
	}
	const char *name = argv[optind];
	const struct command *cmd = find_command(name);
	if (!cmd) {
		log_error("unknown command \"%s\"; see agentbox --help", name);
		return 1;
	}
	if (starts_containers(name) && sealed_exe_ensure(argv, &err) < 0) {
		log_error("%s", err.msg);
		return cmd->fn == cmd_exec ? EXEC_RUNTIME_FAILURE : 1;
	}
	int sub_argc = argc - optind;
	char **sub_argv = argv + optind;
	if (wants_help(sub_argc, sub_argv))
		return command_help(name);
	optind = 0;     /* reset getopt for the subcommand */
	int r = cmd->fn(&g, sub_argc, sub_argv, &err);
	if (r < 0) {
		log_error("%s", err.msg[0] ? err.msg : "failed");
		return err.status ? err.status : 1;
	}
	return finish(r);
}
