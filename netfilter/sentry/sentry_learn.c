/* Learn mode's records: what the box reached, by name where one is known,
 * kept in a table of LEARN_SLOTS (pages of their own, mapped only when
 * learning) and written as JSON lines (sentry_learn.h has the format). The
 * ruleset logs every new connection of a learning box to its own group
 * (ruleset_learn.c); each is named by the answer that last held its address
 * (sentry_names.c). A flood of connections can fill the group's socket: a
 * gap in its numbers is counted, and a summary says how many went
 * unrecorded. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nflog.h"
#include "sentry_learn.h"
#include "sentry_mem.h"
#include "sentry_names.h"
#include "util.h"

#define LEARN_WAYS 4
#define LEARN_RESERVE (64u << 10)   /* of the file, kept for first records once counts stop */
#define LINE_MAX_LEN 1024
#define LEARN_NAMES_PER_ADDR 8      /* names a connection to a shared address is recorded under */

enum learn_kind { LK_CONNECT, LK_LOOKUP, LK_INSIDE };

struct learn_rec {
	bool used, pending;      /* pending: its first line is not written yet */
	uint8_t kind, via, proto, family;
	int32_t port;            /* -1: none */
	uint8_t addr[16];        /* connect by name: the first address seen */
	uint32_t count;          /* since its last line */
	uint64_t first_rt, last_rt, last_ms;
	char extra[40];          /* lookup: the answer; inside: what the range is */
	char name[DNS_NAME_TEXT];
};

struct sentry_learn {
	int fd, durable_fd;
	uint64_t size, durable_size;
	bool full;               /* the file is at its bound: said once */
	bool due;                /* counts to write at the next tick */
	uint64_t flushed_ms;
	bool seq_known;
	uint32_t seq_next;
	uint64_t lost;           /* connections the kernel could not pass on */
	uint64_t forgotten;      /* first records a full file or table left out */
	struct learn_rec v[LEARN_SLOTS];
};

bool sentry_learning(const struct sentry *s)
{
	return s->learn != NULL;
}

int sentry_learn_start(struct sentry *s, struct ab_err *err)
{
	const struct egress_sentry_params *sp = s->sp;
	if (!s->p->learn || sp->learn_fd < 0)
		return 0;
	s->learn = sentry_zpages(sizeof *s->learn);
	if (!s->learn)
		return ab_error(err, ENOMEM, "learn mode: its records");
	s->learn->fd = sp->learn_fd;
	s->learn->durable_fd = sp->learn_durable_fd;
	s->nflog_learn = sp->nflog_learn_fd;
	return 0;
}

/* ---- lines ---- */

/* A name off the wire as a JSON string's contents: printable ASCII, quoted. */
static void escaped(char *out, size_t len, const char *in)
{
	size_t o = 0;
	for (size_t i = 0; in[i] && o + 3 < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '"' || c == '\\')
			out[o++] = '\\';
		out[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[o] = 0;
}

static void stamp(char *out, size_t len, uint64_t rt_ms)
{
	struct timespec when = { .tv_sec = (time_t)(rt_ms / 1000), .tv_nsec = (long)(rt_ms % 1000) * 1000000 };
	format_rfc3339_at(out, len, &when);
}

/* One write to each file: O_APPEND keeps lines whole. A first record may
 * use the whole file; counts and summaries stop LEARN_RESERVE short. */
static bool learn_write(struct sentry_learn *l, const char *line, size_t n, bool first)
{
	uint64_t limit = first ? LEARN_FILE_MAX : LEARN_FILE_MAX - LEARN_RESERVE;
	if (l->size + n > limit)
		return false;
	if (write(l->fd, line, n) != (ssize_t)n)
		return false;
	l->size += n;
	if (l->durable_fd >= 0 && l->durable_size + n <= limit && write(l->durable_fd, line, n) == (ssize_t)n)
		l->durable_size += n;
	return true;
}

static const char *const kind_text[] = { [LK_CONNECT] = "connect", [LK_LOOKUP] = "lookup", [LK_INSIDE] = "inside" };
static const char *const via_text[] = { [LV_NONE] = "", [LV_DNS] = "dns", [LV_TLS] = "tls", [LV_PROXY] = "proxy",
					[LV_TLS_ADDR] = "tls-address" };

/* r's line: what it is, and its count since the last one */
static bool rec_write(struct sentry *s, struct learn_rec *r)
{
	char line[LINE_MAX_LEN], first[64], last[64], name[2 * DNS_NAME_TEXT], id[300], pbuf[8];
	stamp(first, sizeof first, r->first_rt);
	stamp(last, sizeof last, r->last_rt);
	escaped(name, sizeof name, r->name);
	escaped(id, sizeof id, s->sp->container_id ? s->sp->container_id : "");
	int n = snprintf(line, sizeof line, "{\"time\":\"%s\",\"container\":\"%s\",\"learn\":\"%s\"", first, id,
			 kind_text[r->kind]);
	if (r->kind == LK_CONNECT)
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"proto\":\"%s\"", nflog_proto_name(r->proto, pbuf));
	if (r->family) {
		char dst[INET6_ADDRSTRLEN];
		inet_ntop(r->family, r->addr, dst, sizeof dst);
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"dst\":\"%s\"", dst);
	}
	if (r->port >= 0)
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"port\":%d", (int)r->port);
	if (name[0])
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"name\":\"%s\"", name);
	if (r->via != LV_NONE)
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"via\":\"%s\"", via_text[r->via]);
	if (r->extra[0])
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"%s\":\"%s\"", r->kind == LK_LOOKUP ? "answer" : "what",
			      r->extra);
	n += snprintf(line + n, sizeof line - (size_t)n, ",\"count\":%u,\"first\":\"%s\",\"last\":\"%s\"}\n", r->count,
		      first, last);
	if (n <= 0 || (size_t)n >= sizeof line || !learn_write(s->learn, line, (size_t)n, r->pending))
		return false;
	r->pending = false;
	r->count = 0;
	return true;
}

/* ---- the table ---- */

static uint32_t hash(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;   /* FNV-1a */
	return h;
}

/* The same thing: kind, where its name came from, protocol and port, and
 * its name, or without one its address (a connection by name is one record
 * whatever address the name had). */
static bool same(const struct learn_rec *r, const struct learn_rec *k)
{
	if (!r->used || r->kind != k->kind || r->via != k->via || r->proto != k->proto || r->port != k->port ||
	    strcmp(r->name, k->name) != 0)
		return false;
	bool by_addr = !k->name[0] || k->kind == LK_INSIDE || k->via == LV_TLS_ADDR;
	return !by_addr || (r->family == k->family && memcmp(r->addr, k->addr, 16) == 0);
}

/* k's slot: found (*created false), or made from k (of its bucket, an empty
 * one or the least recently seen goes, its unwritten count with it). */
static struct learn_rec *rec_slot(struct sentry_learn *l, const struct learn_rec *k, bool *created)
{
	uint32_t h = hash(k->name, strlen(k->name), 2166136261u);
	uint8_t key[4] = { k->kind, k->via, k->proto, 0 };
	h = hash(key, sizeof key, hash(&k->port, sizeof k->port, h));
	if (!k->name[0] || k->kind == LK_INSIDE || k->via == LV_TLS_ADDR)
		h = hash(k->addr, 16, h);
	struct learn_rec *b = &l->v[(h % (LEARN_SLOTS / LEARN_WAYS)) * LEARN_WAYS], *victim = NULL;
	for (size_t i = 0; i < LEARN_WAYS; i++)
		if (same(&b[i], k)) {
			*created = false;
			return &b[i];
		}
	for (size_t i = 0; i < LEARN_WAYS && !victim; i++)
		if (!b[i].used)
			victim = &b[i];
	for (size_t i = 0; i < LEARN_WAYS && (!victim || victim->used); i++)
		if (!b[i].pending && (!victim || b[i].last_ms < victim->last_ms))
			victim = &b[i];
	if (!victim)
		return NULL;   /* all four wait for their first line: the file is full */
	*victim = *k;
	victim->used = true;
	victim->pending = true;
	*created = true;
	return victim;
}

/* k seen once more: counted, and written at once the first time. */
static void learn_note(struct sentry *s, struct learn_rec *k)
{
	struct sentry_learn *l = s->learn;
	bool created = false;
	struct learn_rec *r = rec_slot(l, k, &created);
	if (!r) {
		l->forgotten++;
		l->due = true;
		return;
	}
	uint64_t now = wall_ms();
	if (r->count == 0 && !r->pending)
		r->first_rt = now;
	if (created)
		r->first_rt = now;
	r->last_rt = now;
	r->last_ms = now_ms();
	r->count++;
	if (created && !rec_write(s, r)) {
		/* the file is full: it stays pending, and the summary says so */
		l->forgotten++;
		r->pending = false;
		r->count = 0;
	}
	if (r->count)
		l->due = true;
}

void sentry_learn_conn(struct sentry *s, const struct learn_conn *c)
{
	if (!s->learn)
		return;
	struct learn_rec k = { .kind = LK_CONNECT, .via = (uint8_t)c->via, .proto = c->proto, .port = c->port };
	if (c->family == AF_INET || c->family == AF_INET6) {
		k.family = (uint8_t)c->family;
		memcpy(k.addr, c->addr, c->family == AF_INET ? 4 : 16);
	}
	if (c->name)
		snprintf(k.name, sizeof k.name, "%s", c->name);
	if (!k.name[0])
		k.via = LV_NONE;
	learn_note(s, &k);
}

void sentry_learn_lookup(struct sentry *s, const char *name, int rcode)
{
	if (!s->learn)
		return;
	struct learn_rec k = { .kind = LK_LOOKUP, .port = -1 };
	snprintf(k.name, sizeof k.name, "%s", name);
	snprintf(k.extra, sizeof k.extra, "%s", rcode == 0 ? "ok" : rcode == 3 ? "nxdomain" : "error");
	learn_note(s, &k);
}

void sentry_learn_inside(struct sentry *s, const char *name, int family, const uint8_t *addr)
{
	if (!s->learn)
		return;
	/* what the range is; one that is none is the host's own (sentry_net_is_local) */
	const char *what = egress_addr_special(family, addr);
	struct learn_rec k = { .kind = LK_INSIDE, .port = -1, .family = (uint8_t)family };
	memcpy(k.addr, addr, family == AF_INET ? 4 : 16);
	snprintf(k.name, sizeof k.name, "%s", name);
	snprintf(k.extra, sizeof k.extra, "%s", what ? what : "the host's own address");
	learn_note(s, &k);
}

/* ---- the learn log group ---- */

static void on_connection(const struct nflog_packet *pkt, void *data)
{
	struct sentry *s = data;
	struct sentry_learn *l = s->learn;
	if (pkt->has_seq) {
		if (l->seq_known && pkt->seq != l->seq_next) {
			l->lost += (uint32_t)(pkt->seq - l->seq_next);
			l->due = true;
		}
		l->seq_known = true;
		l->seq_next = pkt->seq + 1;
	}
	/* every name whose answer the box may have taken this address from: a
	 * shared address (a CDN's) cannot say which one it used */
	const char *names[LEARN_NAMES_PER_ADDR];
	size_t n = sentry_names_for(s, pkt->family, pkt->dst, (uint64_t)s->ttl_max * 1000, names, LEARN_NAMES_PER_ADDR);
	/* the SNI check's own connection: it recorded it already (sentry_sni.c) */
	if (pkt->has_mark && pkt->mark == EGRESS_PROXY_MARK)
		return;
	struct learn_conn c = { .family = pkt->family, .addr = pkt->dst, .proto = pkt->proto,
				.port = pkt->has_port ? pkt->dport : -1, .via = LV_NONE };
	if (!n)
		sentry_learn_conn(s, &c);
	for (size_t i = 0; i < n; i++) {
		c.name = names[i];
		c.via = LV_DNS;
		sentry_learn_conn(s, &c);
	}
}

void sentry_handle_learn_nflog(struct sentry *s)
{
	if (!s->learn || s->nflog_learn < 0)
		return;
	size_t budget = 256 << 10;   /* a flood must not hold the loop */
	while (budget) {
		ssize_t n = recv(s->nflog_learn, s->buf, BUF_SIZE, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;   /* ENOBUFS: the sequence numbers count what was dropped */
		if (n <= 0)
			return;
		(void)nflog_parse_buffer(s->buf, (size_t)n, on_connection, s);
		budget = (size_t)n < budget ? budget - (size_t)n : 0;
	}
}

/* ---- the tick ---- */

IDLE_TEXT uint64_t sentry_learn_next(const struct sentry *s)
{
	return s->learn && s->learn->due ? s->learn->flushed_ms + LEARN_FLUSH_MS : UINT64_MAX;
}

static void summary_write(struct sentry *s)
{
	struct sentry_learn *l = s->learn;
	bool full = l->size + LEARN_RESERVE >= LEARN_FILE_MAX;
	if (!l->lost && !l->forgotten && !(full && !l->full))
		return;
	char line[512], now[64], id[300];
	stamp(now, sizeof now, wall_ms());
	escaped(id, sizeof id, s->sp->container_id ? s->sp->container_id : "");
	int n = snprintf(line, sizeof line, "{\"time\":\"%s\",\"container\":\"%s\",\"learn\":\"summary\"", now, id);
	if (l->lost)
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"lost\":%llu", (unsigned long long)l->lost);
	if (l->forgotten)
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"unrecorded\":%llu", (unsigned long long)l->forgotten);
	if (full)
		n += snprintf(line + n, sizeof line - (size_t)n, ",\"note\":\"learn file size limit reached\"");
	n += snprintf(line + n, sizeof line - (size_t)n, "}\n");
	/* the summary may use the reserve: it is what says the rest is missing */
	if (n > 0 && (size_t)n < sizeof line && learn_write(l, line, (size_t)n, true)) {
		l->lost = l->forgotten = 0;
		l->full = full;
	}
}

IDLE_TEXT void sentry_learn_tick(struct sentry *s, bool final)
{
	struct sentry_learn *l = s->learn;
	uint64_t now = now_ms();
	if (!l || !l->due || (!final && now < l->flushed_ms + LEARN_FLUSH_MS))
		return;
	l->flushed_ms = now;
	for (size_t i = 0; i < LEARN_SLOTS; i++) {
		struct learn_rec *r = &l->v[i];
		if (r->used && r->count && !rec_write(s, r))
			r->count = 0;   /* no room for counts: the records stand */
	}
	summary_write(s);
	l->due = false;
}

void sentry_learn_stop(struct sentry *s)
{
	if (!s->learn) {
		if (s->nflog_learn >= 0)
			close(s->nflog_learn);   /* learning without a file to record in */
		s->nflog_learn = -1;
		return;
	}
	sentry_learn_tick(s, true);
	int fds[] = { s->learn->fd, s->learn->durable_fd, s->nflog_learn };
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	(void)munmap(s->learn, sizeof *s->learn);
	s->learn = NULL;
	s->nflog_learn = -1;
}
