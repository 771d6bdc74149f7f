/* The DNS sentry's state: its bounds, the tables its handlers share (queries,
 * TCP clients, upstreams, the deny log's destinations and names), and its
 * clock. Every part of the sentry works on one struct sentry, made here;
 * the loop (sentry.c) calls the parts, which return to it. Not a public
 * interface. */
#ifndef AGENTBOX_SENTRY_STATE_H
#define AGENTBOX_SENTRY_STATE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "dns.h"
#include "durable_log.h"
#include "mem_release.h"
#include "sentry_params.h"
#include "upstream.h"

#define DNS_QUERY_MAX 1024       /* larger queries get FORMERR */
#define MAX_QUERIES 32           /* queries waiting for an upstream answer */
#define MAX_TCP_UPSTREAM 8       /* of them over TCP at once (a 64 KiB buffer each) */
#define MAX_TCP_CLIENTS 8
#define UPSTREAM_TIMEOUT_MS 4000
#define TCP_CLIENT_IDLE_MS 5000
#define ELEM_CACHE 256           /* set elements known to be fresh */
#define RECENT_NAMES 128         /* address -> name, for deny log records */
#define MAX_ANSWER_ELEMS 256
#define LOG_MAX_DEFAULT (16u << 20)
#define LOG_RATE 100             /* records per second, burst LOG_BURST */
#define LOG_BURST 200
#define IDLE_RELEASE_MS 1000     /* quiet this long after work: give memory back */
#define DEST_SLOTS 512           /* refused destinations remembered for their repeats */
#define DEST_WAYS 4              /* (in buckets of 4, the least recently seen one goes) */
#define NAME_SLOTS 128           /* records by name (refused names, the SNI check's and
				  * the gateway's), likewise */
#define FLUSH_MS 5000            /* repeats are written this often at most */
#define BUF_SIZE (65536 + 2)
#define TCP_BUF_SIZE (2 + 65535) /* a length and the largest DNS message */

/* Where an upstream resolver is asked from. The container must never be able
 * to speak for it: from the runtime's own network namespace it cannot reach
 * the socket at all; from the box's, it cannot send from the resolver's
 * address unless that address is the box's own (a loopback resolver such as
 * Docker's 127.0.0.11), and then TCP is used, whose sequence numbers it
 * cannot guess. */
enum up_side {
	UP_UNKNOWN,   /* not looked at yet: at the first query, once the box's network is up */
	UP_HOST,      /* routed through a gateway: the same server from the runtime's netns */
	UP_BOX,       /* on the box's own link (slirp4netns' 10.0.2.3): asked from the box */
	UP_BOX_LOCAL, /* one of the box's own addresses (loopback): from the box, over TCP */
};

struct sentry_names;
struct sentry_learn;

struct upstream {
	struct egress_upstream u;
	enum up_side side;
	int net_index;           /* in the net helper's list; -1 for loopback ones */
};

struct tclient {
	int fd;                  /* -1 = free */
	unsigned gen;            /* bumped at each accept: a late answer finds its client gone */
	uint64_t deadline;
	/* where the connection was addressed before the redirect to the sentry
	 * (a forward of Docker's resolver: the server it meant); family 0 when
	 * not known */
	struct egress_upstream dst;
	size_t have;
	uint8_t buf[2 + DNS_QUERY_MAX];
};

enum q_state { Q_FREE, Q_UDP, Q_TCP_CONNECT, Q_TCP_SEND, Q_TCP_READ };

/* A query on its way to an upstream resolver and back. */
struct query {
	enum q_state state;
	int fd;                  /* upstream socket */
	uint64_t deadline;
	/* who asked: over TCP (tc, its gen then) or over UDP */
	struct tclient *tc;
	unsigned tc_gen;
	int lfd;
	struct sockaddr_storage client;
	socklen_t clen;
	size_t client_udp;       /* the EDNS payload size the client can take */
	/* what */
	struct dns_question qq;
	uint16_t qlen;
	uint8_t *query;          /* the client's bytes, DNS_QUERY_MAX of their own */
	/* where: s->up[up] or, for a forward of Docker's resolver, s->fwd_up[up] */
	size_t up;
	bool forwarded;
	int pinned;              /* forwarded: the fwd_up it was addressed to, -1: any */
	bool tcp;                /* this exchange is over TCP */
	uint16_t up_id;          /* random, per exchange */
	/* TCP: [len][query] out, then [len][answer] in, one buffer */
	uint8_t *tbuf;
	size_t tdone, twant;
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

enum reason { R_NOT_ALLOWED, R_DENIED, R_DNS_BYPASS, R_SPOOFED, R_INTERNAL, R_COUNT };

/* A refused destination and what is still to be written about it. */
struct dest {
	bool used, pending;      /* pending: its first record is not written yet */
	bool has_port;
	uint8_t family, proto, reason;
	uint16_t port;
	uint8_t addr[16];
	uint32_t repeats;        /* since its last record */
	uint64_t last_ms;
	uint64_t first_rt, last_rt;   /* wall clock (ms) of the first and last attempt
				       * its next record covers */
};

/* What a record by name is about: its "proto" (and "verdict"). */
enum named_kind {
	NK_DNS,        /* a refused lookup */
	NK_TLS,        /* a connection the SNI check refused */
	NK_HTTPS,      /* a connection or request the credential gateway refused */
	NK_CREDENTIAL, /* a credential's use (verdict "credential") */
	NK_PROXY,      /* a request the box's HTTP proxy refused (a name or address and a port) */
};

/* A record by name, and what is still to be written about it. The same
 * kind, name, destination, reason and credential are one record: later ones
 * are its repeats. */
struct named {
	bool used, pending;
	uint8_t kind;            /* enum named_kind */
	uint8_t family;          /* of addr; 0: no destination */
	int32_t port;            /* -1: none */
	uint8_t addr[16];
	uint32_t repeats;
	uint64_t last_ms;
	uint64_t first_rt, last_rt;   /* as struct dest's */
	char reason[24];         /* "" for a credential's use */
	char credential[128];    /* NK_CREDENTIAL: its name */
	char detail[128];        /* NK_HTTPS: the gateway's words on the first one */
	char name[DNS_NAME_TEXT];
};

/* What sentry_log_named is told; NULL/0 for what a kind does not have. */
struct named_event {
	enum named_kind kind;
	int family;
	const uint8_t *addr;
	int port;
	const char *name, *reason, *credential, *detail;
};

/* a log group's sequence numbers: a gap is what the kernel dropped */
struct seq {
	bool known;
	uint32_t next;
};

struct sentry {
	const struct egress_sentry_params *sp;
	const struct egress_policy *p;
	uint32_t ttl_min, ttl_max;
	uint32_t set_elems_max;
	int udp[2], tcp[2];     /* listeners on 127.0.0.1 and ::1 */
	int nflog, nflog_repeat;  /* the log groups: first packets, repeats */
	int pidfd, procfd;
	int helper;             /* the netadmin helper (set elements, marked sockets), -1: none */
	pid_t helper_pid;
	int net;                /* the net helper (host-side sockets), -1: none */
	pid_t net_pid;
	int logfd;
	struct durable_log durable;   /* fd -1: none */
	int policy_fd, reload_fd;     /* live changes (sentry_reload.c); -1: none */
	uint64_t log_size, log_max;
	int refusedfd;          /* the box's refused file, -1: none */
	uint64_t refused_size;
	bool refused_full;
	double tokens;
	uint64_t tokens_at;
	struct dest dests[DEST_SLOTS];
	struct named names[NAME_SLOTS];
	struct seq seq_first, seq_repeat;
	uint64_t lost_records;   /* first packets the kernel dropped (since the last summary) */
	uint64_t lost_repeats;   /* repeats the kernel dropped */
	uint64_t dropped_records, dropped_repeats;   /* what we could not write */
	bool log_due;            /* something to write at the next tick */
	bool log_full;           /* the size limit was reached and said */
	uint64_t log_flushed_ms;
	struct upstream up[EGRESS_MAX_UPSTREAMS];      /* from the box's resolv.conf */
	size_t n_up, up_cur;
	struct upstream fwd_up[EGRESS_MAX_UPSTREAMS];  /* where a loopback upstream forwards */
	size_t n_fwd_up, fwd_cur;
	uint8_t *buf;           /* one message at a time: 64 KiB + 2 */
	uint8_t *queries;       /* MAX_QUERIES * DNS_QUERY_MAX */
	uint8_t *tcp_bufs;      /* MAX_TCP_UPSTREAM * TCP_BUF_SIZE */
	bool tcp_buf_used[MAX_TCP_UPSTREAM];
	uint64_t active_at;     /* last time there was work */
	bool released;          /* memory given back since then */
	struct query q[MAX_QUERIES];
	struct tclient tc[MAX_TCP_CLIENTS];
	struct cached_elem cache[ELEM_CACHE];
	struct recent_name recent[RECENT_NAMES];
	size_t recent_next;
	struct sni_proxy *sni;  /* the SNI check, when the policy allows some TCP/443 */
	int sni_fd[2];          /* its listeners (the caller's, or bound in setup) */
	uint64_t sni_next;      /* when it wants to run next (monotonic ms), UINT64_MAX: on input only */
	bool gateway_gone;      /* the credential gateway's socket (sp->gateway_fd) hung up */
	struct http_proxy *http;   /* the box's HTTP proxy (sentry_http.c), when it has one */
	int http_fd[2];         /* its listeners (the caller's, or bound in setup) */
	uint64_t http_next;     /* when it wants to run next, UINT64_MAX: on input only */
	struct sentry_names *names_map;   /* names and their addresses (sentry_names.c), NULL: none yet */
	struct sentry_learn *learn;       /* learn mode's records (sentry_learn.c), NULL: not learning */
	int nflog_learn;                  /* learn mode's log group, -1: none */
};

static inline uint64_t now_ms(void)
{
	struct timespec ts = { 0 };
	idle_clock(&ts);   /* the serve loop's, after a release too */
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The wall clock in ms: when something happened, for the records. */
static inline uint64_t wall_ms(void)
{
	struct timespec ts = { 0 };
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The state for sp: zeroed pages with every fd -1 and the bounds from sp (or
 * their defaults); its buffers come later. NULL: no memory. */
struct sentry *sentry_state_new(const struct egress_sentry_params *sp);
/* The state and its buffers unmapped: at the sentry's end, and at once in a
 * helper just forked (nothing a helper does reads them). s is gone. */
void sentry_state_free(struct sentry *s);

#endif
