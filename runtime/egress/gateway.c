/* Starting a box's credential gateway (gateway.h). */
#include "gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "credential.h"
#include "gateway_proto.h"
#include "log.h"
#include "process.h"
#include "test_hooks.h"
#include "util.h"

#ifndef AGENTBOX_SBINDIR
#define AGENTBOX_SBINDIR "/usr/local/sbin"
#endif
#define CA_WAIT_MS 10000

static bool executable(const char *path)
{
	return access(path, X_OK) == 0;
}

int gateway_find(char *buf, size_t len, struct ab_err *err)
{
	const char *env = secure_getenv("AGENTBOX_GATEWAY");
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return executable(buf) ? 0 : ab_error(err, errno, "AGENTBOX_GATEWAY %s", env);
	}
	/* beside the binary we were started as (a sealed re-exec leaves argv[0]) */
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = 0;
		if (self[0] == '/') {
			snprintf(buf, len, "%s/" GATEWAY_BIN, dirname(self));
			if (executable(buf))
				return 0;
		}
	}
	if (strchr(program_invocation_name, '/') && realpath(program_invocation_name, self)) {
		snprintf(buf, len, "%s/" GATEWAY_BIN, dirname(self));
		if (executable(buf))
			return 0;
	}
	if (getenv("PATH") && path_lookup(GATEWAY_BIN, buf, len))
		return 0;
	snprintf(buf, len, AGENTBOX_SBINDIR "/" GATEWAY_BIN);
	if (executable(buf))
		return 0;
	return ab_error(err, 0, "credential gateway: %s not found beside agentbox, on PATH or in " AGENTBOX_SBINDIR
			" (install it with agentbox, or set AGENTBOX_GATEWAY)", GATEWAY_BIN);
}

static int put(int fd, uint32_t type, const void *data, size_t len)
{
	uint32_t h[2] = {type, (uint32_t)len};
	return write_all(fd, h, sizeof h) < 0 || (len && write_all(fd, data, len) < 0) ? -1 : 0;
}

static int send_config(int fd, const struct gateway_spec *s, struct ab_err *err)
{
	int r = put(fd, GW_REC_CONTAINER, s->container_id, strlen(s->container_id));
	for (size_t i = 0; r == 0 && i < s->n_creds; i++) {
		const struct gateway_cred *c = &s->creds[i];
		r = put(fd, GW_REC_CRED_NAME, c->name, strlen(c->name));
		for (size_t k = 0; r == 0 && k < c->n_hosts; k++)
			r = put(fd, GW_REC_CRED_HOST, c->hosts[k], strlen(c->hosts[k]));
		if (r == 0)
			r = put(fd, GW_REC_CRED_HEADER, c->header, strlen(c->header));
		if (r == 0)
			r = put(fd, GW_REC_CRED_SECRET, c->secret, c->secret_len);
	}
	if (r == 0 && s->upstream_ca) {
		char *pem;
		size_t len;
		if (read_file_at(AT_FDCWD, s->upstream_ca, GW_REC_MAX - 1, &pem, &len, err) < 0)
			return ab_wrap(err, "credential gateway: upstream_ca");
		r = put(fd, GW_REC_UPSTREAM_CA, pem, len);
		free(pem);
	}
	/* a test build's reference for the attacks on responses: the gateway
	 * unguarded, as it was (tests/security/gateway-echo.bats) */
	if (r == 0 && test_hook("AGENTBOX_GATEWAY_UNPROTECTED"))
		r = put(fd, GW_REC_TEST_UNPROTECTED, NULL, 0);
	if (r == 0)
		r = put(fd, GW_REC_END, NULL, 0);
	return r < 0 ? ab_error(err, errno, "credential gateway: send its configuration") : 0;
}

/* its one answer: the CA, or why not */
static int read_answer(int fd, struct gateway_child *g, struct ab_err *err)
{
	uint32_t h[2];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, CA_WAIT_MS) <= 0)
		return ab_error(err, ETIMEDOUT, "credential gateway: no answer");
	if (read_all(fd, h, sizeof h) != sizeof h || h[1] > GW_REC_MAX)
		return ab_error(err, 0, "credential gateway: exited before it answered");
	char *data = xmalloc(h[1] + 1);
	if (read_all(fd, data, h[1]) != (ssize_t)h[1]) {
		free(data);
		return ab_error(err, 0, "credential gateway: a short answer");
	}
	data[h[1]] = 0;
	if (h[0] != GW_REC_CA_PEM) {
		ab_error(err, 0, "credential gateway: %s", h[0] == GW_REC_ERROR ? data : "an unknown answer");
		free(data);
		return -1;
	}
	g->ca_pem = data;
	g->ca_pem_len = h[1];
	return 0;
}

static int collect_hosts(const struct gateway_spec *s, struct egress_list *l, struct ab_err *err)
{
	for (size_t i = 0; i < s->n_creds; i++)
		for (size_t k = 0; k < s->creds[i].n_hosts; k++) {
			struct egress_entry e;
			if (cred_host_parse(s->creds[i].hosts[k], s->creds[i].name, &e, err) < 0)
				return -1;
			if (l->n == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 8;
				l->v = xrealloc(l->v, l->cap * sizeof *l->v);
			}
			l->v[l->n++] = e;
		}
	return 0;
}

int gateway_spawn(const struct gateway_spec *spec, struct gateway_child *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	ret->handoff_fd = -1;
	char bin[PATH_MAX];
	if (gateway_find(bin, sizeof bin, err) < 0)
		return -1;
	if (collect_hosts(spec, &ret->hosts, err) < 0)
		goto fail;
	int ctl[2], hand[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0) {
		ab_error(err, errno, "credential gateway: socketpair");
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, hand) < 0) {
		ab_error(err, errno, "credential gateway: socketpair");
		close(ctl[0]);
		close(ctl[1]);
		goto fail;
	}
	pid_t pid = fork();
	if (pid < 0) {
		ab_error(err, errno, "credential gateway: fork");
		close(ctl[0]);
		close(ctl[1]);
		close(hand[0]);
		close(hand[1]);
		goto fail;
	}
	if (pid == 0) {
		/* fds 3, 4: control, hand-off (its records for the deny log go back
		 * that way: the sentry writes the log); nothing else of ours */
		int null = open("/dev/null", O_RDWR);
		int a = fcntl(ctl[1], F_DUPFD, 10), b = fcntl(hand[1], F_DUPFD, 10);
		if (null < 0 || a < 0 || b < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(a, 3) < 0 ||
		    dup2(b, 4) < 0)
			_exit(127);
		if (log_fd() != 2)
			(void)dup2(null, 2);
		close_fds_from(5, NULL, 0);
		process_reset_signals();
		setsid();   /* the engine's signals for the box are not its own */
		char *argv[] = {(char *)GATEWAY_BIN, NULL};
		char *envp[] = {NULL};   /* nothing of ours, no secret */
		execve(bin, argv, envp);
		_exit(127);
	}
	close(ctl[1]);
	close(hand[1]);
	ret->pid = pid;
	ret->handoff_fd = hand[0];
	int r = send_config(ctl[0], spec, err);
	if (r == 0)
		r = read_answer(ctl[0], ret, err);
	close(ctl[0]);
	if (r < 0)
		goto fail;
	return 0;
fail:
	gateway_child_free(ret, true);
	return -1;
}

void gateway_child_free(struct gateway_child *g, bool kill_it)
{
	if (g->pid > 0 && kill_it) {
		kill(g->pid, SIGKILL);
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	g->pid = 0;
	if (g->handoff_fd >= 0)
		close(g->handoff_fd);
	g->handoff_fd = -1;
	free(g->ca_pem);
	g->ca_pem = NULL;
	for (size_t i = 0; i < g->hosts.n; i++)
		free(g->hosts.v[i].name);
	free(g->hosts.v);
	g->hosts = (struct egress_list){0};
}
