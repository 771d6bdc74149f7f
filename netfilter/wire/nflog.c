/* nfnetlink_log subscription and a bounds-checked parser of its messages. */
#include "nflog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static void transport(const uint8_t *p, size_t len, struct nflog_packet *pkt)
{
	switch (pkt->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		if (len >= 4) {
			pkt->has_port = true;
			pkt->dport = get16(p + 2);
		}
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (len >= 1) {
			pkt->has_icmp = true;
			pkt->icmp_type = p[0];
		}
		break;
	}
}

int nflog_parse_payload(const uint8_t *p, size_t len, struct nflog_packet *pkt)
{
	pkt->has_port = pkt->has_icmp = false;
	pkt->dport = 0;
	memset(pkt->dst, 0, sizeof pkt->dst);
	if (len < 1)
		return -EBADMSG;
	unsigned version = p[0] >> 4;
	if (version == 4) {
		if (len < 20)
			return -EBADMSG;
		size_t ihl = (size_t)(p[0] & 0xf) * 4;
		if (ihl < 20 || ihl > len)
			return -EBADMSG;
		pkt->family = AF_INET;
		pkt->proto = p[9];
		memcpy(pkt->dst, p + 16, 4);
		/* Only the first fragment carries the transport header. */
		if ((get16(p + 6) & 0x1fff) == 0)
			transport(p + ihl, len - ihl, pkt);
		return 0;
	}
	if (version != 6)
		return -EBADMSG;
	if (len < 40)
		return -EBADMSG;
	pkt->family = AF_INET6;
	memcpy(pkt->dst, p + 24, 16);
	uint8_t next = p[6];
	size_t off = 40;
	/* Extension headers, a bounded number of them. */
	for (int i = 0; i < 8; i++) {
		if (next == 0 || next == 43 || next == 60) {   /* hop-by-hop, routing, dst opts */
			if (off + 2 > len)
				break;
			uint8_t nh = p[off];
			off += ((size_t)p[off + 1] + 1) * 8;
			next = nh;
		} else if (next == 44) {                       /* fragment */
			if (off + 8 > len)
				break;
			uint8_t nh = p[off];
			bool first = (get16(p + off + 2) & 0xfff8) == 0;
			off += 8;
			next = nh;
			if (!first) {
				pkt->proto = next;
				return 0;
			}
		} else if (next == 51) {                       /* AH: length in 4-byte units */
			if (off + 2 > len)
				break;
			uint8_t nh = p[off];
			off += ((size_t)p[off + 1] + 2) * 4;
			next = nh;
		} else
			break;
		if (off > len)
			break;
	}
	pkt->proto = next;
	if (off <= len)
		transport(p + off, len - off, pkt);
	return 0;
}

int nflog_parse_msg(const uint8_t *msg, size_t len, struct nflog_packet *pkt)
{
	struct nlmsghdr nlh;
	if (len < sizeof nlh)
		return -EBADMSG;
	memcpy(&nlh, msg, sizeof nlh);
	if (nlh.nlmsg_len < sizeof nlh || nlh.nlmsg_len > len)
		return -EBADMSG;
	len = nlh.nlmsg_len;
	if (nlh.nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
		return 0;
	size_t off = NLMSG_HDRLEN;
	if (off + sizeof(struct nfgenmsg) > len)
		return -EBADMSG;
	off += NLMSG_ALIGN(sizeof(struct nfgenmsg));

	const uint8_t *payload = NULL;
	size_t payload_len = 0;
	pkt->prefix[0] = 0;
	pkt->has_seq = pkt->has_mark = false;
	pkt->seq = pkt->mark = 0;
	{
		struct nfgenmsg g;
		memcpy(&g, msg + NLMSG_HDRLEN, sizeof g);
		pkt->group = ntohs(g.res_id);
	}
	while (off + sizeof(struct nlattr) <= len) {
		struct nlattr a;
		memcpy(&a, msg + off, sizeof a);
		if (a.nla_len < sizeof a || a.nla_len > len - off)
			return -EBADMSG;
		const uint8_t *data = msg + off + NLA_HDRLEN;
		size_t dlen = a.nla_len - NLA_HDRLEN;
		switch (a.nla_type & NLA_TYPE_MASK) {
		case NFULA_PAYLOAD:
			payload = data;
			payload_len = dlen;
			break;
		case NFULA_MARK:
			if (dlen >= 4) {
				uint32_t v;
				memcpy(&v, data, 4);
				pkt->mark = ntohl(v);
				pkt->has_mark = true;
			}
			break;
		case NFULA_SEQ:
			if (dlen >= 4) {
				uint32_t v;
				memcpy(&v, data, 4);
				pkt->seq = ntohl(v);
				pkt->has_seq = true;
			}
			break;
		case NFULA_PREFIX: {
			/* NUL-terminated by the kernel; do not trust that */
			size_t n = strnlen((const char *)data, dlen);
			if (n >= sizeof pkt->prefix)
				n = sizeof pkt->prefix - 1;
			memcpy(pkt->prefix, data, n);
			pkt->prefix[n] = 0;
			break;
		}
		}
		off += NLA_ALIGN(a.nla_len);
	}
	if (!payload)
		return -EBADMSG;
	int r = nflog_parse_payload(payload, payload_len, pkt);
	return r < 0 ? r : 1;
}

int nflog_parse_buffer(const uint8_t *buf, size_t len,
		       void (*cb)(const struct nflog_packet *pkt, void *data), void *data)
{
	size_t off = 0;
	int n = 0;
	while (len - off >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr nlh;
		memcpy(&nlh, buf + off, sizeof nlh);
		if (nlh.nlmsg_len < sizeof nlh || nlh.nlmsg_len > len - off)
			return -EBADMSG;
		struct nflog_packet pkt;
		/* A malformed packet message is skipped; the framing is still sound. */
		if (nflog_parse_msg(buf + off, nlh.nlmsg_len, &pkt) == 1) {
			cb(&pkt, data);
			n++;
		}
		size_t step = NLMSG_ALIGN(nlh.nlmsg_len);
		if (step > len - off)
			break;
		off += step;
	}
	return n;
}

const char *nflog_proto_name(uint8_t proto, char buf[8])
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	case IPPROTO_SCTP: return "sctp";
	}
	snprintf(buf, 8, "%u", proto);
	return buf;
}

/* Send one NFULNL config message and wait for its ack. */
static int nflog_config(struct mnl_socket *nl, uint16_t group, uint8_t family, void (*put)(struct nlmsghdr *, void *),
			void *arg, const char *what, struct ab_err *err)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	struct nfgenmsg *nfg = mnl_nlmsg_put_extra_header(nlh, sizeof *nfg);
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(group);
	put(nlh, arg);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return ab_error(err, errno, "nflog %s: send", what);
	char rbuf[512];
	ssize_t n = mnl_socket_recvfrom(nl, rbuf, sizeof rbuf);
	if (n < 0)
		return ab_error(err, errno, "nflog %s: receive", what);
	if (mnl_cb_run(rbuf, (size_t)n, nlh->nlmsg_seq, mnl_socket_get_portid(nl), NULL, NULL) < 0)
		return ab_error(err, errno, "nflog %s", what);
	return 0;
}

static void put_bind(struct nlmsghdr *nlh, void *arg)
{
	struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
	mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof cmd, &cmd);
}

struct mode {
	unsigned batch;
};

static void put_mode(struct nlmsghdr *nlh, void *arg)
{
	const struct mode *m = arg;
	struct nfulnl_msg_config_mode mode = { .copy_range = htonl(NFLOG_SNAPLEN), .copy_mode = NFULNL_COPY_PACKET };
	mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof mode, &mode);
	/* the first packets of destinations each at once; repeats in batches */
	mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(m->batch ? m->batch : 1));
	if (m->batch) {
		mnl_attr_put_u32(nlh, NFULA_CFG_TIMEOUT, htonl(10));   /* 1/100 s */
		mnl_attr_put_u32(nlh, NFULA_CFG_NLBUFSIZ, htonl(32768));
	}
	/* a sequence number per packet of the group: gaps are drops */
	mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons(NFULNL_CFG_F_SEQ));
}

int nflog_open(uint16_t group, unsigned batch, int rcvbuf, int *ret_fd, struct ab_err *err)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl)
		return ab_error(err, errno, "nflog: open netlink socket");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;
		mnl_socket_close(nl);
		return ab_error(err, e, "nflog: bind netlink socket");
	}
	struct mode m = { batch };
	int r = nflog_config(nl, group, AF_UNSPEC, put_bind, NULL, "bind group", err);
	if (r >= 0)
		r = nflog_config(nl, group, AF_UNSPEC, put_mode, &m, "set copy mode", err);
	if (r < 0) {
		mnl_socket_close(nl);
		return ab_wrap(err, "group %u", group);
	}
	/* FORCE needs CAP_NET_ADMIN, which the caller has now; else what we may */
	int fd0 = mnl_socket_get_fd(nl);
	if (rcvbuf > 0 && setsockopt(fd0, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
		(void)setsockopt(fd0, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	/* Take the fd out of the libmnl wrapper: the sentry only needs recv(). */
	int fd = fcntl(fd0, F_DUPFD_CLOEXEC, 3);
	int e = errno;
	mnl_socket_close(nl);
	if (fd < 0)
		return ab_error(err, e, "nflog: dup socket");
	*ret_fd = fd;
	return 0;
}
