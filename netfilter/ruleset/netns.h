/* Work in a network namespace (netns.c): from a child that enters it and
 * exits, or, for a process that lives there, by moving into it for good. */
#ifndef AGENTBOX_NETNS_H
#define AGENTBOX_NETNS_H

#include "error.h"

/* Run fn(arg, err) in the network namespace netns_fd (-1: a new one) from a
 * child that enters it and exits; the caller never switches namespaces.
 * Sockets fn makes belong to that namespace and are the caller's (the child
 * shares memory and fd table). Works rootful and rootless: when entering needs
 * capabilities held only in the user namespace that owns netns_fd, the child
 * enters that one first. Returns what fn returned, or a negative value with
 * err set when the namespace could not be entered. */
int egress_in_netns(int netns_fd, int (*fn)(void *arg, struct ab_err *err), void *arg, struct ab_err *err);
/* Move the calling process into netns_fd for good (its owning user namespace
 * first when needed, as above): for a process that lives there (the sentry). */
int egress_netns_join(int netns_fd, struct ab_err *err);

#endif
