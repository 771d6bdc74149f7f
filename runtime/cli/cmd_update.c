/* update: new resource limits from a LinuxResources document or runc's flags. */
#include "commands.h"
#include "util.h"

#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
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

static const struct option update_options[] = {
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

/* The flags that set one number of linux.resources: a byte size (parse_size)
 * or a plain number of at least min (parse_num), into the field at value
 * (int64_t, or uint64_t when is_unsigned) with its has_ flag at has. */
#define RES(field) offsetof(struct oci_resources, field)
static const struct number_flag {
	int opt;
	const char *name;
	bool size, is_unsigned;
	int64_t min;
	size_t has, value;
} number_flags[] = {
	{OPT_MEMORY, "--memory", true, false, 0, RES(memory.has_limit), RES(memory.limit)},
	{OPT_MEMORY_RES, "--memory-reservation", true, false, 0, RES(memory.has_reservation), RES(memory.reservation)},
	{OPT_MEMORY_SWAP, "--memory-swap", true, false, 0, RES(memory.has_swap), RES(memory.swap)},
	{OPT_CPU_QUOTA, "--cpu-quota", false, false, -1, RES(cpu.has_quota), RES(cpu.quota)},
	{OPT_CPU_PERIOD, "--cpu-period", false, true, 0, RES(cpu.has_period), RES(cpu.period)},
	{OPT_CPU_SHARE, "--cpu-share", false, true, 0, RES(cpu.has_shares), RES(cpu.shares)},
	{OPT_CPU_RT_RUNTIME, "--cpu-rt-runtime", false, false, -1, RES(cpu.has_realtime_runtime),
	 RES(cpu.realtime_runtime)},
	{OPT_CPU_RT_PERIOD, "--cpu-rt-period", false, true, 0, RES(cpu.has_realtime_period),
	 RES(cpu.realtime_period)},
	{OPT_PIDS, "--pids-limit", false, false, -1, RES(pids.has_limit), RES(pids.limit)},
};
#undef RES

static const struct number_flag *number_flag(int opt)
{
	for (size_t i = 0; i < ARRAY_SIZE(number_flags); i++)
		if (number_flags[i].opt == opt)
			return &number_flags[i];
	return NULL;
}

static int set_number(struct oci_resources *res, const struct number_flag *f, const char *arg, struct ab_err *err)
{
	int64_t v;
	if ((f->size ? parse_size(f->name, arg, &v, err) : parse_num(f->name, arg, f->min, &v, err)) < 0)
		return -1;
	char *base = (char *)res;
	*(bool *)(base + f->has) = true;
	if (f->is_unsigned)
		*(uint64_t *)(base + f->value) = (uint64_t)v;
	else
		*(int64_t *)(base + f->value) = v;
	return 0;
}

/* The command line's flags into res; --resources FILE into *resources_path.
 * *any_flag: a flag other than --resources was given. */
static int parse_flags(int argc, char **argv, struct oci_resources *res, const char **resources_path,
		       bool *any_flag, struct ab_err *err)
{
	int c;
	int64_t v;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "r:", update_options, NULL)) != -1) {
		const char *flag = argv[optind - 1];
		*any_flag |= c != OPT_RESOURCES && c != 'r';
		const struct number_flag *nf = number_flag(c);
		if (nf) {
			if (set_number(res, nf, optarg, err) < 0)
				return -1;
			continue;
		}
		switch (c) {
		case 'r':
		case OPT_RESOURCES: *resources_path = optarg; break;
		case OPT_KMEM:
		case OPT_KMEM_TCP:
			/* deprecated by the kernel; accepted and ignored like runc 1.1 */
			break;
		case OPT_CPUSET_CPUS: res->cpu.cpus = optarg; break;
		case OPT_CPUSET_MEMS: res->cpu.mems = optarg; break;
		case OPT_BLKIO:
			if (parse_int64(optarg, 10, 1000, &v) < 0)
				return ab_error(err, 0, "update: --blkio-weight: invalid value \"%s\" (10-1000)", optarg);
			res->block_io.has_weight = true; res->block_io.weight = (uint16_t)v; break;
		default:
			return ab_error(err, 0, "update: unknown or incomplete option \"%s\"", flag);
		}
	}
	return 0;
}

/* A LinuxResources document from a file, or from stdin for "-". */
static int read_resources(const char *path, struct arena *a, struct oci_resources *res, struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	const char *what = streq(path, "-") ? "resources (stdin)" : path;
	if (read_file_at(AT_FDCWD, streq(path, "-") ? "/dev/stdin" : path, 4 << 20, &text, NULL, err) < 0)
		return ab_wrap(err, "update: --resources");
	return oci_resources_parse(text, what, a, res, err);
}

/* The new limits on a running container's cgroup. */
static int update_container(struct global_opts *g, const char *id, const struct oci_resources *res,
			    struct ab_err *err)
{
	struct container_state s;
	int r = -1;
	if (container_load(g, id, true, NULL, &s, err) < 0)
		return -1;
	if (state_status(&s) == STATUS_STOPPED)
		ab_error(err, 0, "cannot update a stopped container: container not running");
	else if (s.cgroup.mode == CGROUP_MODE_DISABLED)
		ab_error(err, 0, "cannot update container \"%s\": it has no cgroup", s.id);
	else
		r = cgroup_apply(&s.cgroup, res, err);
	state_free(&s);
	return r;
}

int cmd_update(struct global_opts *g, int argc, char **argv, struct ab_err *err)
{
	struct arena a = {0};
	struct oci_resources res = {0};
	const char *resources_path = NULL;
	bool any_flag = false;
	int r = -1;
	if (parse_flags(argc, argv, &res, &resources_path, &any_flag, err) < 0)
		goto out;
	if (optind != argc - 1) {
		ab_error(err, 0, "update: expected exactly one container ID");
		goto out;
	}
	if (resources_path && any_flag) {
		ab_error(err, 0, "update: give either --resources or individual flags, not both");
		goto out;
	}
	if (resources_path && read_resources(resources_path, &a, &res, err) < 0)
		goto out;
	r = update_container(g, argv[optind], &res, err);
out:
	arena_free(&a);
	return r < 0 ? -1 : 0;
}
