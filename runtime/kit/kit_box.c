/* Named boxes: the store, box.json, the locks, and the repair of what a
 * crash left (kit_box.h). */
#include "kit_box.h"
#include "json.h"
#include "log.h"
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
	yajl_val learn = json_get(v, "learn");
	b->learn = learn && YAJL_IS_TRUE(learn);
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
	if (b->learn)
		json_kv_bool(j, "learn", true);
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

/* ---------------------------------------------------------------- ids, locks, directories */

void kit_box_new_id(char *buf, size_t bytes)
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
int kit_box_lock(int storefd, const char *name)
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

void kit_box_init(struct kit_box *b, int storefd, const char *store)
{
	memset(b, 0, sizeof *b);
	b->store_fd = storefd;
	b->lock_fd = -1;
	snprintf(b->store, sizeof b->store, "%s", store);
}

/* The names of the boxes in the store (directories not starting with "."). */
size_t kit_box_names(int storefd, struct arena *a, char ***ret)
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
int kit_box_mkdir_like(int dirfd, const char *to, int likefd, const char *like, struct ab_err *err)
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

/* ---------------------------------------------------------------- repair */

/* Complete a fork's freeze of b's upper layer into .layers/ID: the rename,
 * a new empty upper layer, the layer in box.json. */
int kit_box_finish_freeze(struct kit_box *b, struct ab_err *err)
{
	const char *id = b->freezing;
	char upper[KIT_BOX_NAME_MAX + 16], layer[64];
	snprintf(upper, sizeof upper, "%s/upper", b->name);
	snprintf(layer, sizeof layer, KIT_BOX_LAYERS "/%s", id);
	struct stat st;
	bool have_layer = fstatat(b->store_fd, layer, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have_layer) {
		if (mkdirat(b->store_fd, KIT_BOX_LAYERS, 0700) < 0 && errno != EEXIST)
			return ab_error(err, errno, "mkdir %s/" KIT_BOX_LAYERS, b->store);
		if (renameat(b->store_fd, upper, b->store_fd, layer) < 0)
			return ab_error(err, errno, "box %s: freeze its layer", b->name);
	}
	if (fstatat(b->store_fd, upper, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    kit_box_mkdir_like(b->store_fd, upper, b->store_fd, layer, err) < 0)
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
			if (rm_rf_chmod_at(storefd, de->d_name, &e) < 0)
				log_warn("boxes: remove %s: %s", de->d_name, e.msg);
	if (d)
		closedir(d);

	/* forks cut short, and the layers the boxes use */
	char **names;
	size_t n = kit_box_names(storefd, &a, &names), n_used = 0, cap = 0;
	char **used = NULL;
	for (size_t i = 0; i < n; i++) {
		struct kit_box b;
		kit_box_init(&b, storefd, "");
		if (kit_box_load(storefd, names[i], &b, &e) == 0) {
			if (b.freezing && kit_box_finish_freeze(&b, &e) < 0)
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
	int lfd = n_used == SIZE_MAX ? -1 : openat(storefd, KIT_BOX_LAYERS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!d && lfd >= 0)
		close(lfd);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && !listed(used, n_used, de->d_name) &&
		    rm_rf_chmod_at(dirfd(d), de->d_name, &e) < 0)
			log_warn("boxes: remove the layer %s: %s", de->d_name, e.msg);
	if (d)
		closedir(d);
	arena_free(&a);
}

