/* egress suggest: the allowlist a learn mode run calls for.
 *
 *   1. the records read and merged: one per connection by name (its port and
 *      protocol), by address, lookup, answer that pointed inside
 *   2. entries: name:port for each port a name was reached on (/udp when only
 *      over UDP), the bare name for one only looked up (its lookup must not
 *      be refused), the address:port for a connection no name led to
 *   3. with --wildcards, three or more names below one parent under the same
 *      port folded into *.parent (public_suffix.c bounds how far up)
 *   4. the text: YAML to paste, its comments say what each odd entry is,
 *      what pointed inside (still withheld) and what the records missed */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_suggest.h"
#include "json.h"
#include "public_suffix.h"
#include "util.h"

#define FOLD_MIN 3

enum rec_kind { RK_CONNECT, RK_LOOKUP, RK_INSIDE };

struct rec {
	enum rec_kind kind;
	char *name, *dst, *proto, *via, *extra;   /* "" when absent */
	long long port;                           /* -1: none */
	uint64_t count;
	char first[48], last[48];
};

struct item {
	char *host;              /* a name, "*.parent", an address */
	char suffix[16];         /* ":443", ":53/udp", "" */
	bool by_address;
	bool folded;             /* taken into a wildcard */
	char *note;              /* a comment for the entry, or NULL */
};

struct egress_suggest {
	struct rec *v;
	size_t n, cap;
	size_t lines;
	uint64_t lost, unrecorded;
	bool full;
	struct item *items;
	size_t n_items, cap_items;
};

struct egress_suggest *egress_suggest_new(void)
{
	return xcalloc(1, sizeof(struct egress_suggest));
}

static void items_clear(struct egress_suggest *g)
{
	for (size_t i = 0; i < g->n_items; i++) {
		free(g->items[i].host);
		free(g->items[i].note);
	}
	g->n_items = 0;
}

void egress_suggest_free(struct egress_suggest *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		struct rec *r = &g->v[i];
		free(r->name), free(r->dst), free(r->proto), free(r->via), free(r->extra);
	}
	items_clear(g);
	free(g->items);
	free(g->v);
	free(g);
}

/* ---- 1. the records ---- */

static const char *str_of(yajl_val v, const char *key)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : "";
}

static long long int_of(yajl_val v, const char *key, long long none)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_INTEGER(x) ? YAJL_GET_INTEGER(x) : none;
}

static bool same_rec(const struct rec *a, const struct rec *b)
{
	if (a->kind != b->kind || a->port != b->port || strcmp(a->name, b->name) || strcmp(a->proto, b->proto) ||
	    strcmp(a->via, b->via))
		return false;
	/* by name, one record whatever the address; by address, or inside, per address */
	return (a->name[0] && a->kind != RK_INSIDE && !streq(a->via, "tls-address")) || strcmp(a->dst, b->dst) == 0;
}

static void merge(struct egress_suggest *g, const struct rec *r)
{
	for (size_t i = 0; i < g->n; i++) {
		struct rec *o = &g->v[i];
		if (!same_rec(o, r))
			continue;
		o->count += r->count;
		if (strcmp(r->first, o->first) < 0)
			memcpy(o->first, r->first, sizeof o->first);
		if (strcmp(r->last, o->last) > 0)
			memcpy(o->last, r->last, sizeof o->last);
		if (!o->dst[0] && r->dst[0]) {
			free(o->dst);
			o->dst = xstrdup(r->dst);
		}
		free(r->name), free(r->dst), free(r->proto), free(r->via), free(r->extra);
		return;
	}
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->v = xrealloc(g->v, g->cap * sizeof *g->v);
	}
	g->v[g->n++] = *r;
}

bool egress_suggest_add(struct egress_suggest *g, const char *line)
{
	yajl_val v;
	struct ab_err e;
	if (json_parse(line, "learn record", &v, &e) < 0)
		return false;
	const char *kind = str_of(v, "learn");
	bool ok = true;
	if (streq(kind, "summary")) {
		g->lost += (uint64_t)int_of(v, "lost", 0);
		g->unrecorded += (uint64_t)int_of(v, "unrecorded", 0);
		g->full |= str_of(v, "note")[0] != 0;
	} else if (streq(kind, "connect") || streq(kind, "lookup") || streq(kind, "inside")) {
		struct rec r = {
			.kind = streq(kind, "connect") ? RK_CONNECT : streq(kind, "lookup") ? RK_LOOKUP : RK_INSIDE,
			.name = xstrdup(str_of(v, "name")), .dst = xstrdup(str_of(v, "dst")),
			.proto = xstrdup(str_of(v, "proto")), .via = xstrdup(str_of(v, "via")),
			.extra = xstrdup(streq(kind, "lookup") ? str_of(v, "answer") : str_of(v, "what")),
			.port = int_of(v, "port", -1), .count = (uint64_t)int_of(v, "count", 1),
		};
		snprintf(r.first, sizeof r.first, "%s", str_of(v, "first"));
		snprintf(r.last, sizeof r.last, "%s", str_of(v, "last"));
		merge(g, &r);
	} else
		ok = false;
	json_free(v);
	g->lines += ok;
	return ok;
}

/* ---- 2. entries ---- */

static struct item *item_add(struct egress_suggest *g, const char *host, const char *suffix, bool by_address,
			     const char *note)
{
	for (size_t i = 0; i < g->n_items; i++)
		if (streq(g->items[i].host, host) && streq(g->items[i].suffix, suffix))
			return &g->items[i];
	if (g->n_items == g->cap_items) {
		g->cap_items = g->cap_items ? 2 * g->cap_items : 64;
		g->items = xrealloc(g->items, g->cap_items * sizeof *g->items);
	}
	struct item *it = &g->items[g->n_items++];
	*it = (struct item){ .host = xstrdup(host), .by_address = by_address, .note = note ? xstrdup(note) : NULL };
	snprintf(it->suffix, sizeof it->suffix, "%s", suffix);
	return it;
}

/* The protocols a name (or an address) was reached with on one port:
 * 1 tcp (or another with ports), 2 udp. */
static unsigned protos_on(const struct egress_suggest *g, const struct rec *r)
{
	unsigned m = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *o = &g->v[i];
		if (o->kind == RK_CONNECT && o->port == r->port && streq(o->name, r->name) &&
		    (r->name[0] || streq(o->dst, r->dst)))
			m |= streq(o->proto, "udp") ? 2 : 1;
	}
	return m;
}

static bool has(const struct egress_suggest *g, enum rec_kind kind, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].kind == kind && streq(g->v[i].name, name))
			return true;
	return false;
}

static bool connected(const struct egress_suggest *g, const char *name)
{
	return has(g, RK_CONNECT, name);
}

static void connection_item(struct egress_suggest *g, const struct rec *r)
{
	char suffix[16] = "", host[300], note[400];
	/* a TLS name over an address no lookup of it led to: the address, over TCP */
	bool tls_addr = streq(r->via, "tls-address");
	unsigned m = tls_addr ? 1 : protos_on(g, r);
	if (r->port >= 0)
		snprintf(suffix, sizeof suffix, ":%lld%s", r->port, m == 2 ? "/udp" : "");
	if (r->name[0] && !tls_addr) {
		item_add(g, r->name, suffix, false, r->port < 0 ? "no port (icmp): every port is open to it" : NULL);
		return;
	}
	snprintf(host, sizeof host, strchr(r->dst, ':') && r->port >= 0 ? "[%s]" : "%s", r->dst);
	if (tls_addr)
		snprintf(note, sizeof note, "by address (no lookup), TLS name %s", r->name);
	else
		snprintf(note, sizeof note, "by address: no name was looked up for it");
	item_add(g, host, suffix, true, note);
}

static void build_items(struct egress_suggest *g)
{
	items_clear(g);
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *r = &g->v[i];
		if (r->kind == RK_CONNECT)
			connection_item(g, r);
		else if (r->kind == RK_LOOKUP && streq(r->extra, "ok") && !connected(g, r->name) &&
			 !has(g, RK_INSIDE, r->name))
			/* its lookup must resolve: a name entry with no port is the only one that says so
			 * (one that pointed inside is withheld all the same: listed below) */
			item_add(g, r->name, "", false, "looked up only, never connected to: every port is open to it");
	}
	/* a name open on every port needs no entry for one port */
	for (size_t i = 0; i < g->n_items; i++)
		for (size_t k = 0; k < g->n_items; k++)
			if (k != i && !g->items[k].suffix[0] && g->items[i].suffix[0] && streq(g->items[k].host, g->items[i].host))
				g->items[i].folded = true;
}

/* ---- 3. wildcards ---- */

static size_t labels(const char *name)
{
	size_t n = 1;
	for (const char *c = name; *c; c++)
		n += *c == '.';
	return n;
}

/* name is below parent (by one label or more) */
static bool below(const char *name, const char *parent)
{
	size_t n = strlen(name), p = strlen(parent);
	return n > p + 1 && name[n - p - 1] == '.' && streq(name + n - p, parent);
}

/* Fold the names of one suffix below parent into *.parent when there are
 * enough of them. */
static void fold_under(struct egress_suggest *g, const char *parent, const char *suffix)
{
	size_t n = 0;
	for (size_t i = 0; i < g->n_items; i++) {
		const struct item *it = &g->items[i];
		n += !it->folded && !it->by_address && it->host[0] != '*' && streq(it->suffix, suffix) && below(it->host, parent);
	}
	if (n < FOLD_MIN)
		return;
	char note[200];
	snprintf(note, sizeof note, "folds %zu names", n);
	for (size_t i = 0; i < g->n_items; i++) {
		struct item *it = &g->items[i];
		if (!it->folded && !it->by_address && it->host[0] != '*' && streq(it->suffix, suffix) && below(it->host, parent))
			it->folded = true;
	}
	char host[310];
	snprintf(host, sizeof host, "*.%s", parent);
	item_add(g, host, suffix, false, note);
}

/* Deepest parents first: the narrowest wildcard that folds enough. */
static void fold(struct egress_suggest *g)
{
	size_t deepest = 0;
	for (size_t i = 0; i < g->n_items; i++)
		if (!g->items[i].by_address && labels(g->items[i].host) > deepest)
			deepest = labels(g->items[i].host);
	for (size_t depth = deepest; depth >= 2; depth--)
		for (size_t i = 0; i < g->n_items; i++) {
			const struct item *it = &g->items[i];
			if (it->by_address || it->folded || it->host[0] == '*' || labels(it->host) <= depth)
				continue;
			/* its parent with depth labels */
			const char *p = it->host;
			for (size_t k = labels(it->host); k > depth; k--)
				p = strchr(p, '.') + 1;
			char parent[300], suffix[16];
			snprintf(parent, sizeof parent, "%s", p);
			snprintf(suffix, sizeof suffix, "%s", it->suffix);
			if (egress_suffix_foldable(parent))
				fold_under(g, parent, suffix);   /* may move g->items */
		}
}

/* ---- 4. the text ---- */

static int item_cmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	if (a->by_address != b->by_address)
		return a->by_address ? 1 : -1;
	int c = strcmp(a->host[0] == '*' ? a->host + 2 : a->host, b->host[0] == '*' ? b->host + 2 : b->host);
	return c ? c : strcmp(a->suffix, b->suffix);
}

struct text {
	char *buf;
	size_t len, cap;
};

static void addf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		ab_fatal("out of memory");
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->buf = xrealloc(t->buf, t->cap);
	}
	memcpy(t->buf + t->len, s, (size_t)n + 1);
	t->len += (size_t)n;
	free(s);
}

void egress_suggest_summary(struct egress_suggest *g, struct egress_suggest_summary *ret)
{
	*ret = (struct egress_suggest_summary){ .records = g->lines, .lost = g->lost, .unrecorded = g->unrecorded,
						.full = g->full };
	build_items(g);
	for (size_t i = 0; i < g->n_items; i++) {
		const struct item *it = &g->items[i];
		if (it->folded)
			continue;
		if (it->by_address)
			ret->addresses++;
		else
			ret->names++;
		ret->lookups_only += !it->by_address && !it->suffix[0] && it->note && strstr(it->note, "looked up only");
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *r = &g->v[i];
		ret->inside += r->kind == RK_INSIDE;
		ret->nxdomain += r->kind == RK_LOOKUP && !streq(r->extra, "ok") && !connected(g, r->name);
	}
}

static void yaml_allow(struct egress_suggest *g, struct text *t)
{
	size_t shown = 0;
	for (size_t i = 0; i < g->n_items; i++)
		shown += !g->items[i].folded;
	if (!shown) {
		addf(t, "network:\n  allow: []\n");
		return;
	}
	addf(t, "network:\n  allow:\n");
	for (size_t i = 0; i < g->n_items; i++) {
		const struct item *it = &g->items[i];
		if (it->folded)
			continue;
		char entry[340];
		/* "*" and "[" begin other things in YAML: quoted */
		bool quote = it->host[0] == '*' || it->host[0] == '[';
		snprintf(entry, sizeof entry, "%s%s%s%s", quote ? "\"" : "", it->host, it->suffix, quote ? "\"" : "");
		if (it->note)
			addf(t, "    - %-40s # %s\n", entry, it->note);
		else
			addf(t, "    - %s\n", entry);
	}
}

static void yaml_comments(const struct egress_suggest *g, struct text *t)
{
	bool head = false;
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *r = &g->v[i];
		if (r->kind != RK_INSIDE)
			continue;
		if (!head)
			addf(t, "# Answers that pointed inside: withheld in learn mode, and withheld with this\n"
				"# list too. Open such a range only if you mean it, with\n"
				"# agentbox --egress-internal RANGE (or egress.internal in config.yaml):\n");
		head = true;
		addf(t, "#   %s -> %s (%s)\n", r->name, r->dst, r->extra[0] ? r->extra : "internal");
	}
	head = false;
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *r = &g->v[i];
		if (r->kind != RK_LOOKUP || streq(r->extra, "ok") || connected(g, r->name))
			continue;
		if (!head)
			addf(t, "# Looked up, and no such name (%s): left out; a refused lookup gets\n"
				"# the same answer, NXDOMAIN:\n", r->extra);
		head = true;
		addf(t, "#   %s\n", r->name);
	}
	if (g->lost || g->unrecorded || g->full)
		addf(t, "# INCOMPLETE: %llu connections were not recorded (a flood), %llu records were\n"
			"# left out%s: run the session again to see what this misses.\n",
		     (unsigned long long)g->lost, (unsigned long long)g->unrecorded,
		     g->full ? " (the learn file reached its size limit)" : "");
}

static char *json_text(struct egress_suggest *g, const char *id)
{
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "container", id);
	json_key(o, "allow");
	json_arr_begin(o);
	for (size_t i = 0; i < g->n_items; i++) {
		const struct item *it = &g->items[i];
		if (it->folded)
			continue;
		char entry[340];
		snprintf(entry, sizeof entry, "%s%s", it->host, it->suffix);
		json_obj_begin(o);
		json_kv_str(o, "entry", entry);
		json_kv_bool(o, "by_address", it->by_address);
		if (it->note)
			json_kv_str(o, "note", it->note);
		json_obj_end(o);
	}
	json_arr_end(o);
	json_key(o, "inside");
	json_arr_begin(o);
	for (size_t i = 0; i < g->n; i++) {
		const struct rec *r = &g->v[i];
		if (r->kind != RK_INSIDE)
			continue;
		json_obj_begin(o);
		json_kv_str(o, "name", r->name);
		json_kv_str(o, "dst", r->dst);
		json_kv_str(o, "what", r->extra);
		json_obj_end(o);
	}
	json_arr_end(o);
	json_key(o, "no_such_name");
	json_arr_begin(o);
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].kind == RK_LOOKUP && !streq(g->v[i].extra, "ok") && !connected(g, g->v[i].name))
			json_str(o, g->v[i].name);
	json_arr_end(o);
	json_kv_uint(o, "lost", g->lost);
	json_kv_uint(o, "unrecorded", g->unrecorded);
	json_kv_bool(o, "full", g->full);
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	char *out = xmalloc(len + 2);
	memcpy(out, text, len);
	memcpy(out + len, "\n", 2);
	json_out_free(o);
	return out;
}

char *egress_suggest_text(struct egress_suggest *g, const char *id, bool wildcards, bool json)
{
	build_items(g);
	if (wildcards)
		fold(g);
	if (g->n_items)
		qsort(g->items, g->n_items, sizeof *g->items, item_cmp);
	if (json)
		return json_text(g, id);
	struct text t = { 0 };
	addf(&t, "# What %s reached in learn mode: paste into the kit (agentbox-kit(5)).\n", id);
	if (wildcards)
		addf(&t, "# Wildcards fold %d or more names under one parent; check each before you\n"
			 "# paste it (the public suffixes known here are a short list).\n", FOLD_MIN);
	yaml_allow(g, &t);
	yaml_comments(g, &t);
	return t.buf;
}
