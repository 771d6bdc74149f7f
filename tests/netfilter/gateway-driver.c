/* Test driver for the SNI check and the credential gateway, outside a box:
 * the sentry's SNI proxy (netfilter/sentry/sni_proxy.c) on a port of the current
 * network namespace, and the gateway started as the runtime starts it
 * (runtime/egress/gateway.c). The bats tests redirect TCP/443 to it with nft.
 *
 *   gateway-driver PORT POLICY LOGFILE [--ca-out FILE] [--upstream-ca FILE]
 *                  [--cred NAME HOSTS HEADER ENV]... [--no-gateway]
 *
 * HOSTS is comma-separated; the secret is read from the variable ENV. Prints
 * "ready" once serving; stops on SIGTERM or SIGINT. */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress.h"
#include "gateway.h"
#include "gateway_proto.h"
#include "ruleset_types.h"
#include "sentry_sockets.h"
#include "sni_proxy.h"
#include "util.h"

static int logfd = -1;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* a string made printable and safe in JSON */
static const char *clean(const char *s, char *buf, size_t len)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < len; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

/* Records as the sentry writes them (without its dedup: every one). */
static void log_line(const char *verdict, const char *proto, int family, const uint8_t *addr, int port,
		     const char *name, const char *key, const char *value, const char *detail)
{
	char ts[64], a[INET6_ADDRSTRLEN], c1[300], c2[300], c3[300];
	format_rfc3339(ts, sizeof ts);
	dprintf(logfd, "{\"time\":\"%s\",\"container\":\"driver\",\"verdict\":\"%s\",\"proto\":\"%s\"", ts, verdict,
		proto);
	if (family && inet_ntop(family, addr, a, sizeof a))
		dprintf(logfd, ",\"dst\":\"%s\",\"port\":%d", a, port);
	if (name && *name)
		dprintf(logfd, ",\"name\":\"%s\"", clean(name, c1, sizeof c1));
	dprintf(logfd, ",\"%s\":\"%s\"", key, clean(value, c2, sizeof c2));
	if (detail && *detail)
		dprintf(logfd, ",\"detail\":\"%s\"", clean(detail, c3, sizeof c3));
	dprintf(logfd, "}\n");
}

static void log_record(void *ctx, int family, const uint8_t *addr, int port, const char *name, const char *reason)
{
	(void)ctx;
	log_line("deny", "tls", family, addr, port, name, "reason", reason, NULL);
}

/* what the gateway reports on its hand-off socket (gateway_proto.h) */
static void gateway_records(int fd)
{
	struct gw_record r;
	while (recv(fd, &r, sizeof r, MSG_DONTWAIT) == (ssize_t)sizeof r) {
		if (r.magic != GW_RECORD_MAGIC)
			continue;
		r.name[sizeof r.name - 1] = r.credential[sizeof r.credential - 1] = 0;
		r.reason[sizeof r.reason - 1] = r.detail[sizeof r.detail - 1] = 0;
		if (r.event == GW_EVENT_USE)
			log_line("credential", "https", r.family, r.addr, r.port, r.name, "credential", r.credential, NULL);
		else
			log_line("deny", "https", r.family, r.addr, r.port, r.name, "reason", r.reason, r.detail);
	}
}

static int marked_socket(void *ctx, int family)
{
	(void)ctx;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint32_t mark = EGRESS_PROXY_MARK;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: gateway-driver PORT POLICY LOGFILE [--ca-out FILE] [--upstream-ca FILE]\n"
				"                      [--cred NAME HOSTS HEADER ENV]... [--no-gateway]\n");
		return 2;
	}
	struct ab_err err = {0};
	uint16_t port = (uint16_t)atoi(argv[1]);
	struct egress_policy policy = {0};
	if (egress_policy_from_string(argv[2], "policy", &policy, &err) < 0) {
		fprintf(stderr, "gateway-driver: %s\n", err.msg);
		return 1;
	}
	logfd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	const char *ca_out = NULL;
	struct gateway_cred creds[8] = {{0}};
	char **hosts[8];
	size_t n_creds = 0;
	struct gateway_spec spec = {.container_id = "driver"};
	bool gateway = true;
	for (int i = 4; i < argc; i++) {
		if (streq(argv[i], "--ca-out") && i + 1 < argc)
			ca_out = argv[++i];
		else if (streq(argv[i], "--upstream-ca") && i + 1 < argc)
			spec.upstream_ca = argv[++i];
		else if (streq(argv[i], "--no-gateway"))
			gateway = false;
		else if (streq(argv[i], "--cred") && i + 4 < argc && n_creds < 8) {
			struct gateway_cred *c = &creds[n_creds];
			c->name = argv[i + 1];
			char *list = xstrdup(argv[i + 2]), *save = NULL;
			hosts[n_creds] = xcalloc(64, sizeof(char *));
			for (char *h = strtok_r(list, ",", &save); h && c->n_hosts < 63; h = strtok_r(NULL, ",", &save))
				hosts[n_creds][c->n_hosts++] = h;
			c->hosts = (const char *const *)hosts[n_creds];
			c->header = argv[i + 3];
			c->secret = getenv(argv[i + 4]);
			if (!c->secret) {
				fprintf(stderr, "gateway-driver: no variable %s\n", argv[i + 4]);
				return 1;
			}
			c->secret_len = strlen(c->secret);
			n_creds++;
			i += 4;
		} else {
			fprintf(stderr, "gateway-driver: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	spec.creds = creds;
	spec.n_creds = n_creds;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	struct gateway_child g = {.handoff_fd = -1};
	if (n_creds && gateway_spawn(&spec, &g, &err) < 0) {
		fprintf(stderr, "gateway-driver: %s\n", err.msg);
		return 1;
	}
	if (ca_out && g.ca_pem) {
		int fd = open(ca_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write_all(fd, g.ca_pem, g.ca_pem_len) < 0) {
			fprintf(stderr, "gateway-driver: write %s: %s\n", ca_out, strerror(errno));
			return 1;
		}
		close(fd);
	}
	if (!gateway && g.handoff_fd >= 0) {
		close(g.handoff_fd);   /* the gateway is there but unreachable: fail closed */
		g.handoff_fd = -1;
	}
	/* the sentry's own listeners, on the test's port */
	int listen_fd[2];
	if (sentry_bind_sni(port, listen_fd, &err) < 0) {
		fprintf(stderr, "gateway-driver: %s\n", err.msg);
		return 1;
	}
	struct sni_proxy_params prm = {
		.policy = &policy,
		.cred_hosts = n_creds ? &g.hosts : NULL,
		.gateway_fd = g.handoff_fd,
		.listen_fd = {listen_fd[0], listen_fd[1]},
		.upstream_socket = marked_socket,
		.log = log_record,
	};
	struct sni_proxy *p;
	if (sni_proxy_new(&prm, &p, &err) < 0) {
		fprintf(stderr, "gateway-driver: %s\n", err.msg);
		return 1;
	}
	printf("ready %d\n", (int)g.pid);
	fflush(stdout);
	int timeout = -1;
	while (!stop) {
		struct pollfd pf[2] = {{.fd = sni_proxy_fd(p), .events = POLLIN}, {.fd = g.handoff_fd, .events = POLLIN}};
		int n = poll(pf, 2, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && pf[1].revents & POLLIN)
			gateway_records(g.handoff_fd);
		timeout = sni_proxy_run(p);
	}
	sni_proxy_free(p);
	gateway_child_free(&g, true);
	egress_policy_free(&policy);
	return 0;
}
