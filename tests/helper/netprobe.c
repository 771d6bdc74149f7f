/* netprobe: the network tricks of tests/security/egress-*.bats, as an
 * unprivileged process inside a box would play them (no CAP_NET_RAW, no
 * CAP_NET_ADMIN: what the default capability sets of runc and Docker leave).
 * Static, no dependencies: it goes into any rootfs. One line of result each.
 *
 *   netprobe listen-udp ADDR PORT SECONDS
 *       print "from PEER PORT: TEXT" for each datagram within SECONDS, then "done"
 *   netprobe send-udp SRC|- DST PORT TEXT
 *       one datagram, from SRC (bound with IP_FREEBIND / IPV6_FREEBIND: any
 *       address, ours or not) or from what the kernel picks ("-")
 *   netprobe send-pktinfo SRC DST PORT TEXT
 *       one datagram whose source address is chosen per message
 *       (IP_PKTINFO / IPV6_PKTINFO), from a socket with IP(V6)_FREEBIND
 *   netprobe ct-hijack OWN PEER PORT TEXT
 *       the conntrack trick: a datagram forged from PEER:PORT to OWN:PORT
 *       (over lo), then TEXT from OWN:PORT to PEER:PORT as if it replied
 *   netprobe tcp-spoof SRC DST PORT
 *       a TCP connect from SRC (IP_FREEBIND) to DST:PORT: "connected" or the error
 *   netprobe dns-query SERVER NAME [A|AAAA] [TIMEOUT_MS]
 *       ask SERVER:53 over UDP; prints "rcode=N" and each address, or "timeout"
 *   netprobe dns-forge SERVER NAME ADDR SECONDS
 *       for SECONDS, spray forged answers "NAME A|AAAA ADDR" from SERVER:53
 *       (IP(V6)_FREEBIND) at every UDP socket of this netns that is connected
 *       to SERVER:53 (found in /proc/net/udp{,6}), for every DNS id; prints
 *       how many sockets it aimed at and datagrams it sent
 *   netprobe flood-udp DST PORT COUNT
 *       COUNT datagrams to DST:PORT as fast as possible; "sent N"
 *   netprobe scan-udp DST FIRST_PORT COUNT
 *       one datagram to each of COUNT ports from FIRST_PORT; "sent N"
 *
 * Exit status 0 when the probe ran (its result is on stdout), 2 on bad usage. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_FREEBIND
#define IP_FREEBIND 15
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif

static int usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of netprobe.c\n");
	return 2;
}

static int addr_of(const char *text, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof *in;
		return AF_INET;
	}
	if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof *in6;
		return AF_INET6;
	}
	return -1;
}

static void text_of(const struct sockaddr_storage *ss, char *buf, size_t len, unsigned *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &in->sin_addr, buf, (socklen_t)len);
		*port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, buf, (socklen_t)len);
		*port = ntohs(in6->sin6_port);
	}
}

/* A socket that may bind any address (ours or not): what IP(V6)_FREEBIND
 * gives any process, no capability needed. */
static int freebind_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	if (family == AF_INET)
		(void)setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
	else {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one);
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	return fd;
}

static void report_errno(const char *what)
{
	printf("%s failed: %s\n", what, strerror(errno));
}

static int cmd_listen_udp(char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = addr_of(argv[0], (uint16_t)atoi(argv[1]), &ss, &len);
	if (fam < 0)
		return usage();
	int fd = freebind_socket(fam, SOCK_DGRAM);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0) {
		report_errno("bind");
		return 0;
	}
	printf("listening\n");
	fflush(stdout);
	int ms = atoi(argv[2]) * 1000;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = ms - ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		char buf[512], peer[INET6_ADDRSTRLEN];
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &flen);
		if (n < 0)
			continue;
		buf[n] = 0;
		unsigned port;
		text_of(&from, peer, sizeof peer, &port);
		printf("from %s %u: %s\n", peer, port, buf);
		fflush(stdout);
	}
	printf("done\n");
	return 0;
}

static int send_from(const char *src, const char *dst, uint16_t port, const char *text, uint16_t sport)
{
	struct sockaddr_storage to, from;
	socklen_t tlen, flen;
	int fam = addr_of(dst, port, &to, &tlen);
	if (fam < 0)
		return usage();
	int fd = freebind_socket(fam, SOCK_DGRAM);
	if (fd < 0) {
		report_errno("socket");
		return 0;
	}
	if (strcmp(src, "-") != 0) {
		if (addr_of(src, sport, &from, &flen) != fam)
			return usage();
		if (bind(fd, (struct sockaddr *)&from, flen) < 0) {
			report_errno("bind");
			close(fd);
			return 0;
		}
	}
	if (sendto(fd, text, strlen(text), 0, (struct sockaddr *)&to, tlen) < 0)
		report_errno("send");
	else
		printf("sent\n");
	close(fd);
	return 0;
}

static int cmd_send_pktinfo(char **argv)
{
	struct sockaddr_storage to, from;
	socklen_t tlen, flen;
	int fam = addr_of(argv[1], (uint16_t)atoi(argv[2]), &to, &tlen);
	if (fam < 0 || addr_of(argv[0], 0, &from, &flen) != fam)
		return usage();
	int fd = freebind_socket(fam, SOCK_DGRAM);
	if (fd < 0) {
		report_errno("socket");
		return 0;
	}
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct iovec iov = { argv[3], strlen(argv[3]) };
	struct msghdr mh = { .msg_name = &to, .msg_namelen = tlen, .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf };
	struct cmsghdr *c = (struct cmsghdr *)u.buf;
	if (fam == AF_INET) {
		struct in_pktinfo pi = { .ipi_spec_dst = ((struct sockaddr_in *)&from)->sin_addr };
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof pi);
		memcpy(CMSG_DATA(c), &pi, sizeof pi);
		mh.msg_controllen = CMSG_SPACE(sizeof pi);
	} else {
		struct in6_pktinfo pi = { .ipi6_addr = ((struct sockaddr_in6 *)&from)->sin6_addr };
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof pi);
		memcpy(CMSG_DATA(c), &pi, sizeof pi);
		mh.msg_controllen = CMSG_SPACE(sizeof pi);
	}
	if (sendmsg(fd, &mh, 0) < 0)
		report_errno("send");
	else
		printf("sent\n");
	close(fd);
	return 0;
}

static int cmd_ct_hijack(char **argv)
{
	uint16_t port = (uint16_t)atoi(argv[2]);
	struct sockaddr_storage own, peer;
	socklen_t olen, plen;
	int fam = addr_of(argv[0], port, &own, &olen);
	if (fam < 0 || addr_of(argv[1], port, &peer, &plen) != fam)
		return usage();
	/* our end, bound first so the forged datagram has somewhere to land */
	int mine = freebind_socket(fam, SOCK_DGRAM);
	if (mine < 0 || bind(mine, (struct sockaddr *)&own, olen) < 0) {
		report_errno("bind own");
		return 0;
	}
	int forger = freebind_socket(fam, SOCK_DGRAM);
	if (forger < 0 || bind(forger, (struct sockaddr *)&peer, plen) < 0) {
		report_errno("bind forged");
		return 0;
	}
	struct pollfd p = { .fd = mine, .events = POLLIN };
	if (sendto(forger, "hello", 5, 0, (struct sockaddr *)&own, olen) < 0)
		printf("forged datagram not sent: %s\n", strerror(errno));
	else if (poll(&p, 1, 1000) > 0) {
		char buf[64];
		(void)!recv(mine, buf, sizeof buf, 0);
		printf("forged datagram arrived\n");
	} else
		printf("forged datagram lost\n");
	if (sendto(mine, argv[3], strlen(argv[3]), 0, (struct sockaddr *)&peer, plen) < 0)
		report_errno("reply");
	else
		printf("replied\n");
	return 0;
}

static int cmd_tcp_spoof(char **argv)
{
	struct sockaddr_storage to, from;
	socklen_t tlen, flen;
	int fam = addr_of(argv[1], (uint16_t)atoi(argv[2]), &to, &tlen);
	if (fam < 0 || addr_of(argv[0], 0, &from, &flen) != fam)
		return usage();
	int fd = freebind_socket(fam, SOCK_STREAM);
	if (fd < 0 || bind(fd, (struct sockaddr *)&from, flen) < 0) {
		report_errno("bind");
		return 0;
	}
	struct timeval tv = { 2, 0 };
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&to, tlen) < 0)
		report_errno("connect");
	else
		printf("connected\n");
	return 0;
}

/* ---- DNS ---- */

static size_t put_name(uint8_t *p, const char *name)
{
	size_t o = 0;
	const char *s = name;
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s);
		p[o++] = (uint8_t)n;
		memcpy(p + o, s, n);
		o += n;
		s += n;
		if (*s == '.')
			s++;
	}
	p[o++] = 0;
	return o;
}

static size_t build_query(uint8_t *q, uint16_t id, const char *name, uint16_t type)
{
	memset(q, 0, 12);
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	q[2] = 0x01;            /* RD */
	q[5] = 1;               /* one question */
	size_t o = 12 + put_name(q + 12, name);
	q[o++] = (uint8_t)(type >> 8);
	q[o++] = (uint8_t)type;
	q[o++] = 0;
	q[o++] = 1;             /* IN */
	return o;
}

static int cmd_dns_query(int argc, char **argv)
{
	uint16_t type = argc > 2 && strcmp(argv[2], "AAAA") == 0 ? 28 : 1;
	int timeout = argc > 3 ? atoi(argv[3]) : 3000;
	struct sockaddr_storage to;
	socklen_t tlen;
	int fam = addr_of(argv[0], 53, &to, &tlen);
	if (fam < 0)
		return usage();
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, tlen) < 0) {
		report_errno("connect");
		return 0;
	}
	uint8_t q[512], a[4096];
	uint16_t id;
	(void)!getentropy(&id, sizeof id);
	size_t qlen = build_query(q, id, argv[1], type);
	if (send(fd, q, qlen, 0) < 0) {
		report_errno("send");
		return 0;
	}
	struct pollfd p = { .fd = fd, .events = POLLIN };
	for (;;) {
		if (poll(&p, 1, timeout) <= 0) {
			printf("timeout\n");
			return 0;
		}
		ssize_t n = recv(fd, a, sizeof a, 0);
		if (n < 12 || a[0] != q[0] || a[1] != q[1])
			continue;
		printf("rcode=%d\n", a[3] & 0xf);
		/* the answers: skip the question, then print A/AAAA rdata */
		size_t o = qlen;
		unsigned an = (unsigned)(a[6] << 8 | a[7]);
		for (unsigned i = 0; i < an && o + 12 <= (size_t)n; i++) {
			while (o < (size_t)n && a[o] && (a[o] & 0xc0) != 0xc0)
				o += (size_t)a[o] + 1;
			o += o < (size_t)n && a[o] ? 2 : 1;
			if (o + 10 > (size_t)n)
				break;
			unsigned t = (unsigned)(a[o] << 8 | a[o + 1]), rdlen = (unsigned)(a[o + 8] << 8 | a[o + 9]);
			o += 10;
			char buf[INET6_ADDRSTRLEN];
			if (t == 1 && rdlen == 4 && o + 4 <= (size_t)n)
				printf("%s\n", inet_ntop(AF_INET, a + o, buf, sizeof buf));
			if (t == 28 && rdlen == 16 && o + 16 <= (size_t)n)
				printf("%s\n", inet_ntop(AF_INET6, a + o, buf, sizeof buf));
			o += rdlen;
		}
		return 0;
	}
}

/* The local ends (address and port) of the UDP sockets of this netns that are
 * connected to SERVER:53, from /proc/net/udp{,6}. */
static size_t connected_ends(int fam, const struct sockaddr_storage *server, struct sockaddr_storage *ends, size_t max)
{
	FILE *f = fopen(fam == AF_INET ? "/proc/net/udp" : "/proc/net/udp6", "r");
	if (!f)
		return 0;
	char line[512];
	size_t n = 0;
	char want[40];
	if (fam == AF_INET) {
		uint32_t a = ((const struct sockaddr_in *)server)->sin_addr.s_addr;
		snprintf(want, sizeof want, "%08X:0035", a);
	} else {
		const uint8_t *b = ((const struct sockaddr_in6 *)server)->sin6_addr.s6_addr;
		char *w = want;
		for (int i = 0; i < 16; i += 4)
			w += sprintf(w, "%02X%02X%02X%02X", b[i + 3], b[i + 2], b[i + 1], b[i]);
		strcpy(w, ":0035");
	}
	while (fgets(line, sizeof line, f) && n < max) {
		char local[64], remote[64];
		if (sscanf(line, "%*d: %63s %63s", local, remote) != 2 || strcmp(remote, want) != 0)
			continue;
		char *colon = strrchr(local, ':');
		if (!colon)
			continue;
		*colon = 0;
		uint16_t port = (uint16_t)strtoul(colon + 1, NULL, 16);
		struct sockaddr_storage *e = &ends[n++];
		memset(e, 0, sizeof *e);
		if (fam == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)e;
			in->sin_family = AF_INET;
			in->sin_port = htons(port);
			in->sin_addr.s_addr = (uint32_t)strtoul(local, NULL, 16);
		} else {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)e;
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(port);
			for (int i = 0; i < 4; i++) {
				char word[9];
				memcpy(word, local + 8 * i, 8);
				word[8] = 0;
				uint32_t v = (uint32_t)strtoul(word, NULL, 16);
				memcpy(in6->sin6_addr.s6_addr + 4 * i, &v, 4);
			}
		}
	}
	fclose(f);
	return n;
}

static int cmd_dns_forge(char **argv)
{
	struct sockaddr_storage server;
	socklen_t slen;
	int fam = addr_of(argv[0], 53, &server, &slen);
	uint8_t rdata[16];
	int afam = inet_pton(AF_INET, argv[2], rdata) == 1 ? AF_INET
		   : inet_pton(AF_INET6, argv[2], rdata) == 1 ? AF_INET6 : -1;
	if (fam < 0 || afam < 0)
		return usage();
	int fd = freebind_socket(fam, SOCK_DGRAM);
	if (fd < 0 || bind(fd, (struct sockaddr *)&server, slen) < 0) {
		report_errno("bind as the server");
		return 0;
	}
	uint8_t msg[512];
	size_t qlen = build_query(msg, 0, argv[1], afam == AF_INET ? 1 : 28);
	msg[2] = 0x81;  /* QR RD */
	msg[3] = 0x80;  /* RA, NOERROR */
	msg[7] = 1;     /* one answer */
	size_t o = qlen;
	msg[o++] = 0xc0;  /* the question's name */
	msg[o++] = 12;
	msg[o++] = 0;
	msg[o++] = afam == AF_INET ? 1 : 28;
	msg[o++] = 0;
	msg[o++] = 1;
	msg[o++] = 0;     /* TTL 3600 */
	msg[o++] = 0;
	msg[o++] = 0x0e;
	msg[o++] = 0x10;
	msg[o++] = 0;
	msg[o++] = afam == AF_INET ? 4 : 16;
	memcpy(msg + o, rdata, afam == AF_INET ? 4 : 16);
	o += afam == AF_INET ? 4 : 16;
	time_t end = time(NULL) + atoi(argv[3]);
	unsigned long sent = 0;
	size_t aimed = 0;
	uint16_t seen[256];
	size_t n_seen = 0;
	socklen_t tlen = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	while (time(NULL) < end) {
		struct sockaddr_storage ends[64];
		size_t n = connected_ends(fam, &server, ends, 64);
		for (size_t i = 0; i < n; i++) {
			uint16_t port = ntohs(((struct sockaddr_in *)&ends[i])->sin_port);
			bool known = false;
			for (size_t k = 0; k < n_seen && !known; k++)
				known = seen[k] == port;
			if (!known && n_seen < 256) {
				seen[n_seen++] = port;
				aimed++;
			}
			/* every id: the sentry's is random, a client's may be too. In
			 * bursts the receiver can take: a full socket buffer would drop
			 * the one that matters */
			for (uint32_t id = 0; id < 65536; id++) {
				msg[0] = (uint8_t)(id >> 8);
				msg[1] = (uint8_t)id;
				if (sendto(fd, msg, o, MSG_DONTWAIT, (struct sockaddr *)&ends[i], tlen) > 0)
					sent++;
				if (id % 256 == 255)
					usleep(300);
			}
		}
		if (n == 0)
			usleep(2000);
	}
	printf("aimed at %zu sockets, sent %lu\n", aimed, sent);
	return 0;
}

static int cmd_flood_udp(char **argv, bool scan)
{
	struct sockaddr_storage to;
	socklen_t tlen;
	uint16_t port = (uint16_t)atoi(argv[1]);
	int fam = addr_of(argv[0], port, &to, &tlen);
	long count = atol(argv[2]);
	if (fam < 0 || count <= 0)
		return usage();
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long sent = 0;
	for (long i = 0; i < count; i++) {
		if (scan) {
			uint16_t p = (uint16_t)(port + i);
			if (fam == AF_INET)
				((struct sockaddr_in *)&to)->sin_port = htons(p);
			else
				((struct sockaddr_in6 *)&to)->sin6_port = htons(p);
		}
		if (sendto(fd, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&to, tlen) >= 0)
			sent++;
	}
	printf("sent %ld\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	argv += 2;
	argc -= 2;
	if (strcmp(cmd, "listen-udp") == 0 && argc == 3)
		return cmd_listen_udp(argv);
	if (strcmp(cmd, "send-udp") == 0 && argc == 4)
		return send_from(argv[0], argv[1], (uint16_t)atoi(argv[2]), argv[3], (uint16_t)atoi(argv[2]));
	if (strcmp(cmd, "send-pktinfo") == 0 && argc == 4)
		return cmd_send_pktinfo(argv);
	if (strcmp(cmd, "ct-hijack") == 0 && argc == 4)
		return cmd_ct_hijack(argv);
	if (strcmp(cmd, "tcp-spoof") == 0 && argc == 3)
		return cmd_tcp_spoof(argv);
	if (strcmp(cmd, "dns-query") == 0 && argc >= 2)
		return cmd_dns_query(argc, argv);
	if (strcmp(cmd, "dns-forge") == 0 && argc == 4)
		return cmd_dns_forge(argv);
	if (strcmp(cmd, "flood-udp") == 0 && argc == 3)
		return cmd_flood_udp(argv, false);
	if (strcmp(cmd, "scan-udp") == 0 && argc == 3)
		return cmd_flood_udp(argv, true);
	return usage();
}
