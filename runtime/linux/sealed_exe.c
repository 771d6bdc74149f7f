/* CVE-2019-5736: a container whose entrypoint is "#!/proc/self/exe" makes the kernel
 * run /proc/self/exe of the init — the runtime's binary, since init is a clone of
 * the runtime — and from inside it can open that binary for writing.
 *
 * So no process that a container can see may be an image of the host's binary.
 * Each child that enters a container (init, exec's process) first detaches
 * itself: its code and constants are mapped again from a sealed memfd copy, what
 * was written (RELRO, .data) moves to anonymous memory, and PR_SET_MM_MAP points
 * /proc/self/exe at the copy. The copy is one per host where we may mount: a file
 * in EXE_CACHE_DIR bind-mounted read-only onto itself (see host_copy_open), else a
 * sealed memfd per child. Where that prctl is missing (no
 * CONFIG_CHECKPOINT_RESTORE) or not allowed, the runtime re-executes itself from
 * the sealed copy before it starts anything, as runc does. A binary on a
 * read-only mount needs neither: nothing can open it for writing. */
#include "sealed_exe.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern bool util_force_fallbacks;

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

static bool is_sealed(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & SEALS) == SEALS;
}

/* How much of the binary execve needs: everything up to the end of the last
 * segment (and of the program headers). Section headers and debug info (-g makes
 * them two thirds of the file) are only for debuggers; copying them cost about
 * 2 ms of every run. 0 when the file does not look like our own ELF: copy it all. */
static off_t loadable_size(int fd, off_t file_size, Elf64_Ehdr *eh)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)fd, (void)file_size, (void)eh;
	return 0; /* the sanitizers' symbolizer reads the sections of /proc/self/exe */
#else
	if (pread(fd, eh, sizeof *eh, 0) != (ssize_t)sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phnum > 64)
		return 0;
	Elf64_Phdr ph[64];
	size_t ph_bytes = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (pread(fd, ph, ph_bytes, (off_t)eh->e_phoff) != (ssize_t)ph_bytes)
		return 0;
	uint64_t end = eh->e_phoff + ph_bytes;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_filesz > 0 && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end < (uint64_t)file_size ? (off_t)end : 0;
#endif
}

/* Copy what execve and mmap need of the binary open as src into dst. */
static int copy_loadable(int dst, int src, off_t file_size, struct ab_err *err)
{
	Elf64_Ehdr eh;
	off_t size = loadable_size(src, file_size, &eh);
	bool trimmed = size > 0;
	if (!trimmed)
		size = file_size;
	off_t off = 0;
	while (off < size) {
		ssize_t n = sendfile(dst, src, &off, (size_t)(size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ab_error(err, n < 0 ? errno : EIO, "copy the runtime binary");
	}
	if (trimmed) {
		/* the copy ends before the section headers: say there are none */
		eh.e_shoff = 0;
		eh.e_shnum = 0;
		eh.e_shstrndx = SHN_UNDEF;
		if (pwrite(dst, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
			return ab_error(err, errno, "copy the runtime binary");
	}
	return 0;
}

/* A sealed memfd holding what execve and mmap need of the binary open as src. */
static int sealed_copy(int src, off_t file_size, struct ab_err *err)
{
	int mfd = memfd_create("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return ab_error(err, errno, "memfd_create");
	if (copy_loadable(mfd, src, file_size, err) < 0) {
		ab_wrap(err, "to a sealed memfd");
		goto fail;
	}
	if (fcntl(mfd, F_ADD_SEALS, SEALS) < 0) {
		ab_error(err, errno, "seal the runtime's memfd");
		goto fail;
	}
	return mfd;
fail:
	close(mfd);
	return -1;
}

/* Set by sealed_exe_ensure: this process runs the host's binary, and each child
 * that enters a container detaches itself from it (sealed_exe_detach). The
 * binary stays open for them: a child opening /proc/self/exe again pays for it
 * on the critical path of create. */
static bool detach_in_children;
static int host_exe_fd = -1;
static struct stat host_exe_st;
/* the host's read-only copy (host_copy_open), opened by sealed_exe_prepare */
static int host_copy_fd = -1;

static bool on_readonly_mount(int fd)
{
	struct statvfs vfs;
	return fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
}

/* Other builds whose copies stay beside the newest one's: a host running two
 * builds in turn (an upgrade under way, an engine's runtime and a user's kit
 * binary, a benchmark against an older build) would otherwise make a copy
 * and mount it at every change of build. */
#define OTHER_COPIES_KEPT 3

struct old_copy {
	char name[NAME_MAX + 1];
	struct timespec made;
};

static int by_newest(const void *a, const void *b)
{
	const struct timespec *x = &((const struct old_copy *)a)->made, *y = &((const struct old_copy *)b)->made;
	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? 1 : -1;
	return x->tv_nsec < y->tv_nsec ? 1 : x->tv_nsec > y->tv_nsec ? -1 : 0;
}

/* Other builds' copies (EXE_CACHE_DIR, see host_copy_open) but the newest few,
 * and the half-made copies of creators that were killed. */
static void host_copy_prune(int dir_fd, const char *keep)
{
	DIR *d = fdopendir(dir_fd);
	if (!d) {
		close(dir_fd);
		return;
	}
	struct old_copy *old = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		/* the half-made copy of a creator that was killed */
		if (strncmp(de->d_name, ".new-", 5) == 0) {
			int pid = atoi(de->d_name + 5);
			if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
				(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		struct stat st;
		if (strncmp(de->d_name, "agentbox-", 9) != 0 || streq(de->d_name, keep) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			old = xrealloc(old, cap * sizeof *old);
		}
		snprintf(old[n].name, sizeof old[n].name, "%s", de->d_name);
		old[n++].made = st.st_ctim;     /* renamed into place: no later change */
	}
	if (n > 1)
		qsort(old, n, sizeof *old, by_newest);
	for (size_t i = OTHER_COPIES_KEPT; i < n; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, EXE_CACHE_DIR "/%s", old[i].name);
		/* a runtime still running an old build keeps its pages: mappings
		 * and open files outlive the lazy unmount */
		while (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			;
		if (unlinkat(dirfd(d), old[i].name, 0) < 0 && errno != ENOENT)
			log_debug("sealed exe: remove old copy %s: %m", path);
	}
	free(old);
	closedir(d);
}

/* Each new child used to copy our 2 MiB into a memfd of its own: ~0.6 ms of
 * every create and exec, and fresh pages each time. One copy per host instead,
 * in EXE_CACHE_DIR, each file bind-mounted read-only onto itself: opening it
 * for writing fails (EROFS) for everyone, and a container cannot remount a
 * mount of the host's namespace. The page cache of that one file then backs
 * the code of every container's init. Named by the binary's identity, so a new
 * build gets its own; when it is made, the others but the newest few are
 * unmounted and removed.
 * -1 where it cannot be had (no right to mount, a foreign directory): the
 * memfd per child then. */
void exe_identity(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "agentbox-%llx-%llx-%llx-%llx.%lx-%llx.%lx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
		 (unsigned long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		 (unsigned long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

static int host_copy_open(int src, const struct stat *st)
{
	char name[128], path[PATH_MAX], tmp[PATH_MAX];
	exe_identity(st, name, sizeof name);
	snprintf(path, sizeof path, EXE_CACHE_DIR "/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && on_readonly_mount(fd))
		return fd;
	if (fd >= 0)
		close(fd);
	/* ours alone: root's, and nobody else may write into it */
	if (mkdir(EXE_CACHE_DIR, 0700) < 0 && errno != EEXIST)
		return -1;
	int dirfd = open(EXE_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct stat ds;
	if (dirfd < 0 || fstat(dirfd, &ds) < 0 || ds.st_uid != 0 || (ds.st_mode & 022)) {
		if (dirfd >= 0)
			close(dirfd);
		log_debug("sealed exe: %s is not root's alone: a memfd copy per child", EXE_CACHE_DIR);
		return -1;
	}
	/* Made afresh, under a name of its own, then renamed over the path: a file
	 * found there unmounted is not trusted (a creator that died before
	 * mounting it, or one written before a crash of a host whose /run is on
	 * disk). Renaming over a copy another runtime has mounted meanwhile fails
	 * (EBUSY): its copy serves from the next container on. */
	snprintf(tmp, sizeof tmp, EXE_CACHE_DIR "/.new-%d", (int)getpid());
	int w = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0555);
	struct ab_err e;
	bool made = w >= 0 && copy_loadable(w, src, st->st_size, &e) == 0;
	if (w >= 0 && close(w) < 0)
		made = false;
	if (!made || rename(tmp, path) < 0) {
		if (w >= 0)
			(void)unlink(tmp);
		close(dirfd);
		return -1;
	}
	host_copy_prune(dirfd, name);
	/* read-only and executable: a remount sets exactly the flags given, so a
	 * noexec /run does not carry over */
	if (mount(path, path, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0) {
		log_debug("sealed exe: mount %s read-only: %m (a memfd copy per child)", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && on_readonly_mount(fd))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* PR_SET_MM_MAP can point /proc/self/exe elsewhere: the kernel has it
 * (CONFIG_CHECKPOINT_RESTORE) and we may use it (CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE, here in our own user namespace). */
static bool exe_switch_allowed(void)
{
	unsigned int size = 0;
	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, (unsigned long)&size, 0, 0) < 0 || size != sizeof(struct prctl_mm_map))
		return false;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	uint64_t effective = data[0].effective | (uint64_t)data[1].effective << 32;
	return effective & (1ULL << CAP_SYS_ADMIN | 1ULL << CAP_CHECKPOINT_RESTORE);
}

int sealed_exe_ensure(char **argv, struct ab_err *err)
{
	_cleanup_close_ int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return ab_error(err, errno, "open /proc/self/exe");
	if (is_sealed(src))
		return 0;       /* re-executed from the sealed copy already */
	/* On a read-only mount (an immutable /usr, or `mount --bind -o ro`) nobody in
	 * a container can open the binary for writing: EROFS, and the container cannot
	 * remount the host's mount. No copy and no second exec then. */
	if (on_readonly_mount(src)) {
		log_debug("runtime binary is on a read-only mount: no sealed copy needed");
		return 0;
	}
	/* a second execve of ourselves costs ~2.5 ms on a VM, and a DNS sentry
	 * forked from a re-executed runtime keeps its copy in memory: detaching each
	 * child costs less and happens while the parent sets up the cgroups */
	struct stat st;
	if (fstat(src, &st) < 0)
		return ab_error(err, errno, "stat /proc/self/exe");
	if (!util_force_fallbacks && exe_switch_allowed()) {
		detach_in_children = true;
		host_exe_st = st;
		host_exe_fd = src;
		src = -1;
		return 0;
	}
	_cleanup_close_ int mfd = sealed_copy(src, st.st_size, err);
	if (mfd < 0)
		return -1;
	syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
	return ab_error(err, errno, "re-execute from the sealed memfd");
}

struct exe_range {
	uintptr_t start, end;
	off_t offset;
	int prot;
	bool written;   /* holds what the loader or the program wrote: not the file's bytes */
};

/* The file-backed pages of our own binary as loaded, from its program headers:
 * cheaper than reading /proc/self/maps. RELRO is read-only now but was written
 * by the dynamic loader; the rest of its segment is .data. */
static size_t exe_ranges(struct exe_range *r, size_t max)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	size_t phnum = getauxval(AT_PHNUM), n = 0;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base = 0, relro_end = 0;
#define PAGE_DOWN(x) ((x) & ~(page - 1))
#define PAGE_UP(x) PAGE_DOWN((x) + page - 1)
	for (size_t i = 0; ph && i < phnum; i++)
		if (ph[i].p_type == PT_PHDR)
			base = (uintptr_t)ph - ph[i].p_vaddr;
	for (size_t i = 0; ph && i < phnum; i++)
		if (ph[i].p_type == PT_GNU_RELRO)
			relro_end = PAGE_DOWN(base + ph[i].p_vaddr + ph[i].p_memsz);
	for (size_t i = 0; ph && i < phnum && n + 2 <= max; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_filesz == 0)
			continue;
		uintptr_t start = PAGE_DOWN(base + ph[i].p_vaddr), end = PAGE_UP(base + ph[i].p_vaddr + ph[i].p_filesz);
		off_t offset = (off_t)(ph[i].p_offset - (base + ph[i].p_vaddr - start));
		int prot = (ph[i].p_flags & PF_R ? PROT_READ : 0) | (ph[i].p_flags & PF_W ? PROT_WRITE : 0) |
			   (ph[i].p_flags & PF_X ? PROT_EXEC : 0);
		bool written = ph[i].p_flags & PF_W;
		if (written && relro_end > start && relro_end <= end) {
			r[n++] = (struct exe_range){start, relro_end, offset, prot & ~PROT_WRITE, true};
			offset += (off_t)(relro_end - start);
			start = relro_end;
		}
		if (start < end)
			r[n++] = (struct exe_range){start, end, offset, prot, written};
	}
#undef PAGE_DOWN
#undef PAGE_UP
	return n;
}

/* Word by word and uninstrumented: the source holds the sanitizers' redzones. */
__attribute__((no_sanitize_address)) static void copy_words(volatile uint64_t *dst, const volatile uint64_t *src,
							    size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/* Replace the written ranges v[0..n) (adjacent: RELRO, then .data) by an anonymous
 * copy of what they hold now: one new mapping moved over them in one step, then
 * each part given back its protection. Each mm call costs a TLB flush, and on a
 * VM a hypervisor exit, so fewer of them is what makes this cheap. */
static int move_to_anonymous(const struct exe_range *v, size_t n)
{
	uintptr_t start = v[0].start, end = v[n - 1].end;
	size_t len = end - start;
	/* populated: one call, not a page fault per page copied */
	void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (tmp == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i].prot & PROT_READ) && mprotect((void *)v[i].start, v[i].end - v[i].start, v[i].prot | PROT_READ) < 0)
			goto fail;
		copy_words((volatile uint64_t *)((char *)tmp + (v[i].start - start)), (const void *)v[i].start,
			   (v[i].end - v[i].start) / sizeof(uint64_t));
	}
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (v[i].prot != (PROT_READ | PROT_WRITE) && mprotect((void *)v[i].start, v[i].end - v[i].start, v[i].prot) < 0)
			return -1;
	return 0;
fail:
	munmap(tmp, len);
	return -1;
}

/* The fields of PR_SET_MM_MAP other than exe_fd and brk, as they are: from
 * /proc/self/stat. A child has the same as its parent. */
static int current_mm_map(struct prctl_mm_map *m, struct ab_err *err)
{
	char buf[1024];
	_cleanup_close_ int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (n <= 0)
		return ab_error(err, errno, "read /proc/self/stat");
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return ab_error(err, 0, "/proc/self/stat: unexpected format");
	/* the fields after the name, each a number but the state (read as 0,
	 * as strtoull would): digits by hand, 50 strtoull calls cost more */
	unsigned long long f[53] = {0};
	int field = 3;
	for (const char *q = p + 1; field < 53;) {
		while (*q == ' ' || *q == '\n')
			q++;
		if (!*q)
			break;
		unsigned long long v = 0;
		for (; *q >= '0' && *q <= '9'; q++)
			v = v * 10 + (unsigned long long)(*q - '0');
		while (*q && *q != ' ' && *q != '\n')
			q++;
		f[field++] = v;
	}
	if (field < 52)
		return ab_error(err, 0, "/proc/self/stat: only %d fields", field - 1);
	*m = (struct prctl_mm_map){
		.start_code = f[26], .end_code = f[27], .start_stack = f[28],
		.start_data = f[45], .end_data = f[46], .start_brk = f[47],
		.arg_start = f[48], .arg_end = f[49], .env_start = f[50], .env_end = f[51],
	};
	return 0;
}

/* Read by the parent just before it clones a child that will detach. */
static struct prctl_mm_map parent_mm_map;
static bool parent_mm_map_read;

int sealed_exe_prepare(struct ab_err *err)
{
	if (!detach_in_children || parent_mm_map_read)
		return 0;
	if (current_mm_map(&parent_mm_map, err) < 0)
		return -1;
	parent_mm_map_read = true;
	if (!util_force_fallbacks && host_exe_fd >= 0)
		host_copy_fd = host_copy_open(host_exe_fd, &host_exe_st);
	return 0;
}

int sealed_exe_detach(struct ab_err *err)
{
	if (!detach_in_children)
		return 0;
	/* ours from here: neither may reach the container */
	_cleanup_close_ int src = host_exe_fd;
	host_exe_fd = -1;
	_cleanup_close_ int mfd = host_copy_fd;
	host_copy_fd = -1;
	if (mfd < 0 && (mfd = sealed_copy(src, host_exe_st.st_size, err)) < 0)
		return -1;
	struct exe_range v[16];
	size_t n = exe_ranges(v, ARRAY_SIZE(v));
	if (n == 0)
		return ab_error(err, 0, "detach from the runtime binary: no program headers");
	for (size_t i = 0; i < n;) {
		size_t k = 1;
		int r;
		if (v[i].written) {
			while (i + k < n && v[i + k].written && v[i + k].start == v[i + k - 1].end)
				k++;
			r = move_to_anonymous(&v[i], k);
		} else {
			/* code and constants: the same bytes from the copy, so nothing is
			 * copied twice; mapping over the code running now is fine, it does
			 * not change */
			r = mmap((void *)v[i].start, v[i].end - v[i].start, v[i].prot, MAP_PRIVATE | MAP_FIXED, mfd,
				 v[i].offset) == MAP_FAILED ? -1 : 0;
		}
		if (r < 0)
			return ab_error(err, errno, "detach from the runtime binary: remap %#lx-%#lx",
					(unsigned long)v[i].start, (unsigned long)v[i + k - 1].end);
		i += k;
	}
	struct prctl_mm_map m = parent_mm_map;
	if (!parent_mm_map_read && current_mm_map(&m, err) < 0)
		return -1;
	m.brk = (uint64_t)syscall(SYS_brk, 0);
	m.exe_fd = (uint32_t)mfd;
	if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&m, sizeof m, 0) < 0)
		return ab_error(err, errno, "detach from the runtime binary: point /proc/self/exe at a read-only copy");
	return 0;
}
