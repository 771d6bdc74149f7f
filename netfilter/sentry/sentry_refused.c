/* What the box may read about its refusals (issue 25): one sentence per
 * refusal, the same one the DNS answer carries as its extended error's text,
 * and the box's refused file (/run/agentbox/refused, read-only inside):
 * JSON lines of the first refusal of each name and destination, written by
 * the sentry from outside the box's reach, at most REFUSED_MAX bytes. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nflog.h"
#include "sentry_refused.h"
#include "sentry_state.h"
#include "util.h"

#define REFUSED_MAX (256u << 10)
#define REFUSED_RESERVE 256      /* for the line that says the file is full */

/* A name off the wire as printable ASCII: a refused question may hold any
 * byte, and what carries it (EXTRA-TEXT, JSON) must stay valid UTF-8. */
static const char *clean(const char *name, char out[DNS_NAME_TEXT])
{
	if (!name)
		return NULL;
	size_t i = 0;
	for (; name[i] && i < DNS_NAME_TEXT - 1; i++)
		out[i] = (unsigned char)name[i] >= 0x20 && (unsigned char)name[i] < 0x7f ? name[i] : '?';
	out[i] = 0;
	return out;
}

/* "pypi.org", "198.18.41.5 port 80/tcp", "pypi.org (198.18.41.5 port 443/tcp)",
 * "pypi.org port 443/tcp" */
static void what(char *buf, size_t len, const char *raw, int family, const uint8_t *addr, uint8_t proto, int port)
{
	char cn[DNS_NAME_TEXT];
	const char *name = clean(raw, cn);
	char dst[INET6_ADDRSTRLEN] = "", pbuf[8], where[96] = "";
	if (family) {
		inet_ntop(family, addr, dst, sizeof dst);
		if (port >= 0)
			snprintf(where, sizeof where, "%s port %d/%s", dst, port, nflog_proto_name(proto, pbuf));
		else if (proto)
			snprintf(where, sizeof where, "%s (%s)", dst, nflog_proto_name(proto, pbuf));
		else
			snprintf(where, sizeof where, "%s", dst);
	}
	if (name && family)
		snprintf(buf, len, "%s (%s)", name, where);
	else if (name && port >= 0)   /* the HTTP proxy's: a name and the port asked for */
		snprintf(buf, len, "%s port %d/%s", name, port, nflog_proto_name(proto, pbuf));
	else
		snprintf(buf, len, "%s", name ? name : where);
}

void sentry_refusal_text(const struct sentry *s, const char *code, const char *name, const char *via, int family,
			 const uint8_t *addr, uint8_t proto, int port, char *buf, size_t len)
{
	char w[DNS_NAME_TEXT + 128];
	what(w, sizeof w, name, family, addr, proto, port);
	const char *why = NULL;
	if (strcmp(code, "denied") == 0) {
		why = egress_deny_reason(s->p, via ? via : name, family, addr, proto, port);
		char cv[DNS_NAME_TEXT];
		if (via)
			snprintf(buf, len, "agentbox egress policy: %s leads to %s, which is denied%s%s", w, clean(via, cv),
				 why ? ": " : "", why ? why : "");
		else
			snprintf(buf, len, "agentbox egress policy: %s is denied%s%s", w, why ? ": " : "", why ? why : "");
	} else if (strcmp(code, "not-allowed") == 0)
		snprintf(buf, len, "agentbox egress policy: %s is not on the allowlist", w);
	else if (strcmp(code, "internal-address") == 0)
		snprintf(buf, len, "agentbox egress policy: %s %s an internal address the policy does not open", w,
			 name ? "points to" : "is");
	else if (strcmp(code, "dns-bypass") == 0)
		snprintf(buf, len, "agentbox egress policy: %s: DNS goes through the box's resolver only", w);
	else
		snprintf(buf, len, "agentbox egress policy: %s is refused (%s)", w, code);
}

void sentry_allow_hint(const struct sentry *s, const char *kind, const char *name, int family, const uint8_t *addr,
		       int port, char *buf, size_t len)
{
	char entry[DNS_NAME_TEXT + 64], cn[DNS_NAME_TEXT], dst[INET6_ADDRSTRLEN] = "";
	/* a packet's protocol narrows the entry; a name's port is any protocol's */
	const char *proto = strcmp(kind, "tcp") == 0 ? "/tcp" : strcmp(kind, "udp") == 0 ? "/udp" : "";
	if (family)
		inet_ntop(family, addr, dst, sizeof dst);
	if (name && port >= 0)
		snprintf(entry, sizeof entry, "%s:%d%s", clean(name, cn), port, proto);
	else if (name)
		snprintf(entry, sizeof entry, "%s", clean(name, cn));
	else if (port >= 0)
		snprintf(entry, sizeof entry, family == AF_INET6 ? "[%s]:%d%s" : "%s:%d%s", dst, port, proto);
	else
		snprintf(entry, sizeof entry, "%s", dst);
	/* a box without a resolver to ask has no network: a live allow cannot give it one */
	if (!s->sp->dns || !s->sp->n_upstream)
		snprintf(buf, len, "kit run --allow %s (this box has no network: from its next run)", entry);
	else
		snprintf(buf, len, "agentbox egress allow %s %s", s->sp->container_id ? s->sp->container_id : "ID", entry);
}

/* "key":"value" with JSON escapes; bytes >= 0x80 pass (reasons may be UTF-8) */
static size_t put_str(char *out, size_t o, size_t max, const char *key, const char *v)
{
	int n = snprintf(out + o, o < max ? max - o : 0, "%s\"%s\":\"", o > 1 ? "," : "", key);
	o += n > 0 ? (size_t)n : 0;
	for (size_t i = 0; v[i] && o + 8 < max; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, max - o, "\\u%04x", c);
		else
			out[o++] = (char)c;
	}
	if (o + 1 < max)
		out[o++] = '"';
	return o;
}

static bool refused_write(struct sentry *s, const char *line, size_t n, bool reserve)
{
	uint64_t limit = reserve ? REFUSED_MAX : REFUSED_MAX - REFUSED_RESERVE;
	if (s->refused_size + n > limit)
		return false;
	if (write(s->refusedfd, line, n) != (ssize_t)n)
		return false;
	s->refused_size += n;
	return true;
}

void sentry_refused_note(struct sentry *s, const char *kind, const char *code, const char *name, int family,
			 const uint8_t *addr, uint8_t proto, int port)
{
	if (s->refusedfd < 0 || s->refused_full)
		return;
	char line[2048], ts[64], text[600];
	size_t o = 1, max = sizeof line - 2;
	line[0] = '{';
	format_rfc3339(ts, sizeof ts);
	o = put_str(line, o, max, "time", ts);
	o = put_str(line, o, max, "proto", kind);
	char cn[DNS_NAME_TEXT];
	if (name)
		o = put_str(line, o, max, "name", clean(name, cn));
	if (family) {
		char dst[INET6_ADDRSTRLEN];
		inet_ntop(family, addr, dst, sizeof dst);
		o = put_str(line, o, max, "dst", dst);
	}
	if (port >= 0)
		o += (size_t)snprintf(line + o, max - o, ",\"port\":%d", port);
	o = put_str(line, o, max, "reason", code);
	const char *why = strcmp(code, "denied") == 0 ? egress_deny_reason(s->p, name, family, addr, proto, port) : NULL;
	if (why)
		o = put_str(line, o, max, "note", why);
	sentry_refusal_text(s, code, name, NULL, family, addr, proto, port, text, sizeof text);
	o = put_str(line, o, max, "message", text);
	if (strcmp(code, "not-allowed") == 0) {
		sentry_allow_hint(s, kind, name, family, addr, port, text, sizeof text);
		o = put_str(line, o, max, "allow", text);
	}
	line[o++] = '}';
	line[o++] = '\n';
	if (refused_write(s, line, o, false))
		return;
	static const char full[] = "{\"note\":\"the refused file is full: later refusals are in the deny log only (agentbox egress log)\"}\n";
	(void)refused_write(s, full, sizeof full - 1, true);
	s->refused_full = true;
}
