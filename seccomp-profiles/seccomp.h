/* OCI linux.seccomp → BPF (libseccomp), the shipped profiles, and loading. */
#ifndef AGENTBOX_SECCOMP_H
#define AGENTBOX_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "seccomp_types.h"

struct json_out;


/* Compile s into a ready BPF program for the native architecture (+ the listed ones):
 * libseccomp's program, shortened by bpf_shorten where it can be, behind the
 * ENOSYS stub where the default action refuses (seccomp_enosys.h: a syscall
 * newer than any the profile names gets ENOSYS, as with runc). */
int seccomp_compile(const struct oci_seccomp *s, struct seccomp_prog *ret, struct ab_err *err);
/* The same without bpf_shorten (where no cache keeps the rewrite). */
int seccomp_compile_unshortened(const struct oci_seccomp *s, struct seccomp_prog *ret, struct ab_err *err);
/* The program as libseccomp makes it: no rewrite, no stub (tests compare). */
int seccomp_compile_libseccomp(const struct oci_seccomp *s, struct seccomp_prog *ret, struct ab_err *err);
/* The same through a cache of compiled programs in cache_dir (created 0700; NULL:
 * no cache). Where no cache can be used the program is libseccomp's, not
 * shortened (the shortening pays only when its result is kept). See seccomp_cache.c. */
int seccomp_compile_cached(const struct oci_seccomp *s, const char *cache_dir,
			   struct seccomp_prog *ret, struct ab_err *err);
/* A shipped profile ("agent", "default") compiled through the same cache. */
int seccomp_builtin_compile_cached(const char *name, const char *cache_dir, struct seccomp_prog *ret,
				   struct ab_err *err);
/* Load prog into the calling thread (needs no_new_privs or CAP_SYS_ADMIN).
 * When prog->notify, *ret_notify_fd receives the listener fd. Allocates nothing. */
int seccomp_prog_load(const struct seccomp_prog *prog, int *ret_notify_fd, struct ab_err *err);
void seccomp_prog_free(struct seccomp_prog *prog);

/* The shipped profiles, embedded in the binary: "default", "agent". */
int seccomp_builtin_profile(const char *name, struct arena *arena, struct oci_seccomp **ret,
			    struct ab_err *err);
/* The embedded JSON text of a shipped profile (NUL-terminated), or NULL. */
const char *seccomp_builtin_profile_text(const char *name, size_t *ret_len);
/* Send the notify fd and the container state JSON to listenerPath (SCM_RIGHTS).
 * state_json is the container's state document ({"ociVersion","id","status","pid",
 * "bundle",...}); it goes out wrapped in the runtime-spec "container process state"
 * (fds ["seccompFd"], pid taken from the state). A document that already is a
 * container process state (has "fds") goes out as is. listener_path NULL is an error. */
int seccomp_send_notify_fd(const char *listener_path, const char *state_json, int notify_fd,
			   struct ab_err *err);
/* The same for linux.seccomp s: its listenerPath, and its listenerMetadata as
 * "metadata". Prefer this one. */
int seccomp_send_listener(const struct oci_seccomp *s, const char *state_json, int notify_fd,
			  struct ab_err *err);
/* The runtime-spec "container process state" sent to the listener: ociVersion,
 * fds ["seccompFd"], pid, metadata (omitted when NULL) and state_json (the
 * container's state document, inserted as is). malloc'd. */
char *seccomp_process_state_json(const char *oci_version, pid_t pid, const char *metadata,
				 const char *state_json);
/* For `features`: write "seccomp": {...} members (enabled, actions, operators, archs,
 * knownFlags, supportedFlags) into the "seccomp" object the caller has opened. */
void seccomp_features_json(struct json_out *o);

#endif
