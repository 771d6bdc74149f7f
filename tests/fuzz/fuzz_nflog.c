/* nfnetlink_log messages as the sentry receives them: the kernel frames them,
 * but the packet inside was written by the container. The whole buffer, one
 * message, and the bare network-layer bytes are each parsed, and every packet
 * reported is formatted the way the deny log formats it. */
#include "fuzz.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "nflog.h"

static void fz_nflog_check(const struct nflog_packet *pkt, void *data)
{
	size_t *n = data;
	FUZZ_CHECK(memchr(pkt->prefix, 0, sizeof pkt->prefix) != NULL, "prefix not terminated");
	FUZZ_CHECK(pkt->family == AF_INET || pkt->family == AF_INET6, "family %d", pkt->family);
	char addr[INET6_ADDRSTRLEN], proto[8];
	FUZZ_CHECK(inet_ntop(pkt->family, pkt->dst, addr, sizeof addr) != NULL, "inet_ntop");
	const char *p = nflog_proto_name(pkt->proto, proto);
	FUZZ_CHECK(p && strlen(p) < 8, "proto name");
	if (n)
		(*n)++;
}

FUZZ_TARGET(nflog)
{
	size_t seen = 0;
	int r = nflog_parse_buffer(data, size, fz_nflog_check, &seen);
	FUZZ_CHECK(r < 0 || (size_t)r == seen, "%d packets reported, %zu seen", r, seen);

	struct nflog_packet pkt;
	memset(&pkt, 0xa5, sizeof pkt);
	if (nflog_parse_msg(data, size, &pkt) == 1)
		fz_nflog_check(&pkt, NULL);
	memset(&pkt, 0xa5, sizeof pkt);
	pkt.prefix[0] = 0;
	if (nflog_parse_payload(data, size, &pkt) == 0)
		fz_nflog_check(&pkt, NULL);
	return 0;
}
