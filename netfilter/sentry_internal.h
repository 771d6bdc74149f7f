/* The DNS sentry's parts, shared between its files (not a public interface):
 *   sentry.c          setup, the serving loop, egress_sentry_run
 *   sentry_sockets.c  its listeners, log socket and upstream sets, made in the netns
 *   sentry_dns.c      queries from the container, answers from the upstream
 *   sentry_log.c      the deny log and the packets the ruleset logged
 *   sentry_helper.c   the privileged helper, and the sentry's requests to it
 *   sentry_privs.c    dropping capabilities, the empty root
 *   sentry_mem.c      giving back what the runtime left behind
 * Calls go one way: sentry.c -> the others; sentry_dns.c -> log, helper;
 * sentry_helper.c -> privs, mem. */
#ifndef AGENTBOX_SENTRY_INTERNAL_H
#define AGENTBOX_SENTRY_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "dns.h"
#include "egress_internal.h"

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
#define BUF_SIZE (65536 + 2)

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

static inline uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* sentry_privs.c */
/* no_new_privs, every capability but keep[] dropped (bounding set too), not dumpable */
int sentry_drop_caps(const cap_value_t *keep, int n_keep, struct ab_err *err);
/* chroot into an empty read-only tmpfs */
int sentry_empty_root(struct ab_err *err);

/* sentry_mem.c */
/* Zeroed anonymous pages, or NULL. */
void *sentry_zpages(size_t len);
/* What to give back besides the inherited heap, stack and code: the caller's
 * hook and where its dead stack begins (egress_sentry_params). */
void sentry_mem_init(void (*release_more)(void), uintptr_t dead_stack_hi);
void sentry_release_inherited(void);

/* sentry_helper.c */
int sentry_start_helper(struct sentry *s, struct mnl_socket *nl, struct ab_err *err);
/* Add (or refresh) one element of dynamic set SET: 0 or -errno (-ENFILE: full). */
int sentry_helper_add(struct sentry *s, unsigned set, const uint8_t key[24], uint32_t timeout_ms);
/* A marked socket of TYPE connected (non-blocking) to UP, or -errno. */
int sentry_upstream_socket(struct sentry *s, int type, const struct egress_upstream *up);

/* sentry_log.c */
void sentry_deny_record(struct sentry *s, const char *proto, const char *dst, int port, const char *name,
			const char *reason);
void sentry_remember_name(struct sentry *s, const struct dns_addr *a, const char *name);
void sentry_handle_nflog(struct sentry *s);

/* sentry_dns.c */
void sentry_udp_query(struct sentry *s, int lfd);
void sentry_upstream_reply(struct sentry *s, struct pending *p);
void sentry_pending_fail(struct sentry *s, struct pending *p, int rcode);
void sentry_tcp_accept(struct sentry *s, int lfd);
void sentry_tcp_client(struct sentry *s, struct tclient *c);
void sentry_tclient_close(struct tclient *c);

/* sentry_sockets.c */
/* In the current netns: lo up, then UDP and TCP listeners on 127.0.0.1 and ::1
 * (udp/tcp[0] IPv4, [1] IPv6, -1 when IPv6 is disabled). */
int sentry_bind_listeners(uint16_t port, int udp[2], int tcp[2], struct ab_err *err);
/* The upstream resolvers of sp into their sets (guarded ones into the guard sets too). */
int sentry_add_upstreams(struct mnl_socket *nl, const struct egress_sentry_params *sp, struct ab_err *err);

#endif
