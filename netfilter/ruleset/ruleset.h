/* The egress ruleset, table "inet agentbox", in a container's network
 * namespace: installed, replaced for a live change (ruleset_carry.c), its
 * flows cut (ct_cut.c), its owner read, removed; and the hook anchor
 * (anchor.c). The public face of netfilter/ruleset. */
#ifndef AGENTBOX_RULESET_H
#define AGENTBOX_RULESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.h"
#include "error.h"
#include "ruleset_types.h"

/* Install (atomically replacing any previous one) the ruleset for p inside the
 * network namespace netns_fd. Either the whole ruleset is in place afterwards
 * or nothing changed. The calling thread returns to its own netns. */
int egress_install(int netns_fd, const struct egress_policy *p, const char *container_id,
		   uint16_t sentry_port, struct ab_err *err);
/* The same, but an agentbox ruleset already in the namespace is left alone and
 * 1 returned: a namespace shared with the container that installed it (and runs
 * its sentry) keeps that container's rules. */
int egress_install_new(int netns_fd, const struct egress_policy *p, const char *container_id,
		       uint16_t sentry_port, struct ab_err *err);
/* Replace the ruleset for a changed policy (egress allow/deny): in one batch,
 * with the elements the sentry put in its sets carried over (their remaining
 * timeouts) into those of the new ruleset, but for the addresses learnt for
 * allowed names when keep_names is false (a deny must not leave them open:
 * the box looks them up again). ruleset_carry.c. */
int egress_reinstall(int netns_fd, const struct egress_policy *p, const char *container_id, uint16_t sentry_port,
		     bool keep_names, struct ab_err *err);
/* End the flows in netns_fd's conntrack table whose destination a CIDR entry
 * of deny covers (a live deny: established flows pass the ruleset before its
 * deny sets). How many went into *ret_cut. ct_cut.c. */
int egress_conntrack_cut(int netns_fd, const struct egress_list *deny, size_t *ret_cut, struct ab_err *err);
/* Is there an agentbox ruleset in netns_fd? 1 and the id of the container that
 * installed it (from the table comment; "" if it has none) into id, 0 if there
 * is none. */
int egress_table_owner(int netns_fd, char *id, size_t len, struct ab_err *err);
/* Delete the table; a missing table is not an error. */
int egress_remove(int netns_fd, struct ab_err *err);
/* Where the hook anchor is pinned (netfilter/ruleset/anchor.c). */
#define EGRESS_HOOK_ANCHOR "/run/agentbox-netfilter/anchor"
/* Make sure a network namespace holding the egress ruleset is pinned at pin, so
 * that netfilter's hook static keys stay on between containers. Idempotent and
 * safe to race; on error nothing is pinned and containers work as before. */
int egress_hook_anchor_ensure(const char *pin, struct ab_err *err);

#endif
