/* The deny log: JSON lines, one write each, appended to the container's log
 * file: names the sentry refused, answers it withheld, packets the ruleset
 * refused (read from nfnetlink_log), connections the SNI check refused, and
 * what the credential gateway reports (a credential's use, its refusals).
 *
 * A flood must not hide anything (issue 22 hole 6). The ruleset logs the
 * first packet to each destination (address, protocol, port) in a minute in
 * full on one log group, and the repeats on another, read from a socket of
 * their own: a flood of repeats can fill that socket, never the first one.
 * Here every destination and every record by name (a refused name, a refused
 * TLS connection's name and destination, a credential's use on a host) gets a
 * record of its own the first time; repeats are counted and written as one record with
 * "repeats": N at most every FLUSH_MS. What cannot be written within the
 * bounds (LOG_RATE records a second, log_max bytes) is counted, and a summary
 * record says how much, as does one for what the kernel dropped (a gap in a
 * log group's sequence numbers). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nflog.h"
#include "sentry_log.h"
#include "sentry_names.h"
#include "sentry_refused.h"
#include "sentry_state.h"
#include "util.h"

#define LOG_RESERVE 1024        /* bytes kept for the summary that says the log is full */

static const char *const reason_text[R_COUNT] = {
	[R_NOT_ALLOWED] = "not-allowed", [R_DENIED] = "denied", [R_DNS_BYPASS] = "dns-bypass",
	[R_SPOOFED] = "spoofed-source", [R_INTERNAL] = "internal-address",
};

/* ---- JSON lines ---- */

struct line {
	char buf[2048];          /* a name, a credential's name, the gateway's detail */
	size_t len;
	bool cut;
};

static void put(struct line *l, const char *s)
{
	size_t n = strlen(s);
	if (l->len + n >= sizeof l->buf - 2) {
		l->cut = true;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* "key":"value", the value printable ASCII only (names come off the wire) */
static void put_str(struct line *l, const char *key, const char *v)
{
	char esc[2 * DNS_NAME_TEXT + 8];
	size_t o = 0;
	for (size_t i = 0; v[i] && o + 3 < sizeof esc; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c == '"' || c == '\\')
			esc[o++] = '\\';
		esc[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	esc[o] = 0;
	put(l, l->len > 1 ? ",\"" : "\"");
	put(l, key);
	put(l, "\":\"");
	put(l, esc);
	put(l, "\"");
}

static void put_num(struct line *l, const char *key, uint64_t v)
{
	char num[32];
	snprintf(num, sizeof num, "%llu", (unsigned long long)v);
	put(l, l->len > 1 ? ",\"" : "\"");
	put(l, key);
	put(l, "\":");
	put(l, num);
}

static void put_time(struct line *l, const char *key, uint64_t rt_ms)
{
	char ts[64];
	struct timespec when = { .tv_sec = (time_t)(rt_ms / 1000), .tv_nsec = (long)(rt_ms % 1000) * 1000000 };
	if (rt_ms)
		format_rfc3339_at(ts, sizeof ts, &when);
	else
		format_rfc3339(ts, sizeof ts);
	put_str(l, key, ts);
}

/* A record begins with the time of the first attempt it covers (rt_ms, wall
 * clock; 0: now), not the time it is written: repeats are written later. */
static void line_begin(struct sentry *s, struct line *l, const char *verdict, uint64_t rt_ms)
{
	l->len = 0;
	l->cut = false;
	put(l, "{");
	put_time(l, "time", rt_ms);
	put_str(l, "container", s->sp->container_id ? s->sp->container_id : "");
	put_str(l, "verdict", verdict);
}

/* one write per line: O_APPEND keeps lines whole */
static bool line_write(struct sentry *s, struct line *l, bool reserve)
{
	put(l, "}");
	if (l->cut)
		return false;
	l->buf[l->len++] = '\n';
	uint64_t limit = reserve ? s->log_max : s->log_max > LOG_RESERVE ? s->log_max - LOG_RESERVE : 0;
	if (s->log_size + l->len > limit)
		return false;
	if (write(s->logfd, l->buf, l->len) != (ssize_t)l->len)
		return false;
	s->log_size += l->len;
	durable_log_append(&s->durable, l->buf, l->len);   /* what outlives the state */
	return true;
}

/* A regular record may go out now: within the rate and below the reserve. */
static bool may_write(struct sentry *s)
{
	if (s->logfd < 0)
		return false;
	uint64_t now = now_ms();
	s->tokens += (double)(now - s->tokens_at) * LOG_RATE / 1000.0;
	if (s->tokens > LOG_BURST)
		s->tokens = LOG_BURST;
	s->tokens_at = now;
	if (s->tokens < 1)
		return false;
	s->tokens -= 1;
	return true;
}

/* A record of more than one attempt: how many more, and when the first and
 * the last of them were ("time" is the first too). */
static void put_repeats(struct line *l, uint32_t repeats, uint64_t first_rt, uint64_t last_rt)
{
	if (!repeats)
		return;
	put_num(l, "repeats", repeats);
	put_time(l, "first", first_rt);
	put_time(l, "last", last_rt);
}

/* One more attempt for a record: the first its next record covers starts
 * the span. */
static void note_attempt(bool waiting, uint64_t *first_rt, uint64_t *last_rt)
{
	uint64_t now = wall_ms();
	if (!waiting)
		*first_rt = now;
	*last_rt = now;
}

/* ---- the destinations and names seen ---- */

static uint32_t hash(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;   /* FNV-1a */
	return h;
}

static bool dest_same(const struct dest *d, int family, const uint8_t *addr, uint8_t proto, int port)
{
	return d->used && d->family == family && d->proto == proto && d->port == (port < 0 ? 0 : port) &&
	       d->has_port == (port >= 0) && memcmp(d->addr, addr, 16) == 0;
}

/* What a destination's record does not say any more when it is dropped from
 * the table unwritten. */
static void forget_dest(struct sentry *s, struct dest *d)
{
	if (d->used && d->pending)
		s->dropped_records++;
	if (d->used)
		s->dropped_repeats += d->repeats;
	memset(d, 0, sizeof *d);
}

/* The destination's slot: found, or made (the bucket's least recently seen
 * one goes, preferably one with nothing left to write). */
static struct dest *dest_slot(struct sentry *s, int family, const uint8_t *addr, uint8_t proto, int port,
			      bool *created)
{
	uint32_t h = hash(addr, 16, 2166136261u);
	h = hash(&proto, 1, h);
	h = hash(&port, sizeof port, h);
	struct dest *b = &s->dests[(h % (DEST_SLOTS / DEST_WAYS)) * DEST_WAYS], *victim = NULL;
	for (size_t i = 0; i < DEST_WAYS; i++)
		if (dest_same(&b[i], family, addr, proto, port)) {
			*created = false;
			return &b[i];
		}
	for (size_t i = 0; i < DEST_WAYS && !victim; i++)
		if (!b[i].used)
			victim = &b[i];
	for (size_t i = 0; i < DEST_WAYS && !victim; i++)
		if (!b[i].pending && !b[i].repeats && (!victim || b[i].last_ms < victim->last_ms))
			victim = &b[i];
	for (size_t i = 0; i < DEST_WAYS && !victim; i++)
		if (!victim || b[i].last_ms < victim->last_ms)
			victim = &b[i];
	forget_dest(s, victim);
	victim->used = 1;
	victim->family = (uint8_t)family;
	memcpy(victim->addr, addr, 16);
	victim->proto = proto;
	victim->has_port = port >= 0;
	victim->port = port < 0 ? 0 : (uint16_t)port;
	*created = true;
	return victim;
}

static const char *recent_name(struct sentry *s, int family, const uint8_t *addr)
{
	for (size_t i = 0; i < RECENT_NAMES; i++)
		if (s->recent[i].family == family && memcmp(s->recent[i].addr, addr, 16) == 0)
			return s->recent[i].name;
	return NULL;
}

void sentry_remember_name(struct sentry *s, const struct dns_addr *a, const char *name)
{
	sentry_names_note(s, name, a->family, a->addr);   /* every name it held, for learn mode and live denies */
	for (size_t i = 0; i < RECENT_NAMES; i++) {
		struct recent_name *r = &s->recent[i];
		if (r->family == a->family && memcmp(r->addr, a->addr, 16) == 0) {
			snprintf(r->name, sizeof r->name, "%s", name);
			return;
		}
	}
	struct recent_name *r = &s->recent[s->recent_next++ % RECENT_NAMES];
	r->family = a->family;
	memcpy(r->addr, a->addr, 16);
	snprintf(r->name, sizeof r->name, "%s", name);
}

/* The destination's record: its first one, or its repeats since the last. */
static bool dest_write(struct sentry *s, struct dest *d)
{
	if (!may_write(s))
		return false;
	char dst[INET6_ADDRSTRLEN], pbuf[8];
	inet_ntop(d->family, d->addr, dst, sizeof dst);
	struct line l;
	line_begin(s, &l, "deny", d->first_rt);
	put_str(&l, "proto", nflog_proto_name(d->proto, pbuf));
	put_str(&l, "dst", dst);
	if (d->has_port)
		put_num(&l, "port", d->port);
	const char *name = recent_name(s, d->family, d->addr);
	if (name)
		put_str(&l, "name", name);
	put_str(&l, "reason", reason_text[d->reason]);
	put_repeats(&l, d->repeats, d->first_rt, d->last_rt);
	if (!line_write(s, &l, false)) {
		s->tokens += 1;   /* not written: the log is full, the tick says so */
		return false;
	}
	d->pending = false;
	d->repeats = 0;
	return true;
}

static const char *str_or(const char *v)
{
	return v ? v : "";
}

/* a destination's port, or a proxy refusal's (a name and a port): -1 none */
static int event_port(const struct named_event *e)
{
	return e->family || e->kind == NK_PROXY ? e->port : -1;
}

static bool named_same(const struct named *r, const struct named_event *e)
{
	if (!r->used || r->kind != e->kind || r->family != e->family || r->port != event_port(e))
		return false;
	if (e->family && memcmp(r->addr, e->addr, e->family == AF_INET ? 4 : 16) != 0)
		return false;
	return strcmp(r->name, str_or(e->name)) == 0 && strcmp(r->reason, str_or(e->reason)) == 0 &&
	       strcmp(r->credential, str_or(e->credential)) == 0;
}

/* The record's slot: found, or made (of four, the least recently seen goes). */
static struct named *named_slot(struct sentry *s, const struct named_event *e, bool *created)
{
	uint32_t h = hash(str_or(e->name), strlen(str_or(e->name)), 2166136261u);
	h = hash(str_or(e->reason), strlen(str_or(e->reason)), h) ^ (uint32_t)e->kind;
	if (e->family)
		h = hash(e->addr, e->family == AF_INET ? 4 : 16, h);
	struct named *victim = NULL;
	for (size_t k = 0; k < 4; k++) {
		struct named *r = &s->names[(h + k) % NAME_SLOTS];
		if (named_same(r, e)) {
			*created = false;
			return r;
		}
		if (!victim || !r->used || (victim->used && r->last_ms < victim->last_ms))
			victim = r;
	}
	if (victim->used && victim->pending)
		s->dropped_records++;
	if (victim->used)
		s->dropped_repeats += victim->repeats;
	memset(victim, 0, sizeof *victim);
	victim->used = true;
	victim->kind = (uint8_t)e->kind;
	victim->family = (uint8_t)e->family;
	victim->port = event_port(e);
	if (e->family)
		memcpy(victim->addr, e->addr, e->family == AF_INET ? 4 : 16);
	snprintf(victim->name, sizeof victim->name, "%s", str_or(e->name));
	snprintf(victim->reason, sizeof victim->reason, "%s", str_or(e->reason));
	snprintf(victim->credential, sizeof victim->credential, "%s", str_or(e->credential));
	snprintf(victim->detail, sizeof victim->detail, "%s", str_or(e->detail));
	*created = true;
	return victim;
}

static bool named_write(struct sentry *s, struct named *r)
{
	static const char *const proto[] = { [NK_DNS] = "dns", [NK_TLS] = "tls", [NK_HTTPS] = "https",
					     [NK_CREDENTIAL] = "https", [NK_PROXY] = "proxy" };
	if (!may_write(s))
		return false;
	struct line l;
	line_begin(s, &l, r->kind == NK_CREDENTIAL ? "credential" : "deny", r->first_rt);
	put_str(&l, "proto", proto[r->kind]);
	if (r->family) {
		char dst[INET6_ADDRSTRLEN];
		inet_ntop(r->family, r->addr, dst, sizeof dst);
		put_str(&l, "dst", dst);
	}
	if (r->port >= 0)
		put_num(&l, "port", (uint64_t)r->port);
	if (r->name[0])
		put_str(&l, "name", r->name);
	if (r->kind == NK_CREDENTIAL)
		put_str(&l, "credential", r->credential);
	else
		put_str(&l, "reason", r->reason);
	if (r->detail[0])
		put_str(&l, "detail", r->detail);
	put_repeats(&l, r->repeats, r->first_rt, r->last_rt);
	if (!line_write(s, &l, false)) {
		s->tokens += 1;
		return false;
	}
	r->pending = false;
	r->repeats = 0;
	return true;
}

void sentry_log_named(struct sentry *s, const struct named_event *e)
{
	bool created;
	struct named *r = named_slot(s, e, &created);
	r->last_ms = now_ms();
	note_attempt(!created && (r->pending || r->repeats), &r->first_rt, &r->last_rt);
	if (created) {
		r->pending = true;
		(void)named_write(s, r);
		if (e->kind != NK_CREDENTIAL)
			sentry_refused_note(s, e->kind == NK_DNS ? "dns" : e->kind == NK_TLS ? "tls" : e->kind == NK_PROXY ? "proxy" : "https",
					    r->reason, e->name, e->family, e->addr, IPPROTO_TCP, event_port(e));
	} else
		r->repeats++;
	s->log_due = true;
}

void sentry_log_name(struct sentry *s, const char *name, enum reason reason)
{
	struct named_event e = { .kind = NK_DNS, .name = name, .reason = reason_text[reason] };
	sentry_log_named(s, &e);
}

void sentry_log_pointed(struct sentry *s, const char *name, int family, const uint8_t *addr)
{
	char dst[INET6_ADDRSTRLEN];
	inet_ntop(family, addr, dst, sizeof dst);
	sentry_refused_note(s, "dns", reason_text[R_INTERNAL], name, family, addr, 0, -1);
	if (!may_write(s)) {
		s->dropped_records++;
		s->log_due = true;
		return;
	}
	struct line l;
	line_begin(s, &l, "deny", 0);
	put_str(&l, "proto", "dns");
	put_str(&l, "dst", dst);
	put_str(&l, "name", name);
	put_str(&l, "reason", reason_text[R_INTERNAL]);
	if (!line_write(s, &l, false)) {
		s->dropped_records++;
		s->log_due = true;
	}
}

/* ---- what the ruleset logged ---- */

/* The ruleset marks each refused packet with why (EGRESS_REFUSAL_MARK). */
static enum reason reason_of(const struct nflog_packet *pkt)
{
	if (!pkt->has_mark || (pkt->mark & ~0xfu) != EGRESS_REFUSAL_MARK(0))
		return R_NOT_ALLOWED;
	switch ((enum egress_refusal)(pkt->mark & 0xf)) {
	case EGRESS_REFUSED_DENIED:
		return R_DENIED;
	case EGRESS_REFUSED_DNS:
		return R_DNS_BYPASS;
	case EGRESS_REFUSED_SPOOF:
		return R_SPOOFED;
	case EGRESS_REFUSED_INTERNAL:
		return R_INTERNAL;
	default:
		return R_NOT_ALLOWED;
	}
}

/* Count what the kernel dropped: the packets a group's numbers skipped. */
static void count_gap(struct seq *q, const struct nflog_packet *pkt, uint64_t *lost)
{
	if (!pkt->has_seq)
		return;
	if (q->known && pkt->seq != q->next)
		*lost += (uint32_t)(pkt->seq - q->next);
	q->known = true;
	q->next = pkt->seq + 1;
}

/* The destination of a packet of group q (its gap counted into *lost), seen
 * now; one new here (*created) gets the packet's reason and a record to write. */
static struct dest *packet_dest(struct sentry *s, const struct nflog_packet *pkt, struct seq *q, uint64_t *lost,
				bool *created)
{
	count_gap(q, pkt, lost);
	struct dest *d = dest_slot(s, pkt->family, pkt->dst, pkt->proto, pkt->has_port ? pkt->dport : -1, created);
	d->last_ms = now_ms();
	note_attempt(!*created && (d->pending || d->repeats), &d->first_rt, &d->last_rt);
	if (*created) {
		d->reason = (uint8_t)reason_of(pkt);
		d->pending = true;
	}
	return d;
}

static void on_first(const struct nflog_packet *pkt, void *data)
{
	struct sentry *s = data;
	bool created;
	struct dest *d = packet_dest(s, pkt, &s->seq_first, &s->lost_records, &created);
	if (created) {
		(void)dest_write(s, d);
		char pbuf[8];
		sentry_refused_note(s, nflog_proto_name(d->proto, pbuf), reason_text[d->reason],
				    recent_name(s, d->family, d->addr), d->family, d->addr, d->proto,
				    d->has_port ? d->port : -1);
	} else
		d->repeats++;   /* a minute on, still tried: with the repeats */
	s->log_due = true;
}

static void on_repeat(const struct nflog_packet *pkt, void *data)
{
	struct sentry *s = data;
	/* one new here: its first record was lost (or forgotten here), it gets
	 * one all the same */
	bool created;
	struct dest *d = packet_dest(s, pkt, &s->seq_repeat, &s->lost_repeats, &created);
	d->repeats++;
	s->log_due = true;
}

/* Read what is there, at most budget bytes: the repeats' socket may be
 * flooded, and the loop must go on to the rest. */
static void drain(struct sentry *s, int fd, void (*cb)(const struct nflog_packet *, void *), size_t budget)
{
	uint8_t *buf = s->buf;   /* free between DNS messages */
	while (budget) {
		ssize_t n = recv(fd, buf, BUF_SIZE, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* ENOBUFS: the kernel dropped messages while we were busy (the
			 * sequence numbers say how many); read on */
			if (errno == ENOBUFS) {
				s->log_due = true;
				continue;
			}
			return;
		}
		(void)nflog_parse_buffer(buf, (size_t)n, cb, s);
		budget = (size_t)n < budget ? budget - (size_t)n : 0;
	}
}

void sentry_handle_nflog(struct sentry *s)
{
	drain(s, s->nflog, on_first, SIZE_MAX);
}

void sentry_handle_nflog_repeats(struct sentry *s)
{
	drain(s, s->nflog_repeat, on_repeat, 256 * 1024);
}

/* ---- the tick: repeats, what waited for the rate, the summary ---- */

IDLE_TEXT uint64_t sentry_log_next(const struct sentry *s)
{
	return s->log_due ? s->log_flushed_ms + FLUSH_MS : UINT64_MAX;
}

IDLE_TEXT void sentry_log_tick(struct sentry *s, bool final)
{
	uint64_t now = now_ms();
	if (!s->log_due || (!final && now < s->log_flushed_ms + FLUSH_MS))
		return;
	s->log_flushed_ms = now;
	bool left = false;
	for (size_t i = 0; i < DEST_SLOTS; i++) {
		struct dest *d = &s->dests[i];
		if (d->used && (d->pending || d->repeats) && !dest_write(s, d))
			left = true;
	}
	for (size_t i = 0; i < NAME_SLOTS; i++) {
		struct named *r = &s->names[i];
		if (r->used && (r->pending || r->repeats) && !named_write(s, r))
			left = true;
	}
	if (final && left) {
		/* the end: what is still waiting is not written */
		for (size_t i = 0; i < DEST_SLOTS; i++)
			forget_dest(s, &s->dests[i]);
		for (size_t i = 0; i < NAME_SLOTS; i++)
			if (s->names[i].used) {
				s->dropped_records += s->names[i].pending;
				s->dropped_repeats += s->names[i].repeats;
				s->names[i].pending = false;
				s->names[i].repeats = 0;
			}
		left = false;
	}
	if (s->lost_records || s->lost_repeats || s->dropped_records || s->dropped_repeats) {
		struct line l;
		line_begin(s, &l, "summary", 0);
		/* first packets to a destination the kernel could not pass on */
		if (s->lost_records)
			put_num(&l, "lost", s->lost_records);
		/* refused packets no destination's repeats count */
		if (s->lost_repeats)
			put_num(&l, "uncounted_repeats", s->lost_repeats);
		/* records not written within the bounds, and the repeats they held */
		if (s->dropped_records)
			put_num(&l, "suppressed", s->dropped_records);
		if (s->dropped_repeats)
			put_num(&l, "suppressed_repeats", s->dropped_repeats);
		bool full = s->log_size + LOG_RESERVE >= s->log_max;
		if (full)
			put_str(&l, "note", "log size limit reached");
		if (s->logfd >= 0 && !s->log_full && line_write(s, &l, true)) {
			s->lost_records = s->lost_repeats = s->dropped_records = s->dropped_repeats = 0;
			s->log_full = full;
		}
	}
	s->log_due = left;
}
