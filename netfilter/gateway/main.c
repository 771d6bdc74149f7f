/* agentbox-gateway: start-up and the event loop (see gateway.h).
 *
 *   agentbox-gateway [--ctl FD] [--handoff FD]   (3, 4)
 *
 * The runtime execs it for a box with header credentials: it reads the
 * configuration on the control socket, makes the box's CA and answers with
 * its certificate, then gives up everything it does not need (no capability,
 * not dumpable, an empty root, an unprivileged user) before it reads a byte
 * from the box. It ends when the sentry's socket closes (the box is gone). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <linux/capability.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "gateway_proto.h"
#include "log.h"
#include "records.h"
#include "relay.h"
#include "scan.h"
#include "tls.h"
#include "util.h"

#define NOBODY 65534

static int send_record(int fd, uint32_t type, const void *data, size_t len)
{
	uint32_t h[2] = {type, (uint32_t)len};
	return write_all(fd, h, sizeof h) < 0 || write_all(fd, data, len) < 0 ? -1 : 0;
}

/* Is id mapped in our user namespace (/proc/self/uid_map or gid_map)? */
static bool id_mapped(const char *map, unsigned id)
{
	FILE *f = fopen(map, "re");
	if (!f)
		return false;
	unsigned long inside, outside, count;
	bool found = false;
	while (!found && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		found = id >= inside && id - inside < count;
	fclose(f);
	return found;
}

/* Nothing the box could use if it took this process over: no capability
 * (none to get back), no core, no ptrace by its own user, no file system,
 * and not root's uid (a process that shares it may signal root's processes).
 * Started by a runtime without privileges (rootless), or as root of a user
 * namespace where nobody is not mapped, it has no uid to take: a user
 * namespace of its own gives it a mount namespace for the empty root, and
 * it holds nothing outside it; it keeps its uid, which the box's processes,
 * in a user and PID namespace of their own, can neither trace nor name. */
static int drop_privileges(struct ab_err *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ab_error(err, errno, "no_new_privs");
	bool root = geteuid() == 0 && id_mapped("/proc/self/uid_map", NOBODY) && id_mapped("/proc/self/gid_map", NOBODY);
	if (!root && unshare(CLONE_NEWUSER) < 0)
		return ab_error(err, errno, "a user namespace for the empty root");
	/* an empty, read-only root: a private tmpfs in a mount namespace of its own */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0 ||
	    chdir("/tmp") < 0 || chroot(".") < 0 || chdir("/") < 0)
		return ab_error(err, errno, "an empty root");
	/* the bounding set first: dropping from it needs CAP_SETPCAP, which the
	 * change of uid takes away (rootless: held in our own user namespace) */
	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return ab_error(err, errno, "drop capability %d from the bounding set", c);
	if (root &&
	    (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0))
		return ab_error(err, errno, "become uid %d", NOBODY);
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	if (syscall(SYS_capset, &h, d) < 0)
		return ab_error(err, errno, "drop capabilities");
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

static int handoff(int epfd, int sock)
{
	struct gw_handoff h;
	struct iovec iov = {&h, sizeof h};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n == 0)
		return 1;   /* the sentry is gone, and with it the box */
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	int fds[2] = {-1, -1};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
		memcpy(fds, CMSG_DATA(c), sizeof fds);
	if ((size_t)n != sizeof h || h.magic != GW_HANDOFF_MAGIC || fds[0] < 0 || fds[1] < 0 ||
	    (h.family != AF_INET && h.family != AF_INET6) || !memchr(h.sni, 0, sizeof h.sni)) {
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		log_warn("gateway: a malformed hand-off from the sentry");
		return 0;
	}
	(void)gw_relay_start(epfd, &h, fds[0], fds[1]);
	return 0;
}

static int parse_fd(const char *s)
{
	int64_t v;
	return parse_int64(s, 0, 1 << 20, &v) < 0 ? -1 : (int)v;
}

int main(int argc, char **argv)
{
	int ctl = 3, hand = 4;
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && streq(argv[i], "--ctl"))
			ctl = parse_fd(argv[++i]);
		else if (i + 1 < argc && streq(argv[i], "--handoff"))
			hand = parse_fd(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--ctl FD] [--handoff FD]\n", argv[0]);
			return 2;
		}
	}
	/* not dumpable before the first secret arrives */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	gw_records_to(hand);
	static struct gw_config cfg;
	struct ab_err err = {0};
	struct gw_tls *t = NULL;
	int r = gw_config_read(ctl, &cfg, &err);
	gw_cfg = &cfg;
	if (r == 0 && (r = gw_tls_init(&cfg, &t, &err)) == 0)
		gw_relay_init(t);
	/* what responses are scanned for (scan.c): the secrets and their encodings */
	if (r == 0 && !cfg.unprotected && gw_secrets_build(&cfg) < 0)
		r = ab_error(&err, ENOMEM, "locked memory for the response scan");
	if (r == 0)
		r = drop_privileges(&err);
	if (r < 0) {
		(void)send_record(ctl, GW_REC_ERROR, err.msg, strlen(err.msg));
		return 1;
	}
	free(cfg.upstream_ca_pem);   /* in the trust store now */
	cfg.upstream_ca_pem = NULL;
	size_t pem_len;
	const char *pem = gw_tls_ca_pem(t, &pem_len);
	if (send_record(ctl, GW_REC_CA_PEM, pem, pem_len) < 0)
		return 1;
	close(ctl);
	(void)malloc_trim(0);

	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, hand, &ev) < 0) {
		log_error("gateway: epoll: %s", strerror(errno));
		return 1;
	}
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(epfd, evs, 64, gw_relay_tick());
		if (n < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < n; i++) {
			if (!evs[i].data.ptr) {
				if (handoff(epfd, hand))
					return 0;
			} else {
				gw_relay_event(evs[i].data.ptr, evs[i].events);
			}
		}
	}
}
