/* Egress firewall for one container network namespace: the policy model
 * (allow/deny entries), the nftables ruleset installed over netlink, and the
 * DNS sentry that turns allowed names into short-lived set elements and logs
 * what was denied. See netfilter/README.md for the design. */
#ifndef AGENTBOX_EGRESS_H
#define AGENTBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* ---- policy model ---- */

enum egress_kind {
	EGRESS_NAME,     /* example.com: exactly that name */
	EGRESS_WILDCARD, /* *.example.com: one or more labels below it, not the apex */
	EGRESS_CIDR4,    /* 198.51.100.0/24, 198.51.100.7 (= /32) */
	EGRESS_CIDR6,    /* 2001:db8::/48, [2001:db8::1] (= /128) */
};

struct egress_entry {
	enum egress_kind kind;
	char *name;        /* NAME: lowercase, no final dot; WILDCARD: the suffix after "*." */
	uint8_t addr[16];  /* CIDR: network address (4 or 16 bytes used) */
	uint8_t prefix;    /* CIDR: prefix length */
	uint8_t proto;     /* 0 = any, IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;     /* 0 = any port */
	char *reason;      /* deny entries: why, in the kit's words (egress_reason.c); NULL: none */
};

struct egress_list {
	struct egress_entry *v;
	size_t n, cap;
};

struct egress_policy {
	struct egress_list allow, deny;
	/* Address ranges (CIDR entries only) that answers for allowed names may
	 * point into although they are special-purpose (private, loopback,
	 * link-local, ...) or the host's own: the sentry withholds such answers
	 * otherwise. Nothing in them is reachable without an allowed name. */
	struct egress_list internal;
};

#define EGRESS_MAX_ENTRIES 4096

/* Parse a comma-separated list of entries and append them to the allow or deny
 * list; source names the origin in errors ("annotation agentbox.egress.allow").
 * All or nothing: on error p is unchanged. Empty or blank list = no entries. */
int egress_policy_add(struct egress_policy *p, const char *list, bool deny, const char *source,
		      struct ab_err *err);
/* The same for the internal list: CIDR entries without port or protocol. */
int egress_policy_add_internal(struct egress_policy *p, const char *list, const char *source, struct ab_err *err);
void egress_policy_free(struct egress_policy *p);
bool egress_policy_is_empty(const struct egress_policy *p);
/* Does any allow or deny entry name a domain (so the sentry has work to do)? */
bool egress_policy_has_domains(const struct egress_policy *p);
/* Does any allow entry name a domain (so the sentry may forward a lookup and
 * add its addresses: the work of its helpers)? */
bool egress_policy_allows_names(const struct egress_policy *p);
/* Canonical text: "allow=e1,e2;deny=e3[;internal=e4]" with every entry in
 * canonical form (lowercase, normalized addresses, /32 and /128 dropped); the
 * internal part only when there is one. Caller frees. */
char *egress_policy_to_string(const struct egress_policy *p);
/* The policy that text (as egress_policy_to_string writes it) describes;
 * source names it in errors. */
int egress_policy_from_string(const char *text, const char *source, struct egress_policy *ret, struct ab_err *err);
/* One entry in canonical form into buf; returns buf. */
char *egress_entry_to_string(const struct egress_entry *e, char *buf, size_t len);

/* Reasons for deny entries (egress_reason.c), from TEXT: lines
 * "ENTRY=REASON", each ENTRY one of p's deny entries (any spelling of it).
 * All or nothing; source names the origin in errors. */
#define EGRESS_REASON_MAX 200
int egress_policy_set_reasons(struct egress_policy *p, const char *text, const char *source, struct ab_err *err);
/* The reason of a deny entry that refuses this: a name (its lookup, when addr
 * is NULL), or an address (family, addr; proto 0 and port -1 when unknown),
 * with the name that led there when known. NULL when none has one. */
const char *egress_deny_reason(const struct egress_policy *p, const char *name, int family, const uint8_t *addr,
			       uint8_t proto, int port);

/* Does a NAME or WILDCARD entry match the lowercase name (no final dot)? */
bool egress_entry_matches_name(const struct egress_entry *e, const char *name);

/* Room for any entry's canonical text: "*." + a 253-character name + ":65535/tcp"
 * is 265. (A shorter buffer cut ports and protocols off, and two entries that
 * differ only there compared equal.) */
#define EGRESS_ENTRY_TEXT 320

/* Is entry e inside what list allows? The same entry, a name the list's names
 * cover, or a CIDR inside one of its CIDRs, each with no narrower port or
 * protocol on the list's side (egress_compare.c). */
bool egress_entry_covered(const struct egress_list *list, const struct egress_entry *e);
/* Would a container with policy mine reach anything one with owner's cannot?
 * The first such entry goes into what, and *missing_deny says whether it is an
 * owner's deny entry that mine lacks. Conservative: false means narrower or
 * the same. */
bool egress_policy_wider(const struct egress_policy *mine, const struct egress_policy *owner, char *what,
			 size_t len, bool *missing_deny);

/* Is addr (4 or 16 bytes) in a special-purpose range (netfilter/policy/special.c)?
 * What kind ("loopback", "private", ...) or NULL. */
const char *egress_addr_special(int family, const uint8_t *addr);
/* Does the policy open addr's range on purpose: an internal entry, or a CIDR
 * allow entry for every port and protocol, holds it? */
bool egress_addr_opened(const struct egress_policy *p, int family, const uint8_t *addr);

enum egress_name_verdict {
	EGRESS_NAME_NONE,  /* no allow entry names it: REFUSED */
	EGRESS_NAME_DENY,  /* a deny entry without port or protocol names it: REFUSED */
	EGRESS_NAME_ALLOW, /* resolve it; set elements follow the matching entries */
};
enum egress_name_verdict egress_policy_check_name(const struct egress_policy *p, const char *name);

/* ---- network namespaces ---- */

/* Run fn(arg, err) in the network namespace netns_fd (-1: a new one) from a
 * child that enters it and exits; the caller never switches namespaces.
 * Sockets fn makes belong to that namespace and are the caller's (the child
 * shares memory and fd table). Works rootful and rootless: when entering needs
 * capabilities held only in the user namespace that owns netns_fd, the child
 * enters that one first. Returns what fn returned, or a negative value with
 * err set when the namespace could not be entered. */
int egress_in_netns(int netns_fd, int (*fn)(void *arg, struct ab_err *err), void *arg, struct ab_err *err);
/* Move the calling process into netns_fd for good (its owning user namespace
 * first when needed, as above): for a process that lives there (the sentry). */
int egress_netns_join(int netns_fd, struct ab_err *err);

/* ---- nftables ruleset ---- */

/* Table "inet agentbox"; the sentry's own DNS sockets carry this mark so the
 * redirect skips them and the filter lets them reach the upstream resolver. */
#define EGRESS_TABLE "agentbox"
#define EGRESS_SENTRY_MARK 0x0ab0d053u
/* The SNI proxy's and the credential gateway's connections to the original
 * destination (netfilter/sentry/sni_proxy.h): the TCP/443 redirect skips them, the
 * filter judges them like any other packet of the box. */
#define EGRESS_PROXY_MARK 0x0ab0d443u
/* Why a packet was refused: its mark in chain refused, and so in the log. */
enum egress_refusal {
	EGRESS_REFUSED_NOT_ALLOWED,  /* no allow entry covers it */
	EGRESS_REFUSED_DENIED,       /* a deny entry does */
	EGRESS_REFUSED_DNS,          /* DNS/DoT elsewhere than the sentry, or a guarded resolver */
	EGRESS_REFUSED_SPOOF,        /* a source address that is not the box's */
};
#define EGRESS_REFUSAL_MARK(why) (0x0ab0e000u | (uint32_t)(why))
/* nfnetlink_log group of every log rule (groups are per network namespace):
 * the first packet to a destination in a minute, and the repeats. */
#define EGRESS_NFLOG_GROUP 171
#define EGRESS_NFLOG_REPEAT_GROUP 172
/* Default DNS port of the sentry on 127.0.0.1 and ::1 inside the netns. */
#define EGRESS_SENTRY_PORT 53
/* The sentry's SNI proxy on 127.0.0.1 and ::1: where the ruleset redirects
 * every allowed TCP/443 connection (sni_proxy.h). Above the ephemeral range,
 * so no connection of the box ever has it as its own port. */
#define EGRESS_SNI_PORT 61443

/* Install (atomically replacing any previous one) the ruleset for p inside the
 * network namespace netns_fd. Either the whole ruleset is in place afterwards
 * or nothing changed. The calling thread returns to its own netns. */
int egress_install(int netns_fd, const struct egress_policy *p, const char *container_id,
		   uint16_t sentry_port, struct ab_err *err);
/* The same, but an agentbox ruleset already in the namespace is left alone and
 * 1 returned: a namespace shared with the container that installed it (and runs
 * its sentry) keeps that container's rules. */
int egress_install_new(int netns_fd, const struct egress_policy *p, const char *container_id,
		       uint16_t sentry_port, struct ab_err *err);
/* Replace the ruleset for a changed policy (egress allow/deny): in one batch,
 * with the elements the sentry put in its sets carried over (their remaining
 * timeouts) into those of the new ruleset, but for the addresses learnt for
 * allowed names when keep_names is false (a deny must not leave them open:
 * the box looks them up again). ruleset_carry.c. */
int egress_reinstall(int netns_fd, const struct egress_policy *p, const char *container_id, uint16_t sentry_port,
		     bool keep_names, struct ab_err *err);
/* End the flows in netns_fd's conntrack table whose destination a CIDR entry
 * of deny covers (a live deny: established flows pass the ruleset before its
 * deny sets). How many went into *ret_cut. ct_cut.c. */
int egress_conntrack_cut(int netns_fd, const struct egress_list *deny, size_t *ret_cut, struct ab_err *err);
/* Is there an agentbox ruleset in netns_fd? 1 and the id of the container that
 * installed it (from the table comment; "" if it has none) into id, 0 if there
 * is none. */
int egress_table_owner(int netns_fd, char *id, size_t len, struct ab_err *err);
/* Delete the table; a missing table is not an error. */
int egress_remove(int netns_fd, struct ab_err *err);
/* Where the hook anchor is pinned (netfilter/ruleset/anchor.c). */
#define EGRESS_HOOK_ANCHOR "/run/agentbox-netfilter/anchor"
/* Make sure a network namespace holding the egress ruleset is pinned at pin, so
 * that netfilter's hook static keys stay on between containers. Idempotent and
 * safe to race; on error nothing is pinned and containers work as before. */
int egress_hook_anchor_ensure(const char *pin, struct ab_err *err);

/* ---- DNS sentry ---- */

struct egress_upstream {
	int family;        /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint32_t scope_id; /* IPv6 link-local zone */
	uint16_t port;     /* host order, 53 */
};
#define EGRESS_MAX_UPSTREAMS 3

/* First nameserver lines (up to EGRESS_MAX_UPSTREAMS) of a resolv.conf. */
int egress_upstream_from_resolv_conf(const char *path, struct egress_upstream *ret,
				     size_t *ret_n, struct ab_err *err);
/* 127.0.0.1 or ::1 at port: where a sentry listening on port would ask itself. */
bool egress_upstream_is_sentry(const struct egress_upstream *u, uint16_t port);

/* TTL clamp of the set elements a DNS answer creates (seconds). */
#define EGRESS_TTL_MIN 30
#define EGRESS_TTL_MAX 3600
/* Live elements the sentry may keep in each dynamic set (a lookup that needs
 * one more fails with SERVFAIL until some expire) */
#define EGRESS_SET_ELEMS_MAX 4096

struct egress_sentry_params {
	int netns_fd;                     /* entered, then closed; -1: already in the netns */
	const struct egress_policy *policy;
	const char *container_id;
	bool dns;                         /* false: deny log only, no DNS service */
	uint16_t port;                    /* DNS port on 127.0.0.1 and ::1 (same as egress_install) */
	struct egress_upstream upstream[EGRESS_MAX_UPSTREAMS];
	size_t n_upstream;
	/* The runtime's own resolvers (its resolv.conf), asked from its netns for
	 * what a loopback upstream (Docker's embedded resolver) forwards: its
	 * forward leaves from the box and comes back to the sentry. None: such
	 * forwards get SERVFAIL. */
	struct egress_upstream host_upstream[EGRESS_MAX_UPSTREAMS];
	size_t n_host_upstream;
	const char *log_path;             /* deny log, JSON lines, appended; NULL = none */
	int log_fd;                       /* the deny log opened by the caller (O_APPEND), or
					   * -1: open log_path */
	uint64_t log_max_bytes;           /* stop logging past this size; 0 = 16 MiB */
	/* the durable log (durable_log.h): every record goes there too, with its
	 * own rotation; only with durable set (the directory is the caller's) */
	bool durable;
	int durable_dirfd;
	uint64_t durable_max_bytes;       /* per file; 0 = DURABLE_LOG_MAX_DEFAULT */
	/* live policy changes (sentry_reload.c): with reloadable, the file the
	 * runtime writes a changed policy to, read on SIGHUP; with live, the
	 * helpers and the SNI check are started even if the policy at start
	 * needs none, so a change may allow a name or TCP/443 */
	bool reloadable;
	int policy_fd;
	bool live;
	int refused_fd;                   /* the box's refused file (O_APPEND), written from
					   * its end; 0 or -1: none (sentry_refused.c) */
	pid_t init_pid;                   /* exit when it exits */
	int init_pidfd;                   /* -1: pidfd_open(init_pid) */
	bool no_pidfd;                    /* force the /proc polling fallback (tests) */
	uint32_t ttl_min, ttl_max;        /* 0 = EGRESS_TTL_MIN / EGRESS_TTL_MAX */
	uint32_t set_elems_max;           /* per dynamic set; 0 = EGRESS_SET_ELEMS_MAX */
	int ready_fd;                     /* gets one byte once serving; -1 = none */
	int listen_fd[4];                 /* from egress_sentry_sockets_open, or all -1: bind them */
	int nflog_fd;                     /* likewise; -1: open it */
	int nflog_repeat_fd;              /* likewise, EGRESS_NFLOG_REPEAT_GROUP */
	bool upstreams_added;             /* egress_sentry_sockets_open put the upstream
					   * and guard elements in */
	void (*release_more)(void);       /* the caller's memory to give back with the
					   * sentry's own, once idle; NULL = none */
	uintptr_t dead_stack_hi;          /* runs on a stack of its own: everything of the
					   * original stack below this is dead (0: it
					   * runs on that stack, below its caller's frames) */
	/* the SNI check (sni_proxy.h): its listeners from egress_sentry_sockets_open
	 * (-1: none, when the policy allows no TCP/443), and the credential
	 * gateway's hand-off socket with the hosts whose flows go there */
	int sni_fd[2];
	int gateway_fd;
	const struct egress_list *cred_hosts;
};

/* The sentry's sockets, made in the netns NETNS_FD for the caller to hand to
 * the sentry (sp->listen_fd, sp->nflog_fd, sp->nflog_repeat_fd, and sp->sni_fd
 * when sp->policy allows some TCP/443): with DNS, its listeners (UDP and TCP
 * on 127.0.0.1 and ::1, port PORT; loopback brought up first; udp4, tcp4,
 * udp6, tcp6, the IPv6 pair -1 when the netns has IPv6 disabled), and always
 * its sockets on the ruleset's two log groups. Made before the container's program
 * can run, they hold its first queries and log records until the sentry serves.
 * With DNS, the upstream resolvers of sp->upstream go into the ruleset's sets
 * too (loopback ones guarded from everyone but the sentry). */
int egress_sentry_sockets_open(int netns_fd, bool dns, uint16_t port, struct egress_sentry_params *sp,
			       struct ab_err *err);
void egress_sentry_sockets_close(struct egress_sentry_params *sp);

/* Body of the sentry process (the runtime forks, the child calls this and
 * _exits with its result). Forks a helper that stays in the runtime's netns
 * (sockets to the upstream resolvers), enters the box's netns, binds its
 * sockets, forks a helper that alone keeps CAP_NET_ADMIN (set elements), drops
 * every capability, and serves until the container init exits (the helpers
 * only when the policy allows a name). Returns 0 when init exited, negative on
 * a setup error. Closes every fd but 0-2 and its own. */
int egress_sentry_run(const struct egress_sentry_params *sp, struct ab_err *err);

#endif
