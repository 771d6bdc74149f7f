/* Named boxes: what a run does with its box (kit_box.h). */
#include "kit_box.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---------------------------------------------------------------- a run's box */

/* A new box NAME, made under .new-NAME-ID and renamed into place; locked. */
static int create_box(struct kit_box *b, struct ab_err *err)
{
	char tmp[KIT_BOX_NAME_MAX + 64], id[17];
	kit_box_new_id(id, 8);
	snprintf(tmp, sizeof tmp, ".new-%s-%s", b->name, id);
	if (mkdirat(b->store_fd, tmp, 0700) < 0)
		return ab_error(err, errno, "box %s: mkdir %s/%s", b->name, b->store, tmp);
	_cleanup_close_ int dfd = openat(b->store_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = 0;
	if (dfd < 0 || mkdirat(dfd, "upper", 0755) < 0 || mkdirat(dfd, "work", 0700) < 0)
		r = ab_error(err, errno, "box %s: mkdir in %s/%s", b->name, b->store, tmp);
	b->created = (int64_t)time(NULL);
	if (r == 0)
		r = kit_box_save_at(b->store_fd, tmp, b, err);
	if (r == 0) {
		b->lock_fd = kit_box_lock(b->store_fd, tmp);
		if (b->lock_fd < 0)
			r = ab_error(err, errno, "box %s: lock", b->name);
	}
	if (r == 0 && renameat2(b->store_fd, tmp, b->store_fd, b->name, RENAME_NOREPLACE) < 0)
		r = ab_error(err, errno, "box %s: rename %s into place", b->name, tmp);
	if (r < 0) {
		struct ab_err e;
		(void)rm_rf_chmod_at(b->store_fd, tmp, &e);
		return -1;
	}
	b->fresh = true;
	return 0;
}

int kit_box_acquire(const char *name, struct kit_box *b, struct ab_err *err)
{
	memset(b, 0, sizeof *b);
	b->store_fd = b->lock_fd = -1;
	if (!kit_box_name_valid(name))
		return ab_error(err, 0, "--name \"%s\": a box name is letters, digits, \"-\", \"_\" and \".\", "
				"at most %d, starting with a letter or digit", name, KIT_BOX_NAME_MAX);
	snprintf(b->name, sizeof b->name, "%s", name);
	_cleanup_close_ int store_lock = -1;
	if (kit_box_store_open(&b->store_fd, &store_lock, b->store, sizeof b->store, err) < 0)
		return -1;
	snprintf(b->dir, sizeof b->dir, "%s/%s", b->store, name);
	kit_box_store_repair(b->store_fd);
	struct stat st;
	if (fstatat(b->store_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return ab_error(err, errno, "box %s", b->dir);
		return create_box(b, err);
	}
	if (!S_ISDIR(st.st_mode))
		return ab_error(err, 0, "box %s: not a directory", b->dir);
	b->lock_fd = kit_box_lock(b->store_fd, name);
	if (b->lock_fd < 0) {
		if (errno == EWOULDBLOCK)
			return ab_error(err, 0, "box %s is in use by another kit run", name);
		return ab_error(err, errno, "box %s: lock", name);
	}
	return kit_box_load(b->store_fd, name, b, err);
}

int kit_box_check_base(struct kit_box *b, const char *base, uint32_t uid, uint32_t gid,
		       struct ab_err *err)
{
	if (!b->base) {
		b->base = arena_strdup(&b->arena, base);
		b->has_user = true;
		b->uid = uid;
		b->gid = gid;
		return kit_box_save_at(b->store_fd, b->name, b, err);
	}
	if (!streq(b->base, base))
		return ab_error(err, 0, "box %s lies on the rootfs %s; this kit's is %s (run it under another "
				"name, or remove the box: agentbox kit rm %s)", b->name, b->base, base, b->name);
	if (b->has_user && (b->uid != uid || b->gid != gid))
		return ab_error(err, 0, "box %s belongs to the user %u:%u (its home is theirs); this kit runs as "
				"%u:%u (set the kit's user to \"%u:%u\", or use another box)", b->name, b->uid, b->gid,
				uid, gid, b->uid, b->gid);
	return 0;
}

int kit_box_touch(struct kit_box *b, const char *kit_file, bool learn, struct ab_err *err)
{
	char real[PATH_MAX];
	b->learn = learn;
	b->kit = kit_file ? arena_strdup(&b->arena, realpath(kit_file, real) ? real : kit_file) : NULL;
	b->last_used = (int64_t)time(NULL);
	return kit_box_save_at(b->store_fd, b->name, b, err);
}

int kit_box_overlay_dirs(struct kit_box *b, const char *base_dir, char **ret_lower, char **ret_upper,
			 char **ret_work, struct ab_err *err)
{
	struct arena *a = &b->arena;
	_cleanup_close_ int dfd = openat(b->store_fd, b->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return ab_error(err, errno, "box %s", b->dir);
	/* a killed run's work directory: overlayfs needs it empty */
	if (rm_rf_chmod_at(dfd, "work", err) < 0)
		return ab_wrap(err, "box %s", b->name);
	if (mkdirat(dfd, "work", 0700) < 0)
		return ab_error(err, errno, "box %s: mkdir work", b->name);
	size_t cap = strlen(base_dir) + 1;
	for (size_t i = 0; i < b->n_layers; i++)
		cap += strlen(b->layers[i]) + 10;
	char *lower = arena_alloc(a, cap);
	size_t off = 0;
	for (size_t i = 0; i < b->n_layers; i++)
		off += (size_t)snprintf(lower + off, cap - off, KIT_BOX_LAYERS "/%s:", b->layers[i]);
	snprintf(lower + off, cap - off, "%s", base_dir);
	*ret_lower = lower;
	*ret_upper = arena_printf(a, "%s/upper", b->name);
	*ret_work = arena_printf(a, "%s/work", b->name);
	return 0;
}

void kit_box_release(struct kit_box *b)
{
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	if (b->store_fd >= 0)
		close(b->store_fd);
	b->lock_fd = b->store_fd = -1;
	arena_free(&b->arena);
}
