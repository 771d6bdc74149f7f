/* What the deny log is to say about the gateway's connections: a
 * credential's use, or a refusal. Sent to the sentry as one record each on
 * its hand-off socket, never waiting; the sentry writes the log. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl.h"
#include "gateway_proto.h"
#include "records.h"

static int record_fd = -1;        /* the sentry's socket: hand-offs in, records out */
static uint32_t records_dropped;  /* not sent: the sentry's socket was full */

static void send_log(struct gw_record *r, const char *host, const struct sockaddr_storage *dst)
{
	if (record_fd < 0)
		return;
	r->magic = GW_RECORD_MAGIC;
	r->dropped = records_dropped;
	snprintf(r->name, sizeof r->name, "%s", host);
	if (dst && dst->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)dst;
		r->family = AF_INET;
		memcpy(r->addr, &in->sin_addr, 4);
		r->port = ntohs(in->sin_port);
	} else if (dst && dst->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)dst;
		r->family = AF_INET6;
		memcpy(r->addr, &in6->sin6_addr, 16);
		r->port = ntohs(in6->sin6_port);
	}
	/* never waits: a busy sentry gets a count of what it missed instead */
	if (send(record_fd, r, sizeof *r, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof *r)
		records_dropped = 0;
	else
		records_dropped++;
}

void gw_log_use(const char *host, const struct sockaddr_storage *dst, const char *credential)
{
	struct gw_record r = {.event = GW_EVENT_USE};
	snprintf(r.credential, sizeof r.credential, "%s", credential);
	send_log(&r, host, dst);
}

void gw_log_deny(const char *host, const struct sockaddr_storage *dst, const char *reason, const char *detail)
{
	struct gw_record r = {.event = GW_EVENT_DENY};
	snprintf(r.reason, sizeof r.reason, "%s", reason);
	snprintf(r.detail, sizeof r.detail, "%s", detail ? detail : "");
	send_log(&r, host, dst);
}

void gw_records_to(int fd)
{
	record_fd = fd;
}

void gw_pair_log_use(struct gw_pair *p, size_t cred)
{
	/* once per connection and credential: the requests of a kept-alive
	 * connection are one record, not a flood */
	if (p->logged & (1ull << cred))
		return;
	p->logged |= 1ull << cred;
	gw_log_use(p->host, &p->dst, gw_cfg->creds[cred].name);
}
