/* update: new resource limits from a LinuxResources document or runc's flags. */
#include "commands.h"
#include "util.h"

#include <fcntl.h>
#include <getopt.h>
#include <string.h>

enum { OPT_RESOURCES = 256, OPT_MEMORY, OPT_MEMORY_RES, OPT_MEMORY_SWAP, OPT_KMEM, OPT_KMEM_TCP,
       OPT_CPU_QUOTA, OPT_CPU_PERIOD, OPT_CPU_SHARE, OPT_CPU_RT_RUNTIME, OPT_CPU_RT_PERIOD,
       OPT_CPUSET_CPUS, OPT_CPUSET_MEMS, OPT_PIDS, OPT_BLKIO };

/* A byte size: a number with an optional k/m/g/t suffix (binary units), or -1. */
static int parse_size(const char *flag, const char *s, int64_t *ret, struct ab_err *err)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == s)
		return ab_error(err, 0, "update: %s: invalid size \"%s\"", flag, s);
	int64_t mult = 1;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': mult = 1LL << 10; end++; break;
	case 'm': case 'M': mult = 1LL << 20; end++; break;
	case 'g': case 'G': mult = 1LL << 30; end++; break;
	case 't': case 'T': mult = 1LL << 40; end++; break;
	default: return ab_error(err, 0, "update: %s: invalid size \"%s\"", flag, s);
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (v < 0 && v != -1))
		return ab_error(err, 0, "update: %s: invalid size \"%s\" (negative limits other than -1 are not allowed)", flag, s);
	*ret = v == -1 ? -1 : v * mult;
	return 0;
}

static int parse_num(const char *flag, const char *s, int64_t min, int64_t *ret, struct ab_err *err)
{
	if (parse_int64(s, min, INT64_MAX, ret) < 0)
		return ab_error(err, 0, "update: %s: invalid value \"%s\"", flag, s);
	return 0;
}

int cmd_update(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	static const struct option opts[] = {
		{"resources", required_argument, NULL, OPT_RESOURCES},
		{"memory", required_argument, NULL, OPT_MEMORY},
		{"memory-reservation", required_argument, NULL, OPT_MEMORY_RES},
		{"memory-swap", required_argument, NULL, OPT_MEMORY_SWAP},
		{"kernel-memory", required_argument, NULL, OPT_KMEM},
		{"kernel-memory-tcp", required_argument, NULL, OPT_KMEM_TCP},
		{"cpu-quota", required_argument, NULL, OPT_CPU_QUOTA},
		{"cpu-period", required_argument, NULL, OPT_CPU_PERIOD},
		{"cpu-share", required_argument, NULL, OPT_CPU_SHARE},
		{"cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME},
		{"cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD},
		{"cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS},
		{"cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS},
		{"pids-limit", required_argument, NULL, OPT_PIDS},
		{"blkio-weight", required_argument, NULL, OPT_BLKIO},
		{0},
	};
	struct arena a = {0};
	struct oci_resources res = {0};
	const char *resources_path = NULL;
	bool any_flag = false;
	int64_t v;
	int c, r = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "r:", opts, NULL)) != -1) {
		const char *flag = argv[optind - 1];
		any_flag |= c != OPT_RESOURCES && c != 'r';
		switch (c) {
		case 'r':
		case OPT_RESOURCES: resources_path = optarg; break;
		case OPT_MEMORY:
			if (parse_size("--memory", optarg, &v, err) < 0) goto out;
			res.memory.has_limit = true; res.memory.limit = v; break;
		case OPT_MEMORY_RES:
			if (parse_size("--memory-reservation", optarg, &v, err) < 0) goto out;
			res.memory.has_reservation = true; res.memory.reservation = v; break;
		case OPT_MEMORY_SWAP:
			if (parse_size("--memory-swap", optarg, &v, err) < 0) goto out;
			res.memory.has_swap = true; res.memory.swap = v; break;
		case OPT_KMEM:
		case OPT_KMEM_TCP:
			/* deprecated by the kernel; accepted and ignored like runc 1.1 */
			break;
		case OPT_CPU_QUOTA:
			if (parse_num("--cpu-quota", optarg, -1, &v, err) < 0) goto out;
			res.cpu.has_quota = true; res.cpu.quota = v; break;
		case OPT_CPU_PERIOD:
			if (parse_num("--cpu-period", optarg, 0, &v, err) < 0) goto out;
			res.cpu.has_period = true; res.cpu.period = (uint64_t)v; break;
		case OPT_CPU_SHARE:
			if (parse_num("--cpu-share", optarg, 0, &v, err) < 0) goto out;
			res.cpu.has_shares = true; res.cpu.shares = (uint64_t)v; break;
		case OPT_CPU_RT_RUNTIME:
			if (parse_num("--cpu-rt-runtime", optarg, -1, &v, err) < 0) goto out;
			res.cpu.has_realtime_runtime = true; res.cpu.realtime_runtime = v; break;
		case OPT_CPU_RT_PERIOD:
			if (parse_num("--cpu-rt-period", optarg, 0, &v, err) < 0) goto out;
			res.cpu.has_realtime_period = true; res.cpu.realtime_period = (uint64_t)v; break;
		case OPT_CPUSET_CPUS: res.cpu.cpus = optarg; break;
		case OPT_CPUSET_MEMS: res.cpu.mems = optarg; break;
		case OPT_PIDS:
			if (parse_num("--pids-limit", optarg, -1, &v, err) < 0) goto out;
			res.pids.has_limit = true; res.pids.limit = v; break;
		case OPT_BLKIO:
			if (parse_int64(optarg, 10, 1000, &v) < 0) {
				ab_error(err, 0, "update: --blkio-weight: invalid value \"%s\" (10-1000)", optarg);
				goto out;
			}
			res.block_io.has_weight = true; res.block_io.weight = (uint16_t)v; break;
		default:
			ab_error(err, 0, "update: unknown or incomplete option \"%s\"", flag);
			goto out;
		}
	}
	if (optind != argc - 1) {
		ab_error(err, 0, "update: expected exactly one container ID");
		goto out;
	}
	if (resources_path && any_flag) {
		ab_error(err, 0, "update: give either --resources or individual flags, not both");
		goto out;
	}
	if (resources_path) {
		_cleanup_free_ char *text = NULL;
		const char *what = streq(resources_path, "-") ? "resources (stdin)" : resources_path;
		if (read_file_at(AT_FDCWD, streq(resources_path, "-") ? "/dev/stdin" : resources_path,
				 4 << 20, &text, NULL, err) < 0) {
			ab_wrap(err, "update: --resources");
			goto out;
		}
		if (oci_resources_parse(text, what, &a, &res, err) < 0)
			goto out;
	}
	struct container_state s;
	if (container_load(g, argv[optind], true, NULL, &s, err) < 0)
		goto out;
	if (state_status(&s) == STATUS_STOPPED)
		ab_error(err, 0, "cannot update a stopped container: container not running");
	else if (s.cgroup.mode == CGROUP_MODE_DISABLED)
		ab_error(err, 0, "cannot update container \"%s\": it has no cgroup", s.id);
	else
		r = cgroup_apply(&s.cgroup, &res, err);
	state_free(&s);
out:
	arena_free(&a);
	return r < 0 ? -1 : 0;
}
