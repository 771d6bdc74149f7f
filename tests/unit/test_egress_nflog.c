/* nfnetlink_log parsing: the kernel frames the message, the container wrote
 * the packet; both are checked. */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>

#include "nflog.h"
#include "tap.h"
#include "util.h"

struct buf {
	uint8_t b[4096] __attribute__((aligned(4)));
	size_t n;
};

static size_t msg_begin(struct buf *m, uint16_t type)
{
	size_t at = m->n;
	struct nlmsghdr h = { .nlmsg_type = type };
	memcpy(m->b + m->n, &h, sizeof h);
	m->n += NLMSG_HDRLEN;
	struct nfgenmsg g = { .nfgen_family = AF_INET, .version = NFNETLINK_V0, .res_id = htons(171) };
	memcpy(m->b + m->n, &g, sizeof g);
	m->n += NLMSG_ALIGN(sizeof g);
	return at;
}

static void msg_end(struct buf *m, size_t at)
{
	uint32_t len = (uint32_t)(m->n - at);
	memcpy(m->b + at, &len, 4);
}

static void attr(struct buf *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };
	memcpy(m->b + m->n, &a, sizeof a);
	memcpy(m->b + m->n + NLA_HDRLEN, data, len);
	m->n += NLA_ALIGN(NLA_HDRLEN + len);
}

static size_t ipv4_tcp(uint8_t *p, const char *dst, uint16_t dport, uint16_t frag)
{
	memset(p, 0, 40);
	p[0] = 0x45;
	p[6] = (uint8_t)(frag >> 8);
	p[7] = (uint8_t)frag;
	p[8] = 64;
	p[9] = IPPROTO_TCP;
	inet_pton(AF_INET, "198.18.0.2", p + 12);
	inet_pton(AF_INET, dst, p + 16);
	p[20] = 0x9c;
	p[22] = (uint8_t)(dport >> 8);
	p[23] = (uint8_t)dport;
	return 40;
}

static size_t ipv6_udp_hbh(uint8_t *p, const char *dst, uint16_t dport)
{
	memset(p, 0, 56);
	p[0] = 0x60;
	p[6] = 0;      /* hop-by-hop first */
	p[7] = 64;
	inet_pton(AF_INET6, "2001:db8::2", p + 8);
	inet_pton(AF_INET6, dst, p + 24);
	p[40] = IPPROTO_UDP;   /* hop-by-hop: next header, length 0 (8 bytes) */
	p[48 + 2] = (uint8_t)(dport >> 8);
	p[48 + 3] = (uint8_t)dport;
	return 56;
}

static struct nflog_packet seen[4];
static int n_seen;
static void collect(const struct nflog_packet *pkt, void *data)
{
	(void)data;
	if (n_seen < 4)
		seen[n_seen] = *pkt;
	n_seen++;
}

int main(void)
{
	struct buf m = {0};
	struct nflog_packet pkt;
	uint8_t ip[128];
	char a[INET6_ADDRSTRLEN];

	/* IPv4 TCP with prefix and a packet header attribute before it */
	size_t at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	struct nfulnl_msg_packet_hdr ph = { .hw_protocol = htons(0x0800), .hook = 3 };
	attr(&m, NFULA_PACKET_HDR, &ph, sizeof ph);
	attr(&m, NFULA_PREFIX, "deny", 5);
	attr(&m, NFULA_PAYLOAD, ip, ipv4_tcp(ip, "198.18.1.20", 443, 0));
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == 1, "IPv4 TCP packet");
	is_str(pkt.prefix, "deny", "prefix");
	ok(pkt.family == AF_INET && pkt.proto == IPPROTO_TCP && pkt.has_port && pkt.dport == 443, "tcp dport 443");
	is_str(inet_ntop(AF_INET, pkt.dst, a, sizeof a), "198.18.1.20", "IPv4 destination");

	/* second message: IPv6 UDP behind a hop-by-hop header; parse the buffer */
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PREFIX, "default", 8);
	attr(&m, NFULA_PAYLOAD, ip, ipv6_udp_hbh(ip, "2001:db8:1::53", 853));
	msg_end(&m, at);
	n_seen = 0;
	int np = nflog_parse_buffer(m.b, m.n, collect, NULL);   /* ok() evaluates twice */
	ok(np == 2 && n_seen == 2, "two packets in one buffer");
	ok(seen[1].family == AF_INET6 && seen[1].proto == IPPROTO_UDP && seen[1].dport == 853, "IPv6 UDP past hop-by-hop");
	is_str(inet_ntop(AF_INET6, seen[1].dst, a, sizeof a), "2001:db8:1::53", "IPv6 destination");
	is_str(seen[1].prefix, "default", "second prefix");

	/* a non-first IPv4 fragment carries no ports */
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PAYLOAD, ip, ipv4_tcp(ip, "198.18.1.20", 443, 0x0010));
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == 1 && !pkt.has_port && pkt.prefix[0] == 0, "fragment: no port, no prefix");

	/* ICMP */
	ipv4_tcp(ip, "198.18.1.21", 0, 0);
	ip[9] = IPPROTO_ICMP;
	ip[20] = 8;
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PAYLOAD, ip, 28);
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == 1 && pkt.has_icmp && pkt.icmp_type == 8 && !pkt.has_port, "ICMP echo");
	char pb[8];
	is_str(nflog_proto_name(IPPROTO_ICMP, pb), "icmp", "proto name icmp");
	is_str(nflog_proto_name(47, pb), "47", "proto name by number");

	/* a prefix without NUL, longer than our buffer */
	char longp[100];
	memset(longp, 'p', sizeof longp);
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PREFIX, longp, sizeof longp);
	attr(&m, NFULA_PAYLOAD, ip, ipv4_tcp(ip, "198.18.1.20", 80, 0));
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == 1 && strlen(pkt.prefix) == NFLOG_PREFIX_MAX - 1, "long prefix cut");

	/* malformed */
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PAYLOAD, ip, 19);
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == -EBADMSG, "IPv4 header of 19 bytes");
	ip[0] = 0x4f;   /* IHL 60 > 40 bytes present */
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PAYLOAD, ip, 40);
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == -EBADMSG, "IHL beyond the payload");
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PREFIX, "x", 2);
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == -EBADMSG, "no payload");
	m.n = 0;
	at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PAYLOAD, ip, ipv4_tcp(ip, "198.18.1.20", 80, 0));
	msg_end(&m, at);
	struct nlattr bad;
	memcpy(&bad, m.b + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg)), sizeof bad);
	bad.nla_len = 2000;
	memcpy(m.b + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg)), &bad, sizeof bad);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == -EBADMSG, "attribute longer than the message");
	uint32_t huge = 100000;
	memcpy(m.b, &huge, 4);
	ok(nflog_parse_buffer(m.b, m.n, collect, NULL) == -EBADMSG, "message longer than the buffer");
	ok(nflog_parse_msg(m.b, 8, &pkt) == -EBADMSG, "8 bytes");
	m.n = 0;
	at = msg_begin(&m, NLMSG_ERROR);
	msg_end(&m, at);
	ok(nflog_parse_msg(m.b, m.n, &pkt) == 0, "an ack is not a packet");
	ok(nflog_parse_payload((const uint8_t *)"\x70", 1, &pkt) == -EBADMSG, "IP version 7");

	/* IPv6: extension header running past the end, non-first fragment */
	ipv6_udp_hbh(ip, "2001:db8::1", 53);
	ip[41] = 200;
	ok(nflog_parse_payload(ip, 56, &pkt) == 0 && !pkt.has_port, "hop-by-hop past the end: no port, no crash");
	ipv6_udp_hbh(ip, "2001:db8::1", 53);
	ip[6] = 44;
	ip[40] = IPPROTO_UDP;
	ip[42] = 0;
	ip[43] = 0x08;   /* offset 1 */
	ok(nflog_parse_payload(ip, 56, &pkt) == 0 && !pkt.has_port && pkt.proto == IPPROTO_UDP, "IPv6 later fragment");

	/* random corruption */
	uint32_t seed = 99;
	for (int i = 0; i < 20000; i++) {
		m.n = 0;
		at = msg_begin(&m, NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET);
		attr(&m, NFULA_PREFIX, "deny", 5);
		attr(&m, NFULA_PAYLOAD, ip, i & 1 ? ipv6_udp_hbh(ip, "2001:db8::1", 53) : ipv4_tcp(ip, "198.18.0.1", 1, 0));
		msg_end(&m, at);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245 + 12345;
			m.b[(seed >> 8) % m.n] ^= (uint8_t)(seed >> 16);
		}
		(void)nflog_parse_buffer(m.b, m.n - (seed % 7), collect, NULL);
	}
	ok(1, "random corruption survived");
	return tap_done();
}
