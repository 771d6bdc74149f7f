/* Small utilities every layer uses: ownership cleanup, an arena for parsed
 * documents, whole-file I/O, atomic writes, and string helpers. */
#ifndef AGENTBOX_UTIL_H
#define AGENTBOX_UTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define streq(a, b) (strcmp((a), (b)) == 0)

static inline void cleanup_freep(void *p) { free(*(void **)p); }
static inline void cleanup_closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void cleanup_fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void cleanup_closedirp(DIR **d) { if (*d) closedir(*d); }

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(cleanup_closedirp)))

/* Hand ownership on: returns the value and leaves NULL / -1 behind. */
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })
#define TAKE_FD(fd) ({ int _tf = (fd); (fd) = -1; _tf; })

/* Allocation failure is not recoverable in a short-lived CLI: abort loudly. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Arena: every allocation of a parsed document lives here and is freed at once. */
struct arena_block;
struct arena {
	struct arena_block *head;
};
void *arena_alloc(struct arena *a, size_t n);          /* zeroed */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(struct arena *a);

/* Read a whole file (at most max_size bytes, NUL-terminated). */
int read_file_at(int dirfd, const char *path, size_t max_size, char **ret_buf, size_t *ret_len,
		 struct ab_err *err);
/* Write a file: to path.tmp, fsync, rename. */
int write_file_atomic_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
			 struct ab_err *err);
/* The same without the fsync: readers see the old file or the new one,
 * whole, but a crash of the machine may lose it (for what only matters
 * while the machine runs). */
int write_file_replace_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
			  struct ab_err *err);
/* Write data to an existing file (e.g. cgroup or proc knobs), no O_CREAT. */
int write_file_at(int dirfd, const char *path, const char *data, size_t len, struct ab_err *err);
int mkdir_p(const char *path, mode_t mode, struct ab_err *err);
/* Remove a directory tree without following symlinks. */
int rm_rf_at(int dirfd, const char *path, struct ab_err *err);
/* The same for a tree with directories even their owner may not open or
 * change (an overlay's work dirs are mode 000): each is made 0700 first. */
int rm_rf_chmod_at(int dirfd, const char *path, struct ab_err *err);

int write_all(int fd, const void *buf, size_t len);
ssize_t read_all(int fd, void *buf, size_t len);

/* Parse a decimal integer, full string, within [min,max]. */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *ret);
int parse_uint64(const char *s, uint64_t *ret);

/* Is s a valid container id: [A-Za-z0-9][A-Za-z0-9_.+-]*, no "/" or "..", <= 1024. */
bool container_id_valid(const char *s);

/* Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat). */
int proc_start_time(pid_t pid, uint64_t *ret);
/* pid still names the process that started at start_time: a recycled pid does
 * not (a zombie not yet reaped still does). */
bool proc_is(pid_t pid, uint64_t start_time);
/* The mount an fd is on: its id where statx says it (5.8), else 0. */
uint64_t fd_mount_id(int fd);
/* 'R','S','Z',... or 0 if the process does not exist. */
char proc_state(pid_t pid);

/* Close every fd >= first except those listed (close_range, falling back on /proc/self/fd). */
int close_fds_from(int first, const int *keep, size_t n_keep);
/* The same, with fd_dir (an fd of this process's /proc/self/fd directory, or
 * -1) as the directory its fallback reads; fd_dir is closed too (unless kept
 * or below first). */
int close_fds_from_dir(int fd_dir, int first, const int *keep, size_t n_keep);
/* Mark every fd >= first close-on-exec. */
int cloexec_fds_from(int first);
/* NAME's first executable file in a directory of $PATH (the usual system
 * directories when PATH is unset; empty entries are skipped, not taken for
 * the current directory) into buf. */
bool path_lookup(const char *name, char *buf, size_t len);
/* Call right before a fork-like clone: the caller's stack below a small margin
 * (dead data) is not inherited, see util.c. */
void stack_below_not_inherited(void);

/* Current time as RFC 3339 with nanoseconds, UTC. */
void format_rfc3339(char *buf, size_t len);
/* The same for a given time (UTC, nanoseconds, "Z"). */
struct timespec;
void format_rfc3339_at(char *buf, size_t len, const struct timespec *when);

#endif
