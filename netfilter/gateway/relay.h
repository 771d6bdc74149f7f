/* One connection pair inside the gateway: the box's end and the server's,
 * each with its TLS state and plaintext buffers, and the HTTP version that
 * relays between them (h1.c, h2.c). Private to gateway/. */
#ifndef AGENTBOX_GATEWAY_RELAY_H
#define AGENTBOX_GATEWAY_RELAY_H

#include "gateway.h"

#define GW_BUF_SOFT (32u * 1024)    /* read only below this much buffered */
#define GW_BUF_HARD (160u * 1024)   /* a rebuilt header block may go up to here */

struct gw_buf {
	uint8_t *b;
	size_t off, len, cap;           /* data is b[off .. off+len) */
};

bool gw_buf_put(struct gw_buf *b, const void *data, size_t len);   /* false over GW_BUF_HARD */
bool gw_buf_printf(struct gw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gw_buf_drop(struct gw_buf *b, size_t n);
void gw_buf_free(struct gw_buf *b);   /* wiped: it held requests with the credential */
static inline size_t gw_buf_room(const struct gw_buf *b) { return b->len < GW_BUF_SOFT ? GW_BUF_SOFT - b->len : 0; }
static inline uint8_t *gw_buf_data(const struct gw_buf *b) { return b->b + b->off; }

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

/* The credentials of the pair's host into the request being rebuilt (h1:
 * "Name: value" lines; h2: header pairs), logging each one's first use. */
void gw_pair_log_use(struct gw_pair *p, size_t cred);
/* Is authority (a Host header or :authority, maybe with a port) the pair's host? */
bool gw_pair_authority_ok(const struct gw_pair *p, const char *authority, size_t len);
/* End the pair now (an error, a refusal): both sockets reset */
void gw_pair_fail(struct gw_pair *p, const char *why);

int gw_h1_init(struct gw_pair *p);
int gw_h1_process(struct gw_pair *p, bool *progress);
void gw_h1_free(struct gw_pair *p);

int gw_h2_init(struct gw_pair *p);
int gw_h2_process(struct gw_pair *p, bool *progress);
void gw_h2_free(struct gw_pair *p);

uint64_t gw_now_ms(void);

#endif
