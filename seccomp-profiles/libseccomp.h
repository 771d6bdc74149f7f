/* libseccomp's own <seccomp.h>, for the files that compile filters.
 * Our seccomp.h sits on the -I path and shadows the library's, so reach past this
 * directory with include_next. libseccomp also has a seccomp_load() (load a filter
 * context); ours loads an exported program instead, so the library's declaration
 * is renamed out of the way — agentbox never calls it. */
#ifndef AGENTBOX_LIBSECCOMP_H
#define AGENTBOX_LIBSECCOMP_H
#define seccomp_load libseccomp_seccomp_load_unused
#include_next <seccomp.h>
#undef seccomp_load
#endif
