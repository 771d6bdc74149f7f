/* nfnetlink_log: subscribe to the ruleset's log group and parse what the
 * kernel reports about each denied packet. The packet bytes were written by
 * the container, so the parser checks every length. */
#ifndef AGENTBOX_NFLOG_H
#define AGENTBOX_NFLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define NFLOG_PREFIX_MAX 64
#define NFLOG_SNAPLEN 128  /* enough for IPv6 + a few extension headers + ports */

struct nflog_packet {
	char prefix[NFLOG_PREFIX_MAX]; /* the log rule's prefix, "" if none */
	uint16_t group;                /* the nflog group (res_id) */
	bool has_mark;                 /* NFULA_MARK: the packet's mark */
	uint32_t mark;
	bool has_seq;                  /* NFULA_SEQ: the group's count of logged packets */
	uint32_t seq;
	int family;                    /* AF_INET or AF_INET6, from the IP header */
	uint8_t dst[16];
	uint8_t proto;                 /* transport protocol number */
	bool has_port;                 /* tcp, udp, udplite, sctp, dccp */
	uint16_t dport;
	bool has_icmp;
	uint8_t icmp_type;
};

/* Parse the network-layer bytes of a logged packet. */
int nflog_parse_payload(const uint8_t *p, size_t len, struct nflog_packet *ret);
/* Parse one netlink message (header included). Returns 1 for a logged packet,
 * 0 for a message that is not one (ack, other type), negative if malformed. */
int nflog_parse_msg(const uint8_t *msg, size_t len, struct nflog_packet *ret);
/* Walk a received buffer of netlink messages, calling cb for each packet.
 * Returns the number of packets, or negative on a framing error. */
int nflog_parse_buffer(const uint8_t *buf, size_t len,
		       void (*cb)(const struct nflog_packet *pkt, void *data), void *data);
/* A netlink socket bound to group in the current netns, copying NFLOG_SNAPLEN
 * bytes of each packet and numbering them (NFULA_SEQ: a gap is what the
 * kernel dropped when the socket was full). batch: deliver up to that many at
 * once (within 100 ms) into a receive buffer of rcvbuf bytes, for a group that
 * may see floods; 0: each packet at once. Needs CAP_NET_ADMIN now; reading
 * later needs none. */
int nflog_open(uint16_t group, unsigned batch, int rcvbuf, int *ret_fd, struct ab_err *err);
/* Protocol name for logs: "tcp", "udp", "icmp", "icmpv6", or the number. */
const char *nflog_proto_name(uint8_t proto, char buf[8]);

#endif
