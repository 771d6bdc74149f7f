/* Named boxes: the store, box.json, and what a run does with its box
 * (kit_box.h). */
#include "kit_box.h"
#include "json.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define BOX_JSON "box.json"
#define BOX_JSON_MAX (1u << 20)
#define ROOT_STORE "/var/lib/agentbox/boxes"

bool kit_box_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > KIT_BOX_NAME_MAX || !isalnum((unsigned char)name[0]))
		return false;
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

/* Root of the host, not root of a user namespace: /proc/self/uid_map maps
 * every id onto itself. */
static bool host_root(void)
{
	if (geteuid() != 0)
		return false;
	char map[128] = "";
	_cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
	if (!f || !fgets(map, sizeof map, f))
		return true;    /* no /proc: assume the plain case */
	unsigned long a, b, c;
	return sscanf(map, "%lu %lu %lu", &a, &b, &c) == 3 && a == 0 && b == 0 && c == 4294967295UL;
}

int kit_box_store_path(char *buf, size_t len, struct ab_err *err)
{
	const char *env = getenv("AGENTBOX_BOXES");
	if (env && *env) {
		if (env[0] != '/')
			return ab_error(err, 0, "AGENTBOX_BOXES=%s: not an absolute path", env);
		snprintf(buf, len, "%s", env);
		return 0;
	}
	if (host_root()) {
		snprintf(buf, len, "%s", ROOT_STORE);
		return 0;
	}
	const char *xdg = getenv("XDG_DATA_HOME");
	if (xdg && xdg[0] == '/') {
		snprintf(buf, len, "%s/agentbox/boxes", xdg);
		return 0;
	}
	const char *home = getenv("HOME");
	if (home && home[0] == '/') {
		snprintf(buf, len, "%s/.local/share/agentbox/boxes", home);
		return 0;
	}
	return ab_error(err, 0, "boxes: neither $XDG_DATA_HOME nor $HOME says where to keep them");
}

int kit_box_store_open(int *ret_dirfd, int *ret_lockfd, char *path, size_t len, struct ab_err *err)
{
	if (kit_box_store_path(path, len, err) < 0)
		return -1;
	if (mkdir_p(path, 0700, err) < 0)
		return ab_wrap(err, "the box store");
	_cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return ab_error(err, errno, "the box store %s", path);
	if (st.st_uid != geteuid() || (st.st_mode & 0022))
		return ab_error(err, 0, "the box store %s: not owned by us, or writable by others", path);
	int lock = openat(fd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0)
		return ab_error(err, errno, "%s/.lock", path);
	while (flock(lock, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(lock);
			return ab_error(err, e, "lock %s/.lock", path);
		}
	}
	*ret_dirfd = TAKE_FD(fd);
	*ret_lockfd = lock;
	return 0;
}

/* ---------------------------------------------------------------- box.json */

static const char *get_str(yajl_val v, const char *key)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
}

static int64_t get_int(yajl_val v, const char *key, int64_t dflt)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_INTEGER(x) ? YAJL_GET_INTEGER(x) : dflt;
}

static bool layer_id_valid(const char *s)
{
	size_t n = strlen(s);
	return n >= 8 && n <= 64 && strspn(s, "0123456789abcdef") == n;
}

int kit_box_load(int storefd, const char *name, struct kit_box *b, struct ab_err *err)
{
	struct arena *a = &b->arena;
	snprintf(b->name, sizeof b->name, "%s", name);
	char path[KIT_BOX_NAME_MAX + 32];
	snprintf(path, sizeof path, "%s/" BOX_JSON, name);
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file_at(storefd, path, BOX_JSON_MAX, &text, &len, err) < 0)
		return ab_wrap(err, "box %s", name);
	yajl_val v;
	char what[KIT_BOX_NAME_MAX + 64];
	snprintf(what, sizeof what, "box %s: " BOX_JSON, name);
	if (json_parse(text, what, &v, err) < 0)
		return -1;
	const char *s;
	b->kit = (s = get_str(v, "kit")) ? arena_strdup(a, s) : NULL;
	b->base = (s = get_str(v, "base")) ? arena_strdup(a, s) : NULL;
	b->freezing = (s = get_str(v, "freezing")) && layer_id_valid(s) ? arena_strdup(a, s) : NULL;
	b->created = get_int(v, "created", 0);
	b->last_used = get_int(v, "last_used", 0);
	int64_t uid = get_int(v, "uid", -1), gid = get_int(v, "gid", -1);
	b->has_user = uid >= 0 && uid <= UINT32_MAX && gid >= 0 && gid <= UINT32_MAX;
	b->uid = b->has_user ? (uint32_t)uid : 0;
	b->gid = b->has_user ? (uint32_t)gid : 0;
	yajl_val layers = json_get(v, "layers");
	size_t n = YAJL_IS_ARRAY(layers) ? layers->u.array.len : 0;
	b->layers = arena_alloc(a, (n + 2) * sizeof *b->layers);
	b->n_layers = 0;
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		yajl_val x = layers->u.array.values[i];
		if (!YAJL_IS_STRING(x) || !layer_id_valid(YAJL_GET_STRING(x))) {
			r = ab_error(err, 0, "%s: layers[%zu] is not a layer id", what, i);
			break;
		}
		b->layers[b->n_layers++] = arena_strdup(a, YAJL_GET_STRING(x));
	}
	json_free(v);
	return r;
}

int kit_box_save_at(int storefd, const char *dir, const struct kit_box *b, struct ab_err *err)
{
	struct json_out *j = json_out_new(true);
	json_obj_begin(j);
	json_kv_str(j, "name", b->name);
	json_kv_str(j, "kit", b->kit);
	json_kv_str(j, "base", b->base);
	if (b->has_user) {
		json_kv_uint(j, "uid", b->uid);
		json_kv_uint(j, "gid", b->gid);
	}
	json_kv_int(j, "created", b->created);
	json_kv_int(j, "last_used", b->last_used);
	json_key(j, "layers");
	json_arr_begin(j);
	for (size_t i = 0; i < b->n_layers; i++)
		json_str(j, b->layers[i]);
	json_arr_end(j);
	if (b->freezing)
		json_kv_str(j, "freezing", b->freezing);
	json_obj_end(j);
	size_t len;
	const char *text = json_out_text(j, &len);
	_cleanup_close_ int dfd = openat(storefd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = dfd < 0 ? ab_error(err, errno, "box %s", b->name)
			: write_file_atomic_at(dfd, BOX_JSON, text, len, 0600, err);
	json_out_free(j);
	return r;
}

/* ---------------------------------------------------------------- removing trees */

static int rm_children(int dfd, struct ab_err *err);

int kit_box_rm_tree(int dirfd, const char *name, struct ab_err *err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0)
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR || errno == ELOOP) {
			if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
				return ab_error(err, errno, "unlink %s", name);
			return 0;
		}
		return ab_error(err, errno, "open %s", name);
	}
	/* a directory we cannot write (mode 000 work dirs) */
	(void)fchmod(fd, 0700);
	if (rm_children(fd, err) < 0)
		return ab_wrap(err, "remove %s", name);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return ab_error(err, errno, "rmdir %s", name);
	return 0;
}

static int rm_children(int dfd, struct ab_err *err)
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
		if (kit_box_rm_tree(dirfd(d), de->d_name, err) < 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- a run's box */

static void random_id(char *buf, size_t bytes)
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

/* flock LOCK_EX|LOCK_NB on NAME/lock: the fd, or -1 with errno (EWOULDBLOCK: in use). */
static int lock_box(int storefd, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/lock", name);
	int fd = openat(storefd, path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* A new box NAME, made under .new-NAME-ID and renamed into place; locked. */
static int create_box(struct kit_box *b, struct ab_err *err)
{
	char tmp[KIT_BOX_NAME_MAX + 64], id[17];
	random_id(id, 8);
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
		b->lock_fd = lock_box(b->store_fd, tmp);
		if (b->lock_fd < 0)
			r = ab_error(err, errno, "box %s: lock", b->name);
	}
	if (r == 0 && renameat2(b->store_fd, tmp, b->store_fd, b->name, RENAME_NOREPLACE) < 0)
		r = ab_error(err, errno, "box %s: rename %s into place", b->name, tmp);
	if (r < 0) {
		struct ab_err e;
		(void)kit_box_rm_tree(b->store_fd, tmp, &e);
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
	b->lock_fd = lock_box(b->store_fd, name);
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

int kit_box_touch(struct kit_box *b, const char *kit_file, struct ab_err *err)
{
	char real[PATH_MAX];
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
	if (kit_box_rm_tree(dfd, "work", err) < 0)
		return ab_wrap(err, "box %s", b->name);
	if (mkdirat(dfd, "work", 0700) < 0)
		return ab_error(err, errno, "box %s: mkdir work", b->name);
	size_t cap = strlen(base_dir) + 1;
	for (size_t i = 0; i < b->n_layers; i++)
		cap += strlen(b->layers[i]) + 10;
	char *lower = arena_alloc(a, cap);
	size_t off = 0;
	for (size_t i = 0; i < b->n_layers; i++)
		off += (size_t)snprintf(lower + off, cap - off, ".layers/%s:", b->layers[i]);
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
