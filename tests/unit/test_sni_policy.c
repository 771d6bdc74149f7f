/* The SNI check's verdicts (netfilter/sentry/sni_proxy.c): which server names and
 * nameless connections a policy lets through on a TCP port, and when the
 * check (and its redirect) is needed at all. */
#include <arpa/inet.h>
#include <string.h>

#include "credential.h"
#include "sni_proxy.h"
#include "tap.h"

static struct egress_policy policy(const char *allow, const char *deny)
{
	struct egress_policy p = {0};
	struct ab_err err;
	if (egress_policy_add(&p, allow, false, "test", &err) < 0 || egress_policy_add(&p, deny, true, "test", &err) < 0)
		printf("# bad test policy: %s\n", err.msg);
	return p;
}

static bool addr_ok(const struct egress_policy *p, const char *text, uint16_t port)
{
	uint8_t a[16];
	int family = strchr(text, ':') ? AF_INET6 : AF_INET;
	return inet_pton(family, text, a) == 1 && sni_addr_allowed(p, family, a, port);
}

int main(void)
{
	struct egress_policy p = policy("api.test,*.cdn.test,web.test:443/tcp,dns.test:443/udp,other.test:8443,"
					"198.19.96.0/24,[2001:db8:1996::/48]:443",
					"bad.cdn.test,web.test:443/tcp,198.19.96.7");
	ok(sni_name_verdict(&p, "api.test", 443) == EGRESS_NAME_ALLOW, "a name allowed on every port: allowed on 443");
	ok(sni_name_verdict(&p, "a.cdn.test", 443) == EGRESS_NAME_ALLOW, "a wildcard covers a name below it");
	ok(sni_name_verdict(&p, "cdn.test", 443) == EGRESS_NAME_NONE, "... never its apex");
	ok(sni_name_verdict(&p, "bad.cdn.test", 443) == EGRESS_NAME_DENY, "a deny entry wins over a wildcard");
	ok(sni_name_verdict(&p, "web.test", 443) == EGRESS_NAME_DENY, "a deny entry on tcp/443 wins over the same allow");
	ok(sni_name_verdict(&p, "dns.test", 443) == EGRESS_NAME_NONE, "a name allowed on udp/443 only is not on tcp");
	ok(sni_name_verdict(&p, "other.test", 443) == EGRESS_NAME_NONE, "a name allowed on another port is not on 443");
	ok(sni_name_verdict(&p, "other.test", 8443) == EGRESS_NAME_ALLOW, "... but on its own");
	ok(sni_name_verdict(&p, "evil.test", 443) == EGRESS_NAME_NONE, "a name no entry covers");
	ok(sni_name_allowed(&p, "api.test", 443) && !sni_name_allowed(&p, "bad.cdn.test", 443), "sni_name_allowed agrees");

	ok(addr_ok(&p, "198.19.96.10", 443), "no name: an address a CIDR entry allows");
	ok(!addr_ok(&p, "198.19.96.7", 443), "... not one a deny entry names");
	ok(!addr_ok(&p, "198.19.97.10", 443), "... nor one outside every CIDR entry");
	ok(addr_ok(&p, "2001:db8:1996::10", 443) && !addr_ok(&p, "2001:db8:1996::10", 8443),
	   "an IPv6 CIDR entry with a port covers that port only");

	ok(sni_policy_needs_proxy(&p), "a policy that allows some TCP/443 needs the check");
	egress_policy_free(&p);
	p = policy("api.test:80,dns.test:443/udp,198.19.96.0/24:22", "");
	ok(!sni_policy_needs_proxy(&p), "one that allows only other ports and UDP/443 does not");
	egress_policy_free(&p);
	p = policy("", "");
	ok(!sni_policy_needs_proxy(&p), "nor does the default policy");
	egress_policy_free(&p);
	p = policy("198.19.96.0/24", "");
	ok(sni_policy_needs_proxy(&p), "a CIDR entry for every port does");
	egress_policy_free(&p);

	/* a header credential's hosts: reachable on TCP/443 at all? */
	p = policy("api.test,web.test:80,*.cdn.test,one.svc.test,*.deep.zone.test,*.wide.test,198.19.96.0/24",
		   "bad.cdn.test,*.wide.test");
	static const struct { const char *host; bool ok; const char *why; } hosts[] = {
		{"api.test", true, "a name allowed"},
		{"web.test", false, "a name allowed on port 80 only"},
		{"evil.test", false, "a name no entry covers (a CIDR entry is no name)"},
		{"bad.cdn.test", false, "a name a deny entry takes back"},
		{"*.cdn.test", true, "a wildcard allowed as it is"},
		{"*.a.cdn.test", true, "a wildcard inside an allowed one"},
		{"*.svc.test", true, "a wildcard one of whose names is allowed"},
		{"*.zone.test", true, "a wildcard with a narrower one allowed inside"},
		{"*.wide.test", false, "a wildcard allowed and denied whole"},
		{"*.none.test", false, "a wildcard nothing covers"},
	};
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
		struct egress_entry e;
		struct ab_err err;
		bool parsed = cred_host_parse(hosts[i].host, "test", &e, &err) == 0;
		ok(parsed && sni_cred_host_reachable(&p, &e) == hosts[i].ok, "credential host %s: %s", hosts[i].host,
		   hosts[i].why);
		if (parsed)
			free(e.name);
	}
	egress_policy_free(&p);

	/* learn mode: every TLS connection is checked (and its name recorded),
	 * open but for what a deny entry refuses */
	p = policy("", "bad.test,*.ads.test:443,198.51.100.0/24");
	ok(!sni_policy_needs_proxy(&p), "no allow entry: no check");
	p.learn = true;
	ok(sni_policy_needs_proxy(&p), "learning: the check runs");
	ok(sni_name_allowed(&p, "any.test", 443), "learning: an unnamed name passes");
	ok(sni_name_verdict(&p, "bad.test", 443) == EGRESS_NAME_DENY, "learning: a denied name is refused");
	ok(sni_name_verdict(&p, "x.ads.test", 443) == EGRESS_NAME_DENY, "learning: a denied wildcard on its port");
	ok(sni_name_allowed(&p, "x.ads.test", 8443), "learning: ... not on another");
	ok(addr_ok(&p, "192.0.2.1", 443) == false && addr_ok(&p, "8.8.4.4", 443),
	   "learning: a nameless connection passes, but not to a special-purpose range");
	ok(!addr_ok(&p, "198.51.100.9", 443), "learning: not to a denied range");
	/* the box's HTTP proxy judges an address literal by this verdict: the
	 * ranges learn mode's filter keeps closed are closed to it too */
	uint8_t a[16];
	inet_pton(AF_INET, "10.1.2.3", a);
	ok(sni_addr_verdict(&p, AF_INET, a, 8080) == EGRESS_NAME_NONE, "learning: a private address is not opened");
	inet_pton(AF_INET6, "::ffff:169.254.169.254", a);
	ok(sni_addr_verdict(&p, AF_INET6, a, 80) == EGRESS_NAME_NONE, "learning: nor metadata as IPv4-mapped IPv6");
	inet_pton(AF_INET, "8.8.4.4", a);
	ok(sni_addr_verdict(&p, AF_INET, a, 22) == EGRESS_NAME_ALLOW, "learning: a public address on any port is");
	inet_pton(AF_INET, "198.51.100.9", a);
	ok(sni_addr_verdict(&p, AF_INET, a, 22) == EGRESS_NAME_DENY, "learning: a denied one is DENY");
	struct ab_err err;
	egress_policy_add_internal(&p, "10.0.0.0/8", "test", &err);
	egress_policy_add(&p, "192.168.7.0/24:8080", false, "test", &err);
	inet_pton(AF_INET, "10.1.2.3", a);
	ok(sni_addr_verdict(&p, AF_INET, a, 8080) == EGRESS_NAME_ALLOW, "learning: a range opened as internal is open");
	inet_pton(AF_INET, "192.168.7.9", a);
	ok(sni_addr_verdict(&p, AF_INET, a, 8080) == EGRESS_NAME_ALLOW &&
		   sni_addr_verdict(&p, AF_INET, a, 8081) == EGRESS_NAME_NONE,
	   "learning: a private range a CIDR entry allows on a port: that port only");
	/* a credential host below a wildcard is reachable while learning */
	struct egress_entry h;
	ok(cred_host_parse("*.any.test", "test", &h, &err) == 0 && sni_cred_host_reachable(&p, &h),
	   "learning: a wildcard credential host is reachable");
	free(h.name);
	ok(cred_host_parse("*.ads.test", "test", &h, &err) == 0 && !sni_cred_host_reachable(&p, &h),
	   "learning: ... not one a deny wildcard takes back whole");
	free(h.name);
	egress_policy_free(&p);
	return tap_done();
}
