#include "kit_rundir.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

#define KIT_RUN_DIR "/run/agentbox-kits"
#define OWNER_FILE "owner"

static char user_base[PATH_MAX];

void kit_rundir_set_base(const char *dir)
{
	snprintf(user_base, sizeof user_base, "%s", dir);
}

const char *kit_rundir_base(void)
{
	if (user_base[0])
		return user_base;
	const char *base = KIT_RUN_DIR;
	if (geteuid() != 0 || (mkdir(base, 0700) < 0 && errno != EEXIST)) {
		base = getenv("TMPDIR");
		if (!base || !*base)
			base = "/tmp";
	}
	return base;
}

/* The owner file says "PID START_TIME STATE_ROOT". Made as .new-NAME and renamed
 * once the owner is written: a kit-* directory without one belongs to someone
 * else (an older agentbox) and is never touched. */
int kit_rundir_make(struct kit_rundir *rd, const struct global_opts *g, const char *id,
		    struct ab_err *err)
{
	const char *base = kit_rundir_base();
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s/.new-%s", base, id);
	if (mkdir(tmp, 0700) < 0)
		return ab_error(err, errno, "mkdir %s", tmp);
	uint64_t start = 0;
	char root[PATH_MAX];
	if (!realpath(g->root, root))
		snprintf(root, sizeof root, "%s", g->root);
	int r;
	if (proc_start_time(getpid(), &start) < 0) {
		r = ab_error(err, errno, "read our own start time");
	} else {
		char *text = xasprintf("%d %llu %s\n", (int)getpid(), (unsigned long long)start, root);
		_cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = fd < 0 ? ab_error(err, errno, "open %s", tmp)
			   : write_file_atomic_at(fd, OWNER_FILE, text, strlen(text), 0600, err);
		free(text);
	}
	snprintf(rd->dir, sizeof rd->dir, "%s/%s", base, id);
	if (r == 0 && rename(tmp, rd->dir) < 0)
		r = ab_error(err, errno, "rename %s to %s", tmp, rd->dir);
	if (r < 0) {
		struct ab_err e;
		(void)rm_rf_at(AT_FDCWD, tmp, &e);
		rd->dir[0] = 0;
		return -1;
	}
	snprintf(rd->bundle, sizeof rd->bundle, "%s/bundle", rd->dir);
	snprintf(rd->merged, sizeof rd->merged, "%s/merged", rd->dir);
	return 0;
}

/* Characters mount(2)'s overlay options cannot carry in a path (":" separates
 * lower layers, and is allowed there when `list`). */
static bool overlay_safe(const char *p, bool list)
{
	return !strpbrk(p, list ? ",\\" : ",:\\");
}

int kit_rundir_mount_overlay(struct kit_rundir *rd, const char *lower, const char *upper,
			     const char *work, int dirfd, struct ab_err *err)
{
	char own_upper[PATH_MAX + 8], own_work[PATH_MAX + 8];
	bool own = !upper;
	if (own) {
		snprintf(own_upper, sizeof own_upper, "%s/upper", rd->dir);
		snprintf(own_work, sizeof own_work, "%s/work", rd->dir);
		upper = own_upper;
		work = own_work;
	}
	if (!overlay_safe(lower, !own) || !overlay_safe(upper, false) || !overlay_safe(work, false))
		return ab_error(err, 0, "overlay: the paths %s, %s and %s must not contain ',', ':' or '\\'",
				lower, upper, work);
	if (own) {
		struct stat st;
		if (stat(lower, &st) < 0)
			return ab_error(err, errno, "rootfs %s", lower);
		if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
			return ab_error(err, errno, "overlay: mkdir in %s", rd->dir);
		/* the box's / takes its owner and mode from the upper directory */
		if (chown(upper, st.st_uid, st.st_gid) < 0 || chmod(upper, st.st_mode & 07777) < 0)
			return ab_error(err, errno, "overlay: %s", upper);
	}
	if (mkdir(rd->merged, 0755) < 0)
		return ab_error(err, errno, "overlay: mkdir %s", rd->merged);
	/* a box's layers stay: its upper layer must mount again over a lower
	 * layer made anew (the host rootfs' skeleton), which the index would
	 * refuse, and metacopy would leave it needing lower files that change */
	size_t len = strlen(lower) + strlen(upper) + strlen(work) + 128;
	_cleanup_free_ char *data = xmalloc(len);
	snprintf(data, len, "lowerdir=%s,upperdir=%s,workdir=%s%s", lower, upper, work,
		 own ? "" : ",index=off,metacopy=off");
	_cleanup_close_ int back = -1;
	if (dirfd >= 0) {
		/* relative layer paths keep the options within a page */
		back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (back < 0 || fchdir(dirfd) < 0)
			return ab_error(err, errno, "overlay: enter the directory of its layers");
	}
	int r = mount("overlay", rd->merged, "overlay", 0, data);
	int e = errno;
	if (back >= 0 && fchdir(back) < 0 && r == 0) {
		(void)umount2(rd->merged, MNT_DETACH);
		return ab_error(err, errno, "overlay: back to the working directory");
	}
	if (r < 0)
		return ab_error(err, e, "mount an overlay on %s (lower %s)", rd->merged, lower);
	rd->mounted = true;
	(void)mount(NULL, rd->merged, NULL, MS_PRIVATE, NULL);
	return 0;
}

void kit_rundir_remove(struct kit_rundir *rd)
{
	if (!rd->dir[0])
		return;
	bool safe = true;
	if (rd->mounted) {
		if (umount2(rd->merged, MNT_DETACH) < 0) {
			log_warn("kit run: unmount %s: %s; leaving %s in place", rd->merged, strerror(errno), rd->dir);
			safe = false;
		}
		rd->mounted = false;
	}
	/* never remove through a mount: only when merged is on the same file system */
	struct stat a, b;
	if (safe && stat(rd->dir, &a) == 0 && stat(rd->merged, &b) == 0 && a.st_dev != b.st_dev) {
		log_warn("kit run: %s is still a mount point; leaving %s in place", rd->merged, rd->dir);
		safe = false;
	}
	struct ab_err e;
	if (safe && rm_rf_at(AT_FDCWD, rd->dir, &e) < 0)
		log_warn("kit run: remove %s: %s", rd->dir, e.msg);
	rd->dir[0] = 0;
}

/* Remove one temporary directory of a run whose process is gone: its container
 * (state, cgroup, processes), its overlay, then the directory. Best effort. */
static void sweep_one(const struct global_opts *g, const char *base, const char *name)
{
	char dir[PATH_MAX], merged[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/%s", base, name);
	snprintf(merged, sizeof merged, "%s/merged", dir);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	struct ab_err e;
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file_at(dfd, OWNER_FILE, 4 * PATH_MAX, &text, &len, &e) == 0) {
		int pid;
		unsigned long long start;
		int off = 0;
		if (sscanf(text, "%d %llu %n", &pid, &start, &off) < 2 || !off)
			return;
		if (proc_is(pid, start))
			return;         /* still running */
		char *root = text + off;
		root[strcspn(root, "\n")] = 0;
		struct global_opts g2 = *g;
		g2.root = root;
		if (container_delete(&g2, name, true, &e) < 0)
			log_warn("kit: clean up after the killed run %s: %s", name, e.msg);
	} else {
		/* no owner: not ours to judge, unless it is our .new- directory of a
		 * run killed right after mkdir (a live one gets a minute) */
		struct stat st;
		if (strncmp(name, ".new-", 5) != 0 || fstat(dfd, &st) < 0 || time(NULL) - st.st_mtime < 60)
			return;
	}
	if (umount2(merged, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
		log_warn("kit: unmount %s: %s; leaving %s in place", merged, strerror(errno), dir);
		return;
	}
	struct stat a, b;
	if (stat(dir, &a) == 0 && stat(merged, &b) == 0 && a.st_dev != b.st_dev)
		return;         /* never remove through a mount */
	if (rm_rf_at(AT_FDCWD, dir, &e) < 0)
		log_warn("kit: remove %s: %s", dir, e.msg);
}

void kit_sweep_stale_runs(const struct global_opts *g)
{
	const char *base = kit_rundir_base();
	_cleanup_closedir_ DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *id = strncmp(de->d_name, ".new-", 5) == 0 ? de->d_name + 5 : de->d_name;
		if ((strncmp(id, "kit-", 4) == 0 || strncmp(id, BOX_ID_PREFIX, 4) == 0) && container_id_valid(id))
			sweep_one(g, base, de->d_name);
	}
}
