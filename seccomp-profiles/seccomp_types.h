/* A compiled seccomp program: the type seccomp.c and seccomp_enosys.c share. */
#ifndef AGENTBOX_SECCOMP_TYPES_H
#define AGENTBOX_SECCOMP_TYPES_H

#include <linux/filter.h>
#include <stdbool.h>

struct seccomp_prog {
	struct sock_filter *filter;     /* malloc'd */
	unsigned short len;
	unsigned int flags;             /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
	bool notify;                    /* has a NOTIFY action: load returns a listener fd */
};

#endif
