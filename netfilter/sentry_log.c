/* The deny log: JSON lines, one write each, appended to the container's log
 * file, for names the sentry refused and packets the ruleset logged (read from
 * nfnetlink_log). Rate and size are bounded; what the rate limit drops is
 * counted on the next line. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json.h"
#include "nflog.h"
#include "sentry_internal.h"
#include "util.h"

/* Printable ASCII only: names come off the wire. */
static void sanitize(const char *in, char *out, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[i] = 0;
}

void sentry_deny_record(struct sentry *s, const char *proto, const char *dst, int port, const char *name,
			const char *reason)
{
	if (s->logfd < 0)
		return;
	uint64_t now = now_ms();
	s->tokens += (double)(now - s->tokens_at) * LOG_RATE / 1000.0;
	if (s->tokens > LOG_BURST)
		s->tokens = LOG_BURST;
	s->tokens_at = now;
	if (s->tokens < 1) {
		s->suppressed++;
		return;
	}
	s->tokens -= 1;

	char ts[64], clean[DNS_NAME_TEXT];
	format_rfc3339(ts, sizeof ts);
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	json_kv_str(o, "time", ts);
	json_kv_str(o, "container", s->sp->container_id ? s->sp->container_id : "");
	json_kv_str(o, "verdict", "deny");
	json_kv_str(o, "proto", proto);
	if (dst)
		json_kv_str(o, "dst", dst);
	if (port >= 0)
		json_kv_int(o, "port", port);
	if (name) {
		sanitize(name, clean, sizeof clean);
		json_kv_str(o, "name", clean);
	}
	json_kv_str(o, "reason", reason);
	if (s->suppressed) {   /* records dropped by the rate limit since the last one */
		json_kv_uint(o, "suppressed", s->suppressed);
		s->suppressed = 0;
	}
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	char line[1024];
	if (len + 1 <= sizeof line && s->log_size + len + 1 <= s->log_max) {
		memcpy(line, text, len);
		line[len] = '\n';
		/* one write per line: O_APPEND keeps lines whole */
		if (write(s->logfd, line, len + 1) == (ssize_t)(len + 1))
			s->log_size += len + 1;
	}
	json_out_free(o);
}

void sentry_remember_name(struct sentry *s, const struct dns_addr *a, const char *name)
{
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

static const char *recent_name(struct sentry *s, int family, const uint8_t *addr)
{
	for (size_t i = 0; i < RECENT_NAMES; i++)
		if (s->recent[i].family == family && memcmp(s->recent[i].addr, addr, 16) == 0)
			return s->recent[i].name;
	return NULL;
}

static void on_nflog_packet(const struct nflog_packet *pkt, void *data)
{
	struct sentry *s = data;
	char dst[INET6_ADDRSTRLEN], pbuf[8];
	inet_ntop(pkt->family, pkt->dst, dst, sizeof dst);
	const char *reason = strcmp(pkt->prefix, "deny") == 0 ? "denied"
			     : strcmp(pkt->prefix, "dns") == 0 ? "dns-bypass"
			     : strcmp(pkt->prefix, "spoof") == 0 ? "spoofed-source"
								 : "not-allowed";
	sentry_deny_record(s, nflog_proto_name(pkt->proto, pbuf), dst, pkt->has_port ? pkt->dport : -1,
		    recent_name(s, pkt->family, pkt->dst), reason);
}

void sentry_handle_nflog(struct sentry *s)
{
	uint8_t buf[8192];
	for (;;) {
		ssize_t n = recv(s->nflog, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0) {
			/* ENOBUFS: the kernel dropped messages while we were busy */
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			return;
		}
		(void)nflog_parse_buffer(buf, (size_t)n, on_nflog_packet, s);
	}
}

