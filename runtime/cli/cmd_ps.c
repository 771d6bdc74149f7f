/* ps: the container's processes, as JSON pids or through the host's ps(1). */
#include "commands.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static bool pid_in(pid_t pid, const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Run ps with the user's arguments and keep the header and our processes' lines. */
static int ps_table(char **ps_args, size_t n_args, const pid_t *pids, size_t n, struct ab_err *err)
{
	char *argv[64] = {"ps"};
	size_t k = 1;
	if (!n_args)
		argv[k++] = "-ef";
	for (size_t i = 0; i < n_args && k < ARRAY_SIZE(argv) - 1; i++)
		argv[k++] = ps_args[i];
	argv[k] = NULL;
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return ab_error(err, errno, "pipe");
	pid_t child = fork();
	if (child < 0)
		return ab_error(err, errno, "fork");
	if (child == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		execvp("ps", argv);
		_exit(127);
	}
	close(pipefd[1]);
	FILE *f = fdopen(pipefd[0], "r");
	char *line = NULL;
	size_t cap = 0;
	int pid_col = -1;
	bool header = true;
	while (getline(&line, &cap, f) > 0) {
		if (header) {
			header = false;
			char copy[4096];
			snprintf(copy, sizeof copy, "%s", line);
			int col = 0;
			for (char *save, *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save), col++)
				if (streq(t, "PID"))
					pid_col = col;
			fputs(line, stdout);
			continue;
		}
		char copy[4096];
		snprintf(copy, sizeof copy, "%s", line);
		int col = 0;
		for (char *save, *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save), col++)
			if (col == pid_col && pid_in(atoi(t), pids, n))
				fputs(line, stdout);
	}
	free(line);
	fclose(f);
	int status;
	waitpid(child, &status, 0);
	if (pid_col < 0)
		return ab_error(err, 0, "ps: the output of ps has no PID column");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ab_error(err, 0, "ps: ps exited with status %d", WEXITSTATUS(status));
	return 0;
}

int cmd_ps(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'}, {"json", no_argument, NULL, 'j'}, {0}};
	bool json = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+f:", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;    /* agentbox's spelling everywhere; --format is runc's */
		else if (c == 'f' && (streq(optarg, "json") || streq(optarg, "table")))
			json = streq(optarg, "json");
		else if (c == 'f')
			return ab_error(err, 0, "ps: --format: unknown format \"%s\" (table or json)", optarg);
		else
			return ab_error(err, 0, "ps: unknown option \"%s\"", argv[optind - 1]);
	}
	if (optind >= argc)
		return ab_error(err, 0, "ps: expected a container ID");
	char box[PATH_MAX];
	const char *id = container_id_or_box(g, argv[optind], box, sizeof box);
	struct container_state s;
	if (container_load(g, id, false, NULL, &s, err) < 0)
		return -1;
	pid_t *pids = NULL;
	size_t n = 0;
	int r;
	if (s.cgroup.mode == CGROUP_MODE_DISABLED) {
		/* without a cgroup only the init is known */
		if (state_init_alive(&s)) {
			pids = xmalloc(sizeof *pids);
			pids[n++] = s.pid;
		}
		r = 0;
	} else {
		r = cgroup_pids(&s.cgroup, &pids, &n, err);
	}
	if (r == 0) {
		if (json) {
			struct json_out *o = json_out_new(false);
			json_arr_begin(o);
			for (size_t i = 0; i < n; i++)
				json_int(o, pids[i]);
			json_arr_end(o);
			printf("%s\n", json_out_text(o, NULL));
			json_out_free(o);
		} else {
			fflush(stdout);
			r = ps_table(argv + optind + 1, (size_t)(argc - optind - 1), pids, n, err);
		}
	}
	free(pids);
	state_free(&s);
	return r;
}
