/* Network namespaces made ahead of time for containers that get a new one.
 *
 * A new network namespace is the dearest part of cloning a container's init:
 * every loaded module sets itself up in it (the IPv4 and IPv6 sysctl tables,
 * conntrack, nf_tables, ...), ~0.45 ms of a 0.7 ms clone on the benchmark VM.
 * The pool moves that work out of the way: after a create or run is done, a
 * detached child at idle priority makes a few namespaces and pins each with a
 * bind mount in a root-only directory; the next create takes one (the pin goes
 * before it is used, so no two containers ever share one) and its init joins
 * it instead of making its own. Namespaces are made by unshare(2), with lo up
 * (as every container's is), used once, and come in two kinds:
 *  - pristine (ns-RANDOM): nothing else configured; for containers without a
 *    firewall, and for any container when nothing else is left;
 *  - firewalled (fw-KEY-TOKEN): the egress ruleset of one policy installed by
 *    the filler, its table's comment naming TOKEN rather than a container
 *    (the kernel cannot change a table's comment later; the container's state
 *    records the token instead; the token starts with the time it was made
 *    in seconds, in hex). KEY is netns_pool_key of the policy: a
 *    create with that policy takes one and installs nothing. Filled after
 *    each create with that policy; at most NETNS_POOL_KINDS policies' worth
 *    at once, the others' entries make room. */
#ifndef AGENTBOX_NETNS_POOL_H
#define AGENTBOX_NETNS_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "agent_config.h" /* NETNS_POOL_DEFAULT_SIZE, NETNS_POOL_MAX_SIZE */

#define NETNS_POOL_DIR "/run/agentbox-netns"
/* firewalled entries of at most this many policies times the pool's size */
#define NETNS_POOL_KINDS 4
#define NETNS_POOL_KEY_LEN 32     /* hex digits */
#define NETNS_POOL_TOKEN_LEN 16   /* hex digits */

/* The key of the firewalled entries for a canonical egress policy text: the
 * first half of a SHA-256 of this binary's identity (a rebuild's ruleset may
 * differ) and the text. */
void netns_pool_key(const char *policy_text, char key[NETNS_POOL_KEY_LEN + 1]);

/* A pooled namespace as an fd the pool no longer holds, or -1 when the pool is
 * empty, missing or not as it should be (then the caller makes a namespace
 * as it always did). With KEY: a firewalled entry of that key if there is
 * one (its token into TOKEN, and *firewalled set), else a pristine one. */
int netns_pool_take(const char *dir, const char *key, char token[NETNS_POOL_TOKEN_LEN + 1], bool *firewalled);

/* Start the pool's filler in the background, with no fd of ours, and return
 * at once. It waits for our exit (up to a second): our exit then leaves the
 * address space it borrows to it, and it runs netns_pool_fill(SIZE, POLICY)
 * right there, with no exec; where it cannot (the sanitizers' builds, or we
 * are still there), it execs `agentbox __netns-pool-fill SIZE [POLICY]`.
 * POLICY (canonical egress policy text, copied) asks for firewalled entries,
 * NULL for pristine ones. Nothing to do for SIZE 0. */
#define NETNS_POOL_FILL_COMMAND "__netns-pool-fill"
void netns_pool_refill(unsigned size, const char *policy_text);
/* That command: fill DIR up to SIZE_ARG namespaces of the kind asked for, at
 * low priority, unless another filler is at work. The exit status is for
 * nobody in particular. */
int netns_pool_fill(const char *dir, const char *size_arg, const char *policy_text);
/* To be called by a process that started a filler as it exits, past its
 * last use of the heap (exit() does it too): only then may the filler use
 * the memory it inherits. */
void netns_pool_exiting(void);
/* main's argument strings, end to end (set by main; NULL: unknown): where a
 * filler running in place writes its command line */
extern char *netns_pool_arg_area;
extern size_t netns_pool_arg_len;

/* The pinned namespaces in DIR (for tests and the benchmark): pristine ones
 * for KEY NULL, firewalled ones of KEY, or of any key for "". */
unsigned netns_pool_count(const char *dir, const char *key);

#endif
