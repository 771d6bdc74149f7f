/* cgroups module: pure logic (paths, conversions, validation, the device program), then,
 * as root, real cgroups on this host: the v1/hybrid layout end to end, and the cgroup v2
 * core paths (cgroup.procs, cgroup.freeze, cgroup.events, cgroup.kill, the BPF device
 * filter) on the cgroup2 mount.
 *
 * On the hybrid test machines that cgroup2 mount (/sys/fs/cgroup/unified) carries only
 * hugetlb: memory, cpu, io and pids are bound to v1 there, so their v2 files cannot be
 * tested on it; only the core files, hugetlb and the device program are. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "cgroups_bpf.h"
#include "cgroups_files.h"
#include "cgroups_host.h"
#include "cgroups_path.h"
#include "cgroups_resources.h"
#include "cgroups_v2.h"
#include "json.h"
#include "tap.h"
#include "util.h"

#define MiB (1024 * 1024LL)

/* tap.h's ok() evaluates its condition twice: keep side effects out of it. */
#define okx(cond, ...) do { bool okx_c_ = (cond); ok(okx_c_, __VA_ARGS__); } while (0)

/* The message of the last failure, then forget it, so a later pass prints no stale text. */
static const char *E(struct ab_err *e)
{
	static char buf[AB_ERR_MSG_MAX];
	memcpy(buf, e->msg, sizeof buf);
	e->msg[0] = 0;
	return buf;
}

static void skip(const char *why)
{
	ok(1, "# SKIP %s", why);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* First line of dir/file, or "" */
static const char *readf(const char *dir, const char *file)
{
	static char buf[8][4096];
	static int slot;
	char *b = buf[slot++ % 8];
	char p[PATH_MAX * 2];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	b[0] = 0;
	FILE *f = fopen(p, "re");
	if (!f)
		return b;
	if (!fgets(b, 4096, f))
		b[0] = 0;
	fclose(f);
	b[strcspn(b, "\n")] = 0;
	return b;
}

static bool dir_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ------------------------------------------------------------------ pure logic */

static void test_resolve(void)
{
	struct cgroup_ref cg;
	struct ab_err err = {0};

	is_str(cgroup_mode_name(CGROUP_MODE_HYBRID), "hybrid", "mode name hybrid");
	enum cgroup_mode m = CGROUP_MODE_DISABLED;
	okx(cgroup_mode_from_name("v2", &m) == 0 && m == CGROUP_MODE_V2, "mode from name v2");
	okx(cgroup_mode_from_name("v3", &m) < 0, "unknown mode name refused");

	okx(cgroup_resolve("/a/b//c/", "id1", false, false, &cg, &err) == 0, "absolute path");
	is_str(cg.path, "/a/b/c", "absolute path is cleaned");
	okx(cg.mode == cgroup_host_mode(), "mode is the host's");

	okx(cgroup_resolve(NULL, "abc", false, false, &cg, &err) == 0, "default path");
	is_str(cg.path, "/agentbox/abc", "NULL cgroupsPath = /agentbox/<id>");
	okx(cgroup_resolve("", "abc", true, false, &cg, &err) == 0, "empty path, systemd");
	is_str(cg.path, "/agentbox/abc", "empty cgroupsPath = /agentbox/<id>");

	/* relative: below the runtime's own cgroup (name=systemd/pids in v1, 0:: in v2) */
	char own[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	const char *want_key = cgroup_host_mode() == CGROUP_MODE_V2 ? "0::" : ":name=systemd:";
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *k = strstr(line, want_key);
		if (k && (want_key[0] != '0' || k == line))
			snprintf(own, sizeof own, "%s", k + strlen(want_key));
	}
	if (f)
		fclose(f);
	if (cgroup_host_mode() != CGROUP_MODE_DISABLED) {
		char want[PATH_MAX + 32];
		snprintf(want, sizeof want, "%s/rel/x", streq(own, "/") ? "" : own);
		okx(cgroup_resolve("rel/./x", "id", false, false, &cg, &err) == 0, "relative path: %s",
		   E(&err));
		is_str(cg.path, want, "relative path below the runtime's cgroup");
	}

	okx(cgroup_resolve("machine.slice:libpod:abc", "abc", true, false, &cg, &err) == 0,
	   "systemd path");
	is_str(cg.path, "/machine.slice/libpod-abc.scope", "podman's systemd path");
	okx(cgroup_resolve("a-b-c.slice:pfx:n", "n", true, false, &cg, &err) == 0, "nested slice");
	is_str(cg.path, "/a.slice/a-b.slice/a-b-c.slice/pfx-n.scope", "nested slice expanded");
	okx(cgroup_resolve(":docker:abc", "abc", true, false, &cg, &err) == 0, "empty slice");
	is_str(cg.path, "/system.slice/docker-abc.scope", "empty slice is system.slice");
	okx(cgroup_resolve("-.slice::n", "n", true, false, &cg, &err) == 0, "root slice");
	is_str(cg.path, "/n.scope", "root slice, no prefix");

	okx(cgroup_resolve("/a/../b", "x", false, false, &cg, &err) < 0, "\"..\" refused (absolute)");
	has_substr(err.msg, "..", "error names \"..\"");
	okx(cgroup_resolve("a/../../b", "x", false, false, &cg, &err) < 0, "\"..\" refused (relative)");
	okx(cgroup_resolve("/", "x", false, false, &cg, &err) < 0, "the root cgroup refused");
	okx(cgroup_resolve("noformat", "x", true, false, &cg, &err) < 0, "systemd path without colons");
	has_substr(err.msg, "slice:prefix:name", "error says the expected form");
	okx(cgroup_resolve("bad--x.slice:a:b", "x", true, false, &cg, &err) < 0, "bad slice name");
	okx(cgroup_resolve("x.slice:a:../b", "x", true, false, &cg, &err) < 0, "bad unit name");

	okx(cgroup_resolve("/a", "x", false, true, &cg, &err) == 0 && cg.mode == CGROUP_MODE_DISABLED &&
	   cg.path[0] == 0, "disabled: mode disabled, no path");
}

static void test_conversions(void)
{
	okx(cg_shares_to_weight(2) == 1, "shares 2 -> weight 1");
	okx(cg_shares_to_weight(1024) == 39, "shares 1024 -> weight 39 (got %" PRIu64 ")",
	   cg_shares_to_weight(1024));
	okx(cg_shares_to_weight(262144) == 10000, "shares max -> weight 10000");
	okx(cg_blkio_to_io_weight(10) == 1 && cg_blkio_to_io_weight(1000) == 10000 &&
	   cg_blkio_to_io_weight(500) == 4950, "blkio weight -> io.weight");

	struct ab_err err = {0};
	int64_t v = 0;
	okx(cg_v2_swap_value(-1, 100, &v, &err) == 0 && v == -1, "swap -1 -> max");
	okx(cg_v2_swap_value(0, -1, &v, &err) == 0 && v == -1, "unlimited memory, no swap -> max");
	okx(cg_v2_swap_value(0, 100, &v, &err) == 0 && v == 0, "swap 0 -> untouched");
	okx(cg_v2_swap_value(300, 100, &v, &err) == 0 && v == 200, "swap.max = swap - limit");
	okx(cg_v2_swap_value(50, 100, &v, &err) < 0, "swap below limit refused");
	okx(cg_v2_swap_value(100, 0, &v, &err) < 0, "swap without limit refused");

	char name[16];
	cg_hugepage_name(2048, name, sizeof name);
	is_str(name, "2MB", "hugepage 2048kB");
	cg_hugepage_name(1048576, name, sizeof name);
	is_str(name, "1GB", "hugepage 1048576kB");
	cg_hugepage_name(64, name, sizeof name);
	is_str(name, "64KB", "hugepage 64kB");
}

static void test_validate(void)
{
	struct ab_err err = {0};
	struct oci_resources r = {0};
	okx(cg_validate(&r, &err) == 0, "empty resources are valid");

	r.memory.has_limit = true;
	r.memory.limit = -5;
	okx(cg_validate(&r, &err) < 0, "memory limit -5 refused");
	is_str(err.msg, "linux.resources.memory.limit: invalid value -5", "error names field and value");
	r.memory.limit = -1;
	okx(cg_validate(&r, &err) == 0, "memory limit -1 (unlimited) accepted");

	r.memory.limit = 100 * MiB;
	r.memory.has_swap = true;
	r.memory.swap = 50 * MiB;
	okx(cg_validate(&r, &err) < 0, "swap below limit refused");
	has_substr(err.msg, "linux.resources.memory.swap", "error names memory.swap");

	struct oci_resources p = {0};
	p.pids.has_limit = true;
	p.pids.limit = -2;
	okx(cg_validate(&p, &err) < 0, "pids limit -2 refused");
	p.pids.limit = -1;
	okx(cg_validate(&p, &err) == 0, "pids limit -1 accepted");

	struct oci_kv bad[] = { { "../cgroup.procs", "1" } }, bad2[] = { { "a/b", "1" } },
		      good[] = { { "memory.high", "1G" } };
	struct oci_resources u = {0};
	u.unified = bad;
	u.n_unified = 1;
	okx(cg_validate(&u, &err) < 0, "unified key with .. refused");
	has_substr(err.msg, "linux.resources.unified", "error names unified");
	u.unified = bad2;
	okx(cg_validate(&u, &err) < 0, "unified key with / refused");
	u.unified = good;
	okx(cg_validate(&u, &err) == 0, "plain unified key accepted");

	struct oci_resources b = {0};
	b.block_io.has_weight = true;
	b.block_io.weight = 5;
	okx(cg_validate(&b, &err) < 0, "blkio weight 5 refused");
	struct oci_hugepage_limit hp = { "../2MB", 1 };
	struct oci_resources h = {0};
	h.hugepage_limits = &hp;
	h.n_hugepage_limits = 1;
	okx(cg_validate(&h, &err) < 0, "page size with a path refused");
}

/* Which limit a rootless runtime without a cgroup must refuse (runc's rule): any
 * resource group but the device rules. */
static void test_res_requested(void)
{
	struct oci_resources r = {0};
	okx(cg_res_requested(&r) == NULL, "nothing asked: no limit");
	struct oci_device_rule dev = {.allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm"};
	r.devices = &dev;
	r.n_devices = 1;
	okx(cg_res_requested(&r) == NULL, "device rules are not a limit");
	r.memory.has_limit = true;
	r.memory.limit = 0;
	okx(cg_res_requested(&r) == NULL, "memory limit 0 (not set, as runc reads it)");
	r.memory.limit = 64 * MiB;
	is_str(cg_res_requested(&r), "memory", "a memory limit");
	struct oci_resources p = {0};
	p.pids.has_limit = true;
	p.pids.limit = 10;
	is_str(cg_res_requested(&p), "pids", "a pids limit");
	struct oci_resources c = {0};
	c.cpu.cpus = "0";
	is_str(cg_res_requested(&c), "cpu", "a cpuset is a cpu limit");
	struct oci_hugepage_limit hp = {"2MB", 1};
	struct oci_resources h = {0};
	h.hugepage_limits = &hp;
	h.n_hugepage_limits = 1;
	is_str(cg_res_requested(&h), "hugepageLimits", "a hugepage limit");
	struct oci_kv kv = {"memory.high", "1G"};
	struct oci_resources u = {0};
	u.unified = &kv;
	u.n_unified = 1;
	is_str(cg_res_requested(&u), "unified", "a unified key");
}

static void test_bpf_build(void)
{
	struct oci_device_rule rules[] = {
		{ .allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm" },
		{ .allow = true, .type = 'c', .major = 1, .minor = 3, .access = "rwm" },
		{ .allow = true, .type = 'c', .major = 136, .minor = -1, .access = "rw" },
	};
	struct bpf_insn *p = NULL;
	size_t n = 0;
	struct ab_err err = {0};
	okx(cg_bpf_devices_build(rules, 3, &p, &n, &err) == 0, "device program builds");
	/* prologue 6; c 136:* rw: type, 3 access, major, mov, exit = 7; c 1:3 rwm: 5;
	 * deny all: 2, and nothing after it (the verifier refuses unreachable code) */
	okx(n == 20, "device program length (got %zu)", n);
	/* the last rule is checked first: its type test jumps past its own 7-insn block */
	okx(p && p[6].code == (BPF_JMP | BPF_JNE | BPF_K) && p[6].imm == BPF_DEVCG_DEV_CHAR &&
	   p[6].off == 6, "last rule first, jump to the next block");
	okx(p && p[n - 2].imm == 0 && p[n - 1].code == (BPF_JMP | BPF_EXIT), "deny-all ends it");
	free(p);
	struct oci_device_rule one = { .allow = true, .type = 'b', .major = 8, .minor = 0, .access = "r" };
	okx(cg_bpf_devices_build(&one, 1, &p, &n, &err) == 0 && n == 6 + 8 + 2,
	    "without a catch-all rule the program ends in a default deny (got %zu)", n);
	free(p);
}

/* The v2 resource writers against plain files in a temp dir: checks the values and
 * file names only (no kernel behind them), since this host's cgroup2 mount has no
 * memory, cpu, io or pids controller to test them for real. Each file is written once. */
/* The limits the v1 and the v2 writers are both tried with: memory 64 MiB
 * (32 MiB reserved, memory+swap 128 MiB), 512 shares, 50 ms of every
 * 100 ms, CPU and memory node 0, 50 pids. */
static void common_limits(struct oci_resources *r)
{
	r->memory.has_limit = r->memory.has_swap = r->memory.has_reservation = true;
	r->memory.limit = 64 * MiB;
	r->memory.swap = 128 * MiB;
	r->memory.reservation = 32 * MiB;
	r->cpu.has_shares = r->cpu.has_quota = r->cpu.has_period = true;
	r->cpu.shares = 512;
	r->cpu.quota = 50000;
	r->cpu.period = 100000;
	r->cpu.cpus = "0";
	r->cpu.mems = "0";
	r->pids.has_limit = true;
	r->pids.limit = 50;
}

static void test_v2_format(void)
{
	char tmpl[] = "/tmp/agentbox-cgv2-XXXXXX";
	char *dir = mkdtemp(tmpl);
	okx(dir != NULL, "temp dir");
	if (!dir)
		return;
	static const char *const files[] = { "memory.max", "memory.swap.max", "memory.low",
		"cpu.weight", "cpu.max", "cpuset.cpus", "cpuset.mems", "pids.max", "io.weight",
		"io.max", "hugetlb.2MB.max", "memory.high" };
	/* plain files keep old bytes past a shorter write: start each round empty */
#define EMPTY_FILES() do { \
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) { \
		char p[PATH_MAX]; \
		snprintf(p, sizeof p, "%s/%s", dir, files[i]); \
		close(open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)); \
	} \
} while (0)
	EMPTY_FILES();
	struct oci_resources r = {0};
	common_limits(&r);
	r.cpu.cpus = "0-1";
	r.block_io.has_weight = true;
	r.block_io.weight = 500;
	struct oci_throttle_device td = { 8, 0, 1048576 };
	r.block_io.throttle_write_bps = &td;
	r.block_io.n_throttle_write_bps = 1;
	struct oci_hugepage_limit hp = { "2MB", 4 * MiB };
	r.hugepage_limits = &hp;
	r.n_hugepage_limits = 1;
	struct oci_kv uni = { "memory.high", "100M" };
	r.unified = &uni;
	r.n_unified = 1;
	struct ab_err err = {0};
	okx(cg_v2_apply(dir, &r, CG_RES_ALL, &err) == 0, "v2 writers on plain files: %s", E(&err));
	is_str(readf(dir, "memory.max"), "67108864", "memory.max");
	is_str(readf(dir, "memory.swap.max"), "67108864", "memory.swap.max = swap - limit");
	is_str(readf(dir, "memory.low"), "33554432", "memory.low = reservation");
	is_str(readf(dir, "cpu.weight"), "20", "cpu.weight from 512 shares");
	is_str(readf(dir, "cpu.max"), "50000 100000", "cpu.max");
	is_str(readf(dir, "cpuset.cpus"), "0-1", "cpuset.cpus");
	is_str(readf(dir, "pids.max"), "50", "pids.max");
	is_str(readf(dir, "io.weight"), "4950", "io.weight from blkio weight 500");
	is_str(readf(dir, "io.max"), "8:0 wbps=1048576", "io.max");
	is_str(readf(dir, "hugetlb.2MB.max"), "4194304", "hugetlb.2MB.max");
	is_str(readf(dir, "memory.high"), "100M", "unified key written verbatim");

	struct oci_resources m = {0};
	m.memory.has_limit = m.memory.has_swap = true;
	m.memory.limit = -1;
	m.memory.swap = -1;
	m.cpu.has_quota = true;
	m.cpu.quota = -1;
	m.pids.has_limit = true;
	m.pids.limit = -1;
	EMPTY_FILES();
	okx(cg_v2_apply(dir, &m, CG_RES_ALL, &err) == 0, "unlimited values: %s", E(&err));
	is_str(readf(dir, "memory.max"), "max", "memory.max max");
	is_str(readf(dir, "memory.swap.max"), "max", "memory.swap.max max");
	is_str(readf(dir, "cpu.max"), "max", "cpu.max max (period kept)");
	is_str(readf(dir, "pids.max"), "max", "pids.max max");

	struct oci_resources rt = {0};
	rt.cpu.has_realtime_runtime = true;
	rt.cpu.realtime_runtime = 1000;
	okx(cg_v2_apply(dir, &rt, CG_RES_ALL, &err) < 0, "realtime cpu refused on v2");
	has_substr(err.msg, "realtime", "error names the realtime fields");
	ab_err_clear(&err);

	/* refused, never dropped: v2 has no net_cls or net_prio */
	struct oci_resources net = {0};
	net.network.has_class_id = true;
	net.network.class_id = 7;
	okx(cg_v2_apply(dir, &net, CG_RES_ALL, &err) < 0, "linux.resources.network refused on v2");
	is_str(err.msg, "linux.resources.network: cgroup v2 has no net_cls or net_prio controller",
	       "the network refusal names the field");
	ab_err_clear(&err);

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* ------------------------------------------------------------------ real cgroups */

/* A child that waits for a byte on a pipe, then counts in shared memory forever, so a
 * test can see whether it runs. */
struct child {
	pid_t pid;
	int go;                 /* write end */
	volatile uint64_t *ctr;
};

static void child_start(struct child *c)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	c->ctr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	*c->ctr = 0;
	c->pid = fork();
	if (c->pid == 0) {
		/* never outlive a failed test run */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[1]);
		char b;
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		for (;;) {
			(*c->ctr)++;
			sleep_ms(1);
		}
	}
	close(p[0]);
	c->go = p[1];
}

static void child_go(struct child *c)
{
	(void)!write(c->go, "x", 1);
	close(c->go);
	c->go = -1;
}

static bool child_runs(struct child *c)
{
	uint64_t a = *c->ctr;
	sleep_ms(100);
	return *c->ctr != a;
}

/* Fork a child, move it into cg, and let it open /dev/null and /dev/zero.
 * Returns bit 1 when /dev/null opened, bit 2 when /dev/zero was refused with EPERM. */
static int device_probe(const struct cgroup_ref *cg)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		char b;
		if (read(p[0], &b, 1) != 1)
			_exit(100);
		int code = 0;
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0)
			code |= 1;
		fd = open("/dev/zero", O_RDONLY);
		if (fd < 0 && errno == EPERM)
			code |= 2;
		_exit(code);
	}
	close(p[0]);
	struct ab_err err = {0};
	int r = cgroup_enter(cg, pid, &err);
	if (r < 0)
		printf("# enter: %s\n", E(&err));
	(void)!write(p[1], "x", 1);
	close(p[1]);
	int st;
	waitpid(pid, &st, 0);
	return r < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Did pid die of SIGKILL within 5 s? Kills and reaps it either way. */
static bool killed_by_sigkill(pid_t pid)
{
	int st = 0;
	for (int i = 0; i < 500; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return false;
}

static bool proc_in_cgroup(pid_t pid, const char *line_suffix)
{
	char p[64], line[PATH_MAX + 64];
	snprintf(p, sizeof p, "/proc/%d/cgroup", (int)pid);
	FILE *f = fopen(p, "re");
	bool found = false;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		size_t n = strlen(line), m = strlen(line_suffix);
		if (n >= m && streq(line + n - m, line_suffix))
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static bool pids_has(const struct cgroup_ref *cg, pid_t pid)
{
	pid_t *v = NULL;
	size_t n = 0;
	struct ab_err err = {0};
	bool found = false;
	if (cgroup_pids(cg, &v, &n, &err) == 0)
		for (size_t i = 0; i < n; i++)
			found |= v[i] == pid;
	free(v);
	return found;
}

static yajl_val json_path(yajl_val v, const char *a, const char *b, const char *c)
{
	v = json_get(v, a);
	if (v && b)
		v = json_get(v, b);
	if (v && c)
		v = json_get(v, c);
	return v;
}

static void first_block_device(int64_t *maj, int64_t *min)
{
	*maj = *min = -1;
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "ram", 3) ||
		    !strncmp(de->d_name, "loop", 4))
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof p, "/sys/block/%s", de->d_name);
		unsigned a, b;
		if (sscanf(readf(p, "dev"), "%u:%u", &a, &b) == 2) {
			*maj = a;
			*min = b;
			break;
		}
	}
	if (d)
		closedir(d);
}

static void test_v1(void)
{
	const struct cg_host *host = cg_host_get();
	if (host->mode != CGROUP_MODE_V1 && host->mode != CGROUP_MODE_HYBRID) {
		skip("v1 tests: host has no cgroup v1 hierarchies");
		return;
	}
	struct ab_err err = {0};
	struct cgroup_ref cg;
	char path[64];
	snprintf(path, sizeof path, "/agentbox-test-%d", (int)getpid());
	okx(cgroup_resolve(path, "t", false, false, &cg, &err) == 0, "resolve %s", path);

	char mem[PATH_MAX], cpu[PATH_MAX], cpuset[PATH_MAX], pids[PATH_MAX], blkio[PATH_MAX],
		dev[PATH_MAX], frz[PATH_MAX], uni[PATH_MAX] = "";
	okx(cg_v1_dir("memory", path, mem, sizeof mem) == 0 && cg_v1_dir("cpu", path, cpu, sizeof cpu) == 0 &&
	   cg_v1_dir("cpuset", path, cpuset, sizeof cpuset) == 0 &&
	   cg_v1_dir("pids", path, pids, sizeof pids) == 0 &&
	   cg_v1_dir("blkio", path, blkio, sizeof blkio) == 0 &&
	   cg_v1_dir("devices", path, dev, sizeof dev) == 0 &&
	   cg_v1_dir("freezer", path, frz, sizeof frz) == 0, "v1 controllers found in mountinfo");
	if (host->mode == CGROUP_MODE_HYBRID)
		cg_v2_dir(path, uni, sizeof uni);

	/* --- a failed create leaves nothing behind */
	struct oci_resources bad = {0};
	bad.cpu.cpus = "999";
	okx(cgroup_create(&cg, &bad, &err) < 0, "create with cpus 999 fails");
	has_substr(err.msg, "cpuset.cpus", "error names the file");
	has_substr(err.msg, "999", "error names the value");
	ab_err_clear(&err);
	okx(!dir_exists(mem) && !dir_exists(cpuset) && (!uni[0] || !dir_exists(uni)),
	   "failed create removed its directories");

	/* --- create with resources */
	struct oci_resources r = {0};
	common_limits(&r);
	bool memsw = access("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", F_OK) == 0;
	r.memory.has_swappiness = true;
	r.memory.swappiness = 10;
	char blkio_root[PATH_MAX];
	cg_v1_dir("blkio", "", blkio_root, sizeof blkio_root);
	bool has_weight = cg_exists(blkio_root, "blkio.weight") || cg_exists(blkio_root, "blkio.bfq.weight");
	if (has_weight) {
		r.block_io.has_weight = true;
		r.block_io.weight = 500;
	}
	struct oci_throttle_device td = { 0, 0, 1048576 };
	first_block_device(&td.major, &td.minor);
	if (td.major >= 0) {
		r.block_io.throttle_read_bps = &td;
		r.block_io.n_throttle_read_bps = 1;
	}
	struct oci_device_rule rules[] = {
		{ .allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm" },
		{ .allow = true, .type = 'c', .major = 1, .minor = 3, .access = "rwm" },
	};
	r.devices = rules;
	r.n_devices = 2;
	struct oci_hugepage_limit hp = { "2MB", 4 * MiB };
	bool huge_v1 = cg_v1_hier("hugetlb") != NULL;
	bool huge = access("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK) == 0 &&
		    (huge_v1 || (host->mode == CGROUP_MODE_HYBRID && cg_v2_root_has("hugetlb")));
	if (huge) {
		r.hugepage_limits = &hp;
		r.n_hugepage_limits = 1;
	}
	okx(cgroup_create(&cg, &r, &err) == 0, "create %s: %s", path, E(&err));

	size_t n_used = 0;
	bool all_there = true;
	for (size_t i = 0; i < host->n_hier; i++) {
		if (!cg_hier_used(&host->hier[i]))
			continue;
		char d[PATH_MAX];
		cg_hier_dir(&host->hier[i], path, d, sizeof d);
		all_there &= dir_exists(d);
		n_used++;
	}
	okx(n_used >= 5 && all_there, "directory made in all %zu v1 hierarchies", n_used);
	if (uni[0])
		okx(dir_exists(uni), "directory made in the unified hierarchy");

	is_str(readf(mem, "memory.limit_in_bytes"), "67108864", "memory.limit_in_bytes");
	is_str(readf(mem, "memory.soft_limit_in_bytes"), "33554432", "memory.soft_limit_in_bytes");
	if (memsw)
		is_str(readf(mem, "memory.memsw.limit_in_bytes"), "134217728", "memory.memsw.limit_in_bytes");
	else
		skip("no memory.memsw (swap accounting off)");
	is_str(readf(mem, "memory.swappiness"), "10", "memory.swappiness");
	is_str(readf(cpu, "cpu.shares"), "512", "cpu.shares");
	is_str(readf(cpu, "cpu.cfs_quota_us"), "50000", "cpu.cfs_quota_us");
	is_str(readf(cpu, "cpu.cfs_period_us"), "100000", "cpu.cfs_period_us");
	is_str(readf(cpuset, "cpuset.cpus"), "0", "cpuset.cpus");
	is_str(readf(cpuset, "cpuset.mems"), "0", "cpuset.mems");
	is_str(readf(pids, "pids.max"), "50", "pids.max");
	if (has_weight)
		is_str(readf(blkio, cg_exists(blkio, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight"),
		       "500", "blkio weight");
	else
		skip("no blkio.weight/blkio.bfq.weight here (no CFQ/BFQ scheduler)");
	if (td.major >= 0) {
		char want[64];
		snprintf(want, sizeof want, "%" PRId64 ":%" PRId64 " 1048576", td.major, td.minor);
		is_str(readf(blkio, "blkio.throttle.read_bps_device"), want, "blkio.throttle.read_bps_device");
	} else {
		skip("no block device for blkio throttling");
	}
	is_str(readf(dev, "devices.list"), "c 1:3 rwm", "devices.list after deny-all + c 1:3 rwm");
	if (huge && huge_v1) {
		char hd[PATH_MAX];
		cg_v1_dir("hugetlb", path, hd, sizeof hd);
		is_str(readf(hd, "hugetlb.2MB.limit_in_bytes"), "4194304", "hugetlb.2MB.limit_in_bytes");
	} else if (huge) {
		is_str(readf(uni, "hugetlb.2MB.max"), "4194304", "hybrid: hugetlb.2MB.max on the unified mount");
	} else {
		skip("no hugetlb controller or no 2MB pages");
	}

	/* --- enter, list, devices */
	struct child c;
	child_start(&c);
	okx(cgroup_enter(&cg, c.pid, &err) == 0, "enter child %d: %s", (int)c.pid, E(&err));
	child_go(&c);
	char suffix[80];
	snprintf(suffix, sizeof suffix, ":memory:%s", path);
	okx(proc_in_cgroup(c.pid, suffix), "child in the memory cgroup");
	snprintf(suffix, sizeof suffix, ":name=systemd:%s", path);
	okx(!cg_v1_hier("name=systemd") || proc_in_cgroup(c.pid, suffix), "child in the name=systemd cgroup");
	if (uni[0]) {
		snprintf(suffix, sizeof suffix, "0::%s", path);
		okx(proc_in_cgroup(c.pid, suffix), "child in the unified cgroup");
	}
	okx(pids_has(&cg, c.pid), "cgroup_pids lists the child");
	okx(device_probe(&cg) == 3, "devices: /dev/null opens, /dev/zero is EPERM");

	/* --- a process joins the v1 hierarchies itself (the init and exec's process) */
	struct cgroup_join j;
	size_t n_v1 = 0;
	for (size_t i = 0; i < host->n_hier; i++)
		n_v1 += cg_hier_used(&host->hier[i]);
	okx(cgroup_join_open(&cg, &j, &err) == 0 && j.n == n_v1,
	    "join: one tasks file per v1 hierarchy (%zu of %zu): %s", j.n, n_v1, E(&err));
	int jpipe[2];
	okx(pipe(jpipe) == 0, "join: pipe");
	pid_t joiner = fork();
	if (joiner == 0) {
		close(jpipe[0]);
		struct ab_err e;
		char verdict = cgroup_join_self(&j, path, &e) == 0 && j.n == 0 ? 'y' : 'n';
		(void)!write(jpipe[1], &verdict, 1);
		pause();
		_exit(0);
	}
	cgroup_join_close(&j);
	close(jpipe[1]);
	char verdict = 0;
	(void)!read(jpipe[0], &verdict, 1);
	close(jpipe[0]);
	okx(verdict == 'y', "join: the child joined and closed its files");
	okx(j.n == 0, "join: the parent's copies are closed");
	snprintf(suffix, sizeof suffix, ":memory:%s", path);
	okx(proc_in_cgroup(joiner, suffix), "join: child in the memory cgroup");
	snprintf(suffix, sizeof suffix, ":cpuset:%s", path);
	okx(proc_in_cgroup(joiner, suffix), "join: child in the cpuset cgroup");
	snprintf(suffix, sizeof suffix, ":pids:%s", path);
	okx(proc_in_cgroup(joiner, suffix), "join: child in the pids cgroup");
	okx(pids_has(&cg, joiner), "join: cgroup_pids lists the child");
	kill(joiner, SIGKILL);
	waitpid(joiner, NULL, 0);
	struct cgroup_ref gone = cg;
	snprintf(gone.path, sizeof gone.path, "%s-missing", path);
	okx(cgroup_join_open(&gone, &j, &err) < 0 && j.n == 0 && strstr(err.msg, "-missing/tasks"),
	    "join: a missing cgroup is an error naming its tasks file, nothing left open (%s)", E(&err));

	/* --- freeze */
	okx(child_runs(&c), "child runs");
	okx(cgroup_freeze(&cg, true, &err) == 0, "freeze: %s", E(&err));
	is_str(readf(frz, "freezer.state"), "FROZEN", "freezer.state FROZEN");
	okx(cgroup_is_frozen(&cg, &err) == 1, "cgroup_is_frozen 1");
	okx(!child_runs(&c), "frozen child does not run (state %c)", proc_state(c.pid));
	okx(cgroup_freeze(&cg, false, &err) == 0, "thaw: %s", E(&err));
	is_str(readf(frz, "freezer.state"), "THAWED", "freezer.state THAWED");
	okx(cgroup_is_frozen(&cg, &err) == 0, "cgroup_is_frozen 0");
	okx(child_runs(&c), "thawed child runs again");

	/* --- stats */
	struct json_out *o = json_out_new(false);
	okx(cgroup_stats(&cg, o, &err) == 0, "stats");
	const char *text = json_out_text(o, NULL);
	yajl_val v = NULL;
	okx(json_parse(text, "stats", &v, &err) == 0, "stats are valid JSON");
	yajl_val lim = json_path(v, "memory", "usage", "limit");
	okx(lim && YAJL_IS_INTEGER(lim) && YAJL_GET_INTEGER(lim) == 64 * MiB, "memory.usage.limit = 64 MiB");
	yajl_val usage = json_path(v, "memory", "usage", "usage");
	/* pages the child had before moving stay charged to the old cgroup: 0 is fine */
	okx(usage && YAJL_IS_INTEGER(usage), "memory.usage.usage present");
	yajl_val pl = json_path(v, "pids", "limit", NULL), pc = json_path(v, "pids", "current", NULL);
	okx(pl && YAJL_GET_INTEGER(pl) == 50 && pc && YAJL_GET_INTEGER(pc) >= 1, "pids.limit 50, current >= 1");
	okx(json_path(v, "cpu", "usage", "total") != NULL, "cpu.usage.total present");
	okx(json_path(v, "memory", "raw", "rss") != NULL || json_path(v, "memory", "raw", "anon") != NULL,
	   "memory.raw from memory.stat");
	if (huge)
		okx(json_path(v, "hugetlb", "2MB", "usage") != NULL, "hugetlb.2MB.usage present");
	json_free(v);
	json_out_free(o);

	/* --- update: lower, then raise (memory and memsw must move in the right order) */
	struct oci_resources u = {0};
	u.memory.has_limit = u.memory.has_swap = true;
	u.memory.limit = 32 * MiB;
	u.memory.swap = 48 * MiB;
	okx(cgroup_apply(&cg, &u, &err) == 0, "update down: %s", E(&err));
	is_str(readf(mem, "memory.limit_in_bytes"), "33554432", "lowered memory limit");
	if (memsw)
		is_str(readf(mem, "memory.memsw.limit_in_bytes"), "50331648", "lowered memsw limit");
	u.memory.limit = 256 * MiB;
	u.memory.swap = 512 * MiB;
	okx(cgroup_apply(&cg, &u, &err) == 0, "update up: %s", E(&err));
	is_str(readf(mem, "memory.limit_in_bytes"), "268435456", "raised memory limit");
	if (memsw)
		is_str(readf(mem, "memory.memsw.limit_in_bytes"), "536870912", "raised memsw limit");
	u.memory.limit = -1;
	u.memory.swap = -1;
	okx(cgroup_apply(&cg, &u, &err) == 0, "update to unlimited: %s", E(&err));

	struct oci_kv uk = { "cgroup.max.depth", "3" };
	struct oci_resources ur = {0};
	ur.unified = &uk;
	ur.n_unified = 1;
	if (uni[0]) {
		okx(cgroup_apply(&cg, &ur, &err) == 0, "hybrid: unified key: %s", E(&err));
		is_str(readf(uni, "cgroup.max.depth"), "3", "hybrid: unified key on the unified mount");
	} else {
		okx(cgroup_apply(&cg, &ur, &err) < 0, "v1: unified keys refused");
		ab_err_clear(&err);
	}

	/* --- invalid values */
	struct oci_resources inv = {0};
	inv.memory.has_limit = true;
	inv.memory.limit = -5;
	okx(cgroup_apply(&cg, &inv, &err) < 0, "memory limit -5 refused");
	is_str(err.msg, "linux.resources.memory.limit: invalid value -5", "clear message");
	ab_err_clear(&err);
	struct oci_resources inv2 = {0};
	inv2.cpu.has_shares = true;
	inv2.cpu.shares = 512;
	inv2.cpu.has_period = true;
	inv2.cpu.period = 5;       /* the kernel wants >= 1000 us */
	okx(cgroup_apply(&cg, &inv2, &err) < 0, "cpu period 5 refused by the kernel");
	has_substr(err.msg, "cpu.cfs_period_us", "error names the file");
	has_substr(err.msg, "\"5\"", "error names the value");
	ab_err_clear(&err);

	/* --- kill */
	okx(cgroup_kill_all(&cg, SIGKILL, &err) == 0, "kill_all: %s", E(&err));
	okx(killed_by_sigkill(c.pid), "child killed by SIGKILL");
	int st = 0;

	/* --- OOM: a child that touches more than the limit */
	struct oci_resources oom = {0};
	oom.memory.has_limit = oom.memory.has_swap = true;
	oom.memory.limit = 16 * MiB;
	oom.memory.swap = 16 * MiB;
	okx(cgroup_apply(&cg, &oom, &err) == 0, "16 MiB limit: %s", E(&err));
	int efd = cgroup_oom_watch(&cg, &err);
	okx(efd >= 0, "oom watch fd: %s", efd < 0 ? err.msg : "");
	int p[2];
	if (pipe2(p, O_CLOEXEC) == 0) {
		pid_t hog = fork();
		if (hog == 0) {
			close(p[1]);
			char b;
			if (read(p[0], &b, 1) != 1)
				_exit(1);
			size_t sz = 256 * MiB;
			char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			for (size_t i = 0; m != MAP_FAILED && i < sz; i += 4096)
				m[i] = 1;
			_exit(0);
		}
		close(p[0]);
		okx(cgroup_enter(&cg, hog, &err) == 0, "enter hog: %s", E(&err));
		(void)!write(p[1], "x", 1);
		close(p[1]);
		waitpid(hog, &st, 0);
		okx(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "hog OOM-killed");
		struct pollfd pf = { efd, POLLIN, 0 };
		okx(efd >= 0 && poll(&pf, 1, 2000) == 1, "oom fd readable");
		uint64_t count = 0;
		okx(cgroup_oom_count(&cg, &count, &err) == 0 && count >= 1,
		   "oom_count %" PRIu64 " >= 1", count);
	}
	if (efd >= 0)
		close(efd);

	/* --- destroy */
	struct child c2;
	child_start(&c2);
	cgroup_enter(&cg, c2.pid, &err);
	child_go(&c2);
	okx(cgroup_freeze(&cg, true, &err) == 0, "freeze before destroy");
	okx(cgroup_destroy(&cg, &err) == 0, "destroy a frozen, populated cgroup: %s", E(&err));
	okx(killed_by_sigkill(c2.pid), "its process was killed");
	char pat[PATH_MAX + 128];
	snprintf(pat, sizeof pat, "%s/*%s", host->base, path);
	glob_t g;
	int gr = glob(pat, 0, NULL, &g);
	okx(gr == GLOB_NOMATCH, "no %s left", pat);
	if (gr == 0)
		globfree(&g);
	okx(!uni[0] || !dir_exists(uni), "unified directory removed");
	okx(cgroup_destroy(&cg, &err) == 0, "destroy again: ENOENT is success");
}

/* Parents made by someone else with a bare mkdir: a v1 cpuset parent has no cpus
 * and mems, a v2 parent no controllers in its cgroup.subtree_control. A create
 * below them fills them in; a second create, below parents filled in now, takes
 * the short way (the leaf first) and must give its leaf the same. */
static void test_bare_parents(void)
{
	const struct cg_host *host = cg_host_get();
	struct ab_err err = {0};
	char parent[64], leaf[2][80];
	snprintf(parent, sizeof parent, "/agentbox-test-%d-bare", (int)getpid());
	char cs_root[PATH_MAX], cs_parent[PATH_MAX], u_parent[PATH_MAX];
	bool cpuset = cg_v1_dir("cpuset", "", cs_root, sizeof cs_root) == 0 &&
		      cg_v1_dir("cpuset", parent, cs_parent, sizeof cs_parent) == 0;
	const char *root_ctrls = host->unified[0] ? cg_v2_root_controllers() : NULL;
	char want_ctrls[256] = "";
	if (root_ctrls)
		snprintf(want_ctrls, sizeof want_ctrls, "%.*s", (int)strcspn(root_ctrls, "\n"), root_ctrls);
	bool v2 = want_ctrls[0] && cg_v2_dir(parent, u_parent, sizeof u_parent) == 0;
	if (!cpuset && !v2) {
		skip("bare parents: no v1 cpuset hierarchy and no v2 controllers here");
		return;
	}
	if (cpuset) {
		okx(mkdir(cs_parent, 0755) == 0, "mkdir %s", cs_parent);
		is_str(readf(cs_parent, "cpuset.cpus"), "", "a cpuset made by mkdir alone has no cpus");
	}
	if (v2) {
		okx(mkdir(u_parent, 0755) == 0, "mkdir %s", u_parent);
		is_str(readf(u_parent, "cgroup.subtree_control"), "", "a v2 parent made by mkdir alone delegates nothing");
	}
	struct cgroup_ref cg[2];
	for (int i = 0; i < 2; i++) {
		snprintf(leaf[i], sizeof leaf[i], "%s/%c", parent, 'a' + i);
		okx(cgroup_resolve(leaf[i], "t", false, false, &cg[i], &err) == 0 &&
			    cgroup_create(&cg[i], NULL, &err) == 0,
		    "create %s (%s parents): %s", leaf[i], i ? "filled-in" : "bare", E(&err));
		if (cpuset) {
			char d[PATH_MAX];
			cg_v1_dir("cpuset", leaf[i], d, sizeof d);
			is_str(readf(cs_parent, "cpuset.cpus"), readf(cs_root, "cpuset.cpus"), "the parent has the root's cpus");
			is_str(readf(cs_parent, "cpuset.mems"), readf(cs_root, "cpuset.mems"), "the parent has the root's mems");
			is_str(readf(d, "cpuset.cpus"), readf(cs_root, "cpuset.cpus"), "%s has the root's cpus", leaf[i]);
			is_str(readf(d, "cpuset.mems"), readf(cs_root, "cpuset.mems"), "%s has the root's mems", leaf[i]);
		}
		if (v2) {
			char d[PATH_MAX];
			cg_v2_dir(leaf[i], d, sizeof d);
			is_str(readf(d, "cgroup.controllers"), want_ctrls, "%s is offered every controller of the root", leaf[i]);
		}
	}
	for (int i = 0; i < 2; i++)
		okx(cgroup_destroy(&cg[i], &err) == 0, "destroy %s: %s", leaf[i], E(&err));
	/* the parents, in every hierarchy the creates made them in */
	bool gone = true;
	for (size_t i = 0; i < host->n_hier; i++) {
		char d[PATH_MAX];
		if (cg_hier_used(&host->hier[i]) && cg_hier_dir(&host->hier[i], parent, d, sizeof d) == 0 &&
		    rmdir(d) < 0 && errno != ENOENT)
			gone = false;
	}
	char d[PATH_MAX];
	if (cg_v2_dir(parent, d, sizeof d) == 0 && rmdir(d) < 0 && errno != ENOENT)
		gone = false;
	okx(gone, "the parents removed");
}

static void test_v2_core(void)
{
	const struct cg_host *host = cg_host_get();
	if (!host->unified[0]) {
		skip("v2 tests: no cgroup2 mount");
		return;
	}
	struct ab_err err = {0};
	char path[64], dir[PATH_MAX];
	snprintf(path, sizeof path, "/agentbox-test-v2-%d", (int)getpid());
	/* Mode V2 on a hybrid host drives the unified mount as if it were the root. */
	struct cgroup_ref cg = { .mode = CGROUP_MODE_V2 };
	snprintf(cg.path, sizeof cg.path, "%s", path);
	cg_v2_dir(path, dir, sizeof dir);

	struct oci_resources r = {0};
	struct oci_device_rule rules[] = {
		{ .allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm" },
		{ .allow = true, .type = 'c', .major = 1, .minor = 3, .access = "rwm" },
	};
	r.devices = rules;
	r.n_devices = 2;
	struct oci_hugepage_limit hp = { "2MB", 4 * MiB };
	bool huge = access("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK) == 0 &&
		    cg_v2_root_has("hugetlb");
	if (huge) {
		r.hugepage_limits = &hp;
		r.n_hugepage_limits = 1;
	}
	okx(cgroup_create(&cg, &r, &err) == 0, "v2 create %s: %s", dir, E(&err));
	okx(dir_exists(dir), "v2 directory exists");
	if (huge)
		is_str(readf(dir, "hugetlb.2MB.max"), "4194304", "hugetlb.2MB.max");
	else
		skip("no hugetlb on the cgroup2 mount");
	int dfd = cgroup_v2_dirfd(&cg);
	okx(dfd >= 0, "cgroup_v2_dirfd");
	if (dfd >= 0)
		close(dfd);

	/* memory is not on this mount when hybrid: the error must name the file */
	if (!cg_exists(dir, "memory.max")) {
		struct oci_resources m = {0};
		m.memory.has_limit = true;
		m.memory.limit = 64 * MiB;
		okx(cgroup_apply(&cg, &m, &err) < 0, "memory limit without a memory controller fails");
		has_substr(err.msg, "memory.max", "error names memory.max");
		ab_err_clear(&err);
	}

	struct child c;
	child_start(&c);
	okx(cgroup_enter(&cg, c.pid, &err) == 0, "v2 enter: %s", E(&err));
	child_go(&c);
	char suffix[80];
	snprintf(suffix, sizeof suffix, "0::%s", path);
	okx(proc_in_cgroup(c.pid, suffix), "child in the v2 cgroup");
	char want[16];
	snprintf(want, sizeof want, "%d", (int)c.pid);
	is_str(readf(dir, "cgroup.procs"), want, "cgroup.procs holds the child");
	okx(pids_has(&cg, c.pid), "cgroup_pids lists the child");
	okx(device_probe(&cg) == 3, "BPF device filter: /dev/null opens, /dev/zero is EPERM");

	/* replace the program: now only /dev/zero */
	struct oci_device_rule rules2[] = {
		{ .allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm" },
		{ .allow = true, .type = 'c', .major = 1, .minor = 5, .access = "r" },
	};
	struct oci_resources r2 = {0};
	r2.devices = rules2;
	r2.n_devices = 2;
	okx(cgroup_apply(&cg, &r2, &err) == 0, "update device rules: %s", E(&err));
	okx(device_probe(&cg) == 0, "old program gone: /dev/null refused, /dev/zero opens");

	struct oci_kv uk = { "cgroup.max.descendants", "5" };
	struct oci_resources ur = {0};
	ur.unified = &uk;
	ur.n_unified = 1;
	okx(cgroup_apply(&cg, &ur, &err) == 0, "unified key: %s", E(&err));
	is_str(readf(dir, "cgroup.max.descendants"), "5", "unified cgroup.max.descendants written");

	okx(child_runs(&c), "child runs");
	okx(cgroup_freeze(&cg, true, &err) == 0, "v2 freeze: %s", E(&err));
	is_str(readf(dir, "cgroup.freeze"), "1", "cgroup.freeze 1");
	uint64_t frozen = 0;
	okx(cg_read_kv(dir, "cgroup.events", "frozen", &frozen) == 0 && frozen == 1, "cgroup.events frozen 1");
	okx(cgroup_is_frozen(&cg, &err) == 1, "cgroup_is_frozen 1");
	okx(!child_runs(&c), "frozen child does not run");
	okx(cgroup_freeze(&cg, false, &err) == 0, "v2 thaw: %s", E(&err));
	okx(cgroup_is_frozen(&cg, &err) == 0, "cgroup_is_frozen 0");
	okx(child_runs(&c), "thawed child runs");

	struct json_out *o = json_out_new(false);
	okx(cgroup_stats(&cg, o, &err) == 0, "v2 stats");
	yajl_val v = NULL;
	okx(json_parse(json_out_text(o, NULL), "stats", &v, &err) == 0, "v2 stats are valid JSON");
	okx(!huge || json_path(v, "hugetlb", "2MB", "usage") != NULL, "v2 hugetlb stats");
	json_free(v);
	json_out_free(o);

	okx(cg_exists(dir, "cgroup.kill"), "cgroup.kill exists (kernel >= 5.14)");
	okx(cgroup_kill_all(&cg, SIGKILL, &err) == 0, "v2 kill_all: %s", E(&err));
	okx(killed_by_sigkill(c.pid), "child killed through cgroup.kill");
	okx(cgroup_destroy(&cg, &err) == 0, "v2 destroy: %s", E(&err));
	okx(!dir_exists(dir), "v2 directory removed");
}

/* AGENTBOX_CGROUP_ROOT pointing at a cgroup2 mount makes the host look pure v2. */
static void test_env_override(void)
{
#ifndef AGENTBOX_TEST_HOOKS
	skip("AGENTBOX_CGROUP_ROOT is read by test builds only (make TEST_HOOKS=yes)");
	return;
#endif
	const struct cg_host *host = cg_host_get();
	if (host->mode != CGROUP_MODE_HYBRID) {
		skip("override test needs the hybrid layout");
		return;
	}
	char uni[PATH_MAX];
	snprintf(uni, sizeof uni, "%s", host->unified);
	setenv("AGENTBOX_CGROUP_ROOT", uni, 1);
	cg_host_reset();
	okx(cgroup_host_mode() == CGROUP_MODE_V2, "AGENTBOX_CGROUP_ROOT=%s: mode v2", uni);
	is_str(cg_host_get()->unified, uni, "v2 root is the override");
	test_v2_core();
	unsetenv("AGENTBOX_CGROUP_ROOT");
	cg_host_reset();
	okx(cgroup_host_mode() == CGROUP_MODE_HYBRID, "back to hybrid");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	test_resolve();
	test_conversions();
	test_validate();
	test_res_requested();
	test_bpf_build();
	test_v2_format();
	if (geteuid() != 0) {
		skip("cgroup file system tests need root");
		return tap_done();
	}
	printf("# host layout: %s\n", cgroup_mode_name(cgroup_host_mode()));
	test_v1();
	test_bare_parents();
	test_v2_core();
	test_env_override();
	return tap_done();
}
