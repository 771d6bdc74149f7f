/* agentbox kit build|run|show: kits (agentbox-kit(5)) compiled to OCI bundles.
 * This file parses the command lines; kit_run.c runs a box. */
#include "commands.h"
#include "egress.h"
#include "kit.h"
#include "kit_placeholders.h"
#include "kit_rundir.h"
#include "kit_run.h"
#include "util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char kit_usage[] =
	"usage: agentbox kit build [--allow-sensitive-workspace] KIT -o BUNDLE\n"
	"       agentbox kit run [--allow ENTRY]... [--workspace DIR] [--allow-sensitive-workspace] [-t|--tty]\n"
	"                        [KIT] [-- COMMAND [ARG...]]\n"
	"       agentbox kit show [KIT]\n"
	"\n"
	"Kits are YAML definitions of the box an agent runs in; see agentbox-kit(5).\n"
	"  build  write an OCI bundle (config.json and rootfs) for KIT into BUNDLE\n"
	"  run    build KIT into a temporary bundle and run COMMAND in it (without KIT:\n"
	"         the host's rootfs, the current directory as workspace, no network)\n"
	"  show   print the effective kit after extends, with the policy it implies\n";

static int usage_error(struct ab_err *err, const char *fmt, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof msg, fmt, arg ? arg : "");
	return ab_error(err, 0, "kit: %s; see agentbox kit --help", msg);
}

/* ---------------------------------------------------------------- build, show */

static int kit_build_cmd(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"allow-sensitive-workspace", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *out = NULL;
	bool allow_sensitive = false;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'S': allow_sensitive = true; break;
		case 'h': fputs(kit_usage, stdout); return 0;
		default: return usage_error(err, "build: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(err, "build: give exactly one KIT%s", "");
	if (!out)
		return usage_error(err, "build: -o BUNDLE is required%s", "");
	struct kit *k;
	if (kit_load(argv[optind], &k, err) < 0)
		return -1;
	struct kit_build_opts bo = {
		.bundle = out,
		.network = k->n_allow > 0,
		.egress_annotations = true,
		.allow_sensitive_workspace = allow_sensitive,
	};
	int r = kit_resolve_image_cached(g, k, err);
	if (r == 0)
		r = kit_build_bundle(k, &bo, err);
	kit_free(k);
	return r < 0 ? -1 : 0;
}

static int kit_show_cmd(int argc, char **argv, struct ab_err *err)
{
	if (argc > 2)
		return usage_error(err, "show: give at most one KIT%s", "");
	if (argc == 2 && (streq(argv[1], "-h") || streq(argv[1], "--help"))) {
		fputs(kit_usage, stdout);
		return 0;
	}
	if (argc == 2 && argv[1][0] == '-')
		return usage_error(err, "show: unknown option \"%s\"", argv[1]);
	struct kit *k;
	if (argc == 2) {
		if (kit_load(argv[1], &k, err) < 0)
			return -1;
	} else {
		k = kit_default(NULL);
	}
	char *text;
	int r = kit_show(k, &text, err);
	kit_free(k);
	if (r < 0)
		return -1;
	fputs(text, stdout);
	free(text);
	return 0;
}

/* ---------------------------------------------------------------- run */

static int kit_run_cmd(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"allow", required_argument, NULL, 'a'},
		{"workspace", required_argument, NULL, 'w'},
		{"tty", no_argument, NULL, 't'},
		{"allow-sensitive-workspace", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool allow_sensitive = false;
	_cleanup_free_ char **allow = xcalloc((size_t)argc + 1, sizeof *allow);
	size_t n_allow = 0;
	const char *workspace = NULL;
	bool tty = false;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+ta:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': allow[n_allow++] = optarg; break;
		case 'w': workspace = optarg; break;
		case 't': tty = true; break;
		case 'S': allow_sensitive = true; break;
		case 'h': fputs(kit_usage, stdout); return 0;
		default:
			return usage_error(err, "run: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	const char *kit_path = NULL;
	char **cmd = NULL;
	size_t n_cmd = 0;
	if (optind > 1 && streq(argv[optind - 1], "--")) {
		cmd = argv + optind;            /* no KIT: "kit run [OPTIONS] -- CMD" */
		n_cmd = (size_t)(argc - optind);
	} else if (optind < argc) {
		kit_path = argv[optind++];
		if (optind < argc) {
			if (!streq(argv[optind], "--"))
				return usage_error(err, "run: unexpected \"%s\" after KIT (put the command after --)", argv[optind]);
			cmd = argv + optind + 1;
			n_cmd = (size_t)(argc - optind - 1);
		}
	}

	/* --allow entries are checked here, where the error can name them */
	for (size_t i = 0; i < n_allow; i++) {
		struct egress_policy tmp = {0};
		char src[64];
		snprintf(src, sizeof src, "--allow #%zu", i + 1);
		if (strchr(allow[i], ',') || streq(allow[i], "all"))
			return ab_error(err, 0, "--allow \"%s\": give one entry per --allow (and \"all\" is not an entry)", allow[i]);
		int r = egress_policy_add(&tmp, allow[i], false, src, err);
		egress_policy_free(&tmp);
		if (r < 0)
			return -1;
	}
	struct kit_run_opts ro = {
		.kit_path = kit_path,
		.workspace = workspace,
		.allow = allow,
		.n_allow = n_allow,
		.command = cmd,
		.n_command = n_cmd,
		.tty = tty,
		.allow_sensitive_workspace = allow_sensitive,
	};
	return kit_run(g, &ro, err);
}

DECLARE_COMMAND(kit)
{
	if (argc < 2)
		return usage_error(err, "give a subcommand: build, run or show%s", "");
	const char *sub = argv[1];
	kit_sweep_stale_runs(g);
	kit_placeholders_sweep();
	if (streq(sub, "build"))
		return kit_build_cmd(g, argc - 1, argv + 1, err);
	if (streq(sub, "run"))
		return kit_run_cmd(g, argc - 1, argv + 1, err);
	if (streq(sub, "show"))
		return kit_show_cmd(argc - 1, argv + 1, err);
	if (streq(sub, "--help") || streq(sub, "-h") || streq(sub, "help")) {
		fputs(kit_usage, stdout);
		return 0;
	}
	return usage_error(err, "unknown subcommand \"%s\" (build, run or show)", sub);
}
