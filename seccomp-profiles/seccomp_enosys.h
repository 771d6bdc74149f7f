/* The -ENOSYS stub in front of a profile whose default action is a refusal
 * (seccomp_enosys.c), for seccomp.c. */
#ifndef AGENTBOX_SECCOMP_ENOSYS_H
#define AGENTBOX_SECCOMP_ENOSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config_types.h"
#include "error.h"
#include "seccomp_types.h"

/* Does s need the stub: a default action that refuses (kill, trap, trace,
 * an errno other than ENOSYS)? */
bool seccomp_enosys_wanted(const struct oci_seccomp *s);
/* Put the stub in front of prog: for each architecture in arches (libseccomp
 * tokens), a syscall number above the highest one s's rules name gets
 * ENOSYS instead of the default action. An architecture whose rules name no
 * syscall is left to the profile. */
int seccomp_enosys_prepend(const struct oci_seccomp *s, const uint32_t *arches, size_t n_arches,
			   struct seccomp_prog *prog, struct ab_err *err);

#endif
