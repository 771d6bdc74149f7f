/* What the runtime gives the DNS sentry (egress_sentry_run, sentry.h; its
 * sockets made early by egress_sentry_sockets_open, sentry_sockets.h).
 * Types and constants only. */
#ifndef AGENTBOX_SENTRY_PARAMS_H
#define AGENTBOX_SENTRY_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress.h"
#include "ruleset_types.h"
#include "upstream.h"

struct egress_sentry_params {
	int netns_fd;                     /* entered, then closed; -1: already in the netns */
	const struct egress_policy *policy;
	const char *container_id;
	bool dns;                         /* false: deny log only, no DNS service */
	uint16_t port;                    /* DNS port on 127.0.0.1 and ::1 (same as egress_install) */
	struct egress_upstream upstream[EGRESS_MAX_UPSTREAMS];
	size_t n_upstream;
	/* Where a loopback upstream (Docker's embedded resolver) forwards what it
	 * does not serve itself. Its forwards leave from the box and come back to
	 * the sentry, which asks one of these instead: the one a forward was
	 * addressed to when it is in the list, else the next; never a loopback
	 * one, nor an address of the box (no loop). With forward_engine they are
	 * the engine's own (Docker's --dns, its daemon.json dns, or the host's
	 * as Docker read them), asked from where the engine asks them (out of the
	 * box's reach, as any upstream); without, the runtime's own resolvers,
	 * asked from its netns. None: such forwards get SERVFAIL. */
	struct egress_upstream forward_upstream[EGRESS_MAX_UPSTREAMS];
	size_t n_forward_upstream;
	bool forward_engine;
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
	/* the box's HTTP proxy (http_proxy.h) on 127.0.0.1 and ::1 port
	 * EGRESS_HTTP_PROXY_PORT, with http_proxy set: its listeners from
	 * egress_sentry_sockets_open (-1: the sentry binds them itself); without
	 * it, http_fd is not looked at */
	bool http_proxy;
	int http_fd[2];
	/* learn mode (sentry_learn.h), with a policy that learns: the learn file
	 * in the state directory and its durable copy (O_APPEND; 0 or -1: none;
	 * without the first nothing is recorded), and the socket on the learn
	 * log group from egress_sentry_sockets_open (0 or -1: open it) */
	int learn_fd;
	int learn_durable_fd;
	int nflog_learn_fd;
};

#endif
