/* What the ruleset sets up and the sentry and the runtime rely on: the
 * table's name, the marks, the log groups and the ports it redirects to.
 * Constants and types only. */
#ifndef AGENTBOX_RULESET_TYPES_H
#define AGENTBOX_RULESET_TYPES_H

#include <stdint.h>

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
	EGRESS_REFUSED_INTERNAL,     /* learn mode: a special-purpose range the policy does not open */
};
#define EGRESS_REFUSAL_MARK(why) (0x0ab0e000u | (uint32_t)(why))
/* nfnetlink_log group of every log rule (groups are per network namespace):
 * the first packet to a destination in a minute, and the repeats. */
#define EGRESS_NFLOG_GROUP 171
#define EGRESS_NFLOG_REPEAT_GROUP 172
/* learn mode: every new connection the box opens (ruleset_learn.c) */
#define EGRESS_NFLOG_LEARN_GROUP 173
/* Default DNS port of the sentry on 127.0.0.1 and ::1 inside the netns. */
#define EGRESS_SENTRY_PORT 53
/* The sentry's SNI proxy on 127.0.0.1 and ::1: where the ruleset redirects
 * every allowed TCP/443 connection (sni_proxy.h). Above the ephemeral range,
 * so no connection of the box ever has it as its own port. */
#define EGRESS_SNI_PORT 61443
/* The sentry's HTTP proxy on 127.0.0.1 and ::1 (netfilter/sentry/http_proxy.h):
 * what HTTPS_PROXY and co. name in a box. Above the ephemeral range too. */
#define EGRESS_HTTP_PROXY_PORT 61128

/* TTL clamp of the set elements a DNS answer creates (seconds). */
#define EGRESS_TTL_MIN 30
#define EGRESS_TTL_MAX 3600
/* Live elements the sentry may keep in each dynamic set (a lookup that needs
 * one more fails with SERVFAIL until some expire) */
#define EGRESS_SET_ELEMS_MAX 4096

#endif
