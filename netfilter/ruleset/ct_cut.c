/* A live deny (egress deny) also ends the flows the box has open to what it
 * now denies: the ruleset lets established flows through before any deny
 * set, so their conntrack entries are deleted; the next packet of such a flow
 * is new to conntrack, meets the deny set and is refused (and logged). Only
 * CIDR entries: the addresses a denied name had are not known here. */
#include <netinet/in.h> /* before the linux/ headers */
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "egress_internal.h"
#include "ruleset.h"
#include "util.h"

#define CUT_MAX 4096

struct cut {
	const struct egress_list *deny;
	struct nlattr **tuples;   /* copies of the CTA_TUPLE_ORIG of each flow to end */
	size_t n;
	int error;
};

/* The destination of an original tuple, as an entry: its address, protocol, port. */
static bool tuple_dst(const struct nlattr *tuple, struct egress_entry *e)
{
	const struct nlattr *a, *b;
	memset(e, 0, sizeof *e);
	bool have = false;
	mnl_attr_for_each_nested(a, tuple) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_IP) {
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == CTA_IP_V4_DST && mnl_attr_get_payload_len(b) == 4) {
					e->kind = EGRESS_CIDR4;
					e->prefix = 32;
					memcpy(e->addr, mnl_attr_get_payload(b), 4);
					have = true;
				} else if (mnl_attr_get_type(b) == CTA_IP_V6_DST && mnl_attr_get_payload_len(b) == 16) {
					e->kind = EGRESS_CIDR6;
					e->prefix = 128;
					memcpy(e->addr, mnl_attr_get_payload(b), 16);
					have = true;
				}
			}
		} else if (mnl_attr_get_type(a) == CTA_TUPLE_PROTO) {
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == CTA_PROTO_NUM)
					e->proto = mnl_attr_get_u8(b);
				else if (mnl_attr_get_type(b) == CTA_PROTO_DST_PORT)
					e->port = ntohs(mnl_attr_get_u16(b));
			}
		}
	}
	return have;
}

static int flow_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cut *c = data;
	const struct nlattr *a;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != CTA_TUPLE_ORIG)
			continue;
		struct egress_entry e;
		if (!tuple_dst(a, &e))
			break;
		/* a flow covered by a deny entry: its protocol and port count
		 * only where the entry has them */
		uint8_t proto = e.proto;
		uint16_t port = e.port;
		bool hit = false;
		for (size_t i = 0; i < c->deny->n && !hit; i++) {
			const struct egress_entry *d = &c->deny->v[i];
			if (d->kind != e.kind || (d->proto && d->proto != proto) || (d->port && d->port != port))
				continue;
			struct egress_list one = { (struct egress_entry *)d, 1, 1 };
			struct egress_entry bare = e;
			bare.proto = d->proto;
			bare.port = d->port;
			hit = egress_entry_covered(&one, &bare);
		}
		if (!hit || c->n >= CUT_MAX)
			break;
		struct nlattr **v = realloc(c->tuples, (c->n + 1) * sizeof *v);
		struct nlattr *copy = malloc(a->nla_len);
		if (!v || !copy) {
			free(copy);
			if (v)
				c->tuples = v;
			c->error = ENOMEM;
			return MNL_CB_ERROR;
		}
		memcpy(copy, a, a->nla_len);
		c->tuples = v;
		c->tuples[c->n++] = copy;
		break;
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *ct_msg(char *buf, uint16_t type, uint16_t flags, uint32_t seq, uint8_t family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = 0;
	return nlh;
}

int egress_conntrack_cut(int netns_fd, const struct egress_list *deny, size_t *ret_cut, struct ab_err *err)
{
	*ret_cut = 0;
	bool any = false;
	for (size_t i = 0; i < deny->n; i++)
		any |= deny->v[i].kind == EGRESS_CIDR4 || deny->v[i].kind == EGRESS_CIDR6;
	if (!any)
		return 0;
	struct mnl_socket *nl;
	if (eg_nl_open(netns_fd, &nl, err) < 0)
		return -1;
	char *buf = malloc(MNL_SOCKET_BUFFER_SIZE * 4);
	struct cut c = { .deny = deny };
	int r = 0;
	uint32_t seq = (uint32_t)time(NULL), portid = mnl_socket_get_portid(nl);
	if (!buf) {
		r = ab_error(err, ENOMEM, "conntrack");
		goto out;
	}
	struct nlmsghdr *nlh = ct_msg(buf, IPCTNL_MSG_CT_GET, NLM_F_DUMP, seq, AF_UNSPEC);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = ab_error(err, errno, "conntrack: list the flows");
		goto out;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
		if (n < 0) {
			r = ab_error(err, errno, "conntrack: list the flows");
			goto out;
		}
		int cb = mnl_cb_run(buf, (size_t)n, seq, portid, flow_cb, &c);
		if (cb < 0) {
			r = ab_error(err, c.error ? c.error : errno, "conntrack: list the flows");
			goto out;
		}
		if (cb == 0)
			break;
	}
	/* one delete each; a flow gone meanwhile (ENOENT) is no error */
	for (size_t i = 0; i < c.n; i++) {
		const struct nlattr *t = c.tuples[i];
		const struct nlattr *ip = NULL, *x;
		mnl_attr_for_each_nested(x, t)
			if (mnl_attr_get_type(x) == CTA_TUPLE_IP)
				ip = x;
		bool v6 = false;
		mnl_attr_for_each_nested(x, ip)
			v6 |= mnl_attr_get_type(x) == CTA_IP_V6_DST;
		nlh = ct_msg(buf, IPCTNL_MSG_CT_DELETE, NLM_F_ACK, ++seq, v6 ? AF_INET6 : AF_INET);
		memcpy(mnl_nlmsg_get_payload_tail(nlh), t, t->nla_len);
		nlh->nlmsg_len += MNL_ALIGN(t->nla_len);
		if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
			continue;
		ssize_t n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
		if (n > 0 && mnl_cb_run(buf, (size_t)n, seq, portid, NULL, NULL) >= 0)
			(*ret_cut)++;
	}
out:
	for (size_t i = 0; i < c.n; i++)
		free(c.tuples[i]);
	free(c.tuples);
	free(buf);
	mnl_socket_close(nl);
	return r;
}
