/* A cache of compiled seccomp programs under the state root, so the agent profile
 * and an engine's profile are compiled by libseccomp once per host, not on every
 * create and exec. The key is the SHA-256 of everything the program depends on —
 * the profile, libseccomp's version, the machine and the kernel — so a profile an
 * attacker writes can never collide with another's; each file carries the SHA-256
 * of its program, checked on every load. The directory is root-only (0700). */
#include "seccomp.h"
#include "log.h"
#include "sha256.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libseccomp.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#define CACHE_MAGIC "ABSECC01"
/* what a cached program was made by, besides libseccomp: a change to
 * bpf_shorten.c or to the ENOSYS stub (seccomp_enosys.c) changes this, so no
 * program made earlier is reused */
#define SECCOMP_COMPILER_TAG "short1-enosys1"
#define CACHE_MAX_INSNS 65535

struct cache_header {
	char magic[8];
	uint32_t flags;
	uint32_t notify;
	uint32_t len;           /* instructions */
	uint32_t reserved;
	uint8_t digest[32];     /* of the instructions */
};

static void hash_str(struct sha256 *h, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
	sha256_update(h, &n, sizeof n);
	if (s)
		sha256_update(h, s, n);
}

static void hash_u64(struct sha256 *h, uint64_t v)
{
	sha256_update(h, &v, sizeof v);
}

static void hash_strs(struct sha256 *h, char *const *v, size_t n)
{
	hash_u64(h, n);
	for (size_t i = 0; i < n; i++)
		hash_str(h, v[i]);
}

/* Every field of the profile, each length-prefixed: two different profiles never
 * feed the same bytes. */
static void cache_key(const struct oci_seccomp *s, char out[65])
{
	struct sha256 h;
	sha256_init(&h);
	hash_str(&h, "agentbox seccomp cache v1");
	hash_str(&h, SECCOMP_COMPILER_TAG);
	const struct scmp_version *v = seccomp_version();
	hash_u64(&h, ((uint64_t)v->major << 32) | ((uint64_t)v->minor << 16) | v->micro);
	struct utsname u;
	if (uname(&u) == 0) {
		hash_str(&h, u.machine);
		hash_str(&h, u.release);
	}
	hash_u64(&h, s->default_action);
	hash_u64(&h, s->has_default_errno_ret);
	hash_u64(&h, s->default_errno_ret);
	hash_strs(&h, s->architectures, s->n_architectures);
	hash_strs(&h, s->flags, s->n_flags);
	hash_str(&h, s->listener_path);
	hash_str(&h, s->listener_metadata);
	hash_u64(&h, s->n_syscalls);
	for (size_t i = 0; i < s->n_syscalls; i++) {
		const struct oci_seccomp_syscall *sc = &s->syscalls[i];
		hash_strs(&h, sc->names, sc->n_names);
		hash_u64(&h, sc->action);
		hash_u64(&h, sc->has_errno_ret);
		hash_u64(&h, sc->errno_ret);
		hash_u64(&h, sc->n_args);
		for (size_t k = 0; k < sc->n_args; k++) {
			hash_u64(&h, sc->args[k].index);
			hash_u64(&h, sc->args[k].value);
			hash_u64(&h, sc->args[k].value_two);
			hash_u64(&h, sc->args[k].op);
		}
	}
	uint8_t d[32];
	sha256_final(&h, d);
	sha256_hex(d, out);
}

static void digest_of(const struct sock_filter *f, size_t n, uint8_t out[32])
{
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, f, n * sizeof *f);
	sha256_final(&h, out);
}

static bool cache_read(int dirfd, const char *name, struct seccomp_prog *ret)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	struct cache_header hdr;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    read_all(fd, &hdr, sizeof hdr) != (ssize_t)sizeof hdr || memcmp(hdr.magic, CACHE_MAGIC, 8) != 0 ||
	    hdr.len == 0 || hdr.len > CACHE_MAX_INSNS ||
	    (uint64_t)st.st_size != sizeof hdr + (uint64_t)hdr.len * sizeof(struct sock_filter))
		return false;
	struct sock_filter *f = xmalloc(hdr.len * sizeof *f);
	uint8_t d[32];
	if (read_all(fd, f, hdr.len * sizeof *f) != (ssize_t)(hdr.len * sizeof *f) ||
	    (digest_of(f, hdr.len, d), memcmp(d, hdr.digest, 32) != 0)) {
		free(f);
		return false;
	}
	*ret = (struct seccomp_prog){.filter = f, .len = (unsigned short)hdr.len, .flags = hdr.flags,
				     .notify = hdr.notify != 0};
	return true;
}

/* An entry is written once (per profile, binary, libseccomp and kernel) and
 * then only read, so nothing tells when it stops being used: upgrades leave
 * old ones behind. Whenever a new entry is written, entries (and leftover
 * temporary files) written more than CACHE_MAX_AGE_S ago are removed; one
 * still in use costs a compile at its next use, once a month. */
#define CACHE_MAX_AGE_S (30L * 24 * 3600)

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

static void cache_collect(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	time_t cutoff = time(NULL) - CACHE_MAX_AGE_S;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!has_suffix(e->d_name, ".bpf") && !has_suffix(e->d_name, ".bpf.tmp"))
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_mtime < cutoff && unlinkat(dirfd, e->d_name, 0) == 0)
			log_debug("seccomp cache: removed %s, written more than 30 days ago", e->d_name);
	}
	closedir(d);
}

static void cache_write(int dirfd, const char *name, const struct seccomp_prog *p)
{
	struct cache_header hdr = {.flags = p->flags, .notify = p->notify, .len = p->len};
	memcpy(hdr.magic, CACHE_MAGIC, 8);
	digest_of(p->filter, p->len, hdr.digest);
	size_t size = sizeof hdr + p->len * sizeof *p->filter;
	_cleanup_free_ char *buf = xmalloc(size);
	memcpy(buf, &hdr, sizeof hdr);
	memcpy(buf + sizeof hdr, p->filter, p->len * sizeof *p->filter);
	struct ab_err e;
	if (write_file_atomic_at(dirfd, name, buf, size, 0600, &e) < 0)
		log_debug("seccomp cache: %s", e.msg);
	cache_collect(dirfd);
}

/* Without a cache the program is libseccomp's, not shortened: shortening costs more
 * CPU (0.4 ms for the agent profile, 1.8 ms for default) than the shorter
 * program saves at its one load (0.13 / 0.31 ms). It pays once it is cached. */
int seccomp_compile_cached(const struct oci_seccomp *s, const char *cache_dir,
			   struct seccomp_prog *ret, struct ab_err *err)
{
	if (!cache_dir)
		return seccomp_compile_unshortened(s, ret, err);
	if (mkdir(cache_dir, 0700) < 0 && errno != EEXIST)
		return seccomp_compile_unshortened(s, ret, err);
	_cleanup_close_ int dirfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	/* only a directory nobody else can write may feed filters to containers */
	if (dirfd < 0 || fstat(dirfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		log_debug("seccomp cache: %s is not a private directory: not used", cache_dir);
		return seccomp_compile_unshortened(s, ret, err);
	}
	char key[65], name[80];
	cache_key(s, key);
	snprintf(name, sizeof name, "%s.bpf", key);
	if (cache_read(dirfd, name, ret))
		return 0;
	if (seccomp_compile(s, ret, err) < 0)
		return -1;
	cache_write(dirfd, name, ret);
	return 0;
}

/* FNV-1a over the text's 64-bit words, mixed (the tail byte by byte): a byte at a
 * time cost ~95,000 instructions per create for the agent profile, 7% of all
 * the runtime ran before its clone. */
static uint64_t text_hash(const char *text, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, text + i, 8);
		h = (h ^ w) * 1099511628211ULL;
		h ^= h >> 29;   /* a multiply carries only upwards: bring the high bits down */
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
	return h;
}

/* A shipped profile: its text is part of this binary, so the key need not resist
 * collisions by an attacker, only tell binaries apart: a hash of the text
 * (text_hash), its length, libseccomp, machine and kernel. On a hit the
 * profile is not even parsed. */
int seccomp_builtin_compile_cached(const char *name, const char *cache_dir, struct seccomp_prog *ret,
				   struct ab_err *err)
{
	size_t len;
	const char *text = seccomp_builtin_profile_text(name, &len);
	_cleanup_close_ int dirfd = -1;
	char file[160] = "";
	if (text && cache_dir && (mkdir(cache_dir, 0700) == 0 || errno == EEXIST)) {
		dirfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (dirfd >= 0 && fstat(dirfd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 077)) {
			uint64_t h = text_hash(text, len);
			const struct scmp_version *v = seccomp_version();
			struct utsname u = {0};
			(void)uname(&u);
			/* "builtin-" never collides with the 64-hex keys of engine profiles */
			snprintf(file, sizeof file, "builtin-%s-%016llx-%zu-%u.%u.%u-%s-%.16s-%.40s.bpf", name,
				 (unsigned long long)h, len, v->major, v->minor, v->micro, SECCOMP_COMPILER_TAG,
				 u.machine, u.release);
			for (char *p = file; *p; p++)
				if (*p == '/')
					*p = '_';
			if (cache_read(dirfd, file, ret))
				return 0;
		}
	}
	struct arena a = {0};
	struct oci_seccomp *s;
	int r = seccomp_builtin_profile(name, &a, &s, err);
	if (r == 0)
		r = file[0] ? seccomp_compile(s, ret, err) : seccomp_compile_unshortened(s, ret, err);
	if (r == 0 && file[0])
		cache_write(dirfd, file, ret);
	arena_free(&a);
	return r;
}
