/* Shared between the ruleset builder and the sentry: the layout of the sets
 * in table inet agentbox, their keys, and a small nftables netlink batch
 * helper (libnftnl messages over a libmnl socket). Not a public interface. */
#ifndef AGENTBOX_EGRESS_INTERNAL_H
#define AGENTBOX_EGRESS_INTERNAL_H

#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.h"
#include "ruleset_types.h"

/* What a set element carries besides the address. */
enum eg_shape {
	EG_SHAPE_ANY,   /* address: every protocol and port */
	EG_SHAPE_PROTO, /* address . inet_proto: every port of tcp or udp */
	EG_SHAPE_PORT,  /* address . inet_proto . inet_service */
	EG_N_SHAPES
};

enum eg_kind {
	EG_STATIC,   /* CIDR entries: interval sets filled at install */
	EG_DYNAMIC,  /* name entries: filled by the sentry, elements time out */
	EG_UPSTREAM, /* the sentry's upstream resolvers (its marked traffic may go there) */
	EG_GUARD,    /* loopback upstreams (Docker's 127.0.0.11): only the sentry may talk to them */
};

/* Sets 0-11 static, 12-23 dynamic (deny*6 + v6*3 + shape), 24-25 upstream, 26-27 guard. */
#define EG_N_SETS 28

struct eg_set {
	const char *name;    /* static */
	enum eg_kind kind;
	bool deny;
	int family;          /* AF_INET or AF_INET6 */
	enum eg_shape shape;
	uint32_t key_len;    /* bytes, each field padded to 4 */
};

void eg_set_get(unsigned idx, struct eg_set *ret);
unsigned eg_set_index(enum eg_kind kind, bool deny, int family, enum eg_shape shape);
enum eg_shape eg_entry_shape(const struct egress_entry *e);
/* Key of one element: address, then proto (padded to 4), then port (network
 * order, padded to 4), as far as the shape goes. Returns the length. */
size_t eg_key(const struct eg_set *s, const uint8_t *addr, uint8_t proto, uint16_t port, uint8_t out[24]);
/* Elements of a dynamic or static set for an entry: the protocols it covers
 * (tcp and udp when a port is given without one). Returns the count (0-2). */
size_t eg_entry_protos(const struct egress_entry *e, uint8_t protos[2]);

/* ---- netlink ---- */

/* A NETLINK_NETFILTER socket created inside netns_fd (-1: the current one;
 * else by a child that enters it: egress_in_netns). */
int eg_nl_open(int netns_fd, struct mnl_socket **ret, struct ab_err *err);

/* What a message does, for an error about it: "VERB OBJECT". Both point to
 * storage that outlives the batch (literals, set names): formatted only when
 * a message fails, not for each of the ~80 a ruleset takes. */
struct eg_what {
	const char *verb, *object;
};

struct eg_batch {
	char *buf;
	size_t len, cap;
	uint32_t seq_first, seq_next;
	struct eg_what *what; /* of each message, by seq - seq_first */
	size_t n_what, cap_what;
	int error;            /* set while building (ENOMEM): eg_batch_send fails with it */
};

void eg_batch_init(struct eg_batch *b, uint32_t seq);
void eg_batch_free(struct eg_batch *b);
/* Room for a message of up to room bytes, its header written (type, flags
 * and NLM_F_ACK, the batch's next sequence number): build its payload there,
 * then eg_batch_commit. NULL: the batch failed (nothing more is added, and
 * eg_batch_send says why). */
struct nlmsghdr *eg_batch_msg(struct eg_batch *b, size_t room, uint16_t type, uint16_t flags);
/* Mark the batch failed with errno e while building it. */
void eg_batch_fail(struct eg_batch *b, int e);
/* Account the message just built at the reserved spot; OBJECT may be NULL. */
void eg_batch_commit(struct eg_batch *b, const char *verb, const char *object);
struct eg_elem {
	uint8_t key[24], key_end[24];
	bool has_end;        /* concatenated interval: key..key_end inclusive */
	uint32_t flags;      /* NFT_SET_ELEM_INTERVAL_END */
	uint64_t timeout_ms; /* 0 = none */
};
/* One NEWSETELEM/DELSETELEM message (type NFT_MSG_*) for n elements of set s;
 * VERB reads before the set's name ("add elements to set"). */
void eg_batch_elems(struct eg_batch *b, const struct eg_set *s, uint16_t type, uint16_t flags,
		    const struct eg_elem *elems, size_t n, const char *verb);
/* The ruleset's batch (ruleset.c): the table for p, replacing one that is
 * there when replace; more->put adds its messages last (ruleset_carry.c: the
 * elements a replaced ruleset's sets held), told which sets exist. 1: not
 * replace, and a table is there already. */
struct eg_more {
	void (*put)(struct eg_batch *b, const bool used[EG_N_SETS], void *data);
	void *data;
};
int eg_ruleset_install(int netns_fd, const struct egress_policy *p, const char *container_id, uint16_t sentry_port,
		       bool replace, const struct eg_more *more, struct ab_err *err);
/* Wrap in batch begin/end, send, and check one ack per message. On failure
 * err names the first failing object; nothing of the batch is applied. */
int eg_batch_send(struct mnl_socket *nl, struct eg_batch *b, struct ab_err *err);

#endif
