/* Learn mode's rules (ruleset_learn.c), for ruleset.c: nothing when the
 * policy does not learn. Not a public interface. */
#ifndef AGENTBOX_RULESET_LEARN_H
#define AGENTBOX_RULESET_LEARN_H

#include "egress.h"
#include "egress_internal.h"

/* Chain learn_pass's rules (the chain is made by ruleset.c when learning):
 * a new connection logged for the sentry, then accepted. */
void put_learn_chain(struct eg_batch *b, const struct egress_policy *p);
/* Where an allow set's rule goes instead of accept: learn_pass; NULL when
 * not learning. */
const char *learn_allow_chain(const struct egress_policy *p);
/* The end of chain output (before its final refusal): the ranges kept
 * closed refused, the rest through learn_pass. */
void put_learn_output_rules(struct eg_batch *b, const struct egress_policy *p, const char *chain);
/* The end of the nat chain: every TCP/443 connection of the box to the SNI
 * check, but those the filter refuses. */
void put_learn_nat_rules(struct eg_batch *b, const struct egress_policy *p, const char *chain);

#endif
