#include "netns_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "ruleset.h"
#include "netdev.h"
#include "raw_syscall.h"
#include "sealed_exe.h"
#include "sha256.h"
#include "util.h"

#define PRISTINE_PREFIX "ns-"
#define FIREWALLED_PREFIX "fw-"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The name prefix of a kind of entry: pristine for KEY NULL, firewalled of
 * KEY, firewalled of any key for "". */
static void kind_prefix(const char *key, char *buf, size_t len)
{
	if (!key)
		snprintf(buf, len, PRISTINE_PREFIX);
	else if (!*key)
		snprintf(buf, len, FIREWALLED_PREFIX);
	else
		snprintf(buf, len, FIREWALLED_PREFIX "%s-", key);
}

static bool is_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[len] == 0;
}

static void random_hex(char *out, size_t digits)
{
	uint8_t rnd[32];
	if (getrandom(rnd, digits / 2, 0) != (ssize_t)(digits / 2))
		ab_fatal("getrandom: %s", strerror(errno));   /* never on Linux >= 3.17 once the pool is initialised */
	for (size_t i = 0; i < digits / 2; i++)
		sprintf(out + 2 * i, "%02x", rnd[i]);
}

void netns_pool_key(const char *policy_text, char key[NETNS_POOL_KEY_LEN + 1])
{
	struct stat st;
	if (stat("/proc/self/exe", &st) < 0) {
		random_hex(key, NETNS_POOL_KEY_LEN);   /* no identity: a key nothing else has */
		return;
	}
	char id[128];
	exe_identity(&st, id, sizeof id);
	struct sha256 h;
	uint8_t sum[32];
	sha256_init(&h);
	sha256_update(&h, id, strlen(id) + 1);   /* with its NUL: the text starts after it */
	sha256_update(&h, policy_text, strlen(policy_text));
	sha256_final(&h, sum);
	char hex[65];
	sha256_hex(sum, hex);
	memcpy(key, hex, NETNS_POOL_KEY_LEN);
	key[NETNS_POOL_KEY_LEN] = 0;
}

static bool is_netns(int fd)
{
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && (unsigned long)fs.f_type == NSFS_MAGIC &&
	       ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWNET;
}

/* The namespace entry NAME pins, or -1. A file that holds none here (its pin
 * was made in another mount namespace, or lost) is removed when DROP_STALE. */
static int open_pinned(int dfd, const char *name, bool drop_stale)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !is_netns(fd)) {
		close(fd);
		fd = -1;
		if (drop_stale)
			(void)unlinkat(dfd, name, 0);
	}
	return fd;
}

/* The pool directory, only when it is root's alone: anyone else who could
 * write there could hand containers a namespace of their making. */
static int open_pool_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 077)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Calls FN for each entry of the open directory DFD whose name starts with
 * PREFIX until it returns non-zero (which is returned). */
static int each_entry(int dfd, const char *prefix, int (*fn)(int dfd, const char *dir, const char *name, void *data),
		      const char *dir, void *data)
{
	char buf[4096];
	if (lseek(dfd, 0, SEEK_SET) < 0)
		return 0;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (n <= 0)
			return 0;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + off);
			off += de->d_reclen;
			if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
				continue;
			int r = fn(dfd, dir, de->d_name, data);
			if (r)
				return r;
		}
	}
}

/* Unpin an entry and remove its file; both must succeed, or another create
 * could take the same namespace. */
static int unpin(int dfd, const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 || unlinkat(dfd, name, 0) < 0)
		return -1;
	return 0;
}

struct take {
	const char *prefix;
	char *token;   /* firewalled: what follows the prefix */
	int fd;
};

/* Take the first pinned namespace: open it, unpin it, remove its file. A file
 * that holds no namespace here (its pin was made in another mount namespace,
 * or lost) is removed. Runs under the directory's lock. */
static int take_one(int dfd, const char *dir, const char *name, void *data)
{
	struct take *t = data;
	const char *token = name + strlen(t->prefix);
	if (t->token && !(strlen(token) == NETNS_POOL_TOKEN_LEN && is_hex(token, NETNS_POOL_TOKEN_LEN)))
		return 0;
	int fd = open_pinned(dfd, name, true);
	if (fd < 0)
		return 0;
	if (unpin(dfd, dir, name) < 0) {
		close(fd);
		return 0;
	}
	if (t->token)
		memcpy(t->token, token, NETNS_POOL_TOKEN_LEN + 1);
	t->fd = fd;
	return 1;
}

int netns_pool_take(const char *dir, const char *key, char token[NETNS_POOL_TOKEN_LEN + 1], bool *firewalled)
{
	*firewalled = false;
	int dfd = open_pool_dir(dir);
	if (dfd < 0)
		return -1;
	char prefix[64];
	struct take t = {.prefix = prefix, .fd = -1};
	if (flock(dfd, LOCK_EX) == 0) {
		if (key && *key) {
			kind_prefix(key, prefix, sizeof prefix);
			t.token = token;
			(void)each_entry(dfd, prefix, take_one, dir, &t);
			*firewalled = t.fd >= 0;
		}
		if (t.fd < 0) {
			kind_prefix(NULL, prefix, sizeof prefix);
			t.token = NULL;
			(void)each_entry(dfd, prefix, take_one, dir, &t);
		}
	}
	close(dfd);
	return t.fd;
}

static int count_one(int dfd, const char *dir, const char *name, void *data)
{
	(void)dir;
	int fd = open_pinned(dfd, name, false);
	if (fd >= 0) {
		(*(unsigned *)data)++;
		close(fd);
	}
	return 0;
}

unsigned netns_pool_count(const char *dir, const char *key)
{
	int dfd = open_pool_dir(dir);
	if (dfd < 0)
		return 0;
	char prefix[64];
	kind_prefix(key, prefix, sizeof prefix);
	unsigned n = 0;
	(void)each_entry(dfd, prefix, count_one, dir, &n);
	close(dfd);
	return n;
}

/* Pin the calling thread's network namespace as entry NAME, under the lock,
 * so that a create never sees an entry half made. */
static int pin_current(int dfd, const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (flock(dfd, LOCK_EX) < 0)
		return -1;
	int r = -1;
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		r = mount("/proc/thread-self/ns/net", path, NULL, MS_BIND, NULL);
		if (r < 0)
			(void)unlinkat(dfd, name, 0);
	}
	(void)flock(dfd, LOCK_UN);
	return r;
}

struct room {
	const char *own_prefix;   /* entries of the policy being filled */
	unsigned firewalled;      /* all firewalled entries */
	char victim[256];         /* the oldest of another policy's */
	unsigned long victim_made;
};

/* When a firewalled entry was made: its token starts with the time in seconds. */
static unsigned long entry_made(const char *name)
{
	const char *token = strrchr(name, '-');
	char made[9] = "";
	if (token)
		snprintf(made, sizeof made, "%.8s", token + 1);
	return strtoul(made, NULL, 16);
}

static int note_firewalled(int dfd, const char *dir, const char *name, void *data)
{
	(void)dir;
	struct room *r = data;
	int fd = open_pinned(dfd, name, true);   /* a stale one takes no room */
	if (fd < 0)
		return 0;
	close(fd);
	r->firewalled++;
	if (strncmp(name, r->own_prefix, strlen(r->own_prefix)) != 0 &&
	    (!r->victim[0] || entry_made(name) < r->victim_made)) {
		snprintf(r->victim, sizeof r->victim, "%s", name);
		r->victim_made = entry_made(name);
	}
	return 0;
}

/* Firewalled entries hold a few hundred KiB of kernel memory each: at most
 * NETNS_POOL_KINDS times SIZE of them. True when one more entry of OWN_PREFIX
 * fits, after removing the oldest one of another policy if need be (each
 * create with a policy has its entries made anew, so the policies used
 * least recently go first). */
static bool make_room(int dfd, const char *dir, const char *own_prefix, unsigned size)
{
	if (flock(dfd, LOCK_EX) < 0)
		return false;
	struct room r = {.own_prefix = own_prefix};
	(void)each_entry(dfd, FIREWALLED_PREFIX, note_firewalled, dir, &r);
	bool fits = r.firewalled < NETNS_POOL_KINDS * size || (r.victim[0] && unpin(dfd, dir, r.victim) == 0);
	(void)flock(dfd, LOCK_UN);
	return fits;
}

/* The netns of the calling thread, with the egress ruleset of POLICY; its
 * table's comment names "@TOKEN" instead of a container. */
static int install_ruleset(const struct egress_policy *policy, const char *token)
{
	char owner[NETNS_POOL_TOKEN_LEN + 2];
	snprintf(owner, sizeof owner, "@%s", token);
	struct ab_err e;
	return egress_install_new(-1, policy, owner, EGRESS_SENTRY_PORT, &e) == 0 ? 0 : -1;
}

int netns_pool_fill(const char *dir, const char *size_arg, const char *policy_text)
{
	/* nothing of the caller's is open here (see refill_exec); 0-2 go to
	 * /dev/null so that nothing opened later takes their place */
	int null = open("/dev/null", O_RDWR);
	while (null >= 0 && null < 2)
		null = dup(null);
	char *end;
	unsigned long size = strtoul(size_arg, &end, 10);
	if (*end || size > NETNS_POOL_MAX_SIZE || geteuid() != 0)
		return 1;
	/* firewalled: only a policy text that is its own canonical form, so that
	 * its key is the one a create computes */
	struct egress_policy policy = {0};
	char key[NETNS_POOL_KEY_LEN + 1], prefix[64];
	if (policy_text) {
		struct ab_err e;
		if (egress_policy_from_string(policy_text, "the pool's policy", &policy, &e) < 0)
			return 1;
		char *canonical = egress_policy_to_string(&policy);
		bool same = streq(canonical, policy_text);
		free(canonical);
		if (!same)
			return 1;
		netns_pool_key(policy_text, key);
	}
	kind_prefix(policy_text ? key : NULL, prefix, sizeof prefix);
	(void)setsid();
	(void)setpriority(PRIO_PROCESS, 0, 19);
	if (chdir("/") < 0)
		return 1;
	(void)mkdir(dir, 0700);
	int dfd = open_pool_dir(dir);
	if (dfd < 0)
		return 1;
	/* one filler of a kind at a time (the others would find nothing left to
	 * add): a lock on one byte of the lock file, 0 for pristine entries, one
	 * chosen by the key for firewalled ones */
	int lock = openat(dfd, "fill.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct flock kind = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
	if (policy_text) {
		char head[8];
		snprintf(head, sizeof head, "%.7s", key);
		kind.l_start = 1 + (off_t)strtoul(head, NULL, 16);
	}
	if (lock < 0 || fcntl(lock, F_OFD_SETLK, &kind) < 0)
		return 0;
	unsigned have = 0;
	(void)each_entry(dfd, prefix, count_one, dir, &have);
	for (; have < size; have++) {
		/* the token: when it was made (for make_room), then a random part */
		char token[NETNS_POOL_TOKEN_LEN + 1], name[128];
		snprintf(token, sizeof token, "%08lx", (unsigned long)time(NULL) & 0xffffffffUL);
		random_hex(token + 8, NETNS_POOL_TOKEN_LEN - 8);
		snprintf(name, sizeof name, "%s%s", prefix, token);
		if (policy_text && !make_room(dfd, dir, prefix, (unsigned)size))
			return 0;
		/* lo up now, not on the init's way to the program: it is in any
		 * namespace of a container (runc and crun bring it up too) */
		struct ab_err e;
		if (unshare(CLONE_NEWNET) < 0 || netdev_loopback_up(&e) < 0 ||
		    (policy_text && install_ruleset(&policy, token) < 0) || pin_current(dfd, dir, name) < 0)
			return 1;
	}
	return 0;
}

/* What the refiller execs; static, because the parent goes on (and returns
 * from the frame that called us) while the child still reads them. */
static char refill_prog[] = "/proc/self/exe";
static char refill_arg0[] = "agentbox";
static char refill_arg1[] = NETNS_POOL_FILL_COMMAND;
static char refill_size[16];
static char *refill_argv[] = {refill_arg0, refill_arg1, refill_size, NULL, NULL};
static char *refill_envp[] = {NULL};
static long refill_small_stack[1024];

/* The process's argument strings (main's argv, end to end): the filler that
 * runs in place writes its own command line there, as ps and pgrep show it */
char *netns_pool_arg_area;
size_t netns_pool_arg_len;

/* The child of clone(CLONE_VM) borrows our memory until its execve: raw
 * system calls only (raw_syscall.h), or we wait for its execve. */
#if RAW_SYSCALL
#define REFILL_CLONE_FLAGS CLONE_VM
#else
#define REFILL_CLONE_FLAGS (CLONE_VM | CLONE_VFORK)
#endif

/* Filling in place takes libc (and libnftnl) in memory the sanitizers' runtime
 * has already shut down in: their builds exec */
#if RAW_SYSCALL && defined(SYS_poll) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define REFILL_IN_PLACE 1
#else
#define REFILL_IN_PLACE 0
#endif
#define REFILL_STACK_SIZE (256 * 1024)

/* Our pidfd, for the child to wait for our exit on, and its stack */
static int refill_parent_pidfd = -1;
static bool refill_big_stack;
#define REFILL_WAIT_MS 1000

/* Set as we exit (main's _exit, or exit()'s handlers), past our last
 * malloc: a process killed instead may have left its heap half changed,
 * and then the child execs */
static volatile sig_atomic_t refill_parent_exited_cleanly;
void netns_pool_exiting(void)
{
	refill_parent_exited_cleanly = 1;
}

/* The command line of an exec'd filler, where ours was */
static void refill_rename(void)
{
	if (!netns_pool_arg_area || netns_pool_arg_len == 0)
		return;
	memset(netns_pool_arg_area, 0, netns_pool_arg_len);
	char *p = netns_pool_arg_area, *end = netns_pool_arg_area + netns_pool_arg_len - 1;
	const char *parts[] = {refill_arg0, refill_arg1, refill_size};
	for (size_t i = 0; i < ARRAY_SIZE(parts) && p < end; i++) {
		size_t n = strlen(parts[i]);
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		memcpy(p, parts[i], n);
		p += n + 1;
	}
}

/* The child. While we live it borrows our memory: raw system calls only, on
 * its own stack, touching nothing else; it waits for our exit on a pidfd
 * (up to REFILL_WAIT_MS). Our exit then only lets go of the address space,
 * whose teardown is left to the child, after whoever waits for us has been
 * told we exited. Once we are gone the memory is the child's alone: it fills
 * the pool right there, with libc and all and without an exec (an exec of
 * agentbox, its dynamic linking and page faults, was most of a filler's
 * CPU), and ends with exit_group, never exit (our atexit work is done). If we
 * are still there after the wait, or it cannot fill in place, it execs
 * `agentbox __netns-pool-fill`. */
static int refill_exec(void *unused)
{
	(void)unused;
	int pidfd = refill_parent_pidfd;
	if (pidfd > 0)
		(void)raw_syscall3(SYS_close_range, 0, pidfd - 1, 0);
	(void)raw_syscall3(SYS_close_range, pidfd + 1, (long)~0U, 0);
	long gone = 0;
#if defined(SYS_poll)
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		gone = raw_syscall3(SYS_poll, (long)&p, 1, REFILL_WAIT_MS);
	}
#endif
	if (pidfd >= 0)
		(void)raw_syscall3(SYS_close, pidfd, 0, 0);
	if (REFILL_IN_PLACE && gone == 1 && refill_big_stack && refill_parent_exited_cleanly) {
		refill_rename();
		int status = netns_pool_fill(NETNS_POOL_DIR, refill_size, refill_argv[3]);
		(void)raw_syscall3(SYS_exit_group, status, 0, 0);
	}
	(void)raw_syscall3(SYS_execve, (long)refill_prog, (long)refill_argv, (long)refill_envp);
	(void)raw_syscall3(SYS_exit, 127, 0, 0);
	return 0;
}

void netns_pool_refill(unsigned size, const char *policy_text)
{
	if (size == 0 || size > NETNS_POOL_MAX_SIZE || geteuid() != 0)
		return;
	snprintf(refill_size, sizeof refill_size, "%u", size);
	/* a copy that outlives the caller's: never freed, the process ends soon */
	refill_argv[3] = policy_text ? strdup(policy_text) : NULL;
	if (policy_text && !refill_argv[3])
		return;
	/* no copy of this process (a fork's page tables and the copy-on-write
	 * faults after it): the child borrows our memory until our exit or its
	 * execve; no exit signal, nobody waits for it */
	refill_parent_pidfd = RAW_SYSCALL ? (int)syscall(SYS_pidfd_open, getpid(), 0) : -1;
	if (REFILL_IN_PLACE)
		(void)atexit(netns_pool_exiting);
	/* filling in place needs more stack than waiting and an exec: its own
	 * mapping, never unmapped (the child runs on it after we are gone) */
	void *stack = REFILL_IN_PLACE ? mmap(NULL, REFILL_STACK_SIZE, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0) : MAP_FAILED;
	refill_big_stack = stack != MAP_FAILED;
	void *top = refill_big_stack ? (char *)stack + REFILL_STACK_SIZE
				     : (void *)(refill_small_stack + ARRAY_SIZE(refill_small_stack));
	(void)clone(refill_exec, top, REFILL_CLONE_FLAGS, NULL);
	/* ours goes with our exit; the child's copy is what it waits on */
	if (refill_parent_pidfd >= 0)
		close(refill_parent_pidfd);
}
