/* The egress ruleset: table inet agentbox, built as one nftables batch and
 * installed atomically inside the container's network namespace.
 *
 *   chain output (filter, hook output, priority 0, policy drop)
 *     IPv6 neighbour discovery and MLD (link-local only) -> accept
 *     the reset chain refused_answer sent for a refused TCP packet -> accept
 *     a source address that is not ours -> refuse (spoof)
 *     the sentry's marked sockets may reach @dns_upstream_*
 *     anything else to @dns_guard_* (a loopback resolver) -> refuse (dns)
 *     loopback destinations and oif lo -> accept
 *     ct state established,related -> accept
 *     tcp/udp dport 53 or 853 -> refuse (dns)
 *     deny sets (static CIDRs, dynamic names) -> refuse (denied)
 *     allow sets -> accept
 *     -> refuse (not allowed)
 *   chain dns (nat, hook output, priority -150)
 *     unmarked udp/tcp dport 53 -> redirect to :sentry_port
 *     tcp dport 443 not from the SNI proxy, to what the allow sets (and no
 *     deny set) hold -> redirect to :EGRESS_SNI_PORT (the SNI check)
 *   learn mode (ruleset_learn.c): allow sets go through chain learn_pass, which
 *     logs new connections for the sentry; then the special-purpose ranges
 *     the policy does not open are refused and the rest passes the same way;
 *     every TCP/443 connection goes to the SNI check
 *   chain refused (ruleset_log.c): the reason in the mark; counted,
 *     deduplicated for the deny log, logged, then chain refused_answer: a TCP reset
 *     or an ICMP error back to the box (a forged source: dropped)
 */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "egress_internal.h"
#include "nft_rule.h"
#include "ruleset.h"
#include "ruleset_learn.h"
#include "sni_policy.h"
#include "util.h"


#define NAT_PRIORITY (-150) /* before iptables' and Docker's nat output (-100) */

/* ---- table, chains, sets ---- */

static void put_table(struct eg_batch *b, uint16_t type, uint16_t flags, const char *comment)
{
	struct nftnl_table *t = nftnl_table_alloc();
	if (!t) {
		eg_batch_fail(b, ENOMEM);
		return;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, EGRESS_TABLE);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (comment) {
		struct nftnl_udata_buf *u = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 16);
		if (!u) {
			nftnl_table_free(t);
			eg_batch_fail(b, ENOMEM);
			return;
		}
		nftnl_udata_put_strz(u, NFTNL_UDATA_TABLE_COMMENT, comment);
		nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(u), nftnl_udata_buf_len(u));
		nftnl_udata_buf_free(u);
	}
	struct nlmsghdr *nlh = eg_batch_msg(b, 512, type, flags);
	if (nlh) {
		nftnl_table_nlmsg_build_payload(nlh, t);
		eg_batch_commit(b, type == NFT_MSG_DELTABLE ? "delete table inet " EGRESS_TABLE
							    : "add table inet " EGRESS_TABLE, NULL);
	}
	nftnl_table_free(t);
}

static void put_chain(struct eg_batch *b, const char *name, const char *type, int hook, int prio, int policy)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	if (!c) {
		eg_batch_fail(b, ENOMEM);
		return;
	}
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, EGRESS_TABLE);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (type) {
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, (uint32_t)policy);
	}
	struct nlmsghdr *nlh = eg_batch_msg(b, 512, NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	if (nlh) {
		nftnl_chain_nlmsg_build_payload(nlh, c);
		eg_batch_commit(b, "add chain", name);
	}
	nftnl_chain_free(c);
}

static void put_set(struct eg_batch *b, unsigned idx)
{
	struct eg_set s;
	eg_set_get(idx, &s);
	struct nftnl_set *set = nftnl_set_alloc();
	if (!set) {
		eg_batch_fail(b, ENOMEM);
		return;
	}
	uint32_t type = s.family == AF_INET ? TYPE_IPADDR : TYPE_IP6ADDR;
	uint8_t fields[3] = { s.family == AF_INET ? 4 : 16, 1, 2 };
	uint32_t flags = 0;
	if (s.shape >= EG_SHAPE_PROTO)
		type = type << TYPE_BITS | TYPE_INET_PROTO;
	if (s.shape == EG_SHAPE_PORT)
		type = type << TYPE_BITS | TYPE_INET_SERVICE;
	nftnl_set_set_str(set, NFTNL_SET_TABLE, EGRESS_TABLE);
	nftnl_set_set_str(set, NFTNL_SET_NAME, s.name);
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(set, NFTNL_SET_ID, idx + 1);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, type);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, s.key_len);
	if (s.kind == EG_STATIC) {
		flags |= NFT_SET_INTERVAL;
		if (s.shape != EG_SHAPE_ANY) {
			/* a concatenation of ranges: the pipapo backend */
			flags |= NFT_SET_CONCAT;
			nftnl_set_set_data(set, NFTNL_SET_DESC_CONCAT, fields, s.shape == EG_SHAPE_PORT ? 3 : 2);
		}
	} else if (s.kind == EG_DYNAMIC) {
		/* No size: the kernel would allocate the set's first hash table for
		 * it at once (64 KiB at 4096, zeroed at every create and freed at
		 * every teardown); without one it starts at four buckets and grows.
		 * The sentry's helper bounds the elements instead. */
		flags |= NFT_SET_TIMEOUT;
	}
	nftnl_set_set_u32(set, NFTNL_SET_FLAGS, flags);
	struct nlmsghdr *nlh = eg_batch_msg(b, 512, NFT_MSG_NEWSET, NLM_F_CREATE);
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, set);
		eg_batch_commit(b, "add set", s.name);
	}
	nftnl_set_free(set);
}

/* ---- static elements: CIDR entries as merged intervals ---- */

struct range {
	unsigned set;
	uint8_t proto;
	uint16_t port;
	uint8_t lo[16], hi[16]; /* big endian, inclusive */
};

static int range_cmp(const void *pa, const void *pb)
{
	const struct range *a = pa, *b = pb;
	if (a->set != b->set)
		return a->set < b->set ? -1 : 1;
	if (a->proto != b->proto)
		return a->proto < b->proto ? -1 : 1;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	return memcmp(a->lo, b->lo, 16);
}

/* x + 1 over alen bytes; false when it wraps (x was all ones). */
static bool addr_inc(uint8_t *x, size_t alen)
{
	for (size_t i = alen; i-- > 0;)
		if (++x[i] != 0)
			return true;
	return false;
}

/* The CIDR entries of l appended to *out (n so far); the new count, or
 * (size_t)-1 when memory ran out (*out is still the caller's to free). */
static size_t collect_ranges(const struct egress_list *l, bool deny, struct range **out, size_t n)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct egress_entry *e = &l->v[i];
		if (e->kind != EGRESS_CIDR4 && e->kind != EGRESS_CIDR6)
			continue;
		int fam = e->kind == EGRESS_CIDR4 ? AF_INET : AF_INET6;
		unsigned max = fam == AF_INET ? 32 : 128;
		uint8_t protos[2] = { 0, 0 };
		size_t np = eg_entry_protos(e, protos);
		if (np == 0)
			np = 1;
		for (size_t k = 0; k < np; k++) {
			struct range *grown = realloc(*out, (n + 1) * sizeof **out);
			if (!grown)
				return (size_t)-1;
			*out = grown;
			struct range *r = &(*out)[n++];
			memset(r, 0, sizeof *r);
			r->set = eg_set_index(EG_STATIC, deny, fam, eg_entry_shape(e));
			r->proto = protos[k];
			r->port = e->port;
			memcpy(r->lo, e->addr, 16);
			memcpy(r->hi, e->addr, 16);
			for (unsigned bit = e->prefix; bit < max; bit++)
				r->hi[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
		}
	}
	return n;
}

/* Sort, merge overlapping and adjacent ranges of the same set/proto/port, and
 * emit them: start/end pairs for plain interval sets, key..key_end for
 * concatenations (the kernel refuses overlapping elements in both). */
static void put_static_elements(struct eg_batch *b, const struct egress_policy *p)
{
	struct range *rs = NULL;
	size_t n = collect_ranges(&p->allow, false, &rs, 0);
	if (n != (size_t)-1)
		n = collect_ranges(&p->deny, true, &rs, n);
	if (n == (size_t)-1) {
		free(rs);
		eg_batch_fail(b, ENOMEM);
		return;
	}
	if (n == 0)
		return;
	qsort(rs, n, sizeof *rs, range_cmp);

	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0) {
			struct range *last = &rs[m - 1];
			struct eg_set s;
			eg_set_get(rs[i].set, &s);
			size_t alen = s.family == AF_INET ? 4 : 16;
			uint8_t next[16];
			memcpy(next, last->hi, 16);
			bool wrapped = !addr_inc(next, alen);
			if (last->set == rs[i].set && last->proto == rs[i].proto && last->port == rs[i].port &&
			    (wrapped || memcmp(rs[i].lo, next, alen) <= 0)) {
				if (memcmp(rs[i].hi, last->hi, alen) > 0)
					memcpy(last->hi, rs[i].hi, 16);
				continue;
			}
		}
		rs[m++] = rs[i];
	}

	struct eg_elem *elems = calloc(2 * m, sizeof *elems);
	if (!elems) {
		free(rs);
		eg_batch_fail(b, ENOMEM);
		return;
	}
	for (size_t i = 0; i < m;) {
		struct eg_set s;
		eg_set_get(rs[i].set, &s);
		size_t alen = s.family == AF_INET ? 4 : 16, ne = 0, j = i;
		/* a message per set, at most 256 ranges each: netlink nests are 16-bit */
		for (; j < m && rs[j].set == rs[i].set && j - i < 256; j++) {
			struct eg_elem *e = &elems[ne++];
			memset(e, 0, sizeof *e);
			eg_key(&s, rs[j].lo, rs[j].proto, rs[j].port, e->key);
			if (s.shape != EG_SHAPE_ANY) {
				eg_key(&s, rs[j].hi, rs[j].proto, rs[j].port, e->key_end);
				e->has_end = true;
				continue;
			}
			uint8_t end[16];
			memcpy(end, rs[j].hi, 16);
			if (addr_inc(end, alen)) {   /* no end element for a range up to all-ones */
				struct eg_elem *x = &elems[ne++];
				memset(x, 0, sizeof *x);
				eg_key(&s, end, 0, 0, x->key);
				x->flags = NFT_SET_ELEM_INTERVAL_END;
			}
		}
		eg_batch_elems(b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, elems, ne, "add elements to set");
		i = j;
	}
	free(elems);
	free(rs);
}

/* ---- the ruleset ---- */

static void put_icmpv6_rule(struct eg_batch *b, uint8_t type_lo, uint8_t type_hi, uint8_t hoplimit, bool multicast)
{
	struct rule rr = rule_new("output"), *r = &rr;
	x_nfproto(r, AF_INET6);
	x_l4proto(r, IPPROTO_ICMPV6);
	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
	if (type_lo == type_hi)
		x_cmp8(r, NFT_CMP_EQ, type_lo);
	else {
		x_cmp8(r, NFT_CMP_GTE, type_lo);
		x_cmp8(r, NFT_CMP_LTE, type_hi);
	}
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
	x_cmp8(r, NFT_CMP_EQ, hoplimit);
	if (multicast) {
		x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, 1, NFT_REG_1);
		x_cmp8(r, NFT_CMP_EQ, 0xff);
	}
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, "output");
}

/* The sets this policy can put anything in. The others are left out, with the
 * rules that would look them up: each set and rule is kernel work at every
 * create, and the default policy (no entries) needs none of the 24 address sets. */
static void sets_in_use(const struct egress_policy *p, bool used[EG_N_SETS])
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	memset(used, 0, EG_N_SETS * sizeof *used);
	for (int deny = 0; deny < 2; deny++) {
		const struct egress_list *l = deny ? &p->deny : &p->allow;
		for (size_t i = 0; i < l->n; i++) {
			const struct egress_entry *e = &l->v[i];
			enum eg_shape shape = eg_entry_shape(e);
			if (e->kind == EGRESS_CIDR4 || e->kind == EGRESS_CIDR6)
				used[eg_set_index(EG_STATIC, deny, e->kind == EGRESS_CIDR4 ? AF_INET : AF_INET6, shape)] = true;
			else   /* a name resolves to both families */
				for (int f = 0; f < 2; f++)
					used[eg_set_index(EG_DYNAMIC, deny, fams[f], shape)] = true;
		}
	}
	for (int f = 0; f < 2; f++) {   /* the sentry fills these whatever the policy */
		used[eg_set_index(EG_UPSTREAM, false, fams[f], EG_SHAPE_ANY)] = true;
		used[eg_set_index(EG_GUARD, false, fams[f], EG_SHAPE_ANY)] = true;
	}
}

/* IPv6 needs neighbour discovery to reach even an allowed next hop
 * (router solicitation .. neighbour advertisement, hop limit 255), and the
 * kernel reports its multicast groups (MLD, hop limit 1, to ff02::). Both
 * stay on the link: a router never forwards them. First, because duplicate
 * address detection and early MLD reports leave from :: (no address yet);
 * only the kernel sends these types (an unprivileged ICMPv6 socket sends
 * echo requests only). */
static void put_neighbour_rules(struct eg_batch *b)
{
	put_icmpv6_rule(b, 133, 136, 255, false);
	put_icmpv6_rule(b, 130, 132, 1, true);
	put_icmpv6_rule(b, 143, 143, 1, true);
}

/* The reset that chain refused_answer made for a refused TCP packet of the box
 * comes from the address the box tried and goes back to the box: it
 * must pass the spoof rule. Only the kernel makes such a packet here:
 * conntrack calls it related (a reply to the refused packet's own
 * entry), which no socket of the box can make its packets (no
 * conntrack helper is attached in this netns, no raw socket there). */
static void put_refusal_reset_rule(struct eg_batch *b, const char *chain)
{
	struct rule rr = rule_new("output"), *r = &rr;
	x_ct_state(r, NF_CT_STATE_BIT(IP_CT_RELATED));
	uint32_t zero32 = 0;
	x_cmp(r, NFT_REG_1, NFT_CMP_NEQ, &zero32, 4);
	x_tcp_flag(r, 0x04);   /* RST */
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, chain);
}

/* Every other packet leaves from an address of this namespace. A source
 * chosen with IP_FREEBIND/IPV6_FREEBIND, IP(V6)_PKTINFO or IP_TRANSPARENT
 * would otherwise be delivered (over lo to our own address, or out) and
 * recorded by conntrack as a flow the forged peer started: the container's
 * "replies" to a refused address would then pass as established, and a
 * forged answer could reach the sentry's upstream socket. Before any
 * accept, ct state included. */
static void put_source_rule(struct eg_batch *b, const char *chain)
{
	struct rule rr = rule_new("output"), *r = &rr;
	x_fib_saddr_type(r, NFT_REG_1);
	uint32_t local = RTN_LOCAL;
	x_cmp(r, NFT_REG_1, NFT_CMP_NEQ, &local, sizeof local);
	x_refuse(r, EGRESS_REFUSED_SPOOF);
	put_rule(b, r, chain);
}

/* The sentry's own queries to its upstreams; nobody else talks to a
 * loopback resolver. */
static void put_upstream_rules(struct eg_batch *b, const char *chain)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	struct rule rr, *r = &rr;
	for (int f = 0; f < 2; f++) {       /* the sentry's own queries */
		rr = rule_new("output");
		x_mark(r, NFT_CMP_EQ);
		x_set_match(r, eg_set_index(EG_UPSTREAM, false, fams[f], EG_SHAPE_ANY));
		x_verdict(r, NF_ACCEPT, NULL);
		put_rule(b, r, chain);
	}
	for (int f = 0; f < 2; f++) {       /* nobody else talks to a loopback resolver */
		rr = rule_new("output");
		x_set_match(r, eg_set_index(EG_GUARD, false, fams[f], EG_SHAPE_ANY));
		x_refuse(r, EGRESS_REFUSED_DNS);
		put_rule(b, r, chain);
	}
}

/* Loopback. By daddr too: after the nat redirect the packet goes to
 * 127.0.0.1 but the filter hook still sees the original oif. */
static void put_loopback_rules(struct eg_batch *b, const char *chain)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	struct rule rr, *r = &rr;
	rr = rule_new("output");
	x_nfproto(r, AF_INET);
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 16, 1, NFT_REG_1);
	x_cmp8(r, NFT_CMP_EQ, 127);
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, chain);
	rr = rule_new("output");
	x_nfproto(r, AF_INET6);
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, 16, NFT_REG_1);
	x_cmp(r, NFT_REG_1, NFT_CMP_EQ, lo6, 16);
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, chain);
	rr = rule_new("output");
	uint32_t lo_ifindex = 1; /* LOOPBACK_IFINDEX in every namespace */
	x_meta(r, NFT_META_OIF, NFT_REG_1);
	x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &lo_ifindex, sizeof lo_ifindex);
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, chain);
}

/* replies to connections the container accepted, and the rest of allowed flows */
static void put_established_rule(struct eg_batch *b, const char *chain)
{
	struct rule rr = rule_new("output"), *r = &rr;
	x_ct_state(r, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
	uint32_t zero = 0;
	x_cmp(r, NFT_REG_1, NFT_CMP_NEQ, &zero, 4);
	x_verdict(r, NF_ACCEPT, NULL);
	put_rule(b, r, chain);
}

/* DNS and DNS-over-TLS/QUIC anywhere but through the sentry */
static void put_dns_elsewhere_rules(struct eg_batch *b, const char *chain)
{
	static const uint16_t dns_ports[2] = { 53, 853 };
	static const uint8_t l4[2] = { IPPROTO_UDP, IPPROTO_TCP };
	struct rule rr, *r = &rr;
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			rr = rule_new("output");
			x_l4proto(r, l4[k]);
			x_dport(r, dns_ports[i]);
			x_refuse(r, EGRESS_REFUSED_DNS);
			put_rule(b, r, chain);
		}
}

/* deny wins: every deny set before any allow set; an allow set's match is
 * accepted, or in learn mode goes through its log (learn_to) */
static void put_set_rules(struct eg_batch *b, const char *chain, const bool used[EG_N_SETS], const char *learn_to)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	struct rule rr, *r = &rr;
	for (int deny = 1; deny >= 0; deny--)
		for (int kind = EG_STATIC; kind <= EG_DYNAMIC; kind++)
			for (int f = 0; f < 2; f++)
				for (int shape = 0; shape < EG_N_SHAPES; shape++) {
					unsigned idx = eg_set_index((enum eg_kind)kind, deny, fams[f], (enum eg_shape)shape);
					if (!used[idx])
						continue;
					rr = rule_new("output");
					x_set_match(r, idx);
					if (deny)
						x_refuse(r, EGRESS_REFUSED_DENIED);
					else if (learn_to)
						x_verdict(r, NFT_GOTO, learn_to);
					else
						x_verdict(r, NF_ACCEPT, NULL);
					put_rule(b, r, chain);
				}
}

/* Chain output, in the order the packet meets its rules. */
static void put_output_rules(struct eg_batch *b, const struct egress_policy *p, const bool used[EG_N_SETS])
{
	const char *chain = "output";
	put_neighbour_rules(b);
	put_refusal_reset_rule(b, chain);
	put_source_rule(b, chain);
	put_upstream_rules(b, chain);
	put_loopback_rules(b, chain);
	put_established_rule(b, chain);
	put_dns_elsewhere_rules(b, chain);
	put_set_rules(b, chain, used, learn_allow_chain(p));
	put_learn_output_rules(b, p, chain);
	struct rule rr = rule_new("output");   /* everything else */
	x_refuse(&rr, EGRESS_REFUSED_NOT_ALLOWED);
	put_rule(b, &rr, chain);
}

static void put_nat_rules(struct eg_batch *b, uint16_t sentry_port)
{
	static const uint8_t l4[2] = { IPPROTO_UDP, IPPROTO_TCP };
	for (int k = 0; k < 2; k++) {
		struct rule rr = rule_new("dns"), *r = &rr;
		x_mark(r, NFT_CMP_NEQ);
		x_l4proto(r, l4[k]);
		x_dport(r, 53);
		x_redirect(r, sentry_port);
		put_rule(b, r, "dns");
	}
}

/* The SNI check (sni_policy.h): a new TCP/443 connection the filter will let
 * through goes to the sentry's proxy instead, which judges its server name
 * and connects on (its own sockets carry EGRESS_PROXY_MARK and are left
 * alone). The same sets as the filter, deny first: a destination the filter
 * refuses is not redirected, so the filter refuses and logs it with its real
 * address; only what the filter would pass is ever redirected, and the
 * proxy's own connection meets the filter again: a redirect never widens
 * the policy. Only when some allow entry covers TCP/443. */
static void put_sni_rules(struct eg_batch *b, const struct egress_policy *p, const bool used[EG_N_SETS])
{
	if (!sni_policy_needs_proxy(p))
		return;
	static const int fams[2] = { AF_INET, AF_INET6 };
	for (int deny = 1; deny >= 0; deny--)
		for (int kind = EG_STATIC; kind <= EG_DYNAMIC; kind++)
			for (int f = 0; f < 2; f++)
				for (int shape = 0; shape < EG_N_SHAPES; shape++) {
					unsigned idx = eg_set_index((enum eg_kind)kind, deny, fams[f], (enum eg_shape)shape);
					if (!used[idx])
						continue;
					struct rule rr = rule_new("dns"), *r = &rr;
					x_mark_is(r, NFT_CMP_NEQ, EGRESS_PROXY_MARK);
					x_l4proto(r, IPPROTO_TCP);
					x_dport(r, 443);
					x_set_match(r, idx);
					if (deny)
						x_verdict(r, NF_ACCEPT, NULL);   /* not redirected: the filter refuses it */
					else
						x_redirect(r, EGRESS_SNI_PORT);
					put_rule(b, r, "dns");
				}
	put_learn_nat_rules(b, p, "dns");
}

static int send_batch(int netns_fd, struct eg_batch *b, struct ab_err *err)
{
	struct mnl_socket *nl;
	int r = eg_nl_open(netns_fd, &nl, err);
	if (r < 0)
		return r;
	r = eg_batch_send(nl, b, err);
	mnl_socket_close(nl);
	return r;
}

int eg_ruleset_install(int netns_fd, const struct egress_policy *p, const char *container_id, uint16_t sentry_port,
		       bool replace, const struct eg_more *more, struct ab_err *err)
{
	struct eg_batch b;
	char comment[NFTNL_UDATA_COMMENT_MAXLEN];
	snprintf(comment, sizeof comment, "agentbox egress %s", container_id ? container_id : "");
	if (sentry_port == 0)
		return ab_error(err, 0, "install egress ruleset: sentry port 0");

	eg_batch_init(&b, (uint32_t)time(NULL));
	/* add + delete + add in one batch: replaces an old table atomically;
	 * without the first two, an existing table fails the batch (EEXIST) */
	if (replace) {
		put_table(&b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL);
		put_table(&b, NFT_MSG_DELTABLE, 0, NULL);
	}
	put_table(&b, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, comment);
	put_chain(&b, "refused_answer", NULL, 0, 0, 0);
	put_chain(&b, "refused", NULL, 0, 0, 0);
	put_chain(&b, "output", "filter", NF_INET_LOCAL_OUT, 0, NF_DROP);
	put_chain(&b, "dns", "nat", NF_INET_LOCAL_OUT, NAT_PRIORITY, NF_ACCEPT);
	if (p->learn)
		put_chain(&b, "learn_pass", NULL, 0, 0, 0);
	bool used[EG_N_SETS];
	sets_in_use(p, used);
	for (unsigned i = 0; i < EG_N_SETS; i++)
		if (used[i])
			put_set(&b, i);
	put_static_elements(&b, p);
	put_reject_chain(&b);
	put_refused_chain(&b);
	put_learn_chain(&b, p);
	put_output_rules(&b, p, used);
	put_nat_rules(&b, sentry_port);
	put_sni_rules(&b, p, used);
	if (more)
		more->put(&b, used, more->data);

	int r = send_batch(netns_fd, &b, err);
	eg_batch_free(&b);
	if (r == -EEXIST && !replace) {
		ab_err_clear(err);
		return 1;
	}
	if (r < 0)
		return ab_wrap(err, "install egress ruleset");
	return 0;
}

int egress_install(int netns_fd, const struct egress_policy *p, const char *container_id,
		   uint16_t sentry_port, struct ab_err *err)
{
	return eg_ruleset_install(netns_fd, p, container_id, sentry_port, true, NULL, err);
}

int egress_install_new(int netns_fd, const struct egress_policy *p, const char *container_id,
		       uint16_t sentry_port, struct ab_err *err)
{
	return eg_ruleset_install(netns_fd, p, container_id, sentry_port, false, NULL, err);
}

int egress_remove(int netns_fd, struct ab_err *err)
{
	struct eg_batch b;
	eg_batch_init(&b, (uint32_t)time(NULL));
	put_table(&b, NFT_MSG_DELTABLE, 0, NULL);
	int r = send_batch(netns_fd, &b, err);
	eg_batch_free(&b);
	if (r == -ENOENT) {
		ab_err_clear(err);
		return 0;
	}
	if (r < 0)
		return ab_wrap(err, "remove egress ruleset");
	return 0;
}

/* ---- who installed the ruleset ---- */

struct owner_ctx {
	char *id;
	size_t len;
	bool found;
};

static int comment_cb(const struct nftnl_udata *attr, void *data)
{
	if (nftnl_udata_type(attr) != NFTNL_UDATA_TABLE_COMMENT)
		return 0;
	const char *text = nftnl_udata_get(attr);
	uint8_t len = nftnl_udata_len(attr);
	if (len > 0 && text[len - 1] == 0)
		*(const char **)data = text;
	return 0;
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct owner_ctx *o = data;
	struct nftnl_table *t = nftnl_table_alloc();
	if (!t) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	if (nftnl_table_nlmsg_parse(nlh, t) == 0) {
		uint32_t ulen = 0;
		const void *u = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &ulen);
		const char *comment = NULL;
		if (u && ulen)
			(void)nftnl_udata_parse(u, ulen, comment_cb, &comment);
		static const char prefix[] = "agentbox egress ";
		o->found = true;
		if (comment && strncmp(comment, prefix, sizeof prefix - 1) == 0)
			snprintf(o->id, o->len, "%s", comment + sizeof prefix - 1);
	}
	nftnl_table_free(t);
	return MNL_CB_OK;
}

int egress_table_owner(int netns_fd, char *id, size_t len, struct ab_err *err)
{
	struct mnl_socket *nl;
	int r = eg_nl_open(netns_fd, &nl, err);
	if (r < 0)
		return r;
	char buf[8192];
	uint32_t seq = (uint32_t)time(NULL), portid = mnl_socket_get_portid(nl);
	struct nftnl_table *t = nftnl_table_alloc();
	if (!t) {
		r = ab_error(err, ENOMEM, "ask for table inet " EGRESS_TABLE);
		goto out;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, EGRESS_TABLE);
	/* with an ack: a GET of one object has no NLMSG_DONE to end on */
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET, NLM_F_ACK, seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	id[0] = 0;
	struct owner_ctx o = { .id = id, .len = len };
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = ab_error(err, errno, "ask for table inet " EGRESS_TABLE);
		goto out;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
		if (n < 0) {
			r = ab_error(err, errno, "read table inet " EGRESS_TABLE);
			goto out;
		}
		r = mnl_cb_run(buf, (size_t)n, seq, portid, table_cb, &o);
		if (r < 0) {
			if (errno == ENOENT) {
				r = 0;   /* no agentbox ruleset there */
				goto out;
			}
			r = ab_error(err, errno, "read table inet " EGRESS_TABLE);
			goto out;
		}
		if (r == MNL_CB_STOP)
			break;
	}
	r = o.found ? 1 : 0;
out:
	mnl_socket_close(nl);
	return r;
}
