/* One connection pair inside the gateway: the box's end and the server's,
 * each with its TLS state and plaintext buffers, and the HTTP version that
 * relays between them (h1.c, h2.c). Made and pumped by relay.c. Types only. */
#ifndef AGENTBOX_GATEWAY_PAIR_H
#define AGENTBOX_GATEWAY_PAIR_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "buf.h"
#include "gateway.h"

struct gw_end {
	int fd;
	SSL *ssl;
	struct gw_buf in, out;          /* plaintext read, plaintext to write */
	bool eof;                       /* nothing more will be read */
	bool shut;                      /* close_notify sent: nothing more will be written */
	bool want_read, want_write;     /* what the last TLS call waits for */
};

enum gw_proto_kind { GW_H1, GW_H2 };

struct gw_pair {
	struct gw_end c, u;             /* the box's end, the server's */
	int epfd;
	uint32_t ev_c, ev_u;            /* epoll interest set */
	char host[TLS_NAME_MAX];        /* the server name both sides use */
	struct sockaddr_storage dst;
	socklen_t dst_len;
	unsigned char alpn_offer[64];   /* the box's offer, filtered to h2 and http/1.1 (wire form) */
	size_t alpn_offer_len;
	bool hello_seen, connected, up_done, box_done;
	bool up_failed;                 /* the server is out of reach: the box is told why (up_failure) */
	char up_failure[640];
	unsigned char up_alpn[16];
	unsigned up_alpn_len;
	enum gw_proto_kind proto;
	void *ps;                       /* h1 or h2 state */
	size_t creds[CRED_MAX], n_creds;
	uint64_t logged;                /* credentials whose use on this pair was logged */
	uint64_t deadline_ms;
	bool dead;
	bool zombie;                    /* closed, freed at the next tick */
	struct gw_pair *prev, *next;
};

#endif
