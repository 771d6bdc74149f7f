/* The types every part of the cgroups module and its users share: the host's
 * layout and a container's cgroup. Types only. */
#ifndef AGENTBOX_CGROUPS_TYPES_H
#define AGENTBOX_CGROUPS_TYPES_H

#include <limits.h>

enum cgroup_mode { CGROUP_MODE_DISABLED, CGROUP_MODE_V1, CGROUP_MODE_HYBRID, CGROUP_MODE_V2 };

/* A container's cgroup: the layout and the path below each hierarchy's root.
 * Small and flat so it can be stored in the container state as two strings. */
struct cgroup_ref {
	enum cgroup_mode mode;
	char path[PATH_MAX];        /* "/docker/abc"; "" when disabled */
};

#endif
