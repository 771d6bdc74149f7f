/* What the runtime, the sentry and the credential gateway say to each other
 * (the gateway's side: netfilter/gateway/ctl.c reads the runtime's records,
 * main.c the hand-offs, records.c sends the records).
 *
 * runtime -> gateway, on a stream socketpair, before the box runs: records
 * of (u32 type, u32 length, bytes), ended by GW_REC_END; the gateway answers
 * with one record, its CA certificate (GW_REC_CA_PEM) or why it could not
 * start (GW_REC_ERROR).
 *
 * sentry -> gateway, on a seqpacket socketpair, for each connection the box
 * opened to a credential's host: one struct gw_handoff with two fds
 * (SCM_RIGHTS): the box's socket (its ClientHello still unread) and an
 * unconnected socket that carries EGRESS_PROXY_MARK in the box's network
 * namespace, for the gateway to connect to the original destination.
 *
 * gateway -> sentry, on the same socket: one struct gw_record for each thing
 * the deny log is to say (a credential's use, a refusal). The sentry writes
 * the log, with its bounds and its counting of repeats; the gateway has no
 * file of it. */
#ifndef AGENTBOX_GATEWAY_PROTO_H
#define AGENTBOX_GATEWAY_PROTO_H

#include <netinet/in.h>
#include <stdint.h>

#define GATEWAY_BIN "agentbox-gateway"

enum gw_rec_type {
	GW_REC_END = 0,
	GW_REC_CONTAINER = 1,      /* the container's id, for the log */
	GW_REC_CRED_NAME = 2,      /* starts a credential */
	GW_REC_CRED_HOST = 3,      /* one of its hosts ("a.com", "*.a.com") */
	GW_REC_CRED_HEADER = 4,    /* its template ("Authorization: Bearer {}") */
	GW_REC_CRED_SECRET = 5,    /* its secret */
	GW_REC_UPSTREAM_CA = 6,    /* PEM: more CAs to trust upstream */
	GW_REC_TEST_UNPROTECTED = 90, /* a test build only: no guard on requests and responses */
	GW_REC_CA_PEM = 100,       /* reply: the box's CA certificate */
	GW_REC_ERROR = 101,        /* reply: why the gateway cannot start */
};

#define GW_REC_MAX (1u << 20)   /* bytes of one record */

struct gw_handoff {
	uint32_t magic;            /* GW_HANDOFF_MAGIC */
	int32_t family;            /* of the original destination */
	uint8_t addr[16];
	uint16_t port;             /* host order */
	char sni[256];             /* what the ClientHello asked for, as the sentry judged it */
};
#define GW_HANDOFF_MAGIC 0x61626777u

enum gw_event {
	GW_EVENT_USE = 1,          /* a credential went into a request */
	GW_EVENT_DENY = 2,         /* a connection or a request was refused */
};

struct gw_record {
	uint32_t magic;            /* GW_RECORD_MAGIC */
	uint32_t event;            /* enum gw_event */
	uint32_t dropped;          /* records the gateway could not send before this one */
	int32_t family;            /* of dst: AF_INET, AF_INET6, or 0 (none) */
	uint8_t addr[16];
	uint16_t port;
	char name[256];            /* the connection's server name */
	char credential[128];      /* USE: the credential's name */
	char reason[32];           /* DENY: a word ("host-mismatch", ...) */
	char detail[128];          /* DENY: more, for people (may hold the box's bytes) */
};
#define GW_RECORD_MAGIC 0x61626772u

#endif
