/* setup: register agentbox with an engine, or take it back (agentbox-setup(8);
 * the edits are runtime/setup/'s). */
#include "commands.h"
#include "setup.h"

#include <getopt.h>

int cmd_setup(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"undo", no_argument, NULL, 'u'}, {"dry-run", no_argument, NULL, 'n'},
		{"path", required_argument, NULL, 'p'}, {"config", required_argument, NULL, 'c'}, {0}};
	struct setup_request r = {0};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'u': r.undo = true; break;
		case 'n': r.dry_run = true; break;
		case 'p': r.bin = optarg; break;
		case 'c': r.config = optarg; break;
		default: return ab_error(err, 0, "setup: unknown or incomplete option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return ab_error(err, 0, "setup: name one engine: docker, podman or containerd");
	r.engine = argv[optind];
	return setup_engine(&r, err);
}
