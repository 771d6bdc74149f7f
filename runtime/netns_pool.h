/* Network namespaces made ahead of time for containers that get a new one.
 *
 * A new network namespace is the dearest part of cloning a container's init:
 * every loaded module sets itself up in it (the IPv4 and IPv6 sysctl tables,
 * conntrack, nf_tables, ...), ~0.45 ms of a 0.7 ms clone on the benchmark VM.
 * The pool moves that work out of the way: after a create or run is done, a
 * detached child at idle priority makes a few namespaces and pins each with a
 * bind mount in a root-only directory; the next create takes one (the pin goes
 * before it is used, so no two containers ever share one) and its init joins
 * it instead of making its own. Pooled namespaces are pristine: made by
 * unshare(2), nothing configured in them, lo down, used once. */
#ifndef AGENTBOX_NETNS_POOL_H
#define AGENTBOX_NETNS_POOL_H

#define NETNS_POOL_DIR "/run/agentbox-netns"
#define NETNS_POOL_DEFAULT_SIZE 2
#define NETNS_POOL_MAX_SIZE 16

/* A pooled namespace as an fd the pool no longer holds, or -1 when the pool is
 * empty, missing or not as it should be (then the caller makes a namespace
 * as it always did). */
int netns_pool_take(const char *dir);

/* Start `agentbox __netns-pool-fill SIZE` (netns_pool_fill) in the background,
 * with no fd of ours, and return at once. Nothing to do for SIZE 0. */
#define NETNS_POOL_FILL_COMMAND "__netns-pool-fill"
void netns_pool_refill(unsigned size);
/* That command: fill DIR up to SIZE_ARG namespaces at low priority, unless
 * another filler is at work. The exit status is for nobody in particular. */
int netns_pool_fill(const char *dir, const char *size_arg);

/* The pinned namespaces in DIR (for tests and the benchmark). */
unsigned netns_pool_count(const char *dir);

#endif
