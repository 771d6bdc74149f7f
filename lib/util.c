#include "util.h"

#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <time.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		ab_fatal("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		ab_fatal("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		ab_fatal("out of memory (%zu bytes)", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		ab_fatal("out of memory (a string of %zu bytes)", strlen(s));
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	char *p;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		ab_fatal("out of memory (formatting %s)", fmt);
	return p;
}

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

#define ARENA_BLOCK 16384

void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	struct arena_block *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		b = xmalloc(sizeof *b + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int read_file_at(int dirfd, const char *path, size_t max_size, char **ret_buf, size_t *ret_len,
		 struct ab_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open %s", path);
	size_t cap = 4096, len = 0;
	_cleanup_free_ char *buf = xmalloc(cap + 1);
	for (;;) {
		if (len == cap) {
			if (cap >= max_size)
				return ab_error(err, EFBIG, "read %s: larger than %zu bytes", path, max_size);
			cap = cap * 2 > max_size ? max_size : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ab_error(err, errno, "read %s", path);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*ret_buf = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

static int write_file_renamed(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
			      bool durable, struct ab_err *err);

int write_file_atomic_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
			 struct ab_err *err)
{
	return write_file_renamed(dirfd, path, data, len, mode, true, err);
}

int write_file_replace_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
			  struct ab_err *err)
{
	return write_file_renamed(dirfd, path, data, len, mode, false, err);
}

static int write_file_renamed(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
			      bool durable, struct ab_err *err)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return ab_error(err, ENAMETOOLONG, "write %s", path);
	_cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return ab_error(err, errno, "create %s", tmp);
	/* fsync makes the content durable before the rename; on tmpfs there is
	 * nothing to make durable */
	struct statfs sf;
	bool volatile_fs = !durable || (fstatfs(fd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC));
	if (write_all(fd, data, len) < 0 || (!volatile_fs && fsync(fd) < 0)) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		return ab_error(err, e, "write %s", tmp);
	}
	if (renameat(dirfd, tmp, dirfd, path) < 0) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		return ab_error(err, e, "rename %s to %s", tmp, path);
	}
	return 0;
}

int write_file_at(int dirfd, const char *path, const char *data, size_t len, struct ab_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open %s", path);
	ssize_t n;
	do
		n = write(fd, data, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ab_error(err, errno, "write '%.*s' to %s", (int)(len > 64 ? 64 : len), data, path);
	return 0;
}

int mkdir_p(const char *path, mode_t mode, struct ab_err *err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return ab_error(err, ENAMETOOLONG, "mkdir %s", path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			if (mkdir(buf, mode) < 0 && errno != EEXIST)
				return ab_error(err, errno, "mkdir %s", buf);
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

static int rm_tree(int dirfd, const char *path, bool chmod_dirs, struct ab_err *err);

static int rm_rf_children(int dfd, bool chmod_dirs, struct ab_err *err)
{
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return ab_error(err, errno, "fdopendir");
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM)
			return ab_error(err, errno, "unlink %s", de->d_name);
		if (rm_tree(dirfd(d), de->d_name, chmod_dirs, err) < 0)
			return -1;
	}
	return 0;
}

/* rm_rf_at, and with chmod_dirs rm_rf_chmod_at: a directory that cannot be
 * opened (EACCES) is made 0700 and opened again, every one made 0700 before
 * its entries go. */
static int rm_tree(int dirfd, const char *path, bool chmod_dirs, struct ab_err *err)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && chmod_dirs && errno == EACCES && fchmodat(dirfd, path, 0700, 0) == 0)
		fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR || errno == ELOOP) {
			if (unlinkat(dirfd, path, 0) < 0 && errno != ENOENT)
				return ab_error(err, errno, "unlink %s", path);
			return 0;
		}
		return ab_error(err, errno, "open %s", path);
	}
	if (chmod_dirs)
		(void)fchmod(fd, 0700);
	if (rm_rf_children(fd, chmod_dirs, err) < 0)
		return ab_wrap(err, "remove %s", path);
	if (unlinkat(dirfd, path, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return ab_error(err, errno, "rmdir %s", path);
	return 0;
}

int rm_rf_at(int dirfd, const char *path, struct ab_err *err)
{
	return rm_tree(dirfd, path, false, err);
}

int rm_rf_chmod_at(int dirfd, const char *path, struct ab_err *err)
{
	return rm_tree(dirfd, path, true, err);
}

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *ret)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_uint64(const char *s, uint64_t *ret)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

bool container_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 1024 || streq(s, ".") || streq(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  (i > 0 && (c == '_' || c == '.' || c == '-' || c == '+'));
		if (!ok)
			return false;
	}
	return true;
}

static int read_proc_stat(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

/* Fields after the comm, which may itself hold spaces and parentheses. */
static char *proc_stat_after_comm(char *buf)
{
	char *p = strrchr(buf, ')');
	return p && p[1] ? p + 2 : NULL;
}

int proc_start_time(pid_t pid, uint64_t *ret)
{
	char buf[1024];
	int r = read_proc_stat(pid, buf, sizeof buf);
	if (r < 0)
		return r;
	char *p = proc_stat_after_comm(buf);
	/* p points at field 3 (state); start time is field 22. */
	for (int field = 3; p && field < 22; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return -EIO;
	*ret = strtoull(p, NULL, 10);
	return 0;
}

bool proc_is(pid_t pid, uint64_t start_time)
{
	uint64_t t;
	return pid > 0 && proc_start_time(pid, &t) == 0 && t == start_time;
}

char proc_state(pid_t pid)
{
	char buf[1024];
	if (read_proc_stat(pid, buf, sizeof buf) < 0)
		return 0;
	char *p = proc_stat_after_comm(buf);
	return p ? *p : 0;
}

static int keep_fd(int fd, const int *keep, size_t n_keep)
{
	for (size_t i = 0; i < n_keep; i++)
		if (keep[i] == fd)
			return 1;
	return 0;
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Fallback when close_range is missing: walk our fd directory (fd_dir, one
 * of ours, or /proc/self/fd when it is -1). */
static int close_fds_by_proc(int fd_dir, int first, const int *keep, size_t n_keep, bool cloexec_only)
{
	int dfd = fd_dir >= 0 ? openat(fd_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			      : open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd < first || fd == dfd || fd == fd_dir || keep_fd(fd, keep, n_keep))
			continue;
		if (cloexec_only)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
		else
			close(fd);
	}
	closedir(d);
	return 0;
}

bool util_force_fallbacks;
/* main()'s frame: below it the stack holds only frames a forked sentry never
 * returns to (runtime/egress/policy.c); 0 outside the runtime */
uintptr_t util_main_frame;

static int close_fds_ranges(int fd_dir, int first, const int *keep, size_t n_keep);

int close_fds_from(int first, const int *keep, size_t n_keep)
{
	return close_fds_from_dir(-1, first, keep, n_keep);
}

int close_fds_from_dir(int fd_dir, int first, const int *keep, size_t n_keep)
{
	int r = close_fds_ranges(fd_dir, first, keep, n_keep);
	/* closed with the rest: by close_range, or here after the walk */
	if (fd_dir >= first && !keep_fd(fd_dir, keep, n_keep))
		(void)close(fd_dir);
	return r;
}

static int close_fds_ranges(int fd_dir, int first, const int *keep, size_t n_keep)
{
	if (util_force_fallbacks)
		return close_fds_by_proc(fd_dir, first, keep, n_keep, false);
	/* close the gaps between kept fds, in ascending order */
	int lo = first;
	for (;;) {
		int next_keep = -1;
		for (size_t i = 0; i < n_keep; i++)
			if (keep[i] >= lo && (next_keep < 0 || keep[i] < next_keep))
				next_keep = keep[i];
		unsigned hi = next_keep < 0 ? ~0U : (unsigned)next_keep - 1;
		if (next_keep < 0 || next_keep > lo) {
			if (syscall(SYS_close_range, (unsigned)lo, hi, 0) < 0)
				return close_fds_by_proc(fd_dir, first, keep, n_keep, false);
		}
		if (next_keep < 0)
			return 0;
		lo = next_keep + 1;
	}
}

int cloexec_fds_from(int first)
{
	if (!util_force_fallbacks && syscall(SYS_close_range, (unsigned)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	return close_fds_by_proc(-1, first, NULL, 0, true);
}

/* UTC calendar date of a count of days since 1970-01-01 (proleptic Gregorian,
 * counted in 400-year eras of 146097 days). Done by hand: glibc's gmtime_r
 * loads /etc/localtime (tzset) the first time, a file read per command. */
static void civil_from_days(long long z, int *y, unsigned *m, unsigned *d)
{
	z += 719468; /* days from 0000-03-01 to 1970-01-01 */
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);                   /* [0, 146096] */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);          /* [0, 365], from March */
	unsigned mp = (5 * doy + 2) / 153;                               /* [0, 11], March = 0 */
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

void format_rfc3339(char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	format_rfc3339_at(buf, len, &ts);
}

void format_rfc3339_at(char *buf, size_t len, const struct timespec *when)
{
	struct timespec ts = *when;
	long long days = ts.tv_sec / 86400, secs = ts.tv_sec % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	int y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	snprintf(buf, len, "%04d-%02u-%02uT%02lld:%02lld:%02lld.%09ldZ", y, m, d, secs / 3600, secs / 60 % 60,
		 secs % 60, ts.tv_nsec);
}

/* Everything on the stack below the caller's frame is dead. Marked MADV_DONTFORK,
 * a child cloned now does not share it: its deeper calls grow the stack into
 * fresh pages, and ours after the clone take no copy-on-write fault. Each such
 * fault flushes the TLB, a hypervisor exit on a VM: about 20 us each here, and
 * after the clone a create's runtime faulted ~15 times on stack pages. The
 * margin keeps the pages that the clone wrapper and the child's return from it
 * use. Only the stack's own mapping lies in the window: Linux keeps mmap 128 MiB
 * or more below the stack. */
__attribute__((noinline)) void stack_below_not_inherited(void)
{
	volatile char here;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t end = ((uintptr_t)&here & ~(page - 1)) - 4 * page;
	size_t len = 1024 * 1024;
	/* ENOMEM for the part below the stack that is not mapped: the rest is done */
	(void)madvise((void *)(end - len), len, MADV_DONTFORK);
}

bool path_lookup(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (const char *p = path; *p;) {
		const char *e = strchrnul(p, ':');
		int n = snprintf(buf, len, "%.*s/%s", (int)(e - p), p, name);
		struct stat st;
		if (e > p && n > 0 && (size_t)n < len && access(buf, X_OK) == 0 && stat(buf, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

/* The mount an fd is on: its id where statx says it (5.8), else 0. */
uint64_t fd_mount_id(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID))
		return stx.stx_mnt_id;
	return 0;
}
