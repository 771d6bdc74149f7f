/* samework — the same-work floor of bench/run.sh: what an OCI bundle asks of
 * any runtime, done directly, and nothing a runtime adds for itself (no state
 * files, no sync protocol between processes, no hooks, no seccomp, no egress
 * policy, no checks of the config beyond what the work needs).
 *
 *   samework BUNDLE ID        (static; exits with the program's status)
 *
 * It reads BUNDLE/config.json (yajl's tree parser, linked statically) and does
 * what it asks, in runc's order:
 *   parent: make a cgroup ID (or linux.cgroupsPath) in every cgroup v1
 *           hierarchy and the cgroup2 mount (that alone on a pure v2 host); write the
 *           device rules (v1 devices.deny/allow: the config's, then one allow
 *           per device node made, as runc does); open each "tasks"; clone the
 *           config's namespaces but network and cgroup (on v2 straight into the cgroup);
 *           wait; remove the cgroups.
 *   child:  join the cgroups (v1), unshare the network and cgroup namespaces, make / a
 *           slave, bind the rootfs onto itself, the config's mounts (a
 *           "cgroup" mount on v1 is a tmpfs with a read-only bind of the
 *           container's cgroup of each hierarchy, as runc 1.1 makes it; on v2 a
 *           cgroup2 mount), the default device nodes and linux.devices, the
 *           /dev links, pivot_root, the old root detached, the rootfs made
 *           read-only, hostname, readonlyPaths and maskedPaths, rlimits, no
 *           new privileges, the capability bounding set, uid/gid/groups, the
 *           effective/permitted/inheritable/ambient sets, cwd, exec.
 * Joining an existing namespace (a namespace "path") is supported by setns.
 * On a pure v2 host the device rules are a BPF program attached to the
 * cgroup. Not done (the bench bundle has none of it): user namespaces and id
 * mappings, a terminal, sysctl, cgroup limits other than devices, mount
 * propagation other than the default. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>
#include <yajl/yajl_tree.h>

#define MAX_HIER 32

static bool in_child;
static void remove_cgroups(void);

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	fputs("samework: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
	if (!in_child)
		remove_cgroups();       /* nothing left behind */
	_exit(1);
}

/* ------------------------------------------------------------ config.json */

static yajl_val get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key))
			return obj->u.object.values[i];
	return NULL;
}

static const char *str(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key);
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

static size_t alen(yajl_val a)
{
	return YAJL_IS_ARRAY(a) ? a->u.array.len : 0;
}

static yajl_val aget(yajl_val a, size_t i)
{
	return a->u.array.values[i];
}

static long long num(yajl_val obj, const char *key, long long dflt)
{
	yajl_val v = get(obj, key);
	return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : dflt;
}

static bool boolean(yajl_val obj, const char *key)
{
	return YAJL_IS_TRUE(get(obj, key));
}

/* a NULL-terminated copy of an array of strings */
static char **strv(yajl_val a)
{
	size_t n = alen(a);
	char **v = calloc(n + 1, sizeof *v);
	if (!v)
		die("calloc");
	for (size_t i = 0; i < n; i++)
		v[i] = YAJL_IS_STRING(aget(a, i)) ? aget(a, i)->u.string : "";
	return v;
}

/* ------------------------------------------------------------ cgroups */

struct hier {
	char mnt[256];          /* where the host mounted it */
	char name[64];          /* its directory under /sys/fs/cgroup */
	char dir[512];          /* the container's cgroup */
	bool devices, cpuset, v2;
	int procs_fd;
};

static struct hier hiers[MAX_HIER];
static int nhier;
static bool pure_v2;    /* no v1 hierarchy: the cgroup2 mount alone */

/* This process's cgroup in the hierarchy whose /proc/self/cgroup controller
 * field is ctl ("" for cgroup2). */
static bool own_cgroup(const char *ctl, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		die("open /proc/self/cgroup");
	char line[1024];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		*b = 0;
		b[strcspn(b + 1, "\n") + 1] = 0;
		if (!strcmp(a + 1, ctl)) {
			snprintf(out, len, "%s", b + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The controllers of a v1 mount's super options ("rw,cpu,cpuacct" ->
 * "cpu,cpuacct"), as /proc/self/cgroup names them. */
static void controllers(const char *superopts, char *out, size_t len)
{
	static const char *skip[] = {"rw", "ro", "clone_children", "xattr", "noprefix", "cpuset_v2_mode",
				     "favordynmods", "nofavordynmods", NULL};
	char buf[512];
	snprintf(buf, sizeof buf, "%s", superopts);
	out[0] = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool s = !strncmp(t, "release_agent=", 14);
		for (int i = 0; skip[i] && !s; i++)
			s = !strcmp(t, skip[i]);
		if (!s)
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "", t);
	}
}

/* Every v1 hierarchy (or, with none, the cgroup2 mount) and the container's
 * cgroup in it: cgroupsPath from the hierarchy's root when absolute, else
 * under our own cgroup (as runc). */
static void find_hierarchies(const char *cgpath)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		die("open /proc/self/mountinfo");
	char line[4096], v2mnt[256] = "";
	while (fgets(line, sizeof line, f)) {
		char root[512], mnt[256], *dash = strstr(line, " - ");
		char fstype[64], source[256], superopts[512];
		if (!dash || sscanf(line, "%*d %*d %*s %511s %255s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %255s %511s", fstype, source, superopts) != 3)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2mnt[0]) {
			snprintf(v2mnt, sizeof v2mnt, "%s", mnt);
			continue;
		}
		if (strcmp(fstype, "cgroup") || strcmp(root, "/"))
			continue;
		char ctl[256];
		controllers(superopts, ctl, sizeof ctl);
		bool seen = false;
		for (int i = 0; i < nhier; i++)
			seen |= !strcmp(hiers[i].name, strrchr(mnt, '/') + 1);
		if (seen || nhier == MAX_HIER)
			continue;
		struct hier *h = &hiers[nhier++];
		snprintf(h->mnt, sizeof h->mnt, "%s", mnt);
		snprintf(h->name, sizeof h->name, "%s", strrchr(mnt, '/') + 1);
		h->devices = !strcmp(ctl, "devices");
		h->cpuset = !strcmp(ctl, "cpuset");
		char own[256] = "/";
		if (cgpath[0] != '/')
			own_cgroup(ctl, own, sizeof own);
		snprintf(h->dir, sizeof h->dir, "%s%s%s%s", mnt, cgpath[0] == '/' ? "" : own,
			 cgpath[0] == '/' || !strcmp(own, "/") ? "" : "/", cgpath);
		h->procs_fd = -1;
	}
	fclose(f);
	/* the cgroup2 mount: alone on a pure v2 host, beside the v1 ones on a
	 * hybrid host (where runtimes join it too) */
	if (v2mnt[0] && nhier < MAX_HIER) {
		pure_v2 = nhier == 0;
		struct hier *h = &hiers[nhier++];
		char own[256] = "/";
		if (cgpath[0] != '/')
			own_cgroup("", own, sizeof own);
		snprintf(h->mnt, sizeof h->mnt, "%s", v2mnt);
		snprintf(h->name, sizeof h->name, "%s", strrchr(v2mnt, '/') + 1);
		snprintf(h->dir, sizeof h->dir, "%s%s%s%s", v2mnt, cgpath[0] == '/' ? "" : own,
			 cgpath[0] == '/' || !strcmp(own, "/") ? "" : "/", cgpath);
		h->procs_fd = -1;
		h->v2 = true;
	}
}

static void write_file(const char *dir, const char *file, const char *text)
{
	char p[640];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("write %s to %s", text, p);
	close(fd);
}

/* the default device nodes every runtime makes in a /dev tmpfs */
struct dev {
	const char *path;
	char type;
	long long major, minor;
	mode_t mode;
	uid_t uid;
	gid_t gid;
};
static const struct dev default_devs[] = {
	{"/dev/null", 'c', 1, 3, 0666, 0, 0},    {"/dev/zero", 'c', 1, 5, 0666, 0, 0},
	{"/dev/full", 'c', 1, 7, 0666, 0, 0},    {"/dev/random", 'c', 1, 8, 0666, 0, 0},
	{"/dev/urandom", 'c', 1, 9, 0666, 0, 0}, {"/dev/tty", 'c', 5, 0, 0666, 0, 0},
};
#define N_DEFAULT_DEVS (sizeof default_devs / sizeof default_devs[0])

/* one device rule: the config's, or an allow for a node the container gets */
struct devrule {
	bool allow;
	char type;              /* 'a', 'b' or 'c' */
	long long major, minor; /* -1: any */
	char access[8];
};
#define MAX_DEVRULES 256
static struct devrule devrules[MAX_DEVRULES];
static int ndevrules;

static void add_rule(bool allow, char type, long long major, long long minor, const char *access)
{
	if (ndevrules == MAX_DEVRULES) {
		errno = E2BIG;
		die("device rules");
	}
	struct devrule *r = &devrules[ndevrules++];
	*r = (struct devrule){allow, type, major, minor, ""};
	snprintf(r->access, sizeof r->access, "%s", access);
}

/* the config's rules in order, then one allow per device node the container
 * gets (the defaults, linux.devices, /dev/pts/N and /dev/ptmx), as runc */
static void collect_device_rules(yajl_val lnx)
{
	yajl_val rules = get(get(lnx, "resources"), "devices");
	for (size_t i = 0; i < alen(rules); i++) {
		yajl_val r = aget(rules, i);
		const char *t = str(r, "type"), *acc = str(r, "access");
		add_rule(boolean(r, "allow"), t && *t ? *t : 'a', num(r, "major", -1), num(r, "minor", -1),
			 acc ? acc : "rwm");
	}
	for (size_t i = 0; i < N_DEFAULT_DEVS; i++)
		add_rule(true, 'c', default_devs[i].major, default_devs[i].minor, "rwm");
	yajl_val devs = get(lnx, "devices");
	for (size_t i = 0; i < alen(devs); i++) {
		yajl_val d = aget(devs, i);
		const char *t = str(d, "type");
		add_rule(true, t && *t == 'b' ? 'b' : 'c', num(d, "major", 0), num(d, "minor", 0), "rwm");
	}
	add_rule(true, 'c', 136, -1, "rwm");
	add_rule(true, 'c', 5, 2, "rwm");
}

/* v1: devices.allow / devices.deny, one write a rule */
static void write_device_rules(const char *dir)
{
	for (int i = 0; i < ndevrules; i++) {
		const struct devrule *r = &devrules[i];
		char rule[96], ma[24] = "*", mi[24] = "*";
		if (r->major >= 0)
			snprintf(ma, sizeof ma, "%lld", r->major);
		if (r->minor >= 0)
			snprintf(mi, sizeof mi, "%lld", r->minor);
		snprintf(rule, sizeof rule, "%c %s:%s %s", r->type, ma, mi, r->access);
		write_file(dir, r->allow ? "devices.allow" : "devices.deny", rule);
	}
}

/* v2: the same rules as a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the
 * cgroup. The rules are tried from the last to the first, the first match
 * decides (so the last matching rule wins, as in v1); no match is a denial. */
static void attach_device_program(int cgfd)
{
	static struct bpf_insn prog[8 + MAX_DEVRULES * 9];
	int n = 0;
	/* the instruction is built before n moves: its offset may read n */
#define I(c, d, s_, o, i_)                                                                       \
	do {                                                                                     \
		struct bpf_insn x_ = {.code = (c), .dst_reg = (d), .src_reg = (s_), .off = (short)(o), \
				      .imm = (i_)};                                             \
		prog[n++] = x_;                                                                  \
	} while (0)
	I(BPF_LDX | BPF_W | BPF_MEM, 2, 1, 0, 0);         /* r2 = access_type */
	I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 2, 0, 0);       /* r3 = r2 >> 16: access */
	I(BPF_ALU64 | BPF_RSH | BPF_K, 3, 0, 0, 16);
	I(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, 0xffff);  /* r2: the device type */
	I(BPF_LDX | BPF_W | BPF_MEM, 4, 1, 4, 0);         /* r4 = major */
	I(BPF_LDX | BPF_W | BPF_MEM, 5, 1, 8, 0);         /* r5 = minor */
	bool matched_all = false;       /* the verifier refuses unreachable code */
	for (int k = ndevrules - 1; k >= 0 && !matched_all; k--) {
		const struct devrule *r = &devrules[k];
		int acc = (strchr(r->access, 'r') ? BPF_DEVCG_ACC_READ : 0) |
			  (strchr(r->access, 'w') ? BPF_DEVCG_ACC_WRITE : 0) |
			  (strchr(r->access, 'm') ? BPF_DEVCG_ACC_MKNOD : 0);
		int len = (r->type != 'a') + (r->major >= 0) + (r->minor >= 0) +
			  (acc != 7 ? 3 : 0) + 2, end = n + len;
		if (r->type != 'a')
			I(BPF_JMP | BPF_JNE | BPF_K, 2, 0, end - n - 1,
			  r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
		if (r->major >= 0)
			I(BPF_JMP | BPF_JNE | BPF_K, 4, 0, end - n - 1, (int)r->major);
		if (r->minor >= 0)
			I(BPF_JMP | BPF_JNE | BPF_K, 5, 0, end - n - 1, (int)r->minor);
		if (acc != 7) {         /* asked for more than the rule names? */
			I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 3, 0, 0);
			I(BPF_ALU64 | BPF_AND | BPF_K, 6, 0, 0, ~acc);
			I(BPF_JMP | BPF_JNE | BPF_K, 6, 0, end - n - 1, 0);
		}
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, r->allow ? 1 : 0);
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		matched_all = len == 2;
	}
	if (!matched_all) {
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
#undef I
	union bpf_attr load = {0};
	load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	load.insns = (uint64_t)(uintptr_t)prog;
	load.insn_cnt = (uint32_t)n;
	load.license = (uint64_t)(uintptr_t)"GPL";
	int pfd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &load, sizeof load);
	if (pfd < 0) {
		/* again with the verifier's log, to say why */
		static char log[4096];
		int e = errno;
		load.log_buf = (uint64_t)(uintptr_t)log;
		load.log_size = sizeof log;
		load.log_level = 1;
		if (syscall(SYS_bpf, BPF_PROG_LOAD, &load, sizeof load) < 0)
			fprintf(stderr, "%s", log);
		errno = e;
		die("load the device program");
	}
	union bpf_attr at = {0};
	at.target_fd = (uint32_t)cgfd;
	at.attach_bpf_fd = (uint32_t)pfd;
	at.attach_type = BPF_CGROUP_DEVICE;
	at.attach_flags = BPF_F_ALLOW_MULTI;
	if (syscall(SYS_bpf, BPF_PROG_ATTACH, &at, sizeof at) < 0)
		die("attach the device program");
	close(pfd);     /* the cgroup keeps it */
}

/* mkdir -p: the parents only when the directory's own mkdir says they are
 * missing (one syscall in the common case) */
static void mkdir_p(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return;
	if (errno != ENOENT)
		die("mkdir %s", path);
	char p[640];
	snprintf(p, sizeof p, "%s", path);
	char *slash = strrchr(p, '/');
	if (slash && slash != p) {
		*slash = 0;
		mkdir_p(p, mode);
	}
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		die("mkdir %s", path);
}

/* a new v1 cpuset cgroup is empty: no task may join it until it has its
 * parent's cpus and mems */
static void cpuset_copy_down(const char *dir)
{
	static const char *files[] = {"cpuset.cpus", "cpuset.mems"};
	for (int i = 0; i < 2; i++) {
		char p[640], text[4096] = "";
		snprintf(p, sizeof p, "%s/../%s", dir, files[i]);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
		if (n < 0)
			die("read %s", p);
		close(fd);
		text[n] = 0;
		write_file(dir, files[i], text);
	}
}

static void remove_cgroups(void)
{
	for (int i = 0; i < nhier; i++)
		if (rmdir(hiers[i].dir) < 0 && errno != ENOENT)
			fprintf(stderr, "samework: rmdir %s: %s\n", hiers[i].dir, strerror(errno));
}

/* ------------------------------------------------------------ mounts */

struct mflag {
	const char *name;
	bool clear;
	unsigned long flag;
};
static const struct mflag mflags[] = {
	{"ro", false, MS_RDONLY}, {"rw", true, MS_RDONLY}, {"nosuid", false, MS_NOSUID},
	{"suid", true, MS_NOSUID}, {"nodev", false, MS_NODEV}, {"dev", true, MS_NODEV},
	{"noexec", false, MS_NOEXEC}, {"exec", true, MS_NOEXEC}, {"sync", false, MS_SYNCHRONOUS},
	{"async", true, MS_SYNCHRONOUS}, {"dirsync", false, MS_DIRSYNC}, {"remount", false, MS_REMOUNT},
	{"mand", false, MS_MANDLOCK}, {"nomand", true, MS_MANDLOCK}, {"atime", true, MS_NOATIME},
	{"noatime", false, MS_NOATIME}, {"diratime", true, MS_NODIRATIME}, {"nodiratime", false, MS_NODIRATIME},
	{"relatime", false, MS_RELATIME}, {"norelatime", true, MS_RELATIME},
	{"strictatime", false, MS_STRICTATIME}, {"nostrictatime", true, MS_STRICTATIME},
	{"bind", false, MS_BIND}, {"rbind", false, MS_BIND | MS_REC},
};
static const struct mflag pflags[] = {
	{"private", false, MS_PRIVATE}, {"rprivate", false, MS_PRIVATE | MS_REC},
	{"shared", false, MS_SHARED}, {"rshared", false, MS_SHARED | MS_REC},
	{"slave", false, MS_SLAVE}, {"rslave", false, MS_SLAVE | MS_REC},
	{"unbindable", false, MS_UNBINDABLE}, {"runbindable", false, MS_UNBINDABLE | MS_REC},
};

/* a mount's options: flags, propagation flags and the data string */
static void parse_options(yajl_val opts, unsigned long *flags, unsigned long *prop, char *data, size_t len)
{
	*flags = *prop = 0;
	data[0] = 0;
	for (size_t i = 0; i < alen(opts); i++) {
		const char *o = YAJL_IS_STRING(aget(opts, i)) ? aget(opts, i)->u.string : "";
		bool known = false;
		for (size_t k = 0; k < sizeof mflags / sizeof mflags[0] && !known; k++) {
			if (!strcmp(o, mflags[k].name)) {
				*flags = mflags[k].clear ? *flags & ~mflags[k].flag : *flags | mflags[k].flag;
				known = true;
			}
		}
		for (size_t k = 0; k < sizeof pflags / sizeof pflags[0] && !known; k++) {
			if (!strcmp(o, pflags[k].name)) {
				*prop |= pflags[k].flag;
				known = true;
			}
		}
		if (!known)
			snprintf(data + strlen(data), len - strlen(data), "%s%s", data[0] ? "," : "", o);
	}
}

static void do_mount(const char *src, const char *dst, const char *type, unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data && *data ? data : NULL) < 0)
		die("mount %s on %s (%s)", src ? src : "-", dst, type ? type : "-");
}

/* a bind mount, then a remount for what a bind ignores (ro, nosuid, ...) */
static void bind_mount(const char *src, const char *dst, unsigned long flags)
{
	do_mount(src, dst, NULL, MS_BIND | (flags & MS_REC), NULL);
	unsigned long rest = flags & ~(MS_BIND | MS_REC | MS_REMOUNT);
	if (rest)
		do_mount(src, dst, NULL, MS_BIND | MS_REMOUNT | rest, NULL);
}

/* the cgroup mount: v1 a tmpfs with a read-only bind of the container's cgroup
 * per hierarchy; v2 a cgroup2 mount (the cgroup namespace's view) */
static void mount_cgroups(const char *dst, unsigned long flags)
{
	if (pure_v2) {
		do_mount("cgroup", dst, "cgroup2", flags, NULL);
		return;
	}
	do_mount("tmpfs", dst, "tmpfs", flags & ~MS_RDONLY, "mode=755");
	for (int i = 0; i < nhier; i++) {
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dst, hiers[i].name);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die("mkdir %s", p);
		bind_mount(hiers[i].dir, p, MS_BIND | MS_REC | (flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)));
	}
	if (flags & MS_RDONLY)
		do_mount(NULL, dst, NULL, MS_REMOUNT | flags, "mode=755");
}

static void make_mounts(const char *rootfs, yajl_val mounts)
{
	for (size_t i = 0; i < alen(mounts); i++) {
		yajl_val m = aget(mounts, i);
		const char *dest = str(m, "destination"), *type = str(m, "type"), *src = str(m, "source");
		if (!dest)
			continue;
		char dst[640], data[512];
		snprintf(dst, sizeof dst, "%s%s", rootfs, dest);
		unsigned long flags, prop;
		parse_options(get(m, "options"), &flags, &prop, data, sizeof data);
		if ((!type || !strcmp(type, "bind")) && !(flags & MS_BIND))
			flags |= MS_BIND;
		struct stat st;
		if (flags & MS_BIND && src && stat(src, &st) == 0 && !S_ISDIR(st.st_mode)) {
			int fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		} else {
			mkdir_p(dst, 0755);
		}
		if (type && !strcmp(type, "cgroup"))
			mount_cgroups(dst, flags);
		else if (flags & MS_BIND)
			bind_mount(src, dst, flags);
		else
			do_mount(src, dst, type, flags, data);
		if (prop)
			do_mount(NULL, dst, NULL, prop, NULL);
	}
}

static void make_node(const char *rootfs, const char *path, char type, long long major, long long minor,
		      mode_t mode, uid_t uid, gid_t gid)
{
	char p[640];
	snprintf(p, sizeof p, "%s%s", rootfs, path);
	if (mknod(p, (type == 'b' ? S_IFBLK : S_IFCHR) | (mode & 07777), makedev(major, minor)) < 0)
		die("mknod %s", p);
	if (chown(p, uid, gid) < 0)
		die("chown %s", p);
}

/* the device nodes and the /dev links, when /dev is the container's own */
static void make_devices(const char *rootfs, yajl_val lnx)
{
	mode_t old_umask = umask(0);    /* the modes as given */
	for (size_t i = 0; i < N_DEFAULT_DEVS; i++) {
		const struct dev *d = &default_devs[i];
		make_node(rootfs, d->path, d->type, d->major, d->minor, d->mode, d->uid, d->gid);
	}
	yajl_val devs = get(lnx, "devices");
	for (size_t i = 0; i < alen(devs); i++) {
		yajl_val d = aget(devs, i);
		const char *t = str(d, "type"), *path = str(d, "path");
		if (path)
			make_node(rootfs, path, t && *t == 'b' ? 'b' : 'c', num(d, "major", 0), num(d, "minor", 0),
				  (mode_t)num(d, "fileMode", 0666), (uid_t)num(d, "uid", 0), (gid_t)num(d, "gid", 0));
	}
	static const char *links[][2] = {
		{"/proc/self/fd", "/dev/fd"},     {"/proc/self/fd/0", "/dev/stdin"},
		{"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
		{"pts/ptmx", "/dev/ptmx"},       {"/proc/kcore", "/dev/core"},
	};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		char p[640];
		snprintf(p, sizeof p, "%s%s", rootfs, links[i][1]);
		if (!strcmp(links[i][0], "/proc/kcore") && access("/proc/kcore", F_OK) < 0)
			continue;
		if (symlink(links[i][0], p) < 0)
			die("symlink %s", p);
	}
	umask(old_umask);
}

/* ------------------------------------------------------------ process */

static const struct {
	const char *name;
	int cap;
} cap_names[] = {
#define C(x) {#x, x}
	C(CAP_CHOWN), C(CAP_DAC_OVERRIDE), C(CAP_DAC_READ_SEARCH), C(CAP_FOWNER), C(CAP_FSETID),
	C(CAP_KILL), C(CAP_SETGID), C(CAP_SETUID), C(CAP_SETPCAP), C(CAP_LINUX_IMMUTABLE),
	C(CAP_NET_BIND_SERVICE), C(CAP_NET_BROADCAST), C(CAP_NET_ADMIN), C(CAP_NET_RAW), C(CAP_IPC_LOCK),
	C(CAP_IPC_OWNER), C(CAP_SYS_MODULE), C(CAP_SYS_RAWIO), C(CAP_SYS_CHROOT), C(CAP_SYS_PTRACE),
	C(CAP_SYS_PACCT), C(CAP_SYS_ADMIN), C(CAP_SYS_BOOT), C(CAP_SYS_NICE), C(CAP_SYS_RESOURCE),
	C(CAP_SYS_TIME), C(CAP_SYS_TTY_CONFIG), C(CAP_MKNOD), C(CAP_LEASE), C(CAP_AUDIT_WRITE),
	C(CAP_AUDIT_CONTROL), C(CAP_SETFCAP), C(CAP_MAC_OVERRIDE), C(CAP_MAC_ADMIN), C(CAP_SYSLOG),
	C(CAP_WAKE_ALARM), C(CAP_BLOCK_SUSPEND), C(CAP_AUDIT_READ), C(CAP_PERFMON), C(CAP_BPF),
	C(CAP_CHECKPOINT_RESTORE),
#undef C
};

static uint64_t cap_set(yajl_val names)
{
	uint64_t set = 0;
	for (size_t i = 0; i < alen(names); i++) {
		const char *n = YAJL_IS_STRING(aget(names, i)) ? aget(names, i)->u.string : "";
		for (size_t k = 0; k < sizeof cap_names / sizeof cap_names[0]; k++)
			if (!strcmp(n, cap_names[k].name))
				set |= 1ULL << cap_names[k].cap;
	}
	return set;
}

static const struct {
	const char *name;
	int res;
} rlimit_names[] = {
	{"RLIMIT_CPU", RLIMIT_CPU},         {"RLIMIT_FSIZE", RLIMIT_FSIZE},     {"RLIMIT_DATA", RLIMIT_DATA},
	{"RLIMIT_STACK", RLIMIT_STACK},     {"RLIMIT_CORE", RLIMIT_CORE},       {"RLIMIT_RSS", RLIMIT_RSS},
	{"RLIMIT_NPROC", RLIMIT_NPROC},     {"RLIMIT_NOFILE", RLIMIT_NOFILE},   {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
	{"RLIMIT_AS", RLIMIT_AS},           {"RLIMIT_LOCKS", RLIMIT_LOCKS},     {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
	{"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},     {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
	{"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

static void set_rlimits(yajl_val rl)
{
	for (size_t i = 0; i < alen(rl); i++) {
		yajl_val r = aget(rl, i);
		const char *t = str(r, "type");
		for (size_t k = 0; t && k < sizeof rlimit_names / sizeof rlimit_names[0]; k++) {
			if (strcmp(t, rlimit_names[k].name))
				continue;
			struct rlimit l = {(rlim_t)num(r, "soft", 0), (rlim_t)num(r, "hard", 0)};
			if (setrlimit(rlimit_names[k].res, &l) < 0)
				die("setrlimit %s", t);
		}
	}
}

static void set_identity(yajl_val process, int last_cap)
{
	yajl_val caps = get(process, "capabilities"), user = get(process, "user");
	uint64_t bounding = cap_set(get(caps, "bounding"));
	for (int c = 0; c <= last_cap; c++)
		if (!(bounding & (1ULL << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			die("drop capability %d from the bounding set", c);
	if (boolean(process, "noNewPrivileges") && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("no_new_privs");
	/* keep the permitted set across the uid change; capset sets it below */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		die("keepcaps");
	yajl_val ag = get(user, "additionalGids");
	gid_t groups[64];
	size_t ng = 0;
	for (size_t i = 0; i < alen(ag) && ng < 64; i++)
		groups[ng++] = (gid_t)YAJL_GET_INTEGER(aget(ag, i));
	gid_t gid = (gid_t)num(user, "gid", 0);
	uid_t uid = (uid_t)num(user, "uid", 0);
	if (setgroups(ng, groups) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		die("set uid %u gid %u", uid, gid);
	uint64_t eff = cap_set(get(caps, "effective")), perm = cap_set(get(caps, "permitted")),
		 inh = cap_set(get(caps, "inheritable"));
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {
		{(uint32_t)eff, (uint32_t)perm, (uint32_t)inh},
		{(uint32_t)(eff >> 32), (uint32_t)(perm >> 32), (uint32_t)(inh >> 32)},
	};
	if (syscall(SYS_capset, &hdr, data) < 0)
		die("capset");
	uint64_t amb = cap_set(get(caps, "ambient"));
	for (int c = 0; c <= last_cap; c++)
		if (amb & (1ULL << c) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
			die("raise ambient capability %d", c);
}

/* ------------------------------------------------------------ the container */

struct nsdef {
	const char *type;
	int flag;
};
static const struct nsdef nstypes[] = {
	{"pid", CLONE_NEWPID}, {"network", CLONE_NEWNET}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
	{"mount", CLONE_NEWNS}, {"cgroup", CLONE_NEWCGROUP}, {"user", CLONE_NEWUSER}, {"time", CLONE_NEWTIME},
};

static void readonly_path(const char *p)
{
	if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0) {
		if (errno == ENOENT)
			return;
		die("bind %s", p);
	}
	struct statvfs sv;
	unsigned long keep = statvfs(p, &sv) == 0 ? sv.f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC) : 0;
	do_mount(p, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC | keep, NULL);
}

static void masked_path(const char *p)
{
	struct stat st;
	if (stat(p, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		do_mount("tmpfs", p, "tmpfs", MS_RDONLY, NULL);
	else
		do_mount("/dev/null", p, NULL, MS_BIND, NULL);
}

static int child(yajl_val cfg, const char *rootfs, int late_flags, int last_cap, int *ns_fds)
{
	yajl_val lnx = get(cfg, "linux"), process = get(cfg, "process");
	in_child = true;
	/* join: v1 through the inherited "tasks" fds (v2 was cloned in) */
	for (int i = 0; i < nhier; i++) {
		if (hiers[i].procs_fd >= 0 && write(hiers[i].procs_fd, "0", 1) != 1)
			die("join %s", hiers[i].dir);
		if (hiers[i].procs_fd >= 0)
			close(hiers[i].procs_fd);
	}
	for (size_t i = 0; i < sizeof nstypes / sizeof nstypes[0]; i++)
		if (ns_fds[i] >= 0 && nstypes[i].flag != CLONE_NEWPID && setns(ns_fds[i], nstypes[i].flag) < 0)
			die("join the %s namespace", nstypes[i].type);
	if (late_flags && unshare(late_flags) < 0)
		die("unshare the %s namespace(s)", late_flags & CLONE_NEWNET ? "network and cgroup" : "cgroup");

	const char *prop = str(lnx, "rootfsPropagation");
	unsigned long pflag = MS_SLAVE | MS_REC;
	for (size_t k = 0; prop && k < sizeof pflags / sizeof pflags[0]; k++)
		if (!strcmp(prop, pflags[k].name))
			pflag = pflags[k].flag;
	do_mount(NULL, "/", NULL, pflag, NULL);
	do_mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL);

	yajl_val mounts = get(cfg, "mounts");
	make_mounts(rootfs, mounts);
	bool own_dev = false;
	for (size_t i = 0; i < alen(mounts); i++) {
		const char *d = str(aget(mounts, i), "destination");
		own_dev |= d && !strcmp(d, "/dev");
	}
	if (own_dev)
		make_devices(rootfs, lnx);

	/* pivot_root with the old root stacked under the new, then detached */
	if (chdir(rootfs) < 0)
		die("chdir %s", rootfs);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		die("pivot_root");
	do_mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL);
	if (umount2(".", MNT_DETACH) < 0)
		die("detach the old root");
	if (chdir("/") < 0)
		die("chdir /");

	const char *hostname = str(cfg, "hostname");
	if (hostname && sethostname(hostname, strlen(hostname)) < 0)
		die("sethostname");
	yajl_val ro = get(lnx, "readonlyPaths"), masked = get(lnx, "maskedPaths");
	for (size_t i = 0; i < alen(ro); i++)
		if (YAJL_IS_STRING(aget(ro, i)))
			readonly_path(aget(ro, i)->u.string);
	for (size_t i = 0; i < alen(masked); i++)
		if (YAJL_IS_STRING(aget(masked, i)))
			masked_path(aget(masked, i)->u.string);
	if (boolean(get(cfg, "root"), "readonly")) {
		struct statvfs sv;
		unsigned long keep = statvfs("/", &sv) == 0 ? sv.f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC) : 0;
		do_mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL);
	}

	set_rlimits(get(process, "rlimits"));
	set_identity(process, last_cap);
	const char *cwd = str(process, "cwd");
	if (cwd && chdir(cwd) < 0)
		die("chdir %s", cwd);
	char **args = strv(get(process, "args")), **env = strv(get(process, "env"));
	if (!args[0])
		die("process.args is empty");
	execve(args[0], args, env);
	die("exec %s", args[0]);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: samework BUNDLE ID\n");
		return 2;
	}
	char path[512], rootfs[512];
	snprintf(path, sizeof path, "%s/config.json", argv[1]);
	FILE *f = fopen(path, "re");
	if (!f)
		die("open %s", path);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	char errbuf[256];
	yajl_val cfg = yajl_tree_parse(text, errbuf, sizeof errbuf);
	if (!cfg) {
		fprintf(stderr, "samework: %s: %s\n", path, errbuf);
		return 1;
	}
	yajl_val lnx = get(cfg, "linux");
	const char *root = str(get(cfg, "root"), "path");
	if (!root)
		root = "rootfs";
	if (root[0] == '/')
		snprintf(rootfs, sizeof rootfs, "%s", root);
	else
		snprintf(rootfs, sizeof rootfs, "%s/%s", argv[1], root);

	int last_cap = CAP_LAST_CAP;
	f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	if (f) {
		if (fscanf(f, "%d", &last_cap) != 1)
			last_cap = CAP_LAST_CAP;
		fclose(f);
	}

	/* the namespaces: new ones cloned, existing ones (a path) joined */
	uint64_t flags = 0;
	int late_flags = 0, ns_fds[sizeof nstypes / sizeof nstypes[0]];
	yajl_val nss = get(lnx, "namespaces");
	for (size_t k = 0; k < sizeof nstypes / sizeof nstypes[0]; k++)
		ns_fds[k] = -1;
	for (size_t i = 0; i < alen(nss); i++) {
		const char *t = str(aget(nss, i), "type"), *p = str(aget(nss, i), "path");
		for (size_t k = 0; t && k < sizeof nstypes / sizeof nstypes[0]; k++) {
			if (strcmp(t, nstypes[k].type))
				continue;
			if (p && *p) {
				if ((ns_fds[k] = open(p, O_RDONLY | O_CLOEXEC)) < 0)
					die("open %s", p);
				if (nstypes[k].flag == CLONE_NEWPID && setns(ns_fds[k], CLONE_NEWPID) < 0)
					die("join the pid namespace %s", p);
			} else if (nstypes[k].flag == CLONE_NEWCGROUP || nstypes[k].flag == CLONE_NEWNET) {
				/* after the cgroups are joined: the cgroup namespace
				 * is rooted where the process is then; and a v1
				 * cgroup join right after a new network namespace
				 * waits ~10 ms here (what runc's order, cgroups
				 * first, and a pool of namespaces both avoid) */
				late_flags |= nstypes[k].flag;
			} else {
				flags |= (uint64_t)nstypes[k].flag;
			}
		}
	}

	const char *cgpath = str(lnx, "cgroupsPath");
	find_hierarchies(cgpath && *cgpath ? cgpath : argv[2]);
	collect_device_rules(lnx);
	int cgfd = -1;
	for (int i = 0; i < nhier; i++) {
		struct hier *h = &hiers[i];
		mkdir_p(h->dir, 0755);
		if (h->cpuset)
			cpuset_copy_down(h->dir);
		if (h->devices)
			write_device_rules(h->dir);
		if (h->v2) {
			if ((cgfd = open(h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
				die("open %s", h->dir);
			if (pure_v2)
				attach_device_program(cgfd);
			continue;
		}
		/* "tasks", not cgroup.procs: moving one thread (the child is one)
		 * does not take the thread-group lock whose writer waits for an RCU
		 * grace period; same result, the cheapest way the kernel offers */
		char p[640];
		snprintf(p, sizeof p, "%s/tasks", h->dir);
		if ((h->procs_fd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
			die("open %s", p);
	}

	struct clone_args ca = {.flags = flags, .exit_signal = SIGCHLD};
	if (cgfd >= 0) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)cgfd;
	}
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid < 0)
		die("clone3");
	if (pid == 0)
		_exit(child(cfg, rootfs, late_flags, last_cap, ns_fds));
	for (int i = 0; i < nhier; i++)
		if (hiers[i].procs_fd >= 0)
			close(hiers[i].procs_fd);
	int st;
	while (waitpid((pid_t)pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	remove_cgroups();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
