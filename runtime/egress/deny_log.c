/* The durable egress log's directory: where it is, a container's place in it,
 * and the bound on the whole. A container's own files are bounded where they
 * are written (netfilter/sentry/durable_log.c); here, when a new container's log is
 * begun (at most once a DENY_LOG_PRUNE_EVERY_S), logs go until the directory
 * is within log.max_total and DENY_LOG_COUNT_MAX logs: the empty ones first,
 * then the least recently written. A log whose directory is locked (its
 * sentry lives) is never removed. */
#include "deny_log.h"
#include "durable_log.h"
#include "rootless.h"
#include "sha256.h"
#include "state.h"
#include "test_hooks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PRUNE_STAMP ".pruned"

int deny_log_base(const struct agent_config *cfg, char *buf, size_t len, struct ab_err *err)
{
	const char *hook = test_hook("AGENTBOX_LOG_DIR");
	int n;
	struct ab_err e;
	const char *root = rootless_default_state_root(&e);
	if (hook && *hook)
		n = snprintf(buf, len, "%s", hook);
	else if (root && streq(root, DEFAULT_STATE_ROOT))
		n = snprintf(buf, len, "%s", cfg->log_dir ? cfg->log_dir : DENY_LOG_DIR_DEFAULT);
	else {
		const char *xdg = secure_getenv("XDG_STATE_HOME"), *home = secure_getenv("HOME");
		if (xdg && xdg[0] == '/')
			n = snprintf(buf, len, "%s/agentbox/log", xdg);
		else if (home && home[0] == '/')
			n = snprintf(buf, len, "%s/.local/state/agentbox/log", home);
		else
			return ab_error(err, 0, "the durable egress log: neither XDG_STATE_HOME nor HOME is an absolute path");
	}
	if (n < 0 || (size_t)n >= len)
		return ab_error(err, ENAMETOOLONG, "the durable egress log directory");
	return 0;
}

/* The container's directory name: its id, or for an id too long for a file
 * name (ids may have 1024 characters), "sha256-" and its digest. */
static void dir_name(const char *id, char buf[NAME_MAX + 1])
{
	if (strlen(id) <= 200) {
		snprintf(buf, NAME_MAX + 1, "%s", id);
		return;
	}
	struct sha256 h;
	uint8_t digest[32];
	char hex[65];
	sha256_init(&h);
	sha256_update(&h, id, strlen(id));
	sha256_final(&h, digest);
	sha256_hex(digest, hex);
	snprintf(buf, NAME_MAX + 1, "sha256-%s", hex);
}

/* Ours alone: a directory others could write to would let them swap our files. */
static int open_base(const char *base, bool make, bool *ret_missing, struct ab_err *err)
{
	*ret_missing = false;
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && make) {
		if (mkdir_p(base, 0700, err) < 0)
			return ab_wrap(err, "the durable egress log");
		fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0 && errno == ENOENT && !make) {
		*ret_missing = true;
		return -1;
	}
	if (fd < 0)
		return ab_error(err, errno, "the durable egress log: open %s", base);
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return ab_error(err, 0,
				"the durable egress log: %s is not the runtime user's alone (owner %u, mode %03o): refused (log.dir in agentbox-config(5))",
				base, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
	}
	return fd;
}

struct entry {
	char name[NAME_MAX + 1];
	time_t mtime;
	uint64_t size;
};

/* The order logs go in: those without a record first (every run leaves one
 * behind, and thousands of them must not push out a log that holds what a
 * box was refused), then the least recently written. */
static int by_worth(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if ((x->size > 0) != (y->size > 0))
		return x->size > 0 ? 1 : -1;
	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Remove one container's log unless its sentry holds it. */
static uint64_t remove_log(int basefd, const struct entry *en)
{
	_cleanup_close_ int fd = openat(basefd, en->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		return 0;
	(void)unlinkat(fd, DURABLE_LOG_OLD, 0);
	(void)unlinkat(fd, DURABLE_LOG, 0);
	return unlinkat(basefd, en->name, AT_REMOVEDIR) == 0 ? en->size : 0;
}

static void prune(int basefd, const struct agent_config *cfg, const char *keep)
{
	struct stat st;
	time_t now = time(NULL);
	if (fstatat(basefd, PRUNE_STAMP, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtime <= now &&
	    now - st.st_mtime < DENY_LOG_PRUNE_EVERY_S)
		return;
	int stamp = openat(basefd, PRUNE_STAMP, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (stamp < 0)
		return;
	(void)futimens(stamp, NULL);
	close(stamp);
	int dfd = openat(basefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	struct entry *all = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || streq(de->d_name, keep) || strlen(de->d_name) > NAME_MAX)
			continue;
		struct stat ds;
		if (fstatat(basefd, de->d_name, &ds, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(ds.st_mode))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct entry *grown = realloc(all, ncap * sizeof *all);
			if (!grown)
				break;
			all = grown;
			cap = ncap;
		}
		struct entry *en = &all[n++];
		snprintf(en->name, sizeof en->name, "%s", de->d_name);
		en->mtime = ds.st_mtime;
		en->size = 0;
		static const char *const files[] = {DURABLE_LOG, DURABLE_LOG_OLD};
		for (size_t i = 0; i < 2; i++) {
			char path[NAME_MAX + 32];
			snprintf(path, sizeof path, "%s/%s", de->d_name, files[i]);
			if (fstatat(basefd, path, &ds, AT_SYMLINK_NOFOLLOW) == 0) {
				en->size += (uint64_t)ds.st_size;
				if (ds.st_mtime > en->mtime)
					en->mtime = ds.st_mtime;
			}
		}
		total += en->size;
	}
	closedir(d);
	uint64_t max_total = cfg->log_max_total ? cfg->log_max_total : DENY_LOG_TOTAL_DEFAULT;
	if (total > max_total || n >= DENY_LOG_COUNT_MAX) {
		qsort(all, n, sizeof *all, by_worth);
		size_t kept = n;
		for (size_t i = 0; i < n && (total > max_total || kept >= DENY_LOG_COUNT_MAX); i++) {
			uint64_t freed = remove_log(basefd, &all[i]);
			if (freed || faccessat(basefd, all[i].name, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
				total -= freed;
				kept--;
			}
		}
	}
	free(all);
}

int deny_log_open_dir(const struct agent_config *cfg, const char *id, int *ret_dirfd, bool *ret_made,
		      struct ab_err *err)
{
	char base[PATH_MAX], name[NAME_MAX + 1];
	if (deny_log_base(cfg, base, sizeof base, err) < 0)
		return -1;
	bool missing;
	_cleanup_close_ int basefd = open_base(base, true, &missing, err);
	if (basefd < 0)
		return -1;
	dir_name(id, name);
	/* a pruning may remove the directory between our mkdir and our lock:
	 * then it has no links, and we make it again */
	for (int tries = 0; tries < 3; tries++) {
		bool made = mkdirat(basefd, name, 0700) == 0;
		if (!made && errno != EEXIST)
			return ab_error(err, errno, "the durable egress log: mkdir %s/%s", base, name);
		_cleanup_close_ int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return ab_error(err, errno, "the durable egress log: open %s/%s", base, name);
		struct stat st;
		if (flock(fd, LOCK_SH) < 0 || fstat(fd, &st) < 0)
			return ab_error(err, errno, "the durable egress log: lock %s/%s", base, name);
		if (st.st_nlink == 0)
			continue;
		if (st.st_uid != geteuid())
			return ab_error(err, 0, "the durable egress log: %s/%s is not the runtime user's (owner %u): refused",
					base, name, (unsigned)st.st_uid);
		if (made)
			prune(basefd, cfg, name);
		if (ret_made)
			*ret_made = made;
		*ret_dirfd = TAKE_FD(fd);
		return 0;
	}
	return ab_error(err, EAGAIN, "the durable egress log: %s/%s", base, name);
}

int deny_log_find(const struct agent_config *cfg, const char *id, int *ret_dirfd, char *ret_base,
		  struct ab_err *err)
{
	char name[NAME_MAX + 1];
	*ret_dirfd = -1;
	if (deny_log_base(cfg, ret_base, PATH_MAX, err) < 0)
		return -1;
	bool missing;
	int basefd = open_base(ret_base, false, &missing, err);
	if (basefd < 0)
		return missing ? 0 : -1;
	dir_name(id, name);
	int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	int e = errno;
	close(basefd);
	if (fd < 0 && e != ENOENT)
		return ab_error(err, e, "the durable egress log: open %s/%s", ret_base, name);
	*ret_dirfd = fd;
	return 0;
}

bool deny_log_append(const struct agent_config *cfg, const char *id, const char *line, size_t len)
{
	struct ab_err e;
	_cleanup_close_ int dirfd = -1;
	if (deny_log_open_dir(cfg, id, &dirfd, NULL, &e) < 0)
		return false;
	struct durable_log d;
	if (durable_log_open(&d, dirfd, cfg->log_max_bytes) < 0 || d.fd < 0)
		return false;
	durable_log_append(&d, line, len);
	durable_log_close(&d);
	return true;
}

void deny_log_forget(const struct agent_config *cfg, const char *id)
{
	char base[PATH_MAX], name[NAME_MAX + 1];
	struct ab_err e;
	bool missing;
	if (deny_log_base(cfg, base, sizeof base, &e) < 0)
		return;
	_cleanup_close_ int basefd = open_base(base, false, &missing, &e);
	if (basefd < 0)
		return;
	dir_name(id, name);
	_cleanup_close_ int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		return;
	if (fstatat(fd, DURABLE_LOG, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size == 0)
		(void)unlinkat(fd, DURABLE_LOG, 0);
	(void)unlinkat(basefd, name, AT_REMOVEDIR);   /* not when it holds records */
}
