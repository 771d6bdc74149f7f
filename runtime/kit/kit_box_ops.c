/* Named boxes: `kit ls`, `kit rm` and `kit fork` (kit_box.h). Every change
 * happens under the store's lock. */
#include "kit_box.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>


/* ---------------------------------------------------------------- sizes */

/* Bytes the tree dirfd/name takes on disk (what can be read of it). */
static uint64_t tree_size(int at, const char *name, int depth)
{
	struct stat st;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	uint64_t total = (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode) || depth > 256)
		return total;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return total;
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			total += tree_size(dirfd(d), de->d_name, depth + 1);
	return total;
}

int kit_box_list(struct arena *a, struct kit_box_info **ret, size_t *ret_n, struct ab_err *err)
{
	char store[PATH_MAX];
	_cleanup_close_ int storefd = -1, lock = -1;
	if (kit_box_store_open(&storefd, &lock, store, sizeof store, err) < 0)
		return -1;
	kit_box_store_repair(storefd);
	char **names;
	size_t n = kit_box_names(storefd, a, &names);
	struct kit_box_info *v = arena_alloc(a, (n + 1) * sizeof *v);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		struct kit_box b;
		struct ab_err e;
		kit_box_init(&b, storefd, store);
		if (kit_box_load(storefd, names[i], &b, &e) < 0) {
			log_warn("boxes: %s", e.msg);
			arena_free(&b.arena);
			continue;
		}
		struct kit_box_info *x = &v[m++];
		snprintf(x->name, sizeof x->name, "%s", names[i]);
		x->kit = b.kit ? arena_strdup(a, b.kit) : NULL;
		x->created = b.created;
		x->last_used = b.last_used;
		x->learn = b.learn;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/upper", names[i]);
		x->size = tree_size(storefd, path, 0);
		for (size_t j = 0; j < b.n_layers; j++) {
			snprintf(path, sizeof path, KIT_BOX_LAYERS "/%s", b.layers[j]);
			x->layers_size += tree_size(storefd, path, 0);
		}
		snprintf(path, sizeof path, "%s/lock", names[i]);
		int lfd = openat(storefd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		x->running = lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		if (lfd >= 0)
			close(lfd);
		arena_free(&b.arena);
	}
	*ret = v;
	*ret_n = m;
	return 0;
}

/* ---------------------------------------------------------------- rm, fork */

/* NAME/lock, exclusive and without waiting; a box in use is one clear line. */
static int lock_idle(int storefd, const char *name, const char *what, struct ab_err *err)
{
	struct stat st;
	if (fstatat(storefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return ab_error(err, 0, "box %s does not exist", name);
	int fd = kit_box_lock(storefd, name);
	if (fd < 0 && errno == EWOULDBLOCK)
		return ab_error(err, 0, "box %s is in use by a kit run: %s it when the run has ended", name, what);
	if (fd < 0)
		return ab_error(err, errno, "box %s: lock", name);
	return fd;
}

int kit_box_remove(const char *name, struct ab_err *err)
{
	if (!kit_box_name_valid(name))
		return ab_error(err, 0, "\"%s\" is not a box name", name);
	char store[PATH_MAX], trash[KIT_BOX_NAME_MAX + 64], id[17];
	_cleanup_close_ int storefd = -1, lock = -1;
	if (kit_box_store_open(&storefd, &lock, store, sizeof store, err) < 0)
		return -1;
	kit_box_store_repair(storefd);
	_cleanup_close_ int boxlock = lock_idle(storefd, name, "remove", err);
	if (boxlock < 0)
		return -1;
	kit_box_new_id(id, 8);
	snprintf(trash, sizeof trash, ".trash-%s-%s", name, id);
	if (renameat(storefd, name, storefd, trash) < 0)
		return ab_error(err, errno, "box %s: rename it to %s", name, trash);
	int r = rm_rf_chmod_at(storefd, trash, err);
	kit_box_store_repair(storefd);  /* its layers, unless another box lists them */
	return r < 0 ? ab_wrap(err, "box %s", name) : 0;
}

int kit_box_fork(const char *from, const char *to, struct ab_err *err)
{
	if (!kit_box_name_valid(from))
		return ab_error(err, 0, "\"%s\" is not a box name", from);
	if (!kit_box_name_valid(to))
		return ab_error(err, 0, "\"%s\": a box name is letters, digits, \"-\", \"_\" and \".\", at most %d, "
				"starting with a letter or digit", to, KIT_BOX_NAME_MAX);
	if (streq(from, to))
		return ab_error(err, 0, "fork %s into itself", from);
	char store[PATH_MAX];
	_cleanup_close_ int storefd = -1, lock = -1;
	if (kit_box_store_open(&storefd, &lock, store, sizeof store, err) < 0)
		return -1;
	kit_box_store_repair(storefd);
	struct stat st;
	if (fstatat(storefd, to, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return ab_error(err, 0, "box %s exists already", to);
	_cleanup_close_ int boxlock = lock_idle(storefd, from, "fork", err);
	if (boxlock < 0)
		return -1;
	struct kit_box b;
	kit_box_init(&b, storefd, store);
	int r = kit_box_load(storefd, from, &b, err);

	/* 1. freeze FROM's upper layer, unless it is empty */
	char upper[KIT_BOX_NAME_MAX + 16];
	snprintf(upper, sizeof upper, "%s/upper", from);
	int ufd = r < 0 ? -1 : openat(storefd, upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool empty = true;
	{
		_cleanup_closedir_ DIR *d = ufd >= 0 ? fdopendir(ufd) : NULL;
		if (r == 0 && !d) {
			r = ab_error(err, errno, "box %s: open its upper layer", from);
			if (ufd >= 0)
				close(ufd);
		}
		struct dirent *de;
		while (d && empty && (de = readdir(d)))
			empty = streq(de->d_name, ".") || streq(de->d_name, "..");
	}
	if (r == 0 && !empty) {
		char id[33];
		kit_box_new_id(id, 16);
		b.freezing = arena_strdup(&b.arena, id);
		r = kit_box_save_at(storefd, from, &b, err);
		if (r == 0)
			r = kit_box_finish_freeze(&b, err);
	}

	/* 2. TO: the same layers under an empty upper layer of its own */
	char tmp[KIT_BOX_NAME_MAX + 64], id[17];
	kit_box_new_id(id, 8);
	snprintf(tmp, sizeof tmp, ".new-%s-%s", to, id);
	if (r == 0 && mkdirat(storefd, tmp, 0700) < 0)
		r = ab_error(err, errno, "mkdir %s/%s", store, tmp);
	if (r == 0) {
		_cleanup_close_ int dfd = openat(storefd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 || mkdirat(dfd, "work", 0700) < 0)
			r = ab_error(err, errno, "mkdir in %s/%s", store, tmp);
		else
			r = kit_box_mkdir_like(dfd, "upper", storefd, upper, err);
	}
	if (r == 0) {
		struct kit_box nb = b;
		snprintf(nb.name, sizeof nb.name, "%s", to);
		nb.created = (int64_t)time(NULL);
		nb.last_used = 0;
		nb.freezing = NULL;
		r = kit_box_save_at(storefd, tmp, &nb, err);
	}
	if (r == 0 && renameat2(storefd, tmp, storefd, to, RENAME_NOREPLACE) < 0)
		r = ab_error(err, errno, "box %s: rename %s into place", to, tmp);
	if (r < 0) {
		struct ab_err e;
		(void)rm_rf_chmod_at(storefd, tmp, &e);
	}
	arena_free(&b.arena);
	return r < 0 ? -1 : 0;
}
