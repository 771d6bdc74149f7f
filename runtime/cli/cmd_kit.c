/* agentbox kit build|run|show: kits (agentbox-kit(5)) compiled to OCI bundles.
 * This file parses the command lines; kit_run.c runs a box. */
#include "commands.h"
#include "egress.h"
#include "json.h"
#include "kit.h"
#include "kit_box.h"
#include "kit_idmap.h"
#include "kit_placeholders.h"
#include "kit_rundir.h"
#include "kit_run.h"
#include "log.h"
#include "rootless.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char kit_usage[] =
	"usage: agentbox kit build [--allow-sensitive-workspace] KIT -o BUNDLE\n"
	"       agentbox kit run [--name NAME] [--allow ENTRY]... [--learn] [--workspace DIR] [--allow-sensitive-workspace]\n"
	"                        [--workspace-guard quarantine|off] [-t|--tty] [KIT] [-- COMMAND [ARG...]]\n"
	"       agentbox kit show [--json] [KIT]\n"
	"       agentbox kit ls [-q|--json]\n"
	"       agentbox kit rm NAME...\n"
	"       agentbox kit fork NAME NEW\n"
	"\n"
	"Kits are YAML definitions of the box an agent runs in; see agentbox-kit(5).\n"
	"  build  write an OCI bundle (config.json and rootfs) for KIT into BUNDLE\n"
	"  run    build KIT into a temporary bundle and run COMMAND in it (without KIT:\n"
	"         the host's rootfs, the current directory as workspace, no network);\n"
	"         with --name, in the named box, which keeps what it wrote for the next run;\n"
	"         with --learn, egress open and recorded: agentbox egress suggest prints\n"
	"         the allowlist the run called for\n"
	"  show   print the effective kit after extends, with the policy it implies (--json: as one object)\n"
	"  ls     list the named boxes\n"
	"  rm     remove named boxes\n"
	"  fork   a new box NEW starting from what NAME holds now\n";

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
	if (k->n_internal)
		log_warn("kit build: network.internal is for kit run; the bundle's runtime takes its own "
			 "--egress-internal (or egress.internal in agentbox-config(5))");
	struct kit_build_opts bo = {
		.bundle = out,
		.network = k->n_allow > 0,
		.egress_annotations = true,
		.allow_sensitive_workspace = allow_sensitive,
	};
	int r = kit_resolve_image_cached(g, k, err);
	char ws[PATH_MAX];
	if (r == 0 && k->workspace) {
		uint32_t uid, gid;
		if (!realpath(k->workspace, ws)) {
			r = ab_error(err, errno, "workspace %s", k->workspace);
		} else {
			bo.workspace = ws;
			kit_effective_user(k, ws, &uid, &gid);
			r = kit_idmap_workspace(ws, uid, gid, &bo, err);
		}
	}
	if (r == 0)
		r = kit_build_bundle(k, &bo, err);
	kit_free(k);
	return r < 0 ? -1 : 0;
}

static int kit_show_cmd(int argc, char **argv, struct ab_err *err)
{
	struct kit_show_opts so = {.rootless = rootless_detect()};
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "-h") || streq(argv[i], "--help"))
			return fputs(kit_usage, stdout), 0;
		if (streq(argv[i], "--json"))
			so.json = true;
		else if (argv[i][0] == '-')
			return usage_error(err, "show: unknown option \"%s\"", argv[i]);
		else if (path)
			return usage_error(err, "show: give at most one KIT (\"%s\" is a second)", argv[i]);
		else
			path = argv[i];
	}
	struct kit *k;
	if (path) {
		if (kit_load(path, &k, err) < 0)
			return -1;
	} else {
		k = kit_default(NULL);
	}
	char *text;
	int r = kit_show(k, &so, &text, err);
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
		{"name", required_argument, NULL, 'n'},
		{"workspace-guard", required_argument, NULL, 'G'},
		{"learn", no_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool allow_sensitive = false, guard_set = false, learn = false;
	enum kit_ws_guard guard = KIT_WS_GUARD_QUARANTINE;
	const char *name = NULL;
	_cleanup_free_ char **allow = xcalloc((size_t)argc + 1, sizeof *allow);
	size_t n_allow = 0;
	const char *workspace = NULL;
	bool tty = false;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+ta:w:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'a': allow[n_allow++] = optarg; break;
		case 'w': workspace = optarg; break;
		case 't': tty = true; break;
		case 'S': allow_sensitive = true; break;
		case 'G':
			if (kit_ws_guard_parse(optarg, &guard) < 0)
				return ab_error(err, 0, "--workspace-guard \"%s\": give quarantine or off", optarg);
			guard_set = true;
			break;
		case 'L': learn = true; break;
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
		.name = name,
		.ws_guard_set = guard_set,
		.ws_guard = guard,
		.learn = learn,
	};
	if (name && !kit_box_name_valid(name))
		return ab_error(err, 0, "--name \"%s\": a box name is letters, digits, \"-\", \"_\" and \".\", "
				"at most %d, starting with a letter or digit", name, KIT_BOX_NAME_MAX);
	return kit_run(g, &ro, err);
}

/* ---------------------------------------------------------------- boxes */

static void human_size(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "BKMGTP";
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof units - 1) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

static void local_time(char *buf, size_t len, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (t <= 0 || !localtime_r(&tt, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
}

static int kit_ls_cmd(int argc, char **argv, struct ab_err *err)
{
	bool quiet = false, as_json = false;
	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "-q") || streq(argv[i], "--quiet"))
			quiet = true;
		else if (streq(argv[i], "--json"))
			as_json = true;
		else if (streq(argv[i], "-h") || streq(argv[i], "--help"))
			return fputs(kit_usage, stdout), 0;
		else
			return usage_error(err, "ls: unknown argument \"%s\"", argv[i]);
	}
	struct arena a = {0};
	struct kit_box_info *v;
	size_t n;
	if (kit_box_list(&a, &v, &n, err) < 0) {
		arena_free(&a);
		return -1;
	}
	if (as_json) {
		struct json_out *j = json_out_new(true);
		json_arr_begin(j);
		for (size_t i = 0; i < n; i++) {
			json_obj_begin(j);
			json_kv_str(j, "name", v[i].name);
			json_kv_str(j, "kit", v[i].kit);
			json_kv_uint(j, "size", v[i].size);
			json_kv_uint(j, "layers_size", v[i].layers_size);
			json_kv_int(j, "created", v[i].created);
			json_kv_int(j, "last_used", v[i].last_used);
			json_kv_bool(j, "running", v[i].running);
			json_kv_bool(j, "learn", v[i].learn);
			/* what egress log/allow/deny take (kit_run.c names a run's container so) */
			char id[sizeof v[i].name + 8];
			snprintf(id, sizeof id, BOX_ID_PREFIX "%s", v[i].name);
			json_kv_str(j, "id", id);
			json_obj_end(j);
		}
		json_arr_end(j);
		printf("%s\n", json_out_text(j, NULL));
		json_out_free(j);
	} else if (quiet) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", v[i].name);
	} else {
		printf("%-20s %-32s %8s %8s %-16s  %-16s  %s\n", "NAME", "KIT", "SIZE", "SHARED", "CREATED", "LAST USED",
		       "STATE");
		for (size_t i = 0; i < n; i++) {
			char size[16], shared[16], created[32], used[32];
			human_size(size, sizeof size, v[i].size);
			human_size(shared, sizeof shared, v[i].layers_size);
			local_time(created, sizeof created, v[i].created);
			local_time(used, sizeof used, v[i].last_used);
			/* learn: the last run's egress was open (egress suggest box-NAME) */
			printf("%-20s %-32s %8s %8s %-16s  %-16s  %s%s\n", v[i].name, v[i].kit ? v[i].kit : "(default kit)",
			       size, shared, created, used, v[i].running ? "running" : "idle", v[i].learn ? ",learn" : "");
		}
	}
	arena_free(&a);
	return 0;
}

static int kit_rm_cmd(int argc, char **argv, struct ab_err *err)
{
	if (argc == 2 && (streq(argv[1], "-h") || streq(argv[1], "--help")))
		return fputs(kit_usage, stdout), 0;
	if (argc < 2)
		return usage_error(err, "rm: give the NAME of a box%s", "");
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			return usage_error(err, "rm: unknown option \"%s\"", argv[i]);
		if (kit_box_remove(argv[i], err) < 0)
			return -1;
	}
	return 0;
}

static int kit_fork_cmd(int argc, char **argv, struct ab_err *err)
{
	if (argc == 2 && (streq(argv[1], "-h") || streq(argv[1], "--help")))
		return fputs(kit_usage, stdout), 0;
	if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-')
		return usage_error(err, "fork: give a box NAME and the NEW one's name%s", "");
	return kit_box_fork(argv[1], argv[2], err) < 0 ? -1 : 0;
}

/* An unprivileged user's kit commands run as root of a user namespace of the
 * user's (rootless.h): the overlay, the workspace's protections and the
 * box's network namespace are then the user's to make, and files that the
 * box's other users own stay within reach for ls, rm and fork (only run
 * needs the user's subordinate ids: a box has more users). The temporary
 * directories go below the user's runtime directory. */
static int kit_enter_rootless(const char *sub, struct ab_err *err)
{
	if (geteuid() == 0)
		return 0;
	char dir[PATH_MAX - 32], base[PATH_MAX];
	if (rootless_user_runtime_dir(dir, sizeof dir, err) < 0)
		return -1;
	snprintf(base, sizeof base, "%s/agentbox-kits", dir);
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return ab_error(err, errno, "mkdir %s", base);
	kit_rundir_set_base(base);
	return rootless_enter_userns(streq(sub, "run"), err);
}

DECLARE_COMMAND(kit)
{
	if (argc < 2)
		return usage_error(err, "give a subcommand: build, run, show, ls, rm or fork%s", "");
	const char *sub = argv[1];
	if (!streq(sub, "--help") && !streq(sub, "-h") && !streq(sub, "help") && kit_enter_rootless(sub, err) < 0)
		return -1;
	kit_sweep_stale_runs(g);
	kit_placeholders_sweep();
	if (streq(sub, "build"))
		return kit_build_cmd(g, argc - 1, argv + 1, err);
	if (streq(sub, "run"))
		return kit_run_cmd(g, argc - 1, argv + 1, err);
	if (streq(sub, "show"))
		return kit_show_cmd(argc - 1, argv + 1, err);
	if (streq(sub, "ls"))
		return kit_ls_cmd(argc - 1, argv + 1, err);
	if (streq(sub, "rm"))
		return kit_rm_cmd(argc - 1, argv + 1, err);
	if (streq(sub, "fork"))
		return kit_fork_cmd(argc - 1, argv + 1, err);
	if (streq(sub, "--help") || streq(sub, "-h") || streq(sub, "help")) {
		fputs(kit_usage, stdout);
		return 0;
	}
	return usage_error(err, "unknown subcommand \"%s\" (build, run, show, ls, rm or fork)", sub);
}
