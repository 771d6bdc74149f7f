/* list: every container under --root, as a table or a JSON array of states. */
#include "commands.h"
#include "json.h"
#include "util.h"

#include <getopt.h>
#include <string.h>

int cmd_list(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"quiet", no_argument, NULL, 'q'}, {"format", required_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'}, {0}};
	bool quiet = false, json = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qf:", opts, NULL)) != -1) {
		if (c == 'q')
			quiet = true;
		else if (c == 'j')
			json = true;    /* agentbox's spelling everywhere; --format is runc's */
		else if (c == 'f' && (streq(optarg, "json") || streq(optarg, "table")))
			json = streq(optarg, "json");
		else if (c == 'f')
			return ab_error(err, 0, "list: --format: unknown format \"%s\" (table or json)", optarg);
		else
			return ab_error(err, 0, "list: unknown option \"%s\"", argv[optind - 1]);
	}
	if (optind != argc)
		return ab_error(err, 0, "list: takes no arguments");
	char **ids;
	size_t n;
	if (state_list_ids(g->root, &ids, &n, err) < 0)
		return -1;
	struct json_out *o = json ? json_out_new(false) : NULL;
	if (o)
		json_arr_begin(o);
	else if (!quiet)
		printf("%-20s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
	for (size_t i = 0; i < n; i++) {
		struct container_state s;
		struct ab_err e;
		if (container_load(g, ids[i], false, NULL, &s, &e) < 0)
			continue;   /* being created or deleted right now */
		enum container_status st = state_status(&s);
		if (o)
			state_oci_json(o, &s, st);
		else if (quiet)
			printf("%s\n", s.id);
		else
			printf("%-20s %-8d %-10s %-40s %-30s %s\n", s.id, st == STATUS_STOPPED ? 0 : s.pid,
			       status_name(st), s.bundle, s.created, "");
		state_free(&s);
	}
	if (o) {
		json_arr_end(o);
		print_json(o);
	}
	state_free_ids(ids, n);
	return 0;
}
