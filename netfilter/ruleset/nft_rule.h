/* Building nftables rules for table inet agentbox (libnftnl), shared by the
 * files that make the ruleset. A rule being built carries its own failure:
 * an allocation that fails marks it, and put_rule then fails the whole batch.
 * Not a public interface. */
#ifndef AGENTBOX_NFT_RULE_H
#define AGENTBOX_NFT_RULE_H

#include <stdio.h> /* libnftnl's headers need FILE */
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <stdbool.h>
#include <stdint.h>

#include "egress_internal.h"

/* nft's datatype numbers, so `nft list` shows the sets with their real types */
enum { TYPE_IPADDR = 7, TYPE_IP6ADDR = 8, TYPE_INET_PROTO = 12, TYPE_INET_SERVICE = 13 };
#define TYPE_BITS 6

struct rule {
	struct nftnl_rule *r;
	bool failed;
};

struct rule rule_new(const char *chain);
/* An expression for rule r, or NULL (r marked failed). */
struct nftnl_expr *expr_new(struct rule *r, const char *name);
/* R goes to CHAIN (the name rule_new got); a failed rule fails the batch. */
void put_rule(struct eg_batch *b, struct rule *r, const char *chain);

/* expressions, added to r in order */
void x_meta(struct rule *r, uint32_t key, uint32_t dreg);
void x_payload(struct rule *r, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg);
void x_cmp(struct rule *r, uint32_t sreg, uint32_t op, const void *data, uint32_t len);
void x_cmp8(struct rule *r, uint32_t op, uint8_t v);
void x_cmp_be16(struct rule *r, uint32_t op, uint16_t v);
void x_lookup(struct rule *r, uint32_t sreg, const struct eg_set *s, unsigned idx);
void x_verdict(struct rule *r, int verdict, const char *chain);
void x_counter(struct rule *r);
/* 20 a second, burst 40 */
void x_limit(struct rule *r);
/* limit over RATE/s burst BURST: what passes is over the rate */
void x_limit_over(struct rule *r, uint64_t per_second, uint32_t burst);
/* reject with tcp reset, or with icmpx admin-prohibited */
void x_reject(struct rule *r, bool tcp_reset);
/* a TCP packet with FLAG (a bit of its flags byte) set */
void x_tcp_flag(struct rule *r, uint8_t flag);
/* meta mark set mark */
void x_set_mark(struct rule *r, uint32_t mark);
/* meta mark set the reason, goto refused (ruleset_log.c) */
void x_refuse(struct rule *r, enum egress_refusal why);
void x_log(struct rule *r, const char *prefix);
void x_log_group(struct rule *r, uint16_t group, const char *prefix);
void x_nfproto(struct rule *r, int family);
void x_l4proto(struct rule *r, uint8_t proto);
/* meta mark OP EGRESS_SENTRY_MARK */
void x_mark(struct rule *r, uint32_t op);
/* meta mark OP mark */
void x_mark_is(struct rule *r, uint32_t op, uint32_t mark);
void x_dport(struct rule *r, uint16_t port);
/* ct state & mask into NFT_REG_1 */
void x_ct_state(struct rule *r, uint32_t mask);
/* redirect to the local port */
void x_redirect(struct rule *r, uint16_t port);
/* The type of the packet's source address in this namespace (RTN_LOCAL: one
 * of ours) into dreg. */
void x_fib_saddr_type(struct rule *r, uint32_t dreg);
/* daddr [. l4proto [. th dport]] of set idx looked up */
void x_set_match(struct rule *r, unsigned idx);

/* ruleset_log.c: chain refused (made) gets its sets and rules: the deny
 * log's dedup, then log, goto refused_answer; chain refused_answer (made) its rules:
 * a reset or an ICMP error back to the box, or a drop */
void put_refused_chain(struct eg_batch *b);
void put_reject_chain(struct eg_batch *b);

#endif
