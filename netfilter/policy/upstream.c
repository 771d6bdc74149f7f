/* The sentry's upstream resolvers: the nameserver lines of the container's
 * resolv.conf (Docker's embedded 127.0.0.11 included: it lives in the same
 * network namespace as the sentry). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
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

int egress_upstream_from_resolv_conf(const char *path, struct egress_upstream *ret, size_t *ret_n,
				     struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len, n = 0;
	int r = read_file_at(AT_FDCWD, path, RESOLV_CONF_MAX, &text, &len, err);
	if (r < 0)
		return ab_wrap(err, "upstream resolver");
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *words = line, *kw, *arg, *s2 = NULL;
		kw = strtok_r(words, " \t\r", &s2);
		if (!kw || kw[0] == '#' || kw[0] == ';' || strcmp(kw, "nameserver") != 0)
			continue;
		arg = strtok_r(NULL, " \t\r", &s2);
		if (!arg || n == EGRESS_MAX_UPSTREAMS)
			continue;
		/* glibc skips what it cannot parse; so do we */
		if (parse_nameserver(arg, &ret[n]) == 0)
			n++;
	}
	if (n == 0)
		return ab_error(err, 0, "upstream resolver: no usable nameserver line in %s", path);
	*ret_n = n;
	return 0;
}
