/* Learn mode's records (sentry_learn.c): what a box in learn mode reached,
 * for `agentbox egress suggest`. The recording API is this header: the DNS
 * path (a lookup, an answer that pointed inside), the SNI check (a TLS
 * connection by its server name), the ruleset's learn log group (every new
 * connection, named by the answers that held its address) and any other
 * part that lets a connection through by name (an HTTP proxy's CONNECT
 * host:port) each call it; none of them needs to know whether the box
 * learns: outside learn mode the calls do nothing.
 *
 * A record is a JSON line appended to the learn file in the state directory
 * and to its copy in the container's durable log directory:
 *
 *   {"time":T,"container":ID,"learn":"connect","proto":"tcp","dst":"198.51.100.7",
 *    "port":443,"name":"api.example","via":"tls","count":3,"first":T,"last":T}
 *   {"time":T,"container":ID,"learn":"lookup","name":"x.example","answer":"ok","count":1,...}
 *   {"time":T,"container":ID,"learn":"inside","name":"db.example","dst":"10.0.0.5",
 *    "what":"private","count":1,...}
 *   {"time":T,"container":ID,"learn":"summary","lost":N,"note":"..."}
 *
 * The first of each is written at once; later ones are counted and written
 * as a line of their own ("count" is how many since the last line of the
 * same thing), so a reader adds them up. Memory and file size are bounded
 * (LEARN_SLOTS, LEARN_FILE_MAX): a full table forgets counts, never a first
 * record; a full file says so in a summary. */
#ifndef AGENTBOX_SENTRY_LEARN_H
#define AGENTBOX_SENTRY_LEARN_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "sentry_state.h"

#define LEARN_SLOTS 2048                 /* things remembered for their counts */
#define LEARN_FILE_MAX (4u << 20)        /* per file */
#define LEARN_FLUSH_MS 10000             /* counts are written this often at most */

/* Where the name of a connection came from. */
enum learn_via {
	LV_NONE,    /* no name: reached by address */
	LV_DNS,     /* the answer that held its address (sentry_names.h) */
	LV_TLS,     /* the server name its ClientHello asked for */
	LV_PROXY,   /* the host an HTTP proxy was asked to connect to */
	LV_TLS_ADDR,/* by address, no lookup of the server name it asked for led there:
		     * a record of the address, with that name */
};

struct learn_conn {
	const char *name;        /* NULL: none known */
	int family;              /* of addr; 0: no address */
	const uint8_t *addr;
	uint8_t proto;           /* IPPROTO_TCP, IPPROTO_UDP, ... */
	int port;                /* -1: none (ICMP) */
	enum learn_via via;
};

/* Learning when the policy says so and the runtime gave the files and the
 * log group's socket (sp->learn_fd, sp->nflog_learn_fd). */
int sentry_learn_start(struct sentry *s, struct ab_err *err);
bool sentry_learning(const struct sentry *s);
/* A connection let through: by name, by address, or both. */
void sentry_learn_conn(struct sentry *s, const struct learn_conn *c);
/* A lookup forwarded, and the upstream's rcode for it. */
void sentry_learn_lookup(struct sentry *s, const char *name, int rcode);
/* An answer for name that pointed inside, at addr (withheld). */
void sentry_learn_inside(struct sentry *s, const char *name, int family, const uint8_t *addr);
/* Read the learn log group (a bounded amount). */
void sentry_handle_learn_nflog(struct sentry *s);
/* When the next tick is due (UINT64_MAX: nothing to write), and the tick:
 * counts written; final: the last one. */
uint64_t sentry_learn_next(const struct sentry *s);
void sentry_learn_tick(struct sentry *s, bool final);
void sentry_learn_stop(struct sentry *s);

#endif
