/* Named boxes: `kit ls`, `kit rm`, `kit fork`, and the store's repair after a
 * crash (kit_box.h). Every change here happens under the store's lock. */
#include "kit_box.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define LAYERS ".layers"

static void new_id(char *buf, size_t bytes)
{
	unsigned char r[16];
	if (bytes > sizeof r)
		bytes = sizeof r;
	if (getrandom(r, bytes, 0) != (ssize_t)bytes) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
		for (size_t i = 0; i < bytes; i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
			r[i] = (unsigned char)(x >> 56);
	}
	for (size_t i = 0; i < bytes; i++)
		sprintf(buf + 2 * i, "%02x", r[i]);
}

static void box_init(struct kit_box *b, int storefd, const char *store)
{
	memset(b, 0, sizeof *b);
	b->store_fd = storefd;
	b->lock_fd = -1;
	snprintf(b->store, sizeof b->store, "%s", store);
}

/* The names of the boxes in the store (directories not starting with "."). */
static size_t box_names(int storefd, struct arena *a, char ***ret)
{
	*ret = NULL;
	int dfd = openat(storefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	size_t n = 0, cap = 0;
	char **v = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (!kit_box_name_valid(de->d_name) || fstatat(storefd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **w = arena_alloc(a, cap * sizeof *w);
			if (n)
				memcpy(w, v, n * sizeof *w);
			v = w;
		}
		v[n++] = arena_strdup(a, de->d_name);
	}
	for (size_t i = 1; i < n; i++)         /* by name */
		for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*ret = v;
	return n;
}

/* An empty directory `to` with the owner and mode of `like` (a box's / comes
 * from its upper layer's root). */
static int mkdir_like(int dirfd, const char *to, int likefd, const char *like, struct ab_err *err)
{
	struct stat st;
	if (fstatat(likefd, like, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_error(err, errno, "stat %s", like);
	if (mkdirat(dirfd, to, st.st_mode & 07777) < 0)
		return ab_error(err, errno, "mkdir %s", to);
	if (fchownat(dirfd, to, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0 && geteuid() == 0)
		return ab_error(err, errno, "chown %s", to);
	if (fchmodat(dirfd, to, st.st_mode & 07777, 0) < 0)
		return ab_error(err, errno, "chmod %s", to);
	return 0;
}

/* Complete a fork's freeze of b's upper layer into .layers/ID: the rename,
 * a new empty upper layer, the layer in box.json. */
static int finish_freeze(struct kit_box *b, struct ab_err *err)
{
	const char *id = b->freezing;
	char upper[KIT_BOX_NAME_MAX + 16], layer[64];
	snprintf(upper, sizeof upper, "%s/upper", b->name);
	snprintf(layer, sizeof layer, LAYERS "/%s", id);
	struct stat st;
	bool have_layer = fstatat(b->store_fd, layer, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have_layer) {
		if (mkdirat(b->store_fd, LAYERS, 0700) < 0 && errno != EEXIST)
			return ab_error(err, errno, "mkdir %s/" LAYERS, b->store);
		if (renameat(b->store_fd, upper, b->store_fd, layer) < 0)
			return ab_error(err, errno, "box %s: freeze its layer", b->name);
	}
	if (fstatat(b->store_fd, upper, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    mkdir_like(b->store_fd, upper, b->store_fd, layer, err) < 0)
		return ab_wrap(err, "box %s", b->name);
	char **layers = arena_alloc(&b->arena, (b->n_layers + 2) * sizeof *layers);
	layers[0] = arena_strdup(&b->arena, id);
	if (b->n_layers)
		memcpy(layers + 1, b->layers, b->n_layers * sizeof *layers);
	b->layers = layers;
	b->n_layers++;
	b->freezing = NULL;
	return kit_box_save_at(b->store_fd, b->name, b, err);
}

static bool listed(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (streq(v[i], s))
			return true;
	return false;
}

void kit_box_store_repair(int storefd)
{
	struct ab_err e;
	struct arena a = {0};
	/* what was being made or removed when its process died */
	int dfd = openat(storefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d && dfd >= 0)
		close(dfd);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strncmp(de->d_name, ".new-", 5) == 0 || strncmp(de->d_name, ".trash-", 7) == 0)
			if (kit_box_rm_tree(storefd, de->d_name, &e) < 0)
				log_warn("boxes: remove %s: %s", de->d_name, e.msg);
	if (d)
		closedir(d);

	/* forks cut short, and the layers the boxes use */
	char **names;
	size_t n = box_names(storefd, &a, &names), n_used = 0, cap = 0;
	char **used = NULL;
	for (size_t i = 0; i < n; i++) {
		struct kit_box b;
		box_init(&b, storefd, "");
		if (kit_box_load(storefd, names[i], &b, &e) == 0) {
			if (b.freezing && finish_freeze(&b, &e) < 0)
				log_warn("boxes: %s", e.msg);
			for (size_t j = 0; j < b.n_layers + (b.freezing ? 1 : 0); j++) {
				if (n_used == cap) {
					cap = cap ? 2 * cap : 32;
					char **w = arena_alloc(&a, cap * sizeof *w);
					if (n_used)
						memcpy(w, used, n_used * sizeof *w);
					used = w;
				}
				used[n_used++] = arena_strdup(&a, j < b.n_layers ? b.layers[j] : b.freezing);
			}
		} else {
			/* unreadable: keep every layer rather than lose one it needs */
			n_used = SIZE_MAX;
		}
		arena_free(&b.arena);
		if (n_used == SIZE_MAX)
			break;
	}
	int lfd = n_used == SIZE_MAX ? -1 : openat(storefd, LAYERS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!d && lfd >= 0)
		close(lfd);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && !listed(used, n_used, de->d_name) &&
		    kit_box_rm_tree(dirfd(d), de->d_name, &e) < 0)
			log_warn("boxes: remove the layer %s: %s", de->d_name, e.msg);
	if (d)
		closedir(d);
	arena_free(&a);
}

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
	size_t n = box_names(storefd, a, &names);
	struct kit_box_info *v = arena_alloc(a, (n + 1) * sizeof *v);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		struct kit_box b;
		struct ab_err e;
		box_init(&b, storefd, store);
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
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/upper", names[i]);
		x->size = tree_size(storefd, path, 0);
		for (size_t j = 0; j < b.n_layers; j++) {
			snprintf(path, sizeof path, LAYERS "/%s", b.layers[j]);
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
	char path[KIT_BOX_NAME_MAX + 16];
	snprintf(path, sizeof path, "%s/lock", name);
	int fd = openat(storefd, path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ab_error(err, errno, "box %s: lock", name);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return ab_error(err, 0, "box %s is in use by a kit run: %s it when the run has ended", name, what);
		return ab_error(err, e, "box %s: lock", name);
	}
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
	new_id(id, 8);
	snprintf(trash, sizeof trash, ".trash-%s-%s", name, id);
	if (renameat(storefd, name, storefd, trash) < 0)
		return ab_error(err, errno, "box %s: rename it to %s", name, trash);
	int r = kit_box_rm_tree(storefd, trash, err);
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
	box_init(&b, storefd, store);
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
		new_id(id, 16);
		b.freezing = arena_strdup(&b.arena, id);
		r = kit_box_save_at(storefd, from, &b, err);
		if (r == 0)
			r = finish_freeze(&b, err);
	}

	/* 2. TO: the same layers under an empty upper layer of its own */
	char tmp[KIT_BOX_NAME_MAX + 64], id[17];
	new_id(id, 8);
	snprintf(tmp, sizeof tmp, ".new-%s-%s", to, id);
	if (r == 0 && mkdirat(storefd, tmp, 0700) < 0)
		r = ab_error(err, errno, "mkdir %s/%s", store, tmp);
	if (r == 0) {
		_cleanup_close_ int dfd = openat(storefd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 || mkdirat(dfd, "work", 0700) < 0)
			r = ab_error(err, errno, "mkdir in %s/%s", store, tmp);
		else
			r = mkdir_like(dfd, "upper", storefd, upper, err);
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
		(void)kit_box_rm_tree(storefd, tmp, &e);
	}
	arena_free(&b.arena);
	return r < 0 ? -1 : 0;
}
