/* The DNS sentry's parts, shared between its files (not a public interface):
 *   sentry.c          setup, the serving loop, egress_sentry_run
 *   sentry_sockets.c  its listeners, log socket and upstream sets, made in the netns
 *   sentry_dns.c      queries from the container, answers judged and relayed
 *   sentry_upstream.c where each upstream is asked from, the exchange with it
 *   sentry_log.c      the deny log and the packets the ruleset logged
 *   sentry_refused.c  what the box reads about its refusals: the text, its file
 *   sentry_helper.c   the privileged helper, and the sentry's requests to it
 *   sentry_sni.c      the SNI check (sni_proxy.c) in the sentry: its sockets, its log
 *   sentry_privs.c    dropping capabilities, the empty root
 *   sentry_mem.c      giving back what the runtime left behind
 * Calls go one way: sentry.c -> the others; sentry_dns.c -> upstream, log,
 * helper; sentry_upstream.c -> helper; sentry_sni.c -> helper, log;
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
#include "durable_log.h"
#include "egress_internal.h"
#include "mem_release.h"
#include "netns.h"
#include "sentry_params.h"

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

struct upstream {
	struct egress_upstream u;
	enum up_side side;
	int net_index;           /* in the net helper's list; -1 for loopback ones */
};

struct tclient {
	int fd;                  /* -1 = free */
	unsigned gen;            /* bumped at each accept: a late answer finds its client gone */
	uint64_t deadline;
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
	/* where: s->up[up] or, for a query Docker's resolver asks on, s->host_up[up] */
	size_t up;
	bool host_only;
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
};

/* What a record by name is about: its "proto" (and "verdict"). */
enum named_kind {
	NK_DNS,        /* a refused lookup */
	NK_TLS,        /* a connection the SNI check refused */
	NK_HTTPS,      /* a connection or request the credential gateway refused */
	NK_CREDENTIAL, /* a credential's use (verdict "credential") */
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
	struct upstream host_up[EGRESS_MAX_UPSTREAMS]; /* the runtime's own resolvers */
	size_t n_host_up, host_cur;
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
};

static inline uint64_t now_ms(void)
{
	struct timespec ts = { 0 };
	idle_clock(&ts);   /* the serve loop's, after a release too */
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
/* In a helper just forked: the sentry's state and buffers unmapped (s is gone) */
void sentry_unmap_state(struct sentry *s);

/* sentry_helper.c: two helpers, forked by the sentry. The netadmin one lives
 * in the box's netns and keeps CAP_NET_ADMIN: set elements, marked sockets.
 * The net one stays in the runtime's netns and keeps nothing: sockets to the
 * upstream resolvers it was given, and whether an address is the host's. */
int sentry_start_helper(struct sentry *s, struct mnl_socket *nl, struct ab_err *err);
int sentry_start_net_helper(struct sentry *s, const struct egress_upstream *list, size_t n, struct ab_err *err);
/* Add (or refresh) one element of dynamic set SET: 0 or -errno (-ENFILE: full). */
int sentry_helper_add(struct sentry *s, unsigned set, const uint8_t key[24], uint32_t timeout_ms);
/* A socket of the box's netns carrying the sentry's mark (not connected), or -errno. */
int sentry_helper_socket(struct sentry *s, int family, int type);
/* A TCP socket of the box's netns carrying EGRESS_PROXY_MARK (not connected):
 * the SNI check's and the gateway's way to an original destination, judged
 * by the filter like the box's own. -errno on failure. */
int sentry_helper_proxy_socket(struct sentry *s, int family);
/* A socket of the runtime's netns connected (TCP: connecting) to the net
 * helper's upstream INDEX, or -errno. */
int sentry_net_socket(struct sentry *s, unsigned index, int type);
/* Is addr one of the host's own (the runtime's netns)? 1, 0, or -errno. */
int sentry_net_is_local(struct sentry *s, int family, const uint8_t *addr);

/* sentry_upstream.c */
/* The upstream tables from the parameters; the net helper's list into list
 * (room for 2 * EGRESS_MAX_UPSTREAMS), its length returned. */
size_t sentry_upstreams_init(struct sentry *s, struct egress_upstream *list);
/* Start q's exchange with its upstream (q->up, q->host_only, q->tcp set):
 * a new socket, a random id. 0, or -errno (q unchanged but for q->fd = -1). */
int sentry_exchange_start(struct sentry *s, struct query *q);
enum exchange { EX_WAIT, EX_DONE, EX_FAILED };
/* Work on q's socket after poll said revents. EX_DONE: the answer, its id put
 * back to the client's, is at *msg (len bytes; valid until q is reused). */
enum exchange sentry_exchange_io(struct sentry *s, struct query *q, short revents, uint8_t **msg, size_t *len);
/* poll events q's socket waits for */
short sentry_exchange_events(const struct query *q);
/* Close q's socket and buffer. */
void sentry_exchange_end(struct sentry *s, struct query *q);

/* sentry_reload.c: live policy changes */
int sentry_reload_start(struct sentry *s, struct ab_err *err);
void sentry_reload(struct sentry *s);

/* sentry_log.c */
/* A name refused (proto "dns"): its first refusal is a record, the next ones
 * are counted. */
void sentry_log_name(struct sentry *s, const char *name, enum reason reason);
/* A record by name: a refused lookup, the SNI check's refusals, the
 * gateway's records. Its first one is written, the next ones counted. */
void sentry_log_named(struct sentry *s, const struct named_event *e);
/* An allowed name whose answer pointed inside, at addr. */
void sentry_log_pointed(struct sentry *s, const char *name, int family, const uint8_t *addr);
void sentry_remember_name(struct sentry *s, const struct dns_addr *a, const char *name);
/* Read the log groups' sockets: first packets, repeats (a bounded amount). */
void sentry_handle_nflog(struct sentry *s);
void sentry_handle_nflog_repeats(struct sentry *s);
/* When the next tick is due (UINT64_MAX: nothing to write), and the tick:
 * repeats, records that waited for the rate, the summary. final: the last one. */
uint64_t sentry_log_next(const struct sentry *s);
void sentry_log_tick(struct sentry *s, bool final);

/* sentry_refused.c */
/* The sentence that tells the agent why (a refused lookup's extended DNS
 * error, the refused file's "message"): code is the deny log's reason; name
 * and/or an address (family 0: none; proto 0, port -1: unknown); via: the
 * denied name a CNAME led to. */
void sentry_refusal_text(const struct sentry *s, const char *code, const char *name, const char *via, int family,
			 const uint8_t *addr, uint8_t proto, int port, char *buf, size_t len);
/* A first refusal into the refused file, if there is one: kind is the deny
 * log's "proto" ("dns", "tls", "tcp", ...). */
void sentry_refused_note(struct sentry *s, const char *kind, const char *code, const char *name, int family,
			 const uint8_t *addr, uint8_t proto, int port);

/* sentry_dns.c */
void sentry_udp_query(struct sentry *s, int lfd);
void sentry_query_event(struct sentry *s, struct query *q, short revents);
void sentry_query_timeout(struct sentry *s, struct query *q);
void sentry_tcp_accept(struct sentry *s, int lfd);
void sentry_tcp_client(struct sentry *s, struct tclient *c);
void sentry_tclient_close(struct tclient *c);

/* sentry_sockets.c */
/* In the current netns: lo up, then UDP and TCP listeners on 127.0.0.1 and ::1
 * (udp/tcp[0] IPv4, [1] IPv6, -1 when IPv6 is disabled). */
int sentry_bind_listeners(uint16_t port, int udp[2], int tcp[2], struct ab_err *err);
/* In the current netns: the sockets on the log groups (first packets, repeats). */
int sentry_open_log_sockets(int *first, int *repeat, struct ab_err *err);
/* The upstream resolvers of sp into their sets (guarded ones into the guard sets too). */
int sentry_add_upstreams(struct mnl_socket *nl, const struct egress_sentry_params *sp, struct ab_err *err);
/* In the current netns: the SNI check's listeners on 127.0.0.1 and ::1,
 * EGRESS_SNI_PORT ([1] -1 when IPv6 is disabled). */
int sentry_bind_sni(int fd[2], struct ab_err *err);

/* sentry_sni.c */
/* The SNI proxy over the sentry's listeners s->sni_fd, after the netadmin
 * helper started (its upstream sockets come from there). */
int sentry_sni_start(struct sentry *s, struct ab_err *err);
/* Its work when its fd is readable or its time came (never blocks). */
void sentry_sni_run(struct sentry *s);
void sentry_sni_stop(struct sentry *s);
/* The credential gateway's records (a credential's use, its refusals) into
 * the deny log: what is there, at most max of them. Polled while it is there. */
bool sentry_gateway_polled(const struct sentry *s);
void sentry_gateway_read(struct sentry *s, unsigned max);

#endif
