/* Learn mode's part of the ruleset (agentbox-egress(7), LEARN MODE): egress
 * open, through the same sentry, every new connection logged for it to
 * record. What stays closed: what a deny entry refuses (the deny sets come
 * first, as always), DNS anywhere but the sentry, and the special-purpose
 * ranges (special.c: loopback, private, link-local, the cloud metadata
 * service, ...) the policy does not open with an internal or a CIDR allow
 * entry. The sentry withholds answers that point there; the filter refuses
 * a connection made there by address: learn mode opens the internet, not
 * the host's networks.
 *
 *   chain output, after the deny sets:
 *     allow sets -> goto learn_pass                    (ruleset.c)
 *     internal ranges, the exceptions of the special-purpose ranges,
 *       ct state new -> goto learn_pass
 *     special-purpose ranges -> refuse (internal address)
 *     ct state new -> goto learn_pass
 *     -> refuse (not allowed)                          (ruleset.c)
 *   chain learn_pass
 *     ct state new -> log group EGRESS_NFLOG_LEARN_GROUP "learn"
 *     accept
 *   chain dns (nat), after the SNI check's redirects for the allow sets:
 *     tcp dport 443 not from the SNI proxy: the same ranges: internal and
 *     exceptions -> redirect to the SNI check, special-purpose ->
 *     accept (not redirected: the filter refuses it), the rest -> redirect
 *
 * Every TLS connection's server name is read then (the SNI check records it
 * by name, even one reached by address), and the proxy's own connection
 * meets the filter above, where it is logged with its real destination. */
#include <netinet/in.h> /* before the linux/ headers */
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nft_rule.h"
#include "ruleset_learn.h"
#include "util.h"

#define LEARN_PASS "learn_pass"

/* daddr within e's range (a CIDR entry): its family, its address masked */
static void x_daddr_in(struct rule *r, const struct egress_entry *e)
{
	bool v4 = e->kind == EGRESS_CIDR4;
	uint32_t len = v4 ? 4 : 16;
	x_nfproto(r, v4 ? AF_INET : AF_INET6);
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v4 ? 16 : 24, len, NFT_REG_1);
	uint8_t mask[16] = { 0 }, zero[16] = { 0 };
	for (unsigned bit = 0; bit < e->prefix; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	if (e->prefix < len * 8) {
		struct nftnl_expr *x = expr_new(r, "bitwise");
		if (!x)
			return;
		nftnl_expr_set_u32(x, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(x, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(x, NFTNL_EXPR_BITWISE_LEN, len);
		nftnl_expr_set(x, NFTNL_EXPR_BITWISE_MASK, mask, len);
		nftnl_expr_set(x, NFTNL_EXPR_BITWISE_XOR, zero, len);
		nftnl_rule_add_expr(r->r, x);
	}
	x_cmp(r, NFT_REG_1, NFT_CMP_EQ, e->addr, len);
}

static void x_ct_new(struct rule *r)
{
	x_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW));
	uint32_t zero = 0;
	x_cmp(r, NFT_REG_1, NFT_CMP_NEQ, &zero, 4);
}

/* What a rule of the nat chain's learn part matches first: a TCP/443
 * connection the SNI check does not make itself. */
static void x_tls_of_box(struct rule *r)
{
	x_mark_is(r, NFT_CMP_NEQ, EGRESS_PROXY_MARK);
	x_l4proto(r, IPPROTO_TCP);
	x_dport(r, 443);
}

/* The ranges learn mode leaves open (open) or keeps closed, of both
 * families, into *ret (the caller frees it); their count, or (size_t)-1
 * when memory ran out. */
static size_t ranges(const struct egress_policy *p, bool open, struct egress_entry **ret)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	size_t max = open ? p->internal.n : 0;
	for (int f = 0; f < 2; f++)
		max += egress_special_ranges(fams[f], open, NULL, 0);
	struct egress_entry *v = calloc(max ? max : 1, sizeof *v);
	if (!v)
		return (size_t)-1;
	size_t n = 0;
	for (int f = 0; f < 2; f++)
		n += egress_special_ranges(fams[f], open, v + n, max - n);
	for (size_t i = 0; open && i < p->internal.n; i++)
		v[n++] = p->internal.v[i];
	*ret = v;
	return n;
}

/* One rule per range: [prefix] daddr in it -> verdict (to chain) */
static void put_range_rules(struct eg_batch *b, const char *chain, const struct egress_entry *v, size_t n,
			    void (*prefix)(struct rule *), int verdict, const char *to, uint16_t redirect)
{
	for (size_t i = 0; i < n; i++) {
		struct rule rr = rule_new(chain), *r = &rr;
		prefix(r);
		x_daddr_in(r, &v[i]);
		if (redirect)
			x_redirect(r, redirect);
		else if (verdict == NF_DROP)
			x_refuse(r, EGRESS_REFUSED_INTERNAL);
		else
			x_verdict(r, verdict, to);
		put_rule(b, r, chain);
	}
}

void put_learn_chain(struct eg_batch *b, const struct egress_policy *p)
{
	if (!p->learn)
		return;
	struct rule rr = rule_new(LEARN_PASS), *r = &rr;
	x_ct_new(r);
	x_log_group(r, EGRESS_NFLOG_LEARN_GROUP, "learn");
	put_rule(b, r, LEARN_PASS);
	rr = rule_new(LEARN_PASS);
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, LEARN_PASS);
}

const char *learn_allow_chain(const struct egress_policy *p)
{
	return p->learn ? LEARN_PASS : NULL;
}

/* Both sets of ranges, each with its verdict (open: to learn_pass, or
 * the SNI check's redirect), then the rest's rule. */
static void put_learn_rules(struct eg_batch *b, const struct egress_policy *p, const char *chain, bool nat)
{
	struct egress_entry *open = NULL, *closed = NULL;
	size_t n_open = ranges(p, true, &open), n_closed = ranges(p, false, &closed);
	if (n_open == (size_t)-1 || n_closed == (size_t)-1) {
		eg_batch_fail(b, ENOMEM);
	} else if (nat) {
		put_range_rules(b, chain, open, n_open, x_tls_of_box, 0, NULL, EGRESS_SNI_PORT);
		put_range_rules(b, chain, closed, n_closed, x_tls_of_box, NF_ACCEPT, NULL, 0);
	} else {
		put_range_rules(b, chain, open, n_open, x_ct_new, NFT_GOTO, LEARN_PASS, 0);
		put_range_rules(b, chain, closed, n_closed, x_ct_new, NF_DROP, NULL, 0);
	}
	free(open);
	free(closed);
	struct rule rr = rule_new(chain), *r = &rr;
	if (nat) {
		x_tls_of_box(r);
		x_redirect(r, EGRESS_SNI_PORT);
	} else {
		x_ct_new(r);
		x_verdict(r, NFT_GOTO, LEARN_PASS);
	}
	put_rule(b, r, chain);
}

void put_learn_output_rules(struct eg_batch *b, const struct egress_policy *p, const char *chain)
{
	if (p->learn)
		put_learn_rules(b, p, chain, false);
}

void put_learn_nat_rules(struct eg_batch *b, const struct egress_policy *p, const char *chain)
{
	if (p->learn)
		put_learn_rules(b, p, chain, true);
}
