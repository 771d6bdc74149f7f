/* OCI image layouts unpacked into a cache (see image.h). */
#include "image.h"
#include "log.h"
#include "json.h"

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define JSON_MAX (4u << 20)     /* index, manifest, config */
#define MAX_LAYERS 256
#define HEX_LEN 64

/* ---------------------------------------------------------------- libarchive, loaded on demand */

#define LA_FUNCS(X) \
	X(archive_read_new) X(archive_read_support_filter_all) X(archive_read_support_format_tar) \
	X(archive_read_open_fd) X(archive_read_next_header) X(archive_read_data_skip) \
	X(archive_read_extract2) X(archive_read_free) X(archive_error_string) \
	X(archive_write_disk_new) X(archive_write_disk_set_options) X(archive_write_close) \
	X(archive_write_free) X(archive_entry_pathname) X(archive_entry_set_pathname) \
	X(archive_entry_hardlink) X(archive_entry_set_hardlink) X(archive_entry_filetype)

#define LA_MEMBER(f) __typeof__(f) *f;
static struct {
	bool loaded;
	LA_FUNCS(LA_MEMBER)
} la;
#undef LA_MEMBER

static int la_load(struct ab_err *err)
{
	if (la.loaded)
		return 0;
	void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return ab_error(err, 0, "unpacking an OCI image needs libarchive.so.13 (Debian package libarchive13): %s",
				dlerror());
#define LA_SYM(f) \
	if (!(la.f = (__typeof__(f) *)dlsym(h, #f))) \
		return ab_error(err, 0, "libarchive.so.13 has no %s (too old?)", #f);
	LA_FUNCS(LA_SYM)
#undef LA_SYM
	la.loaded = true;
	return 0;
}

/* ---------------------------------------------------------------- digests, blobs */

struct layout {
	const char *path;               /* for messages */
	int fd;
	struct arena *a;
};

static void to_hex(const uint8_t *d, char *hex)
{
	for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
}

/* "sha256:<64 lowercase hex>" -> the hex; anything else is refused. */
static int digest_hex(const char *digest, const char *what, char hex[HEX_LEN + 1], struct ab_err *err)
{
	if (!digest)
		return ab_error(err, 0, "%s: no digest", what);
	if (strncmp(digest, "sha256:", 7) != 0)
		return ab_error(err, 0, "%s: digest \"%.80s\": only sha256 is supported", what, digest);
	const char *h = digest + 7;
	if (strlen(h) != HEX_LEN || strspn(h, "0123456789abcdef") != HEX_LEN)
		return ab_error(err, 0, "%s: malformed digest \"%.80s\"", what, digest);
	memcpy(hex, h, HEX_LEN + 1);
	return 0;
}

static const char *jstr(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

/* Open blobs/sha256/HEX of a descriptor, checking its size when it gives one. */
static int open_blob(const struct layout *l, yajl_val desc, const char *what, char hex[HEX_LEN + 1],
		     int *ret_fd, struct ab_err *err)
{
	if (digest_hex(jstr(desc, "digest"), what, hex, err) < 0)
		return -1;
	char path[32 + HEX_LEN];
	snprintf(path, sizeof path, "blobs/sha256/%s", hex);
	_cleanup_close_ int fd = openat(l->fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "%s: blob %s/%s", what, l->path, path);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ab_error(err, errno, "%s: blob %s", what, path);
	if (!S_ISREG(st.st_mode))
		return ab_error(err, 0, "%s: blob %s/%s is not a regular file", what, l->path, path);
	yajl_val size = json_get(desc, "size");
	if (YAJL_IS_INTEGER(size) && YAJL_GET_INTEGER(size) != (long long)st.st_size)
		return ab_error(err, 0, "%s: blob %s/%s has %lld bytes, the descriptor says %lld", what, l->path,
				path, (long long)st.st_size, YAJL_GET_INTEGER(size));
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int digest_mismatch(const struct layout *l, const char *what, const char *want, const uint8_t *got,
			   struct ab_err *err)
{
	char hex[HEX_LEN + 1];
	to_hex(got, hex);
	return ab_error(err, 0, "%s: blob %s/blobs/sha256/%s: digest mismatch (its content is sha256:%s)", what,
			l->path, want, hex);
}

/* Hash a whole blob and compare before anything of it is used. */
static int verify_fd(const struct layout *l, int fd, const char *what, const char *hex, struct ab_err *err)
{
	struct sha256_ctx ctx;
	sha256_init(&ctx);
	static uint8_t buf[1 << 16];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ab_error(err, errno, "%s: read blob sha256:%s", what, hex);
		if (n == 0)
			break;
		sha256_update(&ctx, (size_t)n, buf);
	}
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&ctx, sizeof d, d);
	char got[HEX_LEN + 1];
	to_hex(d, got);
	if (!streq(got, hex))
		return digest_mismatch(l, what, hex, d, err);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ab_error(err, errno, "%s: rewind blob sha256:%s", what, hex);
	return 0;
}

/* A small JSON blob (manifest, index, config), verified, then parsed. */
static int read_json_blob(const struct layout *l, yajl_val desc, const char *what, yajl_val *ret,
			  struct ab_err *err)
{
	char hex[HEX_LEN + 1];
	_cleanup_close_ int fd = -1;
	if (open_blob(l, desc, what, hex, &fd, err) < 0)
		return -1;
	if (verify_fd(l, fd, what, hex, err) < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ab_error(err, errno, "%s: blob sha256:%s", what, hex);
	if (st.st_size > JSON_MAX)
		return ab_error(err, 0, "%s: blob sha256:%s is larger than %u bytes", what, hex, JSON_MAX);
	size_t len = (size_t)st.st_size;
	_cleanup_free_ char *text = xmalloc(len + 1);
	if (read_all(fd, text, len) != (ssize_t)len)
		return ab_error(err, errno, "%s: read blob sha256:%s", what, hex);
	text[len] = 0;
	if (strlen(text) != len)
		return ab_error(err, 0, "%s: blob sha256:%s has a NUL byte: not JSON", what, hex);
	char name[128];
	snprintf(name, sizeof name, "%s (sha256:%.12s)", what, hex);
	return json_parse(text, name, ret, err);
}

/* ---------------------------------------------------------------- resolving the tag */

static bool type_in(const char *t, const char *const *list)
{
	for (; t && *list; list++)
		if (streq(t, *list))
			return true;
	return false;
}

static const char *const manifest_types[] = {
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.docker.distribution.manifest.v2+json", NULL,
};
static const char *const index_types[] = {
	"application/vnd.oci.image.index.v1+json",
	"application/vnd.docker.distribution.manifest.list.v2+json", NULL,
};
static const char *const config_types[] = {
	"application/vnd.oci.image.config.v1+json",
	"application/vnd.docker.container.image.v1+json", NULL,
};
static const char *const layer_types[] = {
	"application/vnd.oci.image.layer.v1.tar",
	"application/vnd.oci.image.layer.v1.tar+gzip",
	"application/vnd.oci.image.layer.v1.tar+zstd",
	"application/vnd.oci.image.layer.nondistributable.v1.tar",
	"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
	"application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
	"application/vnd.docker.image.rootfs.diff.tar.gzip", NULL,
};

/* The host's architecture as OCI names it. */
static const char *host_arch(struct utsname *u)
{
	static const char *const map[][2] = {
		{"x86_64", "amd64"}, {"aarch64", "arm64"}, {"i686", "386"}, {"i386", "386"},
		{"armv7l", "arm"}, {"ppc64le", "ppc64le"}, {"s390x", "s390x"}, {"riscv64", "riscv64"},
	};
	if (uname(u) < 0)
		return "amd64";
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (streq(u->machine, map[i][0]))
			return map[i][1];
	return u->machine;
}

static yajl_val manifests_of(yajl_val index)
{
	yajl_val m = json_get(index, "manifests");
	return YAJL_IS_ARRAY(m) ? m : NULL;
}

/* From an image index: the manifest for linux/<host arch>. */
static int pick_platform(const struct layout *l, yajl_val index, const char *what, yajl_val *ret,
			 struct ab_err *err)
{
	yajl_val ms = manifests_of(index);
	struct utsname u;
	const char *arch = host_arch(&u);
	for (size_t i = 0; ms && i < ms->u.array.len; i++) {
		yajl_val d = ms->u.array.values[i];
		yajl_val p = json_get(d, "platform");
		const char *os = jstr(p, "os"), *ar = jstr(p, "architecture");
		if (os && ar && streq(os, "linux") && streq(ar, arch) && type_in(jstr(d, "mediaType"), manifest_types)) {
			*ret = d;
			return 0;
		}
	}
	return ab_error(err, 0, "%s: no image for linux/%s in %s", what, arch, l->path);
}

/* index.json and the tag -> the manifest's descriptor (nested indexes narrowed to
 * the host's platform); *ret_tree: what to free. */
static int resolve_tag(const struct layout *l, const char *tag, yajl_val *ret_desc, yajl_val *ret_trees,
		       struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file_at(l->fd, "index.json", JSON_MAX, &text, &len, err) < 0)
		return ab_error(err, errno, "%s/index.json", l->path);
	char name[PATH_MAX + 16];
	snprintf(name, sizeof name, "%s/index.json", l->path);
	if (json_parse(text, name, &ret_trees[0], err) < 0)
		return -1;
	yajl_val ms = manifests_of(ret_trees[0]);
	if (!ms)
		return ab_error(err, 0, "%s: no \"manifests\" list", name);
	yajl_val found = NULL;
	size_t n_found = 0;
	for (size_t i = 0; i < ms->u.array.len; i++) {
		yajl_val d = ms->u.array.values[i];
		const char *ref = jstr(json_get(d, "annotations"), "org.opencontainers.image.ref.name");
		if (tag ? ref && streq(ref, tag) : true) {
			found = d;
			n_found++;
		}
	}
	if (!n_found && tag)
		return ab_error(err, 0, "%s: no image tagged \"%s\"", name, tag);
	if (!n_found)
		return ab_error(err, 0, "%s: no image in it", name);
	if (n_found > 1)
		return tag ? ab_error(err, 0, "%s: %zu images tagged \"%s\"", name, n_found, tag)
			   : ab_error(err, 0, "%s: %zu images: name one with a tag", name, n_found);
	const char *type = jstr(found, "mediaType");
	if (type_in(type, index_types)) {
		if (read_json_blob(l, found, "image index", &ret_trees[1], err) < 0)
			return -1;
		return pick_platform(l, ret_trees[1], "image index", ret_desc, err);
	}
	if (!type_in(type, manifest_types))
		return ab_error(err, 0, "%s: unsupported media type \"%s\" for \"%s\"", name, type ? type : "(none)",
				tag ? tag : "the image");
	*ret_desc = found;
	return 0;
}

/* ---------------------------------------------------------------- the config */

static void str_array(struct arena *a, yajl_val v, char ***ret, size_t *ret_n)
{
	*ret = NULL;
	*ret_n = 0;
	if (!YAJL_IS_ARRAY(v))
		return;
	*ret = arena_alloc(a, (v->u.array.len + 1) * sizeof **ret);
	for (size_t i = 0; i < v->u.array.len; i++)
		if (YAJL_IS_STRING(v->u.array.values[i]))
			(*ret)[(*ret_n)++] = arena_strdup(a, v->u.array.values[i]->u.string);
}

static void read_config(struct arena *a, yajl_val cfg, struct image_config *ic)
{
	yajl_val c = json_get(cfg, "config");
	str_array(a, json_get(c, "Env"), &ic->env, &ic->n_env);
	str_array(a, json_get(c, "Entrypoint"), &ic->entrypoint, &ic->n_entrypoint);
	str_array(a, json_get(c, "Cmd"), &ic->cmd, &ic->n_cmd);
	const char *s = jstr(c, "WorkingDir");
	ic->workdir = s && *s ? arena_strdup(a, s) : NULL;
	s = jstr(c, "User");
	ic->user = s && *s ? arena_strdup(a, s) : NULL;
}

/* ---------------------------------------------------------------- layers */

/* "./a/b/" -> "a/b"; "" for the root itself. NULL for an escape: an absolute path
 * or a ".." component. */
static char *clean_path(struct arena *a, const char *p)
{
	if (p[0] == '/')
		return NULL;
	while (p[0] == '.' && p[1] == '/')
		for (p += 2; *p == '/'; p++)
			;
	if (streq(p, "."))
		p = "";
	char *s = arena_strdup(a, p);
	size_t n = strlen(s);
	while (n && s[n - 1] == '/')
		s[--n] = 0;
	for (char *c = s; *c;) {
		size_t len = strcspn(c, "/");
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return NULL;
		c += len;
		while (*c == '/')
			c++;
	}
	return s;
}

/* Open directory `dir` (relative, "" = root) under rootfd without following any
 * symlink; -1 with errno when it is not there as a directory. */
static int open_dir_nofollow(int rootfd, const char *dir)
{
	int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", dir);
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		fd = next;
		errno = e;
	}
	return fd;
}

struct whiteout {
	char *dir;      /* relative, "" = root */
	char *name;     /* NULL: the directory is opaque */
};

/* A whiteout hides what the layers below have; applied before the layer's own
 * entries are written, so an opaque directory keeps what this layer puts in it. */
static int apply_whiteout(int rootfd, const struct whiteout *w, const char *what, struct ab_err *err)
{
	_cleanup_close_ int dfd = open_dir_nofollow(rootfd, w->dir);
	if (dfd < 0)
		return 0;       /* nothing below to hide */
	if (w->name) {
		if (faccessat(dfd, w->name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		if (rm_rf_at(dfd, w->name, err) < 0)
			return ab_wrap(err, "%s: whiteout %s/%s", what, w->dir, w->name);
		return 0;
	}
	int d2 = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	_cleanup_closedir_ DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	if (!d)
		return ab_error(err, errno, "%s: opaque directory %s", what, w->dir);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (rm_rf_at(dfd, de->d_name, err) < 0)
			return ab_wrap(err, "%s: opaque directory %s", what, w->dir);
	}
	return 0;
}

static int archive_fail(struct archive *ar, const char *what, const char *hex, const char *entry,
			struct ab_err *err)
{
	const char *msg = la.archive_error_string(ar);
	return ab_error(err, 0, "%s (blob sha256:%.12s)%s%s: %s", what, hex, entry ? ": " : "", entry ? entry : "",
			msg ? msg : "corrupt archive");
}

/* The next entry of a layer: 1 with *e set, 0 at its end, -1 (err set) when
 * the archive is damaged. */
static int next_entry(struct archive *ar, struct archive_entry **e, const char *what, const char *hex,
		      struct ab_err *err)
{
	int s = la.archive_read_next_header(ar, e);
	if (s == ARCHIVE_EOF)
		return 0;
	if (s < ARCHIVE_WARN)
		return archive_fail(ar, what, hex, NULL, err);
	return 1;
}

/* A reader of one layer blob: tar, under whatever compression libarchive knows.
 * Both passes read through it, so pass 1 checks exactly what pass 2 writes. */
static struct archive *open_layer(int fd, const char *what, const char *hex, struct ab_err *err)
{
	struct archive *ar = la.archive_read_new();
	la.archive_read_support_filter_all(ar);
	la.archive_read_support_format_tar(ar);
	if (la.archive_read_open_fd(ar, fd, 1 << 16) != ARCHIVE_OK) {
		archive_fail(ar, what, hex, NULL, err);
		la.archive_read_free(ar);
		return NULL;
	}
	return ar;
}

/* Pass 1: every header read (a corrupt archive fails here, before anything is
 * written), escapes refused, whiteouts collected. */
static int scan_layer(int fd, const char *what, const char *hex, struct arena *a, struct whiteout **ret,
		      size_t *ret_n, struct ab_err *err)
{
	struct archive *ar = open_layer(fd, what, hex, err);
	if (!ar)
		return -1;
	int r = -1;
	size_t cap = 16, n = 0;
	struct whiteout *w = arena_alloc(a, cap * sizeof *w);
	struct archive_entry *e;
	int s;
	while ((s = next_entry(ar, &e, what, hex, err)) > 0) {
		const char *name = la.archive_entry_pathname(e);
		char *p = name ? clean_path(a, name) : NULL;
		if (!p) {
			ab_error(err, 0, "%s (blob sha256:%.12s): entry \"%s\" leaves the root: refused", what, hex,
				 name ? name : "(no name)");
			goto out;
		}
		const char *link = la.archive_entry_hardlink(e);
		if (link && !clean_path(a, link)) {
			ab_error(err, 0, "%s (blob sha256:%.12s): hard link %s -> \"%s\" leaves the root: refused", what,
				 hex, p, link);
			goto out;
		}
		char *slash = strrchr(p, '/');
		const char *base = slash ? slash + 1 : p;
		if (strncmp(base, ".wh.", 4) == 0) {
			if (n == cap) {
				struct whiteout *bigger = arena_alloc(a, 2 * cap * sizeof *w);
				memcpy(bigger, w, cap * sizeof *w);
				w = bigger;
				cap *= 2;
			}
			w[n].dir = slash ? arena_strndup(a, p, (size_t)(slash - p)) : "";
			if (streq(base, ".wh..wh..opq"))
				w[n++].name = NULL;
			else if (strncmp(base, ".wh..wh.", 8) != 0 && base[4])
				w[n++].name = arena_strdup(a, base + 4);
			/* other .wh..wh.* entries are aufs bookkeeping: ignored */
		}
		if (la.archive_read_data_skip(ar) < ARCHIVE_WARN) {
			archive_fail(ar, what, hex, p, err);
			goto out;
		}
	}
	if (s < 0)
		goto out;
	*ret = w;
	*ret_n = n;
	r = 0;
out:
	la.archive_read_free(ar);
	return r;
}

/* Pass 2: the entries written under the root (the cwd), whiteout markers and
 * device nodes left out (the box may not use devices; its /dev is a tmpfs). */
static int extract_layer(int fd, const char *what, const char *hex, struct arena *a, struct ab_err *err)
{
	struct archive *ar = open_layer(fd, what, hex, err);
	if (!ar)
		return -1;
	struct archive *disk = la.archive_write_disk_new();
	int flags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_UNLINK |
		    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
		    ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;
	if (geteuid() == 0)
		flags |= ARCHIVE_EXTRACT_OWNER;
	la.archive_write_disk_set_options(disk, flags);
	int r = -1;
	struct archive_entry *e;
	int s;
	while ((s = next_entry(ar, &e, what, hex, err)) > 0) {
		char *p = clean_path(a, la.archive_entry_pathname(e));
		const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		unsigned type = la.archive_entry_filetype(e);
		if (!*p || strncmp(base, ".wh.", 4) == 0 || type == AE_IFCHR || type == AE_IFBLK) {
			la.archive_read_data_skip(ar);
			continue;
		}
		la.archive_entry_set_pathname(e, p);
		const char *link = la.archive_entry_hardlink(e);
		if (link)
			la.archive_entry_set_hardlink(e, clean_path(a, link));
		int x = la.archive_read_extract2(ar, e, disk);
		/* a warning is fine (a time or mode not set), but a hard link it could
		 * not make (its target missing, or behind a symlink) is a file lost */
		if (x < ARCHIVE_WARN || (x == ARCHIVE_WARN && link)) {
			const char *m1 = la.archive_error_string(disk);
			ab_error(err, 0, "%s (blob sha256:%.12s): %s: %s", what, hex, p,
				 m1 ? m1 : la.archive_error_string(ar) ? la.archive_error_string(ar) : "write failed");
			goto out;
		}
	}
	if (s < 0)
		goto out;
	/* directories' modes and times are set at close */
	if (la.archive_write_close(disk) != ARCHIVE_OK) {
		archive_fail(disk, what, hex, NULL, err);
		goto out;
	}
	r = 0;
out:
	la.archive_write_free(disk);
	la.archive_read_free(ar);
	return r;
}

static int unpack_layer(const struct layout *l, yajl_val desc, size_t i, int rootfd, struct ab_err *err)
{
	char what[64];
	snprintf(what, sizeof what, "layer %zu", i);
	const char *type = jstr(desc, "mediaType");
	if (!type_in(type, layer_types))
		return ab_error(err, 0, "%s: unsupported media type \"%s\"", what, type ? type : "(none)");
	char hex[HEX_LEN + 1];
	_cleanup_close_ int fd = -1;
	if (open_blob(l, desc, what, hex, &fd, err) < 0 || verify_fd(l, fd, what, hex, err) < 0)
		return -1;
	struct arena a = {0};
	struct whiteout *w;
	size_t n;
	int r = scan_layer(fd, what, hex, &a, &w, &n, err);
	for (size_t j = 0; r == 0 && j < n; j++)
		r = apply_whiteout(rootfd, &w[j], what, err);
	if (r == 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = ab_error(err, errno, "%s: rewind", what);
	if (r == 0)
		r = extract_layer(fd, what, hex, &a, err);
	arena_free(&a);
	return r;
}

/* Every layer into the directory at rootfd, in order. libarchive writes relative to
 * the working directory: it is the root while this runs. */
static int unpack_layers(const struct layout *l, yajl_val layers, int rootfd, struct ab_err *err)
{
	_cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0)
		return ab_error(err, errno, "open the working directory");
	if (fchdir(rootfd) < 0)
		return ab_error(err, errno, "chdir into the unpack directory");
	int r = 0;
	size_t n = layers->u.array.len;
	for (size_t i = 0; r == 0 && i < n; i++) {
		/* the first run of an image waits on this: say so, layer by layer */
		yajl_val size = json_get(layers->u.array.values[i], "size");
		double mib = YAJL_IS_INTEGER(size) ? (double)YAJL_GET_INTEGER(size) / (1 << 20) : 0;
		log_progress("unpacking the image %s (once; cached for the next runs): layer %zu of %zu, %.1f MiB",
			     l->path, i + 1, n, mib);
		r = unpack_layer(l, layers->u.array.values[i], i, rootfd, err);
	}
	if (fchdir(cwd) < 0 && r == 0)
		r = ab_error(err, errno, "chdir back");
	return r;
}

/* ---------------------------------------------------------------- the cache */

/* .tmp-PID-HEX of an unpack whose process is gone (killed mid-way): removed. */
static void sweep_temps(int cfd)
{
	int d2 = fcntl(cfd, F_DUPFD_CLOEXEC, 3);
	_cleanup_closedir_ DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		int pid;
		if (sscanf(de->d_name, ".tmp-%d-", &pid) != 1 || pid <= 0)
			continue;
		if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		struct ab_err e;
		(void)rm_rf_at(cfd, de->d_name, &e);
	}
}

static int unpack_into_cache(const struct layout *l, yajl_val layers, const char *cache_dir, int cfd,
			     const char *hex, struct ab_err *err)
{
	sweep_temps(cfd);
	char tmp[HEX_LEN + 32];
	snprintf(tmp, sizeof tmp, ".tmp-%d-%s", (int)getpid(), hex);
	if (mkdirat(cfd, tmp, 0755) < 0)
		return ab_error(err, errno, "mkdir %s/%s", cache_dir, tmp);
	int r;
	{
		_cleanup_close_ int rootfd = openat(cfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (rootfd < 0)
			r = ab_error(err, errno, "open %s/%s", cache_dir, tmp);
		else if (fchmod(rootfd, 0755) < 0)
			r = ab_error(err, errno, "chmod %s/%s", cache_dir, tmp);
		else
			r = unpack_layers(l, layers, rootfd, err);
		/* on disk before the name says it is complete */
		if (r == 0 && syncfs(rootfd) < 0)
			r = ab_error(err, errno, "sync %s/%s", cache_dir, tmp);
	}
	if (r == 0 && renameat(cfd, tmp, cfd, hex) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			r = ab_error(err, errno, "rename %s/%s to %s", cache_dir, tmp, hex);
		/* else another run unpacked the same image first: use its copy */
	} else if (r == 0) {
		return 0;
	}
	struct ab_err e;
	if (rm_rf_at(cfd, tmp, &e) < 0 && r == 0)
		r = ab_error(err, 0, "%s", e.msg);
	return r;
}

int image_prepare(const char *layout, const char *tag, const char *cache_dir, struct arena *a,
		  char **ret_rootfs, struct image_config *ret_config, bool *ret_cached,
		  struct ab_err *err)
{
	struct layout l = {.path = layout, .fd = -1, .a = a};
	yajl_val trees[2] = {NULL, NULL}, manifest = NULL, config = NULL, desc = NULL;
	_cleanup_close_ int cfd = -1;
	int r = -1;
	l.fd = open(layout, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l.fd < 0) {
		ab_error(err, errno, "image %s", layout);
		goto out;
	}
	if (faccessat(l.fd, "oci-layout", F_OK, 0) < 0) {
		ab_error(err, errno, "image %s/oci-layout", layout);
		goto out;
	}

	/* 1. tag -> manifest -> config and layers, every blob checked */
	if (resolve_tag(&l, tag, &desc, trees, err) < 0)
		goto out;
	char mhex[HEX_LEN + 1];
	if (digest_hex(jstr(desc, "digest"), "manifest", mhex, err) < 0)
		goto out;
	if (read_json_blob(&l, desc, "manifest", &manifest, err) < 0)
		goto out;
	yajl_val cdesc = json_get(manifest, "config"), layers = json_get(manifest, "layers");
	if (!YAJL_IS_OBJECT(cdesc) || !YAJL_IS_ARRAY(layers)) {
		ab_error(err, 0, "manifest sha256:%.12s: no config or no layers", mhex);
		goto out;
	}
	if (layers->u.array.len > MAX_LAYERS) {
		ab_error(err, 0, "manifest sha256:%.12s: more than %d layers", mhex, MAX_LAYERS);
		goto out;
	}
	const char *ctype = jstr(cdesc, "mediaType");
	if (!type_in(ctype, config_types)) {
		ab_error(err, 0, "config: unsupported media type \"%s\"", ctype ? ctype : "(none)");
		goto out;
	}
	if (read_json_blob(&l, cdesc, "config", &config, err) < 0)
		goto out;
	memset(ret_config, 0, sizeof *ret_config);
	read_config(a, config, ret_config);

	/* 2. the cache, by manifest digest */
	if (mkdir_p(cache_dir, 0700, err) < 0)
		goto out;
	cfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0) {
		ab_error(err, errno, "open %s", cache_dir);
		goto out;
	}
	struct stat st;
	*ret_cached = fstatat(cfd, mhex, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
	if (!*ret_cached) {
		if (la_load(err) < 0)
			goto out;
		if (unpack_into_cache(&l, layers, cache_dir, cfd, mhex, err) < 0)
			goto out;
	}
	char real[PATH_MAX];
	if (!realpath(cache_dir, real)) {
		ab_error(err, errno, "%s", cache_dir);
		goto out;
	}
	*ret_rootfs = arena_printf(a, "%s/%s", real, mhex);
	r = 0;
out:
	if (r < 0)
		ab_wrap(err, "image %s%s%s", layout, tag ? ":" : "", tag ? tag : "");
	json_free(trees[0]);
	json_free(trees[1]);
	json_free(manifest);
	json_free(config);
	if (l.fd >= 0)
		close(l.fd);
	return r;
}
