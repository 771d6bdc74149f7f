/* Building nftables rules: a rule, the expressions that make it, and its
 * message in a batch (nft_rule.h). */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <string.h>

#include "nft_rule.h"
#include "util.h"

#define LOG_RATE 20         /* new destinations logged per second once the seen sets are full */
#define LOG_BURST 40

struct rule rule_new(const char *chain)
{
	struct rule r = { nftnl_rule_alloc(), false };
	if (!r.r) {
		r.failed = true;
		return r;
	}
	nftnl_rule_set_str(r.r, NFTNL_RULE_TABLE, EGRESS_TABLE);
	nftnl_rule_set_str(r.r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(r.r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	return r;
}

/* An expression for rule r, or NULL (r marked failed). */
struct nftnl_expr *expr_new(struct rule *r, const char *name)
{
	struct nftnl_expr *e = r->failed ? NULL : nftnl_expr_alloc(name);
	if (!e)
		r->failed = true;
	return e;
}

void x_meta(struct rule *r, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = expr_new(r, "meta");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	nftnl_rule_add_expr(r->r, e);
}

void x_payload(struct rule *r, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
	struct nftnl_expr *e = expr_new(r, "payload");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	nftnl_rule_add_expr(r->r, e);
}

void x_cmp(struct rule *r, uint32_t sreg, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = expr_new(r, "cmp");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	nftnl_rule_add_expr(r->r, e);
}

void x_cmp8(struct rule *r, uint32_t op, uint8_t v) { x_cmp(r, NFT_REG_1, op, &v, 1); }

void x_cmp_be16(struct rule *r, uint32_t op, uint16_t v)
{
	uint16_t be = htons(v);
	x_cmp(r, NFT_REG_1, op, &be, 2);
}

void x_lookup(struct rule *r, uint32_t sreg, const struct eg_set *s, unsigned idx)
{
	struct nftnl_expr *e = expr_new(r, "lookup");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, s->name);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, idx + 1);
	nftnl_rule_add_expr(r->r, e);
}

void x_verdict(struct rule *r, int verdict, const char *chain)
{
	struct nftnl_expr *e = expr_new(r, "immediate");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
	nftnl_rule_add_expr(r->r, e);
}

void x_counter(struct rule *r)
{
	struct nftnl_expr *e = expr_new(r, "counter");
	if (e)
		nftnl_rule_add_expr(r->r, e);
}

void x_limit(struct rule *r)
{
	struct nftnl_expr *e = expr_new(r, "limit");
	if (!e)
		return;
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, LOG_RATE);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, LOG_BURST);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	nftnl_rule_add_expr(r->r, e);
}

void x_limit_over(struct rule *r, uint64_t per_second, uint32_t burst)
{
	struct nftnl_expr *e = expr_new(r, "limit");
	if (!e)
		return;
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, per_second);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, burst);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	nftnl_rule_add_expr(r->r, e);
}

void x_reject(struct rule *r, bool tcp_reset)
{
	struct nftnl_expr *e = expr_new(r, "reject");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, tcp_reset ? NFT_REJECT_TCP_RST : NFT_REJECT_ICMPX_UNREACH);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, tcp_reset ? 0 : NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	nftnl_rule_add_expr(r->r, e);
}

void x_tcp_flag(struct rule *r, uint8_t flag)
{
	x_l4proto(r, IPPROTO_TCP);
	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1, NFT_REG_1);
	struct nftnl_expr *e = expr_new(r, "bitwise");
	if (!e)
		return;
	uint8_t zero = 0;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 1);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &flag, 1);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, 1);
	nftnl_rule_add_expr(r->r, e);
	x_cmp8(r, NFT_CMP_NEQ, 0);
}

void x_set_mark(struct rule *r, uint32_t mark)
{
	struct nftnl_expr *e = expr_new(r, "immediate");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &mark, sizeof mark);
	nftnl_rule_add_expr(r->r, e);
	e = expr_new(r, "meta");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, NFT_REG_1);
	nftnl_rule_add_expr(r->r, e);
}

void x_refuse(struct rule *r, enum egress_refusal why)
{
	x_set_mark(r, EGRESS_REFUSAL_MARK(why));
	x_verdict(r, NFT_GOTO, "refused");
}

void x_log_group(struct rule *r, uint16_t group, const char *prefix);

void x_log(struct rule *r, const char *prefix) { x_log_group(r, EGRESS_NFLOG_GROUP, prefix); }

void x_log_group(struct rule *r, uint16_t group, const char *prefix)
{
	struct nftnl_expr *e = expr_new(r, "log");
	if (!e)
		return;
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, 128);
	nftnl_rule_add_expr(r->r, e);
}

void x_nfproto(struct rule *r, int family)
{
	x_meta(r, NFT_META_NFPROTO, NFT_REG_1);
	x_cmp8(r, NFT_CMP_EQ, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
}

void x_l4proto(struct rule *r, uint8_t proto)
{
	x_meta(r, NFT_META_L4PROTO, NFT_REG_1);
	x_cmp8(r, NFT_CMP_EQ, proto);
}

void x_mark_is(struct rule *r, uint32_t op, uint32_t mark)
{
	x_meta(r, NFT_META_MARK, NFT_REG_1);
	x_cmp(r, NFT_REG_1, op, &mark, sizeof mark);
}

void x_mark(struct rule *r, uint32_t op)
{
	x_mark_is(r, op, EGRESS_SENTRY_MARK);
}

void x_dport(struct rule *r, uint16_t port)
{
	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
	x_cmp_be16(r, NFT_CMP_EQ, port);
}

/* ct state & mask into NFT_REG_1 */
void x_ct_state(struct rule *r, uint32_t mask)
{
	struct nftnl_expr *e = expr_new(r, "ct");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r->r, e);
	uint32_t zero = 0;
	e = expr_new(r, "bitwise");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, 4);
	nftnl_rule_add_expr(r->r, e);
}

/* redirect to the local port */
void x_redirect(struct rule *r, uint16_t port)
{
	uint16_t be = htons(port);
	struct nftnl_expr *e = expr_new(r, "immediate");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &be, sizeof be);
	nftnl_rule_add_expr(r->r, e);
	e = expr_new(r, "redir");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
	nftnl_rule_add_expr(r->r, e);
}

/* The type of the packet's source address in this namespace (RTN_LOCAL: one
 * of ours) into dreg. */
void x_fib_saddr_type(struct rule *r, uint32_t dreg)
{
	struct nftnl_expr *e = expr_new(r, "fib");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_SADDR);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, dreg);
	nftnl_rule_add_expr(r->r, e);
}

/* Load the lookup key of set s (daddr [. l4proto [. th dport]]) into the
 * 32-bit registers from NFT_REG32_00 and look it up. */
void x_set_match(struct rule *r, unsigned idx)
{
	struct eg_set s;
	eg_set_get(idx, &s);
	uint32_t alen = s.family == AF_INET ? 4 : 16;
	x_nfproto(r, s.family);
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, s.family == AF_INET ? 16 : 24, alen, NFT_REG32_00);
	if (s.shape >= EG_SHAPE_PROTO)
		x_meta(r, NFT_META_L4PROTO, NFT_REG32_00 + alen / 4);
	if (s.shape == EG_SHAPE_PORT)
		x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG32_00 + alen / 4 + 1);
	x_lookup(r, NFT_REG32_00, &s, idx);
}

/* R goes to CHAIN (the name rule_new got) */
void put_rule(struct eg_batch *b, struct rule *r, const char *chain)
{
	struct nlmsghdr *nlh = r->failed ? NULL : eg_batch_msg(b, 4096, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, r->r);
		eg_batch_commit(b, "add rule to chain", chain);
	} else
		eg_batch_fail(b, ENOMEM);
	if (r->r)
		nftnl_rule_free(r->r);
	r->r = NULL;
}
