/* libseccomp's own <seccomp.h>, for the files that compile filters.
 * Our seccomp.h sits on the -I path and shadows the library's, so reach past this
 * directory with include_next. */
#ifndef AGENTBOX_LIBSECCOMP_H
#define AGENTBOX_LIBSECCOMP_H
#include_next <seccomp.h>
#endif
