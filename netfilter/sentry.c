/* The DNS sentry: one small process per container, living in the container's
 * network namespace. It answers the container's DNS (nftables redirects every
 * port-53 packet to it), forwards only allowed names to the upstream resolver,
 * turns the A/AAAA records of each answer into timed set elements, and writes
 * the deny log (refused names, and the packets the ruleset logged).
 *
 * Privilege separation: the netlink checks CAP_NET_ADMIN both against the
 * socket's opener and against the sending task, so a process that dropped its
 * capabilities cannot add set elements even on a socket it opened earlier.
 * The sentry therefore forks a helper that keeps only CAP_NET_ADMIN and does
 * two fixed-size things on request: add one element to one dynamic set, and
 * create one marked socket for an upstream query. The sentry itself, which
 * parses the untrusted DNS traffic, keeps no capability at all. A policy that
 * allows no domain name never needs either: no helper then. */
#include <netinet/in.h> /* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/netfilter/nf_tables.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dns.h"
#include "egress_internal.h"
#include "json.h"
#include "log.h"
#include "netdev.h"
#include "nflog.h"
#include "util.h"

#define DNS_QUERY_MAX 1024       /* larger queries get FORMERR */
#define MAX_PENDING 32           /* UDP queries waiting for the upstream */
#define MAX_TCP_CLIENTS 8
#define UPSTREAM_TIMEOUT_MS 4000
#define TCP_UPSTREAM_TIMEOUT_MS 3000
#define TCP_CLIENT_IDLE_MS 5000
#define ELEM_CACHE 256           /* set elements known to be fresh */
#define RECENT_NAMES 128         /* address -> name, for deny log records */
#define MAX_ANSWER_ELEMS 256
#define LOG_MAX_DEFAULT (16u << 20)
#define LOG_RATE 100             /* records per second, burst LOG_BURST */
#define LOG_BURST 200
#define IDLE_RELEASE_MS 1000     /* quiet this long after work: give memory back */

/* ---- privileges ---- */

static int drop_caps(const cap_value_t *keep, int n_keep, struct ab_err *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ab_error(err, errno, "set no_new_privs");
	for (cap_value_t c = 0; c <= CAP_LAST_CAP + 8; c++) {
		bool kept = false;
		for (int i = 0; i < n_keep; i++)
			kept |= keep[i] == c;
		/* EINVAL: a capability this kernel does not know */
		if (!kept && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return ab_error(err, errno, "drop capability %d from the bounding set", c);
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	cap_t caps = cap_init();
	if (!caps)
		return ab_error(err, errno, "cap_init");
	if (n_keep && (cap_set_flag(caps, CAP_EFFECTIVE, n_keep, keep, CAP_SET) < 0 ||
		       cap_set_flag(caps, CAP_PERMITTED, n_keep, keep, CAP_SET) < 0)) {
		cap_free(caps);
		return ab_error(err, errno, "cap_set_flag");
	}
	int r = cap_set_proc(caps);
	int e = errno;
	cap_free(caps);
	if (r < 0)
		return ab_error(err, e, "set capabilities");
	/* no core dumps, no ptrace by same-uid processes, no /proc/PID/mem */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

/* chroot into an empty read-only tmpfs: the sentry needs no file after setup. */
static int empty_root(struct ab_err *err)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs >= 0) {
		int m = -1;
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
		    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0555", 0) == 0 &&
		    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
			m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
					 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		int e = errno;
		close(fs);
		if (m < 0)
			return ab_error(err, e, "create an empty root (fsmount)");
		/* a detached mount: nothing to unmount later, nobody else sees it */
		int r = fchdir(m) < 0 || chroot(".") < 0 ? -1 : 0;
		e = errno;
		close(m);
		if (r < 0)
			return ab_error(err, e, "chroot into the empty root");
		return 0;
	}
	if (errno != ENOSYS)
		return ab_error(err, errno, "fsopen tmpfs");
	/* before Linux 5.2: a private mount namespace with a tmpfs on /tmp */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0 ||
	    chdir("/tmp") < 0 || chroot(".") < 0)
		return ab_error(err, errno, "create an empty root");
	return 0;
}

/* ---- memory ----
 *
 * The sentry is forked from the runtime and would keep, for as long as the
 * container lives, what the runtime had touched: its heap, the deep part of
 * its stack, and every page of library code it ran (page faults map up to 16
 * pages around each one). None of that is needed to serve DNS. */

/* How far below the serving frames the runtime's dead ones are looked for. The
 * kernel keeps other mappings at least stack_guard_gap (1 MiB by default) below
 * a stack, so this window only ever covers the stack; madvise skips the part
 * of it that is not mapped (and says ENOMEM, which is fine). Read no
 * /proc/self/maps for it: after the chroot there is no /proc, and before, it
 * costs more than the release itself. */
#define STACK_RELEASE_WINDOW (512 * 1024)

/* Code and read-only data of the binary and every library: dropping the
 * mappings' pages is safe (they are the files' pages, faulted in again when
 * used) and leaves only what the serving loop itself runs. Never a writable
 * segment: relocated data lives there. */
struct text_ranges {
	size_t n;
	struct { uintptr_t lo, hi; } v[64];
};

static int text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct text_ranges *t = data;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (info->dlpi_name && strncmp(info->dlpi_name, "linux-vdso", 10) == 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && t->n < ARRAY_SIZE(t->v); i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		t->v[t->n].lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		t->v[t->n].hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
		t->n++;
	}
	return 0;
}

/* madvise without a call into libc: once libc's own code is dropped, every
 * further libc function would fault its 64 KiB neighbourhood back in */
static inline void raw_dontneed(uintptr_t lo, uintptr_t len)
{
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_madvise), "D"(lo), "S"(len), "d"((long)MADV_DONTNEED)
			 : "rcx", "r11", "memory");
	(void)ret;
#else
	(void)madvise((void *)lo, len, MADV_DONTNEED);
#endif
}

/* Zeroed memory straight from the kernel: pages nobody touches cost nothing,
 * where calloc on the inherited heap would write every byte. */
static void *zpages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	return p;
}

static void (*release_more)(void);
static uintptr_t dead_stack_hi;

/* noinline: its frame must lie below the caller's for the stack cut */
static __attribute__((noinline)) void release_inherited(void)
{
	if (release_more)
		release_more();
	struct text_ranges t = { 0 };
	(void)malloc_trim(0);
	(void)dl_iterate_phdr(text_cb, &t);
	/* the runtime's dead stack frames, below ours (with room for this one) */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t cut = dead_stack_hi ? dead_stack_hi & ~(page - 1)
				      : ((uintptr_t)__builtin_frame_address(0) - 16384) & ~(page - 1);
	raw_dontneed(cut - STACK_RELEASE_WINDOW, STACK_RELEASE_WINDOW);
	for (size_t i = 0; i < t.n; i++)
		raw_dontneed(t.v[i].lo, t.v[i].hi - t.v[i].lo);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the privileged helper ---- */

enum { HREQ_ADD = 1, HREQ_SOCKET = 2 };

struct hreq {
	uint32_t op;
	uint32_t set;        /* HREQ_ADD: index of a dynamic set */
	uint32_t timeout_ms;
	int32_t family;      /* HREQ_SOCKET */
	int32_t type;
	uint8_t key[24];
};

struct hrep {
	int32_t status;      /* 0 or -errno */
};

static bool hreq_valid(const struct hreq *q, uint32_t ttl_min, uint32_t ttl_max, struct eg_set *s)
{
	if (q->op == HREQ_SOCKET)
		return (q->family == AF_INET || q->family == AF_INET6) &&
		       (q->type == SOCK_DGRAM || q->type == SOCK_STREAM);
	if (q->op != HREQ_ADD || q->set >= EG_N_SETS)
		return false;
	eg_set_get(q->set, s);
	if (s->kind != EG_DYNAMIC)
		return false;
	if (q->timeout_ms < ttl_min * 1000ull || q->timeout_ms > ttl_max * 1000ull)
		return false;
	/* the key must look like one eg_key() builds: known protocol, zero padding */
	size_t alen = s->family == AF_INET ? 4 : 16;
	for (size_t i = s->key_len; i < sizeof q->key; i++)
		if (q->key[i])
			return false;
	if (s->shape >= EG_SHAPE_PROTO) {
		uint8_t proto = q->key[alen];
		if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP) || q->key[alen + 1] || q->key[alen + 2] ||
		    q->key[alen + 3])
			return false;
	}
	if (s->shape == EG_SHAPE_PORT && (q->key[alen + 6] || q->key[alen + 7]))
		return false;
	return true;
}

/* Add an element; if it exists, replace it in one batch so its timeout restarts
 * (older kernels ignore a new timeout on an existing element). */
static int helper_add(struct mnl_socket *nl, uint32_t *seq, const struct eg_set *s, const uint8_t *key,
		      uint32_t timeout_ms)
{
	struct eg_elem e = { .timeout_ms = timeout_ms };
	struct ab_err err;
	memcpy(e.key, key, s->key_len);
	for (int attempt = 0; attempt < 3; attempt++) {
		struct eg_batch b;
		eg_batch_init(&b, *seq);
		*seq += 16;
		eg_batch_elems(&b, s, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, &e, 1, "add element to set");
		int r = eg_batch_send(nl, &b, &err);
		eg_batch_free(&b);
		if (r != -EEXIST)
			return r;
		struct eg_elem d = e;
		d.timeout_ms = 0;
		eg_batch_init(&b, *seq);
		*seq += 16;
		eg_batch_elems(&b, s, NFT_MSG_DELSETELEM, 0, &d, 1, "delete element from set");
		eg_batch_elems(&b, s, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, &e, 1, "add element to set");
		r = eg_batch_send(nl, &b, &err);
		eg_batch_free(&b);
		if (r != -ENOENT)   /* ENOENT: it expired in between; add again */
			return r;
	}
	return -EAGAIN;
}

/* What the helper put in one dynamic set and when each element expires. The
 * sets carry no size (see put_set), so their bound is kept here, on the
 * privileged side: a sentry talked into asking for more gets -ENFILE. */
struct live_set {
	struct live_elem {
		uint8_t key[24];
		uint64_t expires_ms;
	} *v;
	size_t n, cap;
};

static size_t live_find(const struct live_set *ls, const uint8_t *key)
{
	size_t i = 0;
	while (i < ls->n && memcmp(ls->v[i].key, key, sizeof ls->v[i].key) != 0)
		i++;
	return i;
}

static void live_prune(struct live_set *ls, uint64_t now)
{
	size_t k = 0;
	for (size_t i = 0; i < ls->n; i++)
		if (ls->v[i].expires_ms > now)
			ls->v[k++] = ls->v[i];
	ls->n = k;
}

/* helper_add within the bound: a known element is refreshed whatever the
 * count, a new one needs a free place (expired ones are forgotten first). */
static int helper_add_bounded(struct mnl_socket *nl, uint32_t *seq, const struct eg_set *s, struct live_set *ls,
			      uint32_t max, const uint8_t *key, uint32_t timeout_ms)
{
	uint64_t now = now_ms();
	size_t i = live_find(ls, key);
	if (i == ls->n && ls->n >= max) {
		live_prune(ls, now);
		if (ls->n >= max)
			return -ENFILE;
		i = ls->n;
	}
	int r = helper_add(nl, seq, s, key, timeout_ms);
	if (r < 0)
		return r;
	if (i == ls->n) {
		if (ls->n == ls->cap) {
			ls->cap = ls->cap ? 2 * ls->cap : 16;
			ls->v = xrealloc(ls->v, ls->cap * sizeof *ls->v);
		}
		memcpy(ls->v[i].key, key, sizeof ls->v[i].key);
		ls->n++;
	}
	ls->v[i].expires_ms = now + timeout_ms;
	return 0;
}

static int helper_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	uint32_t mark = EGRESS_SENTRY_MARK;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void send_fd_reply(int sock, int32_t status, int fd)
{
	struct hrep rep = { .status = status };
	struct iovec iov = { &rep, sizeof rep };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	(void)sendmsg(sock, &mh, MSG_NOSIGNAL);
}

static _Noreturn void helper_main(struct mnl_socket *nl, int sock, uint32_t ttl_min, uint32_t ttl_max,
				  uint32_t set_elems_max)
{
	struct live_set live[EG_N_SETS] = { 0 };
	struct ab_err err;
	static const cap_value_t keep[] = { CAP_NET_ADMIN };
	/* die with the sentry; if it is already gone, go now */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() == 1)
		_exit(1);
	int keep_fds[3] = { mnl_socket_get_fd(nl), sock, log_fd() };
	(void)close_fds_from(3, keep_fds, 3);
	if (drop_caps(keep, 1, &err) < 0) {
		log_error("egress sentry helper: %s", err.msg);
		_exit(1);
	}
	/* the first release waits for a quiet second like the later ones: a
	 * short-lived container never pays for it */
	bool released = false;
	uint32_t seq = (uint32_t)time(NULL) << 8;
	for (;;) {
		struct hreq q;
		if (!released) {
			/* after a burst of work: what it touched goes back once quiet */
			struct pollfd pfd = { .fd = sock, .events = POLLIN };
			if (poll(&pfd, 1, IDLE_RELEASE_MS) == 0) {
				release_inherited();
				released = true;
				continue;
			}
		}
		released = false;
		ssize_t n = recv(sock, &q, sizeof q, 0);
		if (n == 0)
			_exit(0);   /* the sentry is gone */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		struct eg_set s;
		if ((size_t)n != sizeof q || !hreq_valid(&q, ttl_min, ttl_max, &s)) {
			send_fd_reply(sock, -EINVAL, -1);
			continue;
		}
		if (q.op == HREQ_SOCKET) {
			int fd = helper_socket(q.family, q.type);
			send_fd_reply(sock, fd < 0 ? fd : 0, fd);
			if (fd >= 0)
				close(fd);
		} else
			send_fd_reply(sock,
				      helper_add_bounded(nl, &seq, &s, &live[q.set], set_elems_max, q.key, q.timeout_ms),
				      -1);
	}
}

/* ---- sentry state ---- */

struct pending {
	int fd;                 /* upstream socket; -1 = free slot */
	int lfd;                /* the listener to answer from */
	struct sockaddr_storage client;
	socklen_t clen;
	uint64_t deadline;
	size_t client_udp;
	uint16_t qlen;
	uint8_t *query;         /* DNS_QUERY_MAX bytes of their own, touched only when used */
};

struct tclient {
	int fd;                 /* -1 = free */
	uint64_t deadline;
	size_t have;
	uint8_t buf[2 + DNS_QUERY_MAX];
};

struct cached_elem {
	uint8_t set;
	uint8_t key[24];
	uint64_t expires;       /* monotonic ms; 0 = empty */
};

struct recent_name {
	int family;             /* 0 = empty */
	uint8_t addr[16];
	char name[DNS_NAME_TEXT];
};

struct sentry {
	const struct egress_sentry_params *sp;
	const struct egress_policy *p;
	uint32_t ttl_min, ttl_max;
	uint32_t set_elems_max;
	int udp[2], tcp[2];     /* listeners on 127.0.0.1 and ::1 */
	int nflog;
	int pidfd, procfd;
	int helper;
	pid_t helper_pid;
	int logfd;
	uint64_t log_size, log_max;
	double tokens;
	uint64_t tokens_at;
	unsigned suppressed;
	size_t up_cur;
	uint8_t *buf;           /* one message at a time: 64 KiB + 2 */
	uint8_t *queries;       /* MAX_PENDING * DNS_QUERY_MAX */
	uint64_t active_at;     /* last time there was work */
	bool released;          /* memory given back since then */
	struct pending pend[MAX_PENDING];
	struct tclient tc[MAX_TCP_CLIENTS];
	struct cached_elem cache[ELEM_CACHE];
	struct recent_name recent[RECENT_NAMES];
	size_t recent_next;
};

#define BUF_SIZE (65536 + 2)

/* ---- deny log ---- */

/* Printable ASCII only: names come off the wire. */
static void sanitize(const char *in, char *out, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[i] = 0;
}

static void deny_record(struct sentry *s, const char *proto, const char *dst, int port, const char *name,
			const char *reason)
{
	if (s->logfd < 0)
		return;
	uint64_t now = now_ms();
	s->tokens += (double)(now - s->tokens_at) * LOG_RATE / 1000.0;
	if (s->tokens > LOG_BURST)
		s->tokens = LOG_BURST;
	s->tokens_at = now;
	if (s->tokens < 1) {
		s->suppressed++;
		return;
	}
	s->tokens -= 1;

	char ts[64], clean[DNS_NAME_TEXT];
	format_rfc3339(ts, sizeof ts);
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "time", ts);
	json_kv_str(o, "container", s->sp->container_id ? s->sp->container_id : "");
	json_kv_str(o, "verdict", "deny");
	json_kv_str(o, "proto", proto);
	if (dst)
		json_kv_str(o, "dst", dst);
	if (port >= 0)
		json_kv_int(o, "port", port);
	if (name) {
		sanitize(name, clean, sizeof clean);
		json_kv_str(o, "name", clean);
	}
	json_kv_str(o, "reason", reason);
	if (s->suppressed) {   /* records dropped by the rate limit since the last one */
		json_kv_uint(o, "suppressed", s->suppressed);
		s->suppressed = 0;
	}
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	char line[1024];
	if (len + 1 <= sizeof line && s->log_size + len + 1 <= s->log_max) {
		memcpy(line, text, len);
		line[len] = '\n';
		/* one write per line: O_APPEND keeps lines whole */
		if (write(s->logfd, line, len + 1) == (ssize_t)(len + 1))
			s->log_size += len + 1;
	}
	json_out_free(o);
}

static void remember_name(struct sentry *s, const struct dns_addr *a, const char *name)
{
	for (size_t i = 0; i < RECENT_NAMES; i++) {
		struct recent_name *r = &s->recent[i];
		if (r->family == a->family && memcmp(r->addr, a->addr, 16) == 0) {
			snprintf(r->name, sizeof r->name, "%s", name);
			return;
		}
	}
	struct recent_name *r = &s->recent[s->recent_next++ % RECENT_NAMES];
	r->family = a->family;
	memcpy(r->addr, a->addr, 16);
	snprintf(r->name, sizeof r->name, "%s", name);
}

static const char *recent_name(struct sentry *s, int family, const uint8_t *addr)
{
	for (size_t i = 0; i < RECENT_NAMES; i++)
		if (s->recent[i].family == family && memcmp(s->recent[i].addr, addr, 16) == 0)
			return s->recent[i].name;
	return NULL;
}

static void on_nflog_packet(const struct nflog_packet *pkt, void *data)
{
	struct sentry *s = data;
	char dst[INET6_ADDRSTRLEN], pbuf[8];
	inet_ntop(pkt->family, pkt->dst, dst, sizeof dst);
	const char *reason = strcmp(pkt->prefix, "deny") == 0 ? "denied"
			     : strcmp(pkt->prefix, "dns") == 0 ? "dns-bypass"
							       : "not-allowed";
	deny_record(s, nflog_proto_name(pkt->proto, pbuf), dst, pkt->has_port ? pkt->dport : -1,
		    recent_name(s, pkt->family, pkt->dst), reason);
}

static void handle_nflog(struct sentry *s)
{
	uint8_t buf[8192];
	for (;;) {
		ssize_t n = recv(s->nflog, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0) {
			/* ENOBUFS: the kernel dropped messages while we were busy */
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			return;
		}
		(void)nflog_parse_buffer(buf, (size_t)n, on_nflog_packet, s);
	}
}

/* ---- talking to the helper ---- */

static int helper_call(struct sentry *s, const struct hreq *q, int *ret_fd)
{
	if (send(s->helper, q, sizeof *q, MSG_NOSIGNAL) != (ssize_t)sizeof *q)
		return -EPIPE;
	struct hrep rep;
	struct iovec iov = { &rep, sizeof rep };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	ssize_t n;
	do
		n = recvmsg(s->helper, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof rep)
		return -EPIPE;
	int fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof fd);
	if (ret_fd)
		*ret_fd = fd;
	else if (fd >= 0)
		close(fd);
	return rep.status;
}

static int upstream_socket(struct sentry *s, int type, const struct egress_upstream *up)
{
	struct hreq q = { .op = HREQ_SOCKET, .family = up->family, .type = type };
	int fd = -1;
	int r = helper_call(s, &q, &fd);
	if (r < 0 || fd < 0) {
		if (fd >= 0)
			close(fd);
		return r < 0 ? r : -EPROTO;
	}
	int fl = fcntl(fd, F_GETFL);
	(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (up->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(up->port);
		memcpy(&in->sin_addr, up->addr, 4);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(up->port);
		in6->sin6_scope_id = up->scope_id;
		memcpy(&in6->sin6_addr, up->addr, 16);
		len = sizeof *in6;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* ---- answers: set elements ---- */

struct elem_req {
	uint8_t set;
	uint8_t key[24];
	uint32_t timeout_s;
};

static void push_elem(struct elem_req *v, size_t *n, unsigned set, const uint8_t *key, uint32_t timeout_s)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].set == set && memcmp(v[i].key, key, 24) == 0) {
			if (timeout_s > v[i].timeout_s)
				v[i].timeout_s = timeout_s;
			return;
		}
	if (*n == MAX_ANSWER_ELEMS)
		return;   /* more is not needed by anyone; those connections fail closed */
	v[*n].set = (uint8_t)set;
	memcpy(v[*n].key, key, 24);
	v[*n].timeout_s = timeout_s;
	(*n)++;
}

static void entry_elems(const struct egress_entry *e, bool deny, const struct dns_addr *a, uint32_t t,
			struct elem_req *v, size_t *n)
{
	struct eg_set s;
	uint8_t key[24], protos[2];
	unsigned idx = eg_set_index(EG_DYNAMIC, deny, a->family, eg_entry_shape(e));
	eg_set_get(idx, &s);
	size_t np = eg_entry_protos(e, protos);
	if (np == 0) {
		eg_key(&s, a->addr, 0, 0, key);
		push_elem(v, n, idx, key, t);
	}
	for (size_t i = 0; i < np; i++) {
		eg_key(&s, a->addr, protos[i], e->port, key);
		push_elem(v, n, idx, key, t);
	}
}

static int add_elem(struct sentry *s, const struct elem_req *r)
{
	uint64_t now = now_ms(), want = now + (uint64_t)r->timeout_s * 1000;
	struct cached_elem *slot = NULL, *oldest = &s->cache[0];
	for (size_t i = 0; i < ELEM_CACHE; i++) {
		struct cached_elem *c = &s->cache[i];
		if (c->expires && c->set == r->set && memcmp(c->key, r->key, 24) == 0) {
			slot = c;
			break;
		}
		if (c->expires < oldest->expires)
			oldest = c;
	}
	/* still fresh enough: no netlink round trip, and never shorten a timeout */
	if (slot && slot->expires + 1000 >= want)
		return 0;
	struct hreq q = { .op = HREQ_ADD, .set = r->set, .timeout_ms = r->timeout_s * 1000 };
	memcpy(q.key, r->key, 24);
	int ret = helper_call(s, &q, NULL);
	if (ret < 0)
		return ret;
	if (!slot)
		slot = oldest;
	slot->set = r->set;
	memcpy(slot->key, r->key, 24);
	slot->expires = want;
	return 0;
}

/* The same CNAME chain and the same addresses, in the same order. */
static bool same_answer(const struct dns_answer *a, const struct dns_answer *b)
{
	if (a->n_chain != b->n_chain || a->n_addrs != b->n_addrs || strcmp(a->q.name, b->q.name))
		return false;
	for (size_t i = 0; i < a->n_chain; i++)
		if (strcmp(a->chain[i], b->chain[i]))
			return false;
	for (size_t i = 0; i < a->n_addrs; i++)
		if (a->addrs[i].family != b->addrs[i].family || memcmp(a->addrs[i].addr, b->addrs[i].addr, 16))
			return false;
	return true;
}

/* Apply an upstream answer to the sets. Returns an rcode to send instead of the
 * answer (REFUSED, SERVFAIL), or -1 to relay the answer. */
static int apply_answer(struct sentry *s, uint8_t *msg, size_t len, const char *qname, uint16_t qtype,
			uint16_t qclass)
{
	struct dns_answer *a = xmalloc(sizeof *a);
	int ret = -1;
	int r = dns_parse_answer(msg, len, a);
	if (r < 0 || strcmp(a->q.name, qname) || a->q.type != qtype || a->q.class != qclass) {
		ret = DNS_RCODE_SERVFAIL;
		goto out;
	}
	if (DNS_RCODE(a->hdr.flags) != DNS_RCODE_NOERROR)
		goto out;
	/* deny wins along the whole CNAME chain */
	for (size_t i = 1; i < a->n_chain; i++)
		if (egress_policy_check_name(s->p, a->chain[i]) == EGRESS_NAME_DENY) {
			deny_record(s, "dns", NULL, -1, a->chain[i], "denied");
			ret = DNS_RCODE_REFUSED;
			goto out;
		}

	struct elem_req *v = xmalloc(MAX_ANSWER_ELEMS * sizeof *v);
	size_t n = 0;
	for (size_t k = 0; k < a->n_addrs; k++) {
		const struct dns_addr *ad = &a->addrs[k];
		uint32_t t = ad->ttl < s->ttl_min ? s->ttl_min : ad->ttl > s->ttl_max ? s->ttl_max : ad->ttl;
		for (size_t i = 0; i < s->p->allow.n; i++)
			if (egress_entry_matches_name(&s->p->allow.v[i], qname))
				entry_elems(&s->p->allow.v[i], false, ad, t, v, &n);
		for (size_t i = 0; i < s->p->deny.n; i++) {
			const struct egress_entry *e = &s->p->deny.v[i];
			for (size_t c = 0; c < a->n_chain; c++)
				if (egress_entry_matches_name(e, a->chain[c])) {
					entry_elems(e, true, ad, t, v, &n);
					break;
				}
		}
		remember_name(s, ad, qname);
	}
	/* deny elements first: an allow element must never be live without its deny */
	for (int pass = 0; pass < 2 && ret < 0; pass++)
		for (size_t i = 0; i < n; i++) {
			struct eg_set set;
			eg_set_get(v[i].set, &set);
			if (set.deny != (pass == 0))
				continue;
			r = add_elem(s, &v[i]);
			if (r < 0) {
				if (r == -ENFILE)
					log_warn("egress sentry: set %s is full (%u live elements): answered SERVFAIL until some expire",
						 set.name, s->set_elems_max);
				else
					log_warn("egress sentry: add element to %s: %s", set.name, strerror(-r));
				ret = DNS_RCODE_SERVFAIL;
				break;
			}
		}
	free(v);
	/* no client may cache an address longer than its set element lives; and
	 * the client gets what was judged: an answer whose names were spelt with
	 * the TTL bytes just changed reads differently now, and is refused */
	if (ret < 0) {
		struct dns_answer *b = xmalloc(sizeof *b);
		if (dns_clamp_ttls(msg, len, s->ttl_max) < 0 || dns_parse_answer(msg, len, b) < 0 ||
		    !same_answer(a, b))
			ret = DNS_RCODE_SERVFAIL;
		free(b);
	}
out:
	free(a);
	return ret;
}

/* ---- queries ---- */

enum verdict { V_DROP, V_REPLY, V_FORWARD };

/* Decide on a query; for V_REPLY the response is in out/outlen. */
static enum verdict classify(struct sentry *s, const uint8_t *q, size_t qlen, struct dns_question *qq,
			     uint8_t *out, size_t *outlen)
{
	struct dns_header h;
	if (dns_parse_header(q, qlen, &h) < 0 || (h.flags & DNS_FLAG_QR))
		return V_DROP;
	int rcode = -1;
	const struct dns_question *with_q = NULL;
	if (qlen > DNS_QUERY_MAX)
		rcode = DNS_RCODE_FORMERR;
	else if (DNS_OPCODE(h.flags) != 0)
		rcode = DNS_RCODE_NOTIMP;
	else {
		int r = dns_parse_question(q, qlen, &h, qq);
		if (r == -EINVAL) {
			with_q = qq;
			rcode = DNS_RCODE_REFUSED;
			deny_record(s, "dns", NULL, -1, qq->name, "not-allowed");
		} else if (r < 0)
			rcode = DNS_RCODE_FORMERR;
		else {
			with_q = qq;
			enum egress_name_verdict v = qq->class == DNS_CLASS_IN ? egress_policy_check_name(s->p, qq->name)
									      : EGRESS_NAME_NONE;
			if (v != EGRESS_NAME_ALLOW) {
				rcode = DNS_RCODE_REFUSED;
				deny_record(s, "dns", NULL, -1, qq->name, v == EGRESS_NAME_DENY ? "denied" : "not-allowed");
			}
		}
	}
	if (rcode < 0)
		return V_FORWARD;
	*outlen = dns_build_error(q, qlen, with_q, rcode, out, DNS_QUERY_MAX + 16);
	return *outlen ? V_REPLY : V_DROP;
}

static int poll_one(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			return 0;
	}
}

static int write_full(int fd, const uint8_t *buf, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			int r = poll_one(fd, POLLOUT, deadline);
			if (r < 0)
				return r;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_full(int fd, uint8_t *buf, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n = recv(fd, buf, len, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			int r = poll_one(fd, POLLIN, deadline);
			if (r < 0)
				return r;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One query over TCP to the upstream; the answer (without length) into out. */
static ssize_t tcp_upstream(struct sentry *s, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap)
{
	const struct egress_upstream *up = &s->sp->upstream[s->up_cur % s->sp->n_upstream];
	uint64_t deadline = now_ms() + TCP_UPSTREAM_TIMEOUT_MS;
	int fd = upstream_socket(s, SOCK_STREAM, up);
	if (fd < 0)
		return fd;
	int r = poll_one(fd, POLLOUT, deadline);
	int soerr = 0;
	socklen_t sl = sizeof soerr;
	if (r == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
		r = -soerr;
	uint8_t hdr[2] = { (uint8_t)(qlen >> 8), (uint8_t)qlen };
	if (r == 0)
		r = write_full(fd, hdr, 2, deadline);
	if (r == 0)
		r = write_full(fd, q, qlen, deadline);
	if (r == 0)
		r = read_full(fd, hdr, 2, deadline);
	size_t alen = (size_t)hdr[0] << 8 | hdr[1];
	if (r == 0 && alen > cap)
		r = -EMSGSIZE;
	if (r == 0)
		r = read_full(fd, out, alen, deadline);
	close(fd);
	if (r < 0) {
		s->up_cur++;   /* try the next nameserver next time */
		return r;
	}
	return (ssize_t)alen;
}

static void udp_reply(int lfd, const struct sockaddr_storage *to, socklen_t tolen, const uint8_t *msg, size_t len)
{
	(void)sendto(lfd, msg, len, MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
}

static void udp_query(struct sentry *s, int lfd)
{
	struct sockaddr_storage from;
	socklen_t flen = sizeof from;
	ssize_t n = recvfrom(lfd, s->buf, BUF_SIZE, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
	if (n <= 0)
		return;
	struct dns_question qq;
	uint8_t out[DNS_QUERY_MAX + 16];
	size_t olen = 0;
	enum verdict v = classify(s, s->buf, (size_t)n, &qq, out, &olen);
	if (v == V_DROP)
		return;
	if (v == V_REPLY) {
		udp_reply(lfd, &from, flen, out, olen);
		return;
	}
	struct pending *p = NULL;
	for (size_t i = 0; i < MAX_PENDING && !p; i++)
		if (s->pend[i].fd < 0)
			p = &s->pend[i];
	int fd = p ? upstream_socket(s, SOCK_DGRAM, &s->sp->upstream[s->up_cur % s->sp->n_upstream]) : -EBUSY;
	if (fd >= 0 && send(fd, s->buf, (size_t)n, MSG_DONTWAIT) != n) {
		close(fd);
		fd = -EIO;
	}
	if (fd < 0) {
		olen = dns_build_error(s->buf, (size_t)n, &qq, DNS_RCODE_SERVFAIL, out, sizeof out);
		if (olen)
			udp_reply(lfd, &from, flen, out, olen);
		return;
	}
	p->fd = fd;
	p->lfd = lfd;
	p->client = from;
	p->clen = flen;
	p->deadline = now_ms() + UPSTREAM_TIMEOUT_MS;
	p->client_udp = dns_query_udp_size(s->buf, (size_t)n);
	p->qlen = (uint16_t)n;
	memcpy(p->query, s->buf, (size_t)n);
}

static void pending_done(struct pending *p)
{
	close(p->fd);
	p->fd = -1;
}

static void pending_fail(struct sentry *s, struct pending *p, int rcode)
{
	struct dns_question qq;
	struct dns_header h;
	uint8_t out[DNS_QUERY_MAX + 16];
	int r = dns_parse_question(p->query, p->qlen, &h, &qq);
	size_t olen = dns_build_error(p->query, p->qlen, r == 0 ? &qq : NULL, rcode, out, sizeof out);
	if (olen)
		udp_reply(p->lfd, &p->client, p->clen, out, olen);
	pending_done(p);
}

static void upstream_reply(struct sentry *s, struct pending *p)
{
	ssize_t n = recv(p->fd, s->buf, BUF_SIZE, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		s->up_cur++;   /* ECONNREFUSED and the like: this nameserver is not there */
		pending_fail(s, p, DNS_RCODE_SERVFAIL);
		return;
	}
	struct dns_header h, qh;
	struct dns_question qq;
	/* not an answer to this query: keep waiting (the deadline still holds) */
	if (dns_parse_header(s->buf, (size_t)n, &h) < 0 || !(h.flags & DNS_FLAG_QR) ||
	    h.id != (uint16_t)(p->query[0] << 8 | p->query[1]) || dns_parse_question(p->query, p->qlen, &qh, &qq) < 0)
		return;

	if (h.flags & DNS_FLAG_TC) {
		/* learn the full answer over TCP so every address gets its element */
		uint8_t *full = xmalloc(BUF_SIZE);
		ssize_t fl = tcp_upstream(s, p->query, p->qlen, full, BUF_SIZE);
		if (fl > 0) {
			int rc = apply_answer(s, full, (size_t)fl, qq.name, qq.type, qq.class);
			if (rc >= 0)
				pending_fail(s, p, rc);
			else if ((size_t)fl <= p->client_udp) {
				udp_reply(p->lfd, &p->client, p->clen, full, (size_t)fl);
				pending_done(p);
			} else {
				/* too big for the client: it retries over TCP and gets it there */
				udp_reply(p->lfd, &p->client, p->clen, s->buf, (size_t)n);
				pending_done(p);
			}
		} else
			pending_fail(s, p, DNS_RCODE_SERVFAIL);
		free(full);
		return;
	}
	int rc = apply_answer(s, s->buf, (size_t)n, qq.name, qq.type, qq.class);
	if (rc >= 0) {
		pending_fail(s, p, rc);
		return;
	}
	udp_reply(p->lfd, &p->client, p->clen, s->buf, (size_t)n);
	pending_done(p);
}

static void tcp_accept(struct sentry *s, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (s->tc[i].fd < 0) {
			s->tc[i].fd = fd;
			s->tc[i].have = 0;
			s->tc[i].deadline = now_ms() + TCP_CLIENT_IDLE_MS;
			return;
		}
	close(fd);   /* full: the client retries */
}

static void tclient_close(struct tclient *c)
{
	close(c->fd);
	c->fd = -1;
}

static void tcp_send(struct tclient *c, const uint8_t *msg, size_t len)
{
	uint8_t hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };
	uint64_t deadline = now_ms() + 2000;
	if (write_full(c->fd, hdr, 2, deadline) < 0 || write_full(c->fd, msg, len, deadline) < 0)
		tclient_close(c);
}

static void tcp_client(struct sentry *s, struct tclient *c)
{
	ssize_t n = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		tclient_close(c);
		return;
	}
	if (n < 0)
		return;
	c->have += (size_t)n;
	/* pipelined queries are handled one after the other */
	while (c->fd >= 0 && c->have >= 2) {
		size_t qlen = (size_t)c->buf[0] << 8 | c->buf[1];
		if (qlen > DNS_QUERY_MAX || qlen < DNS_HEADER_LEN) {
			tclient_close(c);
			return;
		}
		if (c->have < 2 + qlen)
			return;
		const uint8_t *q = c->buf + 2;
		struct dns_question qq;
		uint8_t out[DNS_QUERY_MAX + 16];
		size_t olen = 0;
		enum verdict v = classify(s, q, qlen, &qq, out, &olen);
		if (v == V_REPLY)
			tcp_send(c, out, olen);
		else if (v == V_FORWARD) {
			ssize_t al = tcp_upstream(s, q, qlen, s->buf, BUF_SIZE);
			int rc = DNS_RCODE_SERVFAIL;
			struct dns_header h;
			if (al > 0 && dns_parse_header(s->buf, (size_t)al, &h) == 0 && h.id == (uint16_t)(q[0] << 8 | q[1]))
				rc = apply_answer(s, s->buf, (size_t)al, qq.name, qq.type, qq.class);
			if (rc < 0)
				tcp_send(c, s->buf, (size_t)al);
			else {
				olen = dns_build_error(q, qlen, &qq, rc, out, sizeof out);
				if (olen)
					tcp_send(c, out, olen);
			}
		}
		if (c->fd < 0)
			return;
		memmove(c->buf, c->buf + 2 + qlen, c->have - 2 - qlen);
		c->have -= 2 + qlen;
		c->deadline = now_ms() + TCP_CLIENT_IDLE_MS;
	}
	if (c->have == sizeof c->buf)
		tclient_close(c);
}

/* ---- setup ---- */

static int bind_listener(int family, int type, uint16_t port, int *ret, struct ab_err *err)
{
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ab_error(err, errno, "DNS socket");
	int one = 1;
	if (type == SOCK_STREAM)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		in6->sin6_addr = in6addr_loopback;
		len = sizeof *in6;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 16) < 0)) {
		int e = errno;
		close(fd);
		return ab_error(err, e, "bind DNS %s socket on %s port %u", type == SOCK_STREAM ? "TCP" : "UDP",
				family == AF_INET ? "127.0.0.1" : "::1", port);
	}
	*ret = fd;
	return 0;
}

/* The listeners must be bound with lo up. On a down lo, bind(127.0.0.1) still
 * succeeds but leaves the socket without a source address (the kernel does not
 * see 127.0.0.1 as local yet), so replies leave from the address the route
 * picks (the client's own, 10.0.2.100 under slirp4netns): conntrack cannot
 * match them to the redirected query and the client drops them. And ::1 does
 * not exist at all until lo is up. The init brings lo up in a netns of its
 * own and engines in theirs; this covers a joined netns whose lo is down.
 * In the current netns: lo up, then the four listeners (udp/tcp[0] IPv4, [1] IPv6). */
static int bind_listeners(uint16_t port, int udp[2], int tcp[2], struct ab_err *err)
{
	int r;
	if ((r = netdev_loopback_up(err)) < 0)
		return r;
	if ((r = bind_listener(AF_INET, SOCK_DGRAM, port, &udp[0], err)) < 0 ||
	    (r = bind_listener(AF_INET, SOCK_STREAM, port, &tcp[0], err)) < 0)
		return r;
	/* IPv6 may be disabled in the namespace; then there is no ::1 to serve */
	struct ab_err e6;
	if (bind_listener(AF_INET6, SOCK_DGRAM, port, &udp[1], &e6) < 0 ||
	    bind_listener(AF_INET6, SOCK_STREAM, port, &tcp[1], &e6) < 0) {
		log_debug("egress sentry: no IPv6 listener: %s", e6.msg);
		if (udp[1] >= 0)
			close(udp[1]);
		udp[1] = -1;
	}
	return 0;
}

void egress_sentry_sockets_close(struct egress_sentry_params *sp)
{
	for (int i = 0; i < 4; i++)
		if (sp->listen_fd[i] >= 0) {
			close(sp->listen_fd[i]);
			sp->listen_fd[i] = -1;
		}
	if (sp->nflog_fd >= 0) {
		close(sp->nflog_fd);
		sp->nflog_fd = -1;
	}
}

static int add_upstreams(struct mnl_socket *nl, const struct egress_sentry_params *sp, struct ab_err *err);
static bool any_guarded_upstream(const struct egress_sentry_params *sp);

int egress_sentry_sockets_open(int netns_fd, bool dns, uint16_t port, struct egress_sentry_params *sp,
			       struct ab_err *err)
{
	int udp[2] = {-1, -1}, tcp[2] = {-1, -1};
	int self = eg_netns_enter(netns_fd, err);
	if (self < 0)
		return self;
	int r = dns ? bind_listeners(port, udp, tcp, err) : 0;
	if (r == 0)
		r = nflog_open(EGRESS_NFLOG_GROUP, &sp->nflog_fd, err);
	/* A loopback resolver (Docker's 127.0.0.11) is guarded before the program
	 * runs, not once the sentry (which may start later) gets to it. Other
	 * upstreams only open a way for the sentry's own sockets: it adds them
	 * when it starts, and a run whose sentry never starts makes one nftables
	 * commit fewer. */
	if (r == 0 && dns && any_guarded_upstream(sp)) {
		struct mnl_socket *nl;
		if ((r = eg_nl_open(-1, &nl, err)) == 0) {
			if ((r = add_upstreams(nl, sp, err)) < 0)
				ab_wrap(err, "add upstream resolvers");
			mnl_socket_close(nl);
		}
		sp->upstreams_added = r == 0;
	}
	eg_netns_leave(self);
	sp->listen_fd[0] = udp[0];
	sp->listen_fd[1] = tcp[0];
	sp->listen_fd[2] = udp[1];
	sp->listen_fd[3] = tcp[1];
	if (r < 0)
		egress_sentry_sockets_close(sp);
	return r;
}

static bool is_sentry_addr(const struct egress_upstream *u)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	return u->family == AF_INET ? memcmp(u->addr, "\x7f\0\0\x01", 4) == 0 : memcmp(u->addr, lo6, 16) == 0;
}

bool egress_upstream_is_sentry(const struct egress_upstream *u, uint16_t port)
{
	return is_sentry_addr(u) && u->port == port;
}

/* 127.0.0.1/::1 carry the sentry itself; guarding them would cut it off */
static bool guarded(const struct egress_upstream *u)
{
	bool loopback = u->family == AF_INET ? u->addr[0] == 127 : IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)u->addr);
	return loopback && !is_sentry_addr(u);
}

static bool any_guarded_upstream(const struct egress_sentry_params *sp)
{
	for (size_t i = 0; i < sp->n_upstream; i++)
		if (guarded(&sp->upstream[i]))
			return true;
	return false;
}

/* The upstream sets: where the sentry's marked sockets may go, and which
 * loopback resolvers nobody else may reach (Docker's 127.0.0.11). */
static int add_upstreams(struct mnl_socket *nl, const struct egress_sentry_params *sp, struct ab_err *err)
{
	struct eg_batch b;
	eg_batch_init(&b, (uint32_t)time(NULL));
	for (size_t i = 0; i < sp->n_upstream; i++) {
		const struct egress_upstream *u = &sp->upstream[i];
		struct eg_set s;
		struct eg_elem e = {0};
		eg_set_get(eg_set_index(EG_UPSTREAM, false, u->family, EG_SHAPE_ANY), &s);
		eg_key(&s, u->addr, 0, 0, e.key);
		eg_batch_elems(&b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE, &e, 1, "add upstream resolver to set");
		if (guarded(u)) {
			eg_set_get(eg_set_index(EG_GUARD, false, u->family, EG_SHAPE_ANY), &s);
			eg_batch_elems(&b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE, &e, 1, "guard loopback resolver in set");
		}
	}
	int r = eg_batch_send(nl, &b, err);
	eg_batch_free(&b);
	return r;
}

static bool init_alive(struct sentry *s)
{
	if (s->pidfd >= 0) {
		struct pollfd p = { .fd = s->pidfd, .events = POLLIN };
		return poll(&p, 1, 0) == 0;
	}
	/* /proc/PID opened at start: a stale directory fd never names a reused pid */
	char stat[512];
	int fd = openat(s->procfd, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, stat, sizeof stat - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = 0;
	char *paren = strrchr(stat, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static int watch_init(struct sentry *s, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	if (sp->init_pidfd >= 0) {
		s->pidfd = sp->init_pidfd;
		return 0;
	}
	if (!sp->no_pidfd) {
		s->pidfd = (int)syscall(SYS_pidfd_open, sp->init_pid, 0);
		if (s->pidfd >= 0) {
			(void)fcntl(s->pidfd, F_SETFD, FD_CLOEXEC);
			return 0;
		}
		if (errno != ENOSYS)
			return ab_error(err, errno, "pidfd_open %d", (int)sp->init_pid);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", (int)sp->init_pid);
	s->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->procfd < 0)
		return ab_error(err, errno, "open %s", path);
	if (!init_alive(s))
		return ab_error(err, ESRCH, "container init %d", (int)sp->init_pid);
	return 0;
}

static int setup(struct sentry *s, struct mnl_socket **nl, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	int r;
	if (sp->netns_fd >= 0) {
		if (setns(sp->netns_fd, CLONE_NEWNET) < 0)
			return ab_error(err, errno, "enter the container network namespace");
		close(sp->netns_fd);   /* our copy (forked): no way back to the runtime's netns */
	}
	if (sp->log_fd >= 0 || sp->log_path) {
		s->logfd = sp->log_fd >= 0 ? sp->log_fd
					   : open(sp->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->logfd < 0)
			return ab_error(err, errno, "open deny log %s", sp->log_path);
		struct stat st;
		if (fstat(s->logfd, &st) == 0)
			s->log_size = (uint64_t)st.st_size;
	}
	if ((r = watch_init(s, err)) < 0)
		return r;
	if (sp->dns) {
		if (sp->n_upstream == 0 || sp->n_upstream > EGRESS_MAX_UPSTREAMS)
			return ab_error(err, 0, "no upstream resolver");
		for (size_t i = 0; i < sp->n_upstream; i++)
			if (egress_upstream_is_sentry(&sp->upstream[i], sp->port))
				return ab_error(err, 0, "the upstream resolver is the sentry's own address");
		if (sp->listen_fd[0] >= 0) {
			s->udp[0] = sp->listen_fd[0];
			s->tcp[0] = sp->listen_fd[1];
			s->udp[1] = sp->listen_fd[2];
			s->tcp[1] = sp->listen_fd[3];
		} else if ((r = bind_listeners(sp->port, s->udp, s->tcp, err)) < 0)
			return r;
	}
	if (sp->nflog_fd >= 0)
		s->nflog = sp->nflog_fd;
	else if ((r = nflog_open(EGRESS_NFLOG_GROUP, &s->nflog, err)) < 0)
		return r;
	if ((r = eg_nl_open(-1, nl, err)) < 0)
		return r;
	if (sp->dns && !sp->upstreams_added && (r = add_upstreams(*nl, sp, err)) < 0)
		return ab_wrap(err, "add upstream resolvers");
	return empty_root(err);
}

static int start_helper(struct sentry *s, struct mnl_socket *nl, struct ab_err *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ab_error(err, errno, "socketpair");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return ab_error(err, e, "fork the sentry helper");
	}
	if (pid == 0) {
		close(sv[0]);
		helper_main(nl, sv[1], s->ttl_min, s->ttl_max, s->set_elems_max);
	}
	close(sv[1]);
	s->helper = sv[0];
	s->helper_pid = pid;
	return 0;
}

static void serve(struct sentry *s)
{
	enum { P_INIT, P_NFLOG, P_UDP4, P_UDP6, P_TCP4, P_TCP6, P_FIXED };
	struct pollfd pf[P_FIXED + MAX_PENDING + MAX_TCP_CLIENTS];
	for (;;) {
		/* with a pidfd nothing needs a periodic wake-up; /proc needs a look each second */
		uint64_t now = now_ms(), next = s->pidfd >= 0 ? UINT64_MAX : now + 1000;
		if (!s->released && s->active_at + IDLE_RELEASE_MS < next)
			next = s->active_at + IDLE_RELEASE_MS;
		pf[P_INIT] = (struct pollfd){ .fd = s->pidfd, .events = POLLIN };
		pf[P_NFLOG] = (struct pollfd){ .fd = s->nflog, .events = POLLIN };
		pf[P_UDP4] = (struct pollfd){ .fd = s->udp[0], .events = POLLIN };
		pf[P_UDP6] = (struct pollfd){ .fd = s->udp[1], .events = POLLIN };
		pf[P_TCP4] = (struct pollfd){ .fd = s->tcp[0], .events = POLLIN };
		pf[P_TCP6] = (struct pollfd){ .fd = s->tcp[1], .events = POLLIN };
		for (size_t i = 0; i < MAX_PENDING; i++) {
			pf[P_FIXED + i] = (struct pollfd){ .fd = s->pend[i].fd, .events = POLLIN };
			if (s->pend[i].fd >= 0 && s->pend[i].deadline < next)
				next = s->pend[i].deadline;
		}
		for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
			pf[P_FIXED + MAX_PENDING + i] = (struct pollfd){ .fd = s->tc[i].fd, .events = POLLIN };
			if (s->tc[i].fd >= 0 && s->tc[i].deadline < next)
				next = s->tc[i].deadline;
		}
		int r = poll(pf, ARRAY_SIZE(pf), next == UINT64_MAX ? -1 : next > now ? (int)(next - now) : 0);
		if (r < 0 && errno != EINTR)
			return;
		if (!init_alive(s)) {
			/* what the container was refused just before it ended */
			handle_nflog(s);
			return;
		}
		if (r > 0) {
			s->active_at = now_ms();
			s->released = false;
			if (pf[P_NFLOG].revents)
				handle_nflog(s);
			for (int i = 0; i < 2; i++) {
				if (pf[P_UDP4 + i].revents)
					udp_query(s, s->udp[i]);
				if (pf[P_TCP4 + i].revents)
					tcp_accept(s, s->tcp[i]);
			}
			for (size_t i = 0; i < MAX_PENDING; i++)
				if (pf[P_FIXED + i].revents && s->pend[i].fd >= 0)
					upstream_reply(s, &s->pend[i]);
			for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
				if (pf[P_FIXED + MAX_PENDING + i].revents && s->tc[i].fd >= 0)
					tcp_client(s, &s->tc[i]);
		}
		now = now_ms();
		for (size_t i = 0; i < MAX_PENDING; i++)
			if (s->pend[i].fd >= 0 && s->pend[i].deadline <= now) {
				s->up_cur++;
				pending_fail(s, &s->pend[i], DNS_RCODE_SERVFAIL);
			}
		bool busy = false;
		for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
			if (s->tc[i].fd >= 0 && s->tc[i].deadline <= now)
				tclient_close(&s->tc[i]);
			busy |= s->tc[i].fd >= 0;
		}
		for (size_t i = 0; i < MAX_PENDING; i++)
			busy |= s->pend[i].fd >= 0;
		/* quiet after a burst: the library code and heap it touched go back (the
		 * next query faults in what it needs again, a few microseconds) */
		if (!s->released && !busy && now >= s->active_at + IDLE_RELEASE_MS) {
			release_inherited();
			s->released = true;
		}
	}
}

int egress_sentry_run(const struct egress_sentry_params *sp, struct ab_err *err)
{
	struct sentry *s = zpages(sizeof *s);
	struct mnl_socket *nl = NULL;
	int r;
	s->sp = sp;
	s->p = sp->policy;
	release_more = sp->release_more;
	dead_stack_hi = sp->dead_stack_hi;
	s->ttl_min = sp->ttl_min ? sp->ttl_min : EGRESS_TTL_MIN;
	s->ttl_max = sp->ttl_max ? sp->ttl_max : EGRESS_TTL_MAX;
	s->set_elems_max = sp->set_elems_max ? sp->set_elems_max : EGRESS_SET_ELEMS_MAX;
	s->log_max = sp->log_max_bytes ? sp->log_max_bytes : LOG_MAX_DEFAULT;
	s->tokens = LOG_BURST;
	s->tokens_at = now_ms();
	s->udp[0] = s->udp[1] = s->tcp[0] = s->tcp[1] = -1;
	s->nflog = s->pidfd = s->procfd = s->helper = s->logfd = -1;
	s->queries = zpages(MAX_PENDING * DNS_QUERY_MAX);
	for (size_t i = 0; i < MAX_PENDING; i++) {
		s->pend[i].fd = -1;
		s->pend[i].query = s->queries + i * DNS_QUERY_MAX;
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		s->tc[i].fd = -1;
	signal(SIGPIPE, SIG_IGN);

	int keep[] = { sp->netns_fd, sp->init_pidfd, sp->ready_fd, log_fd(),
		       sp->listen_fd[0], sp->listen_fd[1], sp->listen_fd[2], sp->listen_fd[3], sp->nflog_fd, sp->log_fd };
	(void)close_fds_from(3, keep, ARRAY_SIZE(keep));

	if (!s->p || s->ttl_min > s->ttl_max || (sp->dns && sp->port == 0)) {
		r = ab_error(err, 0, "egress sentry: bad parameters");
		goto out;
	}
	/* Without an allowed name nothing is ever forwarded or added to a set: no
	 * helper then (default deny: a fork and ~0.2 MiB fewer per container). */
	bool need_helper = sp->dns && egress_policy_allows_names(s->p);
	if ((r = setup(s, &nl, err)) < 0 || (need_helper && (r = start_helper(s, nl, err)) < 0)) {
		ab_wrap(err, "egress sentry");
		goto out;
	}
	mnl_socket_close(nl);   /* the helper has it; we keep no way to change rules */
	nl = NULL;
	static const cap_value_t none[1];
	if ((r = drop_caps(none, 0, err)) < 0) {
		ab_wrap(err, "egress sentry");
		goto out;
	}
	s->buf = zpages(BUF_SIZE);
	/* given back after the first quiet second (serve), not now: start-up
	 * is on the container's critical path, and a short-lived container
	 * never needs it */
	s->active_at = now_ms();
	s->released = false;
	if (sp->ready_fd >= 0) {
		(void)write(sp->ready_fd, "1", 1);
		close(sp->ready_fd);
	}
	serve(s);
	r = 0;
out:
	if (nl)
		mnl_socket_close(nl);
	if (s->helper >= 0)
		close(s->helper);   /* EOF: the helper exits */
	if (s->helper_pid > 0)
		while (waitpid(s->helper_pid, NULL, 0) < 0 && errno == EINTR)
			;
	for (size_t i = 0; i < MAX_PENDING; i++)
		if (s->pend[i].fd >= 0)
			close(s->pend[i].fd);
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (s->tc[i].fd >= 0)
			close(s->tc[i].fd);
	int fds[] = { s->udp[0], s->udp[1], s->tcp[0], s->tcp[1], s->nflog, s->procfd, s->logfd };
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (s->pidfd >= 0 && s->pidfd != sp->init_pidfd)
		close(s->pidfd);
	if (s->buf)
		munmap(s->buf, BUF_SIZE);
	munmap(s->queries, MAX_PENDING * DNS_QUERY_MAX);
	munmap(s, sizeof *s);
	return r;
}
