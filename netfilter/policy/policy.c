/* Egress policy model: parsing of allow/deny entries, name matching and the
 * canonical text form. Pure logic, no kernel interaction. */
#include "egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#define ENTRY_TEXT_MAX 512 /* longer than any valid entry: 253-char name + port + proto */
#define REASON_MAX 256

/* Parse "1".."65535"; reason filled on failure. */
static int parse_port(const char *s, uint16_t *ret, char *reason)
{
	if (!*s) {
		snprintf(reason, REASON_MAX, "missing port after \":\"");
		return -1;
	}
	for (const char *c = s; *c; c++)
		if (!isdigit((unsigned char)*c)) {
			snprintf(reason, REASON_MAX, "port \"%s\" is not a number", s);
			return -1;
		}
	/* strtoul would accept what the digit check refused; only the range is left */
	unsigned long v = strlen(s) > 5 ? 100000 : strtoul(s, NULL, 10);
	if (v < 1 || v > 65535) {
		snprintf(reason, REASON_MAX, "port %s out of range", s);
		return -1;
	}
	*ret = (uint16_t)v;
	return 0;
}

static int parse_prefix(const char *s, unsigned max, uint8_t *ret, const char *fam, char *reason)
{
	if (!*s) {
		snprintf(reason, REASON_MAX, "missing prefix length after \"/\"");
		return -1;
	}
	for (const char *c = s; *c; c++)
		if (!isdigit((unsigned char)*c)) {
			snprintf(reason, REASON_MAX, "prefix length \"%s\" is not a number", s);
			return -1;
		}
	unsigned long v = strlen(s) > 3 ? 1000 : strtoul(s, NULL, 10);
	if (v > max) {
		snprintf(reason, REASON_MAX, "prefix length %s out of range for %s (0-%u)", s, fam, max);
		return -1;
	}
	*ret = (uint8_t)v;
	return 0;
}

/* Address (with optional "/prefix") into e; family fixed by the caller. */
static int parse_cidr(char *host, int family, struct egress_entry *e, char *reason)
{
	unsigned max = family == AF_INET ? 32 : 128;
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";
	char *slash = strchr(host, '/');
	e->kind = family == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6;
	e->prefix = (uint8_t)max;
	if (slash) {
		*slash = 0;
		if (parse_prefix(slash + 1, max, &e->prefix, fam, reason) < 0)
			return -1;
	}
	if (inet_pton(family, host, e->addr) != 1) {
		snprintf(reason, REASON_MAX, "invalid %s address \"%s\"", fam, host);
		return -1;
	}
	/* Refuse 198.51.100.7/24 rather than guess whether the user meant the host or the net. */
	for (unsigned bit = e->prefix; bit < max; bit++)
		if (e->addr[bit / 8] & (0x80 >> (bit % 8))) {
			struct egress_entry net = *e;
			char buf[INET6_ADDRSTRLEN];
			for (unsigned b = e->prefix; b < max; b++)
				net.addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
			inet_ntop(family, net.addr, buf, sizeof buf);
			snprintf(reason, REASON_MAX, "address has bits set beyond the /%u prefix (network is %s/%u)",
				 e->prefix, buf, e->prefix);
			return -1;
		}
	return 0;
}

static bool name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Validate and lowercase a DNS name in place (final dot stripped). */
static int check_name(char *name, char *reason)
{
	size_t n = strlen(name);
	if (n && name[n - 1] == '.')
		name[--n] = 0;
	if (n == 0) {
		snprintf(reason, REASON_MAX, "empty name");
		return -1;
	}
	if (n > 253) {
		snprintf(reason, REASON_MAX, "name longer than 253 characters");
		return -1;
	}
	for (char *c = name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	const char *label = name;
	for (;;) {
		const char *end = strchr(label, '.');
		size_t len = end ? (size_t)(end - label) : strlen(label);
		if (len == 0) {
			snprintf(reason, REASON_MAX, "empty label");
			return -1;
		}
		if (len > 63) {
			snprintf(reason, REASON_MAX, "label longer than 63 characters");
			return -1;
		}
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)label[i];
			if (c == '*') {
				snprintf(reason, REASON_MAX,
					 "\"*\" is only allowed as the whole first label (\"*.example.com\")");
				return -1;
			}
			if (!name_char_ok((char)c)) {
				if (isprint(c))
					snprintf(reason, REASON_MAX, "invalid character '%c' in name", c);
				else
					snprintf(reason, REASON_MAX, "invalid byte 0x%02x in name", c);
				return -1;
			}
		}
		if (label[0] == '-' || label[len - 1] == '-') {
			snprintf(reason, REASON_MAX, "label \"%.*s\" starts or ends with \"-\"", (int)len, label);
			return -1;
		}
		if (!end)
			break;
		label = end + 1;
	}
	return 0;
}

static bool looks_ipv4(const char *s)
{
	bool digit = false;
	for (; *s && *s != '/'; s++) {
		if (isdigit((unsigned char)*s))
			digit = true;
		else if (*s != '.')
			return false;
	}
	return digit;
}

/* The port a URL's scheme implies, 0 when it implies none we know. */
static unsigned scheme_port(const char *scheme, size_t n)
{
	static const struct { const char *name; unsigned port; } known[] = {
		{"http", 80}, {"https", 443}, {"ws", 80}, {"wss", 443}, {"ftp", 21},
		{"ssh", 22}, {"git+ssh", 22}, {"git", 9418}, {"rsync", 873},
	};
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (strlen(known[i].name) == n && strncasecmp(scheme, known[i].name, n) == 0)
			return known[i].port;
	return 0;
}

/* An entry written as a URL ("https://pypi.org/simple"), the commonest first
 * mistake: refused (a URL's path cannot be enforced, and accepting it would
 * quietly open the whole host), with the entry it should be. -1 with the
 * reason filled when text is one. */
static int refuse_url(const char *text, char *reason)
{
	const char *sep = strstr(text, "://");
	if (!sep || sep == text)
		return 0;
	for (const char *c = text; c < sep; c++)
		if (!isalnum((unsigned char)*c) && !strchr("+-.", *c))
			return 0;
	const char *auth = sep + 3;
	size_t alen = strcspn(auth, "/?#");
	const char *at = memchr(auth, '@', alen);
	while (at) {            /* user:password@ has no place in an entry either */
		alen -= (size_t)(at + 1 - auth);
		auth = at + 1;
		at = memchr(auth, '@', alen);
	}
	/* the host, and the port when the URL gives one */
	const char *port = NULL;
	size_t hlen = alen;
	if (auth[0] == '[') {
		const char *close = memchr(auth, ']', alen);
		if (close && (size_t)(close + 1 - auth) < alen && close[1] == ':') {
			hlen = (size_t)(close + 1 - auth);
			port = close + 2;
		}
	} else {
		const char *colon = memchr(auth, ':', alen);
		if (colon) {
			hlen = (size_t)(colon - auth);
			port = colon + 1;
		}
	}
	bool has_path = auth[alen] && !(auth[alen] == '/' && !auth[alen + 1]);
	const char *no_path = has_path ? " (the firewall allows hosts and ports, not paths)" : "";
	unsigned implied = scheme_port(text, (size_t)(sep - text));
	char host[96];          /* what the error shows: a longer name is cut */
	snprintf(host, sizeof host, "%.*s", (int)(hlen < sizeof host - 1 ? hlen : sizeof host - 1), auth);
	for (char *c = host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (!host[0])
		snprintf(reason, REASON_MAX, "an entry is a host name or address, not a URL%s", no_path);
	else if (port && *port && port < auth + alen)
		snprintf(reason, REASON_MAX, "an entry is a host name or address, not a URL: write %s:%.*s%s", host,
			 (int)(auth + alen - port < 8 ? auth + alen - port : 8), port, no_path);
	else if (implied)
		snprintf(reason, REASON_MAX, "an entry is a host name or address, not a URL: write %s:%u%s", host,
			 implied, no_path);
	else
		snprintf(reason, REASON_MAX, "an entry is a host name or address, not a URL: write %s (any port; "
			 ":PORT after it for one)%s", host, no_path);
	return -1;
}

/* One trimmed entry. e->name is allocated on success. */
static int parse_entry(const char *text, struct egress_entry *e, char *reason)
{
	char buf[ENTRY_TEXT_MAX + 1];
	memset(e, 0, sizeof *e);
	if (strlen(text) > ENTRY_TEXT_MAX) {
		snprintf(reason, REASON_MAX, "entry longer than %d characters", ENTRY_TEXT_MAX);
		return -1;
	}
	strcpy(buf, text);
	if (refuse_url(text, reason) < 0)
		return -1;

	/* "/tcp" or "/udp" last; a CIDR's "/48" is digits, so the two cannot be confused. */
	char *slash = strrchr(buf, '/');
	if (slash && slash[1] && !isdigit((unsigned char)slash[1])) {
		if (strcasecmp(slash + 1, "tcp") == 0)
			e->proto = IPPROTO_TCP;
		else if (strcasecmp(slash + 1, "udp") == 0)
			e->proto = IPPROTO_UDP;
		else {
			/* after a name, more likely a URL's path ("pypi.org/simple") */
			*slash = 0;
			bool name = !looks_ipv4(buf) && !strchr(buf, ':');
			snprintf(reason, REASON_MAX, "unknown protocol \"%s\" (expected /tcp or /udp%s)", slash + 1,
				 name ? "; an entry has no URL path" : "");
			return -1;
		}
		*slash = 0;
	}
	if (!buf[0]) {
		snprintf(reason, REASON_MAX, "missing host before the protocol");
		return -1;
	}

	char *host = buf, *port = NULL;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');
		if (!close) {
			snprintf(reason, REASON_MAX, "missing \"]\"");
			return -1;
		}
		*close = 0;
		host = buf + 1;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1]) {
			snprintf(reason, REASON_MAX, "unexpected \"%s\" after \"]\"", close + 1);
			return -1;
		}
		if (port && parse_port(port, &e->port, reason) < 0)
			return -1;
		return parse_cidr(host, AF_INET6, e, reason);
	}

	char *colon = strchr(buf, ':');
	if (colon && strchr(colon + 1, ':'))   /* bare IPv6: no port without brackets */
		return parse_cidr(host, AF_INET6, e, reason);
	if (colon) {
		*colon = 0;
		port = colon + 1;
		if (parse_port(port, &e->port, reason) < 0)
			return -1;
	}
	if (!host[0]) {
		snprintf(reason, REASON_MAX, "missing host before \":\"");
		return -1;
	}
	if (looks_ipv4(host))
		return parse_cidr(host, AF_INET, e, reason);
	if (strchr(host, '/')) {
		snprintf(reason, REASON_MAX, "a prefix length needs an IP address, not a name");
		return -1;
	}

	e->kind = EGRESS_NAME;
	if (host[0] == '*') {
		if (host[1] != '.' || !host[2]) {
			snprintf(reason, REASON_MAX, "a wildcard needs a domain after \"*.\" (\"*.example.com\")");
			return -1;
		}
		e->kind = EGRESS_WILDCARD;
		host += 2;
	}
	if (check_name(host, reason) < 0)
		return -1;
	e->name = xstrdup(host);
	return 0;
}

static void list_push(struct egress_list *l, const struct egress_entry *e)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = *e;
}

static bool entry_equal(const struct egress_entry *a, const struct egress_entry *b)
{
	if (a->kind != b->kind || a->proto != b->proto || a->port != b->port)
		return false;
	if (a->kind == EGRESS_NAME || a->kind == EGRESS_WILDCARD)
		return strcmp(a->name, b->name) == 0;
	return a->prefix == b->prefix && memcmp(a->addr, b->addr, sizeof a->addr) == 0;
}

static void list_clear(struct egress_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].reason);
	}
	free(l->v);
	*l = (struct egress_list){0};
}

/* The entry text as it goes into an error: printable, and not endless. */
static void quote_entry(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 4 < outlen; i++) {
		if (i == 80) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		unsigned char c = (unsigned char)s[i];
		out[o++] = isprint(c) ? (char)c : '?';
	}
	out[o] = 0;
}

/* Entries of a comma-separated list appended to dst, all or nothing. An
 * internal entry must be an address range alone. */
static int add_entries(struct egress_list *dst, const char *list, bool internal, const char *source,
		       struct ab_err *err)
{
	struct egress_list tmp = {0};
	const char *s = list ? list : "";
	bool blank = true;
	for (const char *c = s; *c; c++)
		if (!isspace((unsigned char)*c))
			blank = false;
	if (blank)
		return 0;

	size_t pos = 0;
	for (;;) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		const char *a = s, *b = s + len;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		pos++;
		if (a == b) {
			list_clear(&tmp);
			return ab_error(err, 0, "%s: entry %zu is empty", source, pos);
		}
		char text[ENTRY_TEXT_MAX + 2], shown[128], reason[REASON_MAX];
		size_t n = (size_t)(b - a);
		quote_entry(a, n, shown, sizeof shown);
		struct egress_entry e;
		int r;
		if (n > ENTRY_TEXT_MAX) {
			snprintf(reason, sizeof reason, "entry longer than %d characters", ENTRY_TEXT_MAX);
			r = -1;
		} else {
			memcpy(text, a, n);
			text[n] = 0;
			r = parse_entry(text, &e, reason);
			if (r == 0 && internal &&
			    ((e.kind != EGRESS_CIDR4 && e.kind != EGRESS_CIDR6) || e.port || e.proto)) {
				free(e.name);
				snprintf(reason, sizeof reason, "an internal entry is an address range with no port or protocol (10.0.0.0/8, fd00::/8)");
				r = -1;
			}
		}
		if (r < 0) {
			list_clear(&tmp);
			return ab_error(err, 0, "%s: entry \"%s\": %s", source, shown, reason);
		}
		bool dup = false;
		for (size_t i = 0; i < dst->n && !dup; i++)
			dup = entry_equal(&dst->v[i], &e);
		for (size_t i = 0; i < tmp.n && !dup; i++)
			dup = entry_equal(&tmp.v[i], &e);
		if (dup)
			free(e.name);
		else
			list_push(&tmp, &e);
		if (dst->n + tmp.n > EGRESS_MAX_ENTRIES) {
			list_clear(&tmp);
			return ab_error(err, 0, "%s: too many entries (at most %d)", source, EGRESS_MAX_ENTRIES);
		}
		if (!end)
			break;
		s = end + 1;
	}
	for (size_t i = 0; i < tmp.n; i++)
		list_push(dst, &tmp.v[i]);
	free(tmp.v);
	return 0;
}

int egress_policy_add(struct egress_policy *p, const char *list, bool deny, const char *source,
		      struct ab_err *err)
{
	return add_entries(deny ? &p->deny : &p->allow, list, false, source, err);
}

int egress_policy_add_internal(struct egress_policy *p, const char *list, const char *source, struct ab_err *err)
{
	return add_entries(&p->internal, list, true, source, err);
}

void egress_policy_free(struct egress_policy *p)
{
	if (!p)
		return;
	list_clear(&p->allow);
	list_clear(&p->deny);
	list_clear(&p->internal);
	p->learn = false;
}

bool egress_policy_is_empty(const struct egress_policy *p)
{
	return !p || (p->allow.n == 0 && p->deny.n == 0);
}

static bool list_has_domains(const struct egress_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == EGRESS_NAME || l->v[i].kind == EGRESS_WILDCARD)
			return true;
	return false;
}

bool egress_policy_has_domains(const struct egress_policy *p)
{
	return p && (list_has_domains(&p->allow) || list_has_domains(&p->deny));
}

bool egress_policy_allows_names(const struct egress_policy *p)
{
	return p && (p->learn || list_has_domains(&p->allow));
}

bool egress_entry_matches_name(const struct egress_entry *e, const char *name)
{
	if (e->kind == EGRESS_NAME)
		return strcmp(e->name, name) == 0;
	if (e->kind != EGRESS_WILDCARD)
		return false;
	/* "*.example.com": at least one label before ".example.com"; never the apex. */
	size_t n = strlen(name), s = strlen(e->name);
	return n > s + 1 && name[n - s - 1] == '.' && strcmp(name + n - s, e->name) == 0;
}

enum egress_name_verdict egress_policy_check_name(const struct egress_policy *p, const char *name)
{
	for (size_t i = 0; i < p->deny.n; i++) {
		const struct egress_entry *e = &p->deny.v[i];
		if (e->port == 0 && e->proto == 0 && egress_entry_matches_name(e, name))
			return EGRESS_NAME_DENY;
	}
	for (size_t i = 0; i < p->allow.n; i++)
		if (egress_entry_matches_name(&p->allow.v[i], name))
			return EGRESS_NAME_ALLOW;
	return p->learn ? EGRESS_NAME_ALLOW : EGRESS_NAME_NONE;
}

char *egress_entry_to_string(const struct egress_entry *e, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + 8], port[8] = "", proto[8] = "";
	if (e->port)
		snprintf(port, sizeof port, ":%u", e->port);
	if (e->proto)
		snprintf(proto, sizeof proto, "/%s", e->proto == IPPROTO_TCP ? "tcp" : "udp");
	switch (e->kind) {
	case EGRESS_NAME:
		snprintf(buf, len, "%s%s%s", e->name, port, proto);
		break;
	case EGRESS_WILDCARD:
		snprintf(buf, len, "*.%s%s%s", e->name, port, proto);
		break;
	case EGRESS_CIDR4:
	case EGRESS_CIDR6: {
		int fam = e->kind == EGRESS_CIDR4 ? AF_INET : AF_INET6;
		unsigned max = fam == AF_INET ? 32 : 128;
		char a[INET6_ADDRSTRLEN];
		inet_ntop(fam, e->addr, a, sizeof a);
		if (e->prefix != max)
			snprintf(host, sizeof host, "%s/%u", a, e->prefix);
		else
			snprintf(host, sizeof host, "%s", a);
		if (fam == AF_INET6 && e->port)
			snprintf(buf, len, "[%s]%s%s", host, port, proto);
		else
			snprintf(buf, len, "%s%s%s", host, port, proto);
		break;
	}
	}
	return buf;
}

static void append_list(char **out, size_t *len, const struct egress_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		char e[320];
		egress_entry_to_string(&l->v[i], e, sizeof e);
		size_t n = strlen(e);
		*out = xrealloc(*out, *len + n + 2);
		if (i)
			(*out)[(*len)++] = ',';
		memcpy(*out + *len, e, n + 1);
		*len += n;
	}
}

#define MODE_LEARN ";mode=learn"

int egress_policy_from_string(const char *text, const char *source, struct egress_policy *ret, struct ab_err *err)
{
	const char *deny = text ? strstr(text, ";deny=") : NULL;
	if (!text || strncmp(text, "allow=", 6) != 0 || !deny)
		return ab_error(err, 0, "%s: not a policy text (allow=...;deny=...)", source);
	/* ";mode=learn" ends a learn mode policy's text (no entry holds a ';') */
	size_t end = strlen(text);
	bool learn = end >= sizeof MODE_LEARN - 1 && streq(text + end - (sizeof MODE_LEARN - 1), MODE_LEARN);
	if (learn)
		end -= sizeof MODE_LEARN - 1;
	/* ";internal=..." follows when there is any (texts written before it
	 * existed have none) */
	const char *internal = strstr(deny, ";internal=");
	if (internal && (size_t)(internal - text) >= end)
		internal = NULL;
	size_t deny_end = internal ? (size_t)(internal - text) : end;
	char *allow = strndup(text + 6, (size_t)(deny - text - 6));
	char *denied = strndup(deny + 6, deny_end - (size_t)(deny - text) - 6);
	char *inside = internal ? strndup(internal + 10, end - (size_t)(internal - text) - 10) : NULL;
	struct egress_policy p = {0};
	int r = allow && denied && (inside || !internal) ? 0 : ab_error(err, ENOMEM, "%s", source);
	if (r == 0)
		r = egress_policy_add(&p, allow, false, source, err);
	if (r == 0)
		r = egress_policy_add(&p, denied, true, source, err);
	if (r == 0 && inside)
		r = egress_policy_add_internal(&p, inside, source, err);
	free(allow);
	free(denied);
	free(inside);
	if (r < 0) {
		egress_policy_free(&p);
		return -1;
	}
	p.learn = learn;
	*ret = p;
	return 0;
}

char *egress_policy_to_string(const struct egress_policy *p)
{
	size_t len = 6;
	char *out = xstrdup("allow=");
	append_list(&out, &len, &p->allow);
	out = xrealloc(out, len + 7);
	memcpy(out + len, ";deny=", 7);
	len += 6;
	append_list(&out, &len, &p->deny);
	if (p->internal.n) {
		out = xrealloc(out, len + 11);
		memcpy(out + len, ";internal=", 11);
		len += 10;
		append_list(&out, &len, &p->internal);
	}
	if (p->learn) {
		out = xrealloc(out, len + sizeof MODE_LEARN);
		memcpy(out + len, MODE_LEARN, sizeof MODE_LEARN);
		len += sizeof MODE_LEARN - 1;
	}
	return out;
}
