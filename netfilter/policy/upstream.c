/* The sentry's upstream resolvers: the nameserver lines of the container's
 * resolv.conf (Docker's embedded 127.0.0.11 included: it lives in the same
 * network namespace as the sentry), and where an engine's own resolver of
 * that file forwards, when the engine noted it there. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "upstream.h"
#include "util.h"

#define RESOLV_CONF_MAX (64 * 1024)

static int parse_nameserver(const char *s, struct egress_upstream *u)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	memset(u, 0, sizeof *u);
	u->port = 53;
	if (inet_pton(AF_INET, buf, u->addr) == 1) {
		u->family = AF_INET;
		return 0;
	}
	char *pct = strchr(buf, '%');   /* fe80::1%eth0 */
	if (pct) {
		*pct = 0;
		u->scope_id = if_nametoindex(pct + 1);
		if (u->scope_id == 0)
			u->scope_id = (uint32_t)strtoul(pct + 1, NULL, 10);
	}
	if (inet_pton(AF_INET6, buf, u->addr) == 1) {
		u->family = AF_INET6;
		return 0;
	}
	return -1;
}

bool egress_upstream_is_loopback(const struct egress_upstream *u)
{
	return u->family == AF_INET ? u->addr[0] == 127 : IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)u->addr);
}

/* "# ExtServers: [198.51.100.1 host(127.0.0.53) 2001:db8::1]" (Docker's note,
 * after the '#'): the servers it forwards to from the container's network
 * namespace. host(X) is asked from Docker's own namespace: its forwards never
 * pass the box, and it is left out. */
static bool parse_ext_servers(char *comment, struct egress_resolv *r)
{
	char *p = comment + strspn(comment, " \t");
	if (strncmp(p, "ExtServers:", 11) != 0)
		return false;
	p += 11;
	p += strspn(p, " \t");
	char *end = strchr(p, ']');
	if (*p != '[' || !end)
		return false;
	*end = 0;
	r->has_ext = true;
	r->n_ext = 0;
	char *save = NULL;
	for (char *w = strtok_r(p + 1, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strncmp(w, "host(", 5) == 0 || r->n_ext == EGRESS_MAX_UPSTREAMS)
			continue;
		if (parse_nameserver(w, &r->ext[r->n_ext]) == 0)
			r->n_ext++;
	}
	return true;
}

void egress_resolv_conf_parse(char *text, struct egress_resolv *r)
{
	memset(r, 0, sizeof *r);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' && parse_ext_servers(line + 1, r))
			continue;
		char *s2 = NULL;
		char *kw = strtok_r(line, " \t\r", &s2);
		if (!kw || kw[0] == '#' || kw[0] == ';' || strcmp(kw, "nameserver") != 0)
			continue;
		char *arg = strtok_r(NULL, " \t\r", &s2);
		if (!arg || r->n_ns == EGRESS_MAX_UPSTREAMS)
			continue;
		/* glibc skips what it cannot parse; so do we */
		if (parse_nameserver(arg, &r->ns[r->n_ns]) == 0)
			r->n_ns++;
	}
}

int egress_resolv_conf_read(const char *path, struct egress_resolv *r, char **ret_text, struct ab_err *err)
{
	char *text = NULL;
	size_t len;
	if (read_file_at(AT_FDCWD, path, RESOLV_CONF_MAX, &text, &len, err) < 0)
		return ab_wrap(err, "upstream resolver");
	char *copy = ret_text ? strdup(text) : NULL;
	if (ret_text && !copy) {
		free(text);
		return ab_error(err, ENOMEM, "upstream resolver: %s", path);
	}
	egress_resolv_conf_parse(text, r);
	free(text);
	if (ret_text)
		*ret_text = copy;
	return 0;
}

int egress_upstream_from_resolv_conf(const char *path, struct egress_upstream *ret, size_t *ret_n,
				     struct ab_err *err)
{
	struct egress_resolv r;
	if (egress_resolv_conf_read(path, &r, NULL, err) < 0)
		return -1;
	if (r.n_ns == 0)
		return ab_error(err, 0, "upstream resolver: no usable nameserver line in %s", path);
	memcpy(ret, r.ns, r.n_ns * sizeof *ret);
	*ret_n = r.n_ns;
	return 0;
}
