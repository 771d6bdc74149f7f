/* The deny log's part of the ruleset (issue 22 hole 6): chain refused, where
 * every refusal ends, its reason in the packet's mark (the packet is refused
 * there: the mark is free to carry it, and nflog passes it on).
 *
 * The first refused packet to a destination (address, protocol, port) in a
 * minute is logged in full to EGRESS_NFLOG_GROUP; later ones go to
 * EGRESS_NFLOG_REPEAT_GROUP, a separate socket the sentry counts from: a
 * flood of repeats can fill that one, never the first one, so it cannot hide
 * a new destination. A "seen" set per family remembers the destinations
 * (timeout 60 s, not refreshed by a repeat: a destination still tried is
 * logged again each minute). ICMP, a non-first fragment (no port to read) and
 * a destination the port set has no room for are keyed on the address and
 * protocol, in a set of their own; when that one is full too, a global 20 a
 * second still passes first ones. The rest is counted as repeats.
 *
 *   chain refused
 *     counter; ip, not icmp: daddr . l4proto . dport in @log_v4_port -> log 172 "repeat", drop
 *     ip, not icmp: add it to @log_v4_port -> log 171 "refused", drop   (a full set: on)
 *     ip: daddr . l4proto in @log_v4 -> log 172, drop
 *     ip: add it to @log_v4 -> log 171, drop
 *     (the same for ip6)
 *     limit 20/s -> log 171, drop
 *     log 172, drop
 *   (every "drop" above is "goto refused_answer")
 *
 * Chain refused_answer makes a refusal fail at once rather than by a timeout
 * (issue 25): a TCP reset (ECONNREFUSED), an ICMP(v6) "administratively
 * prohibited" for the rest (EHOSTUNREACH, EACCES). Both go to the packet's
 * source, which the spoof rule has made sure is the box's own address, so
 * they never leave the box's namespace; a forged source is only dropped.
 * A flood beyond REJECT_RATE is dropped too: the box cannot make the kernel
 * work without bound for it.
 *
 *   chain refused_answer
 *     meta mark spoofed-source -> drop
 *     limit over 200/s burst 400 -> drop
 *     tcp -> reject with tcp reset
 *     reject with icmpx admin-prohibited
 */
#include <netinet/in.h> /* before the linux/ headers */
#include <errno.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <string.h>

#include "nft_rule.h"
#include "util.h"

#define LOG_SEEN_SIZE 256
#define LOG_SEEN_TIMEOUT_MS 60000
#define LOG_SEEN_SET_ID 101   /* batch ids of the seen sets, beyond EG_N_SETS' */

struct seen_set {
	const char *name;
	int family;
	bool port;            /* keyed with the port: every protocol but ICMP */
};

static const struct seen_set seen_sets[4] = {
	{ "log_v4_port", AF_INET, true }, { "log_v4", AF_INET, false },
	{ "log_v6_port", AF_INET6, true }, { "log_v6", AF_INET6, false },
};

static void put_seen_set(struct eg_batch *b, unsigned i)
{
	const struct seen_set *ss = &seen_sets[i];
	struct nftnl_set *set = nftnl_set_alloc();
	if (!set) {
		eg_batch_fail(b, ENOMEM);
		return;
	}
	uint32_t alen = ss->family == AF_INET ? 4 : 16;
	uint32_t type = (ss->family == AF_INET ? TYPE_IPADDR : TYPE_IP6ADDR) << TYPE_BITS | TYPE_INET_PROTO;
	if (ss->port)
		type = type << TYPE_BITS | TYPE_INET_SERVICE;
	nftnl_set_set_str(set, NFTNL_SET_TABLE, EGRESS_TABLE);
	nftnl_set_set_str(set, NFTNL_SET_NAME, ss->name);
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(set, NFTNL_SET_ID, LOG_SEEN_SET_ID + i);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, type);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, alen + 4 + (ss->port ? 4 : 0));
	nftnl_set_set_u32(set, NFTNL_SET_FLAGS, NFT_SET_TIMEOUT | NFT_SET_EVAL);
	nftnl_set_set_u64(set, NFTNL_SET_TIMEOUT, LOG_SEEN_TIMEOUT_MS);
	nftnl_set_set_u32(set, NFTNL_SET_DESC_SIZE, LOG_SEEN_SIZE);
	struct nlmsghdr *nlh = eg_batch_msg(b, 512, NFT_MSG_NEWSET, NLM_F_CREATE);
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, set);
		eg_batch_commit(b, "add set", ss->name);
	}
	nftnl_set_free(set);
}

/* daddr . l4proto [. th dport] into the registers from NFT_REG32_00, for
 * packets of the seen set's family (and, for the port set, not ICMP) */
static void x_seen_key(struct rule *r, const struct seen_set *ss)
{
	uint32_t alen = ss->family == AF_INET ? 4 : 16;
	x_nfproto(r, ss->family);
	if (ss->port) {
		x_meta(r, NFT_META_L4PROTO, NFT_REG_1);
		x_cmp8(r, NFT_CMP_NEQ, ss->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
	}
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, ss->family == AF_INET ? 16 : 24, alen, NFT_REG32_00);
	x_meta(r, NFT_META_L4PROTO, NFT_REG32_00 + alen / 4);
	if (ss->port)
		x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG32_00 + alen / 4 + 1);
}

static void x_seen_lookup(struct rule *r, unsigned i)
{
	struct nftnl_expr *e = expr_new(r, "lookup");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, seen_sets[i].name);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, LOG_SEEN_SET_ID + i);
	nftnl_rule_add_expr(r->r, e);
}

/* add the key to the set; a full set stops the rule here */
static void x_seen_add(struct rule *r, unsigned i)
{
	struct nftnl_expr *e = expr_new(r, "dynset");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG32_00);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, seen_sets[i].name);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SET_ID, LOG_SEEN_SET_ID + i);
	nftnl_rule_add_expr(r->r, e);
}

static void put_logged(struct eg_batch *b, struct rule *r, bool first)
{
	if (first)
		x_log(r, "refused");
	else
		x_log_group(r, EGRESS_NFLOG_REPEAT_GROUP, "repeat");
	x_verdict(r, NFT_GOTO, "refused_answer");
	put_rule(b, r, "refused");
}

#define REJECT_RATE 200
#define REJECT_BURST 400

void put_reject_chain(struct eg_batch *b)
{
	const char *chain = "refused_answer";
	struct rule rr = rule_new(chain), *r = &rr;
	x_mark_is(r, NFT_CMP_EQ, EGRESS_REFUSAL_MARK(EGRESS_REFUSED_SPOOF));
	x_verdict(r, NF_DROP, NULL);
	put_rule(b, r, chain);
	rr = rule_new(chain);
	x_limit_over(r, REJECT_RATE, REJECT_BURST);
	x_verdict(r, NF_DROP, NULL);
	put_rule(b, r, chain);
	rr = rule_new(chain);
	x_l4proto(r, IPPROTO_TCP);
	x_reject(r, true);
	put_rule(b, r, chain);
	rr = rule_new(chain);
	x_reject(r, false);
	put_rule(b, r, chain);
}

void put_refused_chain(struct eg_batch *b)
{
	const char *chain = "refused";
	for (unsigned i = 0; i < ARRAY_SIZE(seen_sets); i++)
		put_seen_set(b, i);
	struct rule rr, *r = &rr;
	for (unsigned i = 0; i < ARRAY_SIZE(seen_sets); i++) {
		rr = rule_new(chain);
		if (i == 0)
			x_counter(r);   /* every refused packet */
		x_seen_key(r, &seen_sets[i]);
		x_seen_lookup(r, i);
		put_logged(b, r, false);
		rr = rule_new(chain);
		x_seen_key(r, &seen_sets[i]);
		x_seen_add(r, i);
		put_logged(b, r, true);
	}
	/* the sets are full: some first ones all the same */
	rr = rule_new(chain);
	x_limit(r);
	put_logged(b, r, true);
	rr = rule_new(chain);
	put_logged(b, r, false);
}
