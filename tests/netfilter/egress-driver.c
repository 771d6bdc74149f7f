/* Test driver for the egress library: install/remove a ruleset, run the DNS
 * sentry, and a few tiny network clients the bats tests use inside the
 * container namespace. Usage: see usage() below. */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <sys/capability.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dns.h"
#include "egress.h"
#include "egress_internal.h"
#include "ruleset.h"
#include "sentry.h"
#include "upstream.h"
#include "util.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: egress-driver install NETNS_PATH POLICY [PORT]\n"
		"       egress-driver remove NETNS_PATH\n"
		"       egress-driver sentry NETNS_PATH POLICY RESOLV_CONF LOGFILE PID [--port N]\n"
		"                            [--ttl-min S] [--ttl-max S] [--set-elems-max N] [--no-pidfd]\n"
		"                            [--log-only] [--host-resolv FILE | --forward-resolv FILE]\n"
		"                            [--reasons FILE] [--refused FILE]\n"
		"       egress-driver resolve SERVER NAME [A|AAAA] [tcp]\n"
		"       egress-driver hold ADDR PORT SECONDS\n"
		"       egress-driver policy POLICY\n"
		"       egress-driver capcheck | badbatch   (run inside the netns)\n"
		"POLICY is \"allow=LIST;deny=LIST;internal=LIST\" (each part optional).\n");
	return 2;
}

static int die(struct ab_err *err)
{
	fprintf(stderr, "egress-driver: %s\n", err->msg);
	return 1;
}

static int parse_policy(const char *text, struct egress_policy *p, struct ab_err *err)
{
	char *copy = xstrdup(text), *save = NULL;
	int r = 0;
	for (char *part = strtok_r(copy, ";", &save); part && r >= 0; part = strtok_r(NULL, ";", &save)) {
		if (strncmp(part, "allow=", 6) == 0)
			r = egress_policy_add(p, part + 6, false, "policy allow", err);
		else if (strncmp(part, "deny=", 5) == 0)
			r = egress_policy_add(p, part + 5, true, "policy deny", err);
		else if (strncmp(part, "internal=", 9) == 0)
			r = egress_policy_add_internal(p, part + 9, "policy internal", err);
		else
			r = ab_error(err, 0, "policy part \"%s\" is neither allow=, deny= nor internal=", part);
	}
	free(copy);
	return r;
}

static int open_netns(const char *path, struct ab_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ab_error(err, errno, "open %s", path);
	return fd;
}

static int cmd_install(int argc, char **argv)
{
	struct ab_err err = {0};
	struct egress_policy p = {0};
	if (argc < 4)
		return usage();
	uint16_t port = argc > 4 ? (uint16_t)atoi(argv[4]) : EGRESS_SENTRY_PORT;
	if (parse_policy(argv[3], &p, &err) < 0)
		return die(&err);
	int fd = open_netns(argv[2], &err);
	int r = fd < 0 ? -1 : egress_install(fd, &p, "test", port, &err);
	egress_policy_free(&p);
	if (fd >= 0)
		close(fd);
	return r < 0 ? die(&err) : 0;
}

static int cmd_remove(int argc, char **argv)
{
	struct ab_err err = {0};
	if (argc < 3)
		return usage();
	int fd = open_netns(argv[2], &err);
	if (fd < 0 || egress_remove(fd, &err) < 0)
		return die(&err);
	close(fd);
	return 0;
}

static int cmd_policy(int argc, char **argv)
{
	struct ab_err err = {0};
	struct egress_policy p = {0};
	if (argc < 3)
		return usage();
	if (parse_policy(argv[2], &p, &err) < 0)
		return die(&err);
	char *s = egress_policy_to_string(&p);
	printf("%s\n", s);
	free(s);
	egress_policy_free(&p);
	return 0;
}


static int cmd_sentry(int argc, char **argv)
{
	struct ab_err err = {0};
	struct egress_policy p = {0};
	struct egress_sentry_params sp = { .dns = true, .port = EGRESS_SENTRY_PORT, .init_pidfd = -1, .ready_fd = -1,
					   .listen_fd = { -1, -1, -1, -1 }, .nflog_fd = -1, .nflog_repeat_fd = -1,
					   .sni_fd = { -1, -1 }, .gateway_fd = -1, .log_fd = -1, .refused_fd = -1 };
	const char *reasons = NULL;
	if (argc < 7)
		return usage();
	for (int i = 7; i < argc; i++) {
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
			sp.port = (uint16_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--ttl-min") == 0 && i + 1 < argc)
			sp.ttl_min = (uint32_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--ttl-max") == 0 && i + 1 < argc)
			sp.ttl_max = (uint32_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--set-elems-max") == 0 && i + 1 < argc)
			sp.set_elems_max = (uint32_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-pidfd") == 0)
			sp.no_pidfd = true;
		else if (strcmp(argv[i], "--log-only") == 0)
			sp.dns = false;
		else if (strcmp(argv[i], "--reasons") == 0 && i + 1 < argc)
			reasons = argv[++i];
		else if (strcmp(argv[i], "--refused") == 0 && i + 1 < argc) {
			sp.refused_fd = open(argv[++i], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
			if (sp.refused_fd < 0)
				return perror(argv[i]), 1;
		} else if ((strcmp(argv[i], "--host-resolv") == 0 || strcmp(argv[i], "--forward-resolv") == 0) &&
			   i + 1 < argc) {
			/* where a loopback upstream forwards: the runtime's own
			 * resolvers, or (--forward-resolv) the engine's */
			sp.forward_engine = strcmp(argv[i], "--forward-resolv") == 0;
			if (egress_upstream_from_resolv_conf(argv[++i], sp.forward_upstream, &sp.n_forward_upstream,
							     &err) < 0)
				return die(&err);
		}
		else
			return usage();
	}
	if (parse_policy(argv[3], &p, &err) < 0)
		return die(&err);
	if (reasons) {
		char *text;
		size_t len;
		if (read_file_at(AT_FDCWD, reasons, 65536, &text, &len, &err) < 0 ||
		    egress_policy_set_reasons(&p, text, reasons, &err) < 0)
			return die(&err);
		free(text);
	}
	if (sp.dns && egress_upstream_from_resolv_conf(argv[4], sp.upstream, &sp.n_upstream, &err) < 0)
		return die(&err);
	sp.policy = &p;
	sp.container_id = "test";
	sp.log_path = argv[5];
	sp.init_pid = atoi(argv[6]);
	sp.netns_fd = open_netns(argv[2], &err);
	if (sp.netns_fd < 0)
		return die(&err);
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return perror("pipe"), 1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return perror("fork"), 1;
	if (pid == 0) {
		/* detach from the test's pipes, or bats waits for us */
		char errpath[4096];
		snprintf(errpath, sizeof errpath, "%s.stderr", argv[5]);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int efd = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		dup2(null, 0);
		dup2(null, 1);
		dup2(efd >= 0 ? efd : null, 2);
		setsid();
		close(ready[0]);
		sp.ready_fd = ready[1];
		if (egress_sentry_run(&sp, &err) < 0) {
			fprintf(stderr, "egress-driver sentry: %s\n", err.msg);
			_exit(1);
		}
		_exit(0);
	}
	close(ready[1]);
	char c;
	ssize_t n = read(ready[0], &c, 1);
	if (n != 1) {
		int st = 0;
		waitpid(pid, &st, 0);
		fprintf(stderr, "egress-driver: sentry failed to start (see %s.stderr)\n", argv[5]);
		return 1;
	}
	printf("%d\n", (int)pid);
	egress_policy_free(&p);
	return 0;
}

static const char *rcode_name(int rc)
{
	static const char *names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED" };
	return rc >= 0 && rc < 6 ? names[rc] : "OTHER";
}

static int sockaddr_from(const char *addr, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof *in;
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof *in6;
		return 0;
	}
	return -1;
}

static int connect_timeout(const struct sockaddr_storage *ss, socklen_t len, int type, int ms)
{
	int fd = socket(ss->ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (const struct sockaddr *)ss, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* resolve SERVER NAME [A|AAAA] [tcp]: prints the rcode, then one address per line */
static int cmd_resolve(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	uint16_t type = argc > 4 && strcmp(argv[4], "AAAA") == 0 ? DNS_TYPE_AAAA : DNS_TYPE_A;
	bool tcp = argc > 5 && strcmp(argv[5], "tcp") == 0;
	struct sockaddr_storage ss;
	socklen_t slen;
	if (sockaddr_from(argv[2], 53, &ss, &slen) < 0)
		return usage();
	uint8_t q[512], a[65536];
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	uint16_t id = (uint16_t)rand();
	size_t qlen = dns_build_query(id, argv[3], type, q, sizeof q);
	if (!qlen)
		return usage();
	int fd = connect_timeout(&ss, slen, tcp ? SOCK_STREAM : SOCK_DGRAM, 3000);
	if (fd < 0) {
		printf("CONNECT-FAILED\n");
		return 1;
	}
	ssize_t n;
	if (tcp) {
		uint8_t hdr[2] = { (uint8_t)(qlen >> 8), (uint8_t)qlen };
		if (write(fd, hdr, 2) != 2 || write(fd, q, qlen) != (ssize_t)qlen || read(fd, hdr, 2) != 2) {
			printf("TIMEOUT\n");
			return 1;
		}
		size_t want = (size_t)hdr[0] << 8 | hdr[1], got = 0;
		while (got < want && (n = read(fd, a + got, want - got)) > 0)
			got += (size_t)n;
		n = (ssize_t)got;
	} else {
		if (send(fd, q, qlen, 0) != (ssize_t)qlen)
			return 1;
		n = recv(fd, a, sizeof a, 0);
	}
	close(fd);
	if (n <= 0) {
		printf("TIMEOUT\n");
		return 1;
	}
	struct dns_header h;
	if (dns_parse_header(a, (size_t)n, &h) < 0 || h.id != id) {
		printf("BAD-ANSWER\n");
		return 1;
	}
	/* a truncated answer may end in the middle of a record: header only then */
	printf("%s%s\n", rcode_name(DNS_RCODE(h.flags)), h.flags & DNS_FLAG_TC ? " TC" : "");
	struct dns_answer *ans = calloc(1, sizeof *ans);
	int r = dns_parse_answer(a, (size_t)n, ans);
	if (r < 0) {
		free(ans);
		return h.flags & DNS_FLAG_TC ? 0 : 1;
	}
	for (size_t i = 0; i < ans->n_addrs; i++) {
		char buf[INET6_ADDRSTRLEN];
		inet_ntop(ans->addrs[i].family, ans->addrs[i].addr, buf, sizeof buf);
		printf("%s ttl=%u\n", buf, ans->addrs[i].ttl);
	}
	free(ans);
	return 0;
}

static int line_exchange(int fd, const char *msg)
{
	char buf[256];
	if (write(fd, msg, strlen(msg)) != (ssize_t)strlen(msg))
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strstr(buf, msg) ? 0 : -1;
}

/* hold ADDR PORT SECONDS: one TCP connection to an echo server, used before
 * and after a pause */
static int cmd_hold(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	struct sockaddr_storage ss;
	socklen_t slen;
	if (sockaddr_from(argv[2], (uint16_t)atoi(argv[3]), &ss, &slen) < 0)
		return usage();
	int fd = connect_timeout(&ss, slen, SOCK_STREAM, 3000);
	if (fd < 0) {
		printf("connect failed\n");
		return 1;
	}
	if (line_exchange(fd, "before\n") < 0) {
		printf("first exchange failed\n");
		return 1;
	}
	fflush(stdout);
	sleep((unsigned)atoi(argv[4]));
	if (line_exchange(fd, "after\n") < 0) {
		printf("second exchange failed\n");
		return 1;
	}
	printf("ok\n");
	close(fd);
	return 0;
}

/* capcheck (inside the container netns, with a ruleset installed): add an
 * element on a netlink socket, drop every capability, try again on the same
 * socket. Shows why the sentry needs a helper that keeps CAP_NET_ADMIN. */
static int cmd_capcheck(void)
{
	struct ab_err err = {0};
	struct mnl_socket *nl;
	struct eg_set s;
	struct eg_elem e = { .timeout_ms = 5000 };
	const uint8_t addr[4] = { 198, 18, 42, 99 };
	if (eg_nl_open(-1, &nl, &err) < 0)
		return die(&err);
	eg_set_get(eg_set_index(EG_DYNAMIC, false, AF_INET, EG_SHAPE_ANY), &s);
	eg_key(&s, addr, 0, 0, e.key);
	for (int round = 0; round < 2; round++) {
		if (round == 1) {
			cap_t none = cap_init();
			if (!none || cap_set_proc(none) < 0)
				return perror("cap_set_proc"), 1;
			cap_free(none);
		}
		struct eg_batch b;
		eg_batch_init(&b, (uint32_t)time(NULL) + (uint32_t)round * 100);
		eg_batch_elems(&b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE, &e, 1, "add element to set");
		int r = eg_batch_send(nl, &b, &err);
		eg_batch_free(&b);
		if (round == 0 && r < 0)
			return die(&err);
		if (round == 1)
			printf("add element after dropping capabilities: %s\n", r < 0 ? strerror(-r) : "succeeded");
	}
	mnl_socket_close(nl);
	return 0;
}

/* badbatch (inside the netns): delete table inet agentbox, add it back, then a
 * set the kernel refuses, all in one batch. The batch must fail as a whole and
 * name the refused object; whatever table was there must still be there. */
static int cmd_badbatch(void)
{
	struct ab_err err = {0};
	struct mnl_socket *nl;
	struct eg_batch b;
	if (eg_nl_open(-1, &nl, &err) < 0)
		return die(&err);
	eg_batch_init(&b, (uint32_t)time(NULL));
	for (int i = 0; i < 3; i++) {
		struct nftnl_table *t = nftnl_table_alloc();
		nftnl_table_set_str(t, NFTNL_TABLE_NAME, EGRESS_TABLE);
		nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
		static const uint16_t types[3] = { NFT_MSG_NEWTABLE, NFT_MSG_DELTABLE, NFT_MSG_NEWTABLE };
		struct nlmsghdr *nlh = eg_batch_msg(&b, 512, types[i], i == 1 ? 0 : NLM_F_CREATE);
		nftnl_table_nlmsg_build_payload(nlh, t);
		nftnl_table_free(t);
		eg_batch_commit(&b, i == 1 ? "delete table" : "add table", NULL);
	}
	struct nftnl_set *set = nftnl_set_alloc();
	nftnl_set_set_str(set, NFTNL_SET_TABLE, EGRESS_TABLE);
	nftnl_set_set_str(set, NFTNL_SET_NAME, "bogus");
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(set, NFTNL_SET_ID, 1);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, 0);   /* refused: a key has a length */
	struct nlmsghdr *nlh = eg_batch_msg(&b, 512, NFT_MSG_NEWSET, NLM_F_CREATE);
	nftnl_set_nlmsg_build_payload(nlh, set);
	nftnl_set_free(set);
	eg_batch_commit(&b, "add set", "bogus");
	int r = eg_batch_send(nl, &b, &err);
	eg_batch_free(&b);
	mnl_socket_close(nl);
	printf("%s\n", r < 0 ? err.msg : "accepted");
	return r < 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "install") == 0)
		return cmd_install(argc, argv);
	if (strcmp(argv[1], "remove") == 0)
		return cmd_remove(argc, argv);
	if (strcmp(argv[1], "policy") == 0)
		return cmd_policy(argc, argv);
	if (strcmp(argv[1], "sentry") == 0)
		return cmd_sentry(argc, argv);
	if (strcmp(argv[1], "resolve") == 0)
		return cmd_resolve(argc, argv);
	if (strcmp(argv[1], "hold") == 0)
		return cmd_hold(argc, argv);
	if (strcmp(argv[1], "capcheck") == 0)
		return cmd_capcheck();
	if (strcmp(argv[1], "badbatch") == 0)
		return cmd_badbatch();
	return usage();
}
