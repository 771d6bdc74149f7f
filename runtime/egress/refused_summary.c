/* kit run's closing words on what its box was refused (refused_summary.h).
 * The fixes are a kit run's: --allow and the kit's network lists, which is
 * where a user who reads this changes the policy. */
#include "refused_summary.h"
#include "egress.h"
#include "json.h"
#include "util.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* The fields of a record the summary reads (NULL when absent). */
struct record {
	const char *proto, *dst, *name, *reason, *detail;
	long long port;         /* -1: none */
};

static const char *str_field(yajl_val v, const char *key)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
}

/* What was refused: "name", "name -> address", "name:port", "address:port (name)". */
static void what_refused(const struct record *r, char *buf, size_t len)
{
	char dst[160] = "";
	if (r->dst && *r->dst)
		snprintf(dst, sizeof dst, r->port < 0 ? "%s" : strchr(r->dst, ':') ? "[%s]:%lld" : "%s:%lld", r->dst,
			 r->port);
	if (streq(r->proto, "dns"))
		snprintf(buf, len, "%s%s%s", r->name ? r->name : "?", *dst ? " -> " : "", dst);
	else if (r->name && !dst[0])    /* the proxy's, refused before any address */
		snprintf(buf, len, r->port < 0 ? "%s" : "%s:%lld", r->name, r->port);
	else if (r->name)
		snprintf(buf, len, "%s (%s)", dst[0] ? dst : "-", r->name);
	else
		snprintf(buf, len, "%s", dst[0] ? dst : "-");
}

/* The entry that would allow it: NAME:PORT, or the address and port. */
static void entry_for(const struct record *r, char *buf, size_t len)
{
	const char *host = r->name ? r->name : r->dst ? r->dst : "?";
	bool v6 = !r->name && strchr(host, ':');
	if (r->port >= 0)
		snprintf(buf, len, v6 ? "[%s]:%lld" : "%s:%lld", host, r->port);
	else
		snprintf(buf, len, "%s:PORT", host);
}

/* An internal address's range, as --egress-internal takes it. */
static void internal_range(const char *addr, char *range, size_t len, const char **what)
{
	uint8_t a[16];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	*what = NULL;
	if (inet_pton(family, addr, a) == 1)
		*what = egress_addr_special_range(family, a, range, len);
	if (!*what) {
		snprintf(range, len, "%s/%d", addr, family == AF_INET ? 32 : 128);
		*what = "the host's own";
	}
}

/* Why, and what would let it through. */
static void why_and_fix(const struct record *r, char *buf, size_t len)
{
	const char *reason = r->reason ? r->reason : "refused";
	char entry[300], range[64];
	bool tls = streq(r->proto, "tls") || streq(r->proto, "https");
	if (streq(reason, "not-allowed")) {
		entry_for(r, entry, sizeof entry);
		snprintf(buf, len, "not-allowed: %s; allow it with --allow %s or the kit's network.allow",
			 tls ? "its TLS name is not on the allowlist" : "not on the allowlist", entry);
	} else if (streq(reason, "denied")) {
		snprintf(buf, len, "denied: a deny entry matches (the kit's network.deny, --egress-deny or the "
			 "config's egress.deny)");
	} else if (streq(reason, "internal-address") && r->dst && *r->dst) {
		const char *what;
		internal_range(r->dst, range, sizeof range, &what);
		/* a name's answer, or a connection made by address (learn mode's
		 * filter, the box's HTTP proxy asked for an address literal) */
		snprintf(buf, len, "internal-address: %s an internal address [%s]; open %s with "
			 "--egress-internal %s or the kit's network.internal",
			 streq(r->proto, "dns") ? "the answer points to" : "its destination is", what, range, range);
	} else if (streq(reason, "loopback")) {
		snprintf(buf, len, "loopback: the box's HTTP proxy does not connect to the box itself; its own "
			 "addresses are reached directly (NO_PROXY)");
	} else if (streq(reason, "dns-bypass")) {
		snprintf(buf, len, "dns-bypass: DNS goes through the box's own resolver only (its /etc/resolv.conf)");
	} else if (streq(reason, "spoofed-source")) {
		snprintf(buf, len, "spoofed-source: a packet from an address that is not the box's");
	} else if (strncmp(reason, "upstream-", 9) == 0 && r->detail) {
		/* a server the gateway could not reach or verify: its detail is
		 * the gateway's own words, with what to do (upstream_ca) */
		snprintf(buf, len, "%s: %s", reason, r->detail);
	} else {
		snprintf(buf, len, "%s%s%s%s%s", reason, r->detail ? " (" : "", r->detail ? r->detail : "",
			 r->detail ? ")" : "", tls ? "; see NAMES ON THE WIRE in agentbox-egress(7)" : "");
	}
}

int egress_refused_line(const char *json_line, char *buf, size_t len)
{
	yajl_val v;
	struct ab_err e;
	if (json_parse(json_line, "egress log", &v, &e) < 0)
		return 0;
	/* a credential's use or a summary is no refusal; a record of repeats
	 * names one already shown */
	const char *verdict = str_field(v, "verdict");
	if (!verdict || !streq(verdict, "deny") || json_get(v, "repeats")) {
		json_free(v);
		return 0;
	}
	yajl_val port = json_get(v, "port");
	struct record r = {
		.proto = str_field(v, "proto") ? str_field(v, "proto") : "?",
		.dst = str_field(v, "dst"),
		.name = str_field(v, "name"),
		.reason = str_field(v, "reason"),
		.detail = str_field(v, "detail"),
		.port = YAJL_IS_INTEGER(port) ? YAJL_GET_INTEGER(port) : -1,
	};
	char what[400], why[600];
	what_refused(&r, what, sizeof what);
	why_and_fix(&r, why, sizeof why);
	snprintf(buf, len, "  %-4s %s  %s", r.proto, what, why);
	json_free(v);
	return 1;
}

void egress_refused_summary(FILE *out, const char *log_path, const char *id)
{
	/* the sentry has written its last records: run waited for it to exit */
	_cleanup_fclose_ FILE *f = fopen(log_path, "re");
	if (!f)
		return;
	char line[4096], shown[1100];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		if (!egress_refused_line(line, shown, sizeof shown))
			continue;
		if (n++ == 0)
			fprintf(out, "agentbox: egress refused for \"%s\" (agentbox-egress(7)):\n", id);
		fprintf(out, "%s\n", shown);
	}
}
