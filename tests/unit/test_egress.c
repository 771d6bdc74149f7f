/* Egress policy: entry parsing (every valid shape, invalid entries with their
 * exact errors), wildcard matching, name verdicts, canonical text. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "egress.h"
#include "tap.h"
#include "upstream.h"
#include "util.h"

#define SRC "annotation agentbox.egress.allow"

/* Parse one list into a fresh policy and return its canonical allow list. */
static const char *canon(const char *list)
{
	static char out[4096];
	struct egress_policy p = {0};
	struct ab_err err = {0};
	if (egress_policy_add(&p, list, false, SRC, &err) < 0) {
		snprintf(out, sizeof out, "ERROR %s", err.msg);
		return out;
	}
	char *s = egress_policy_to_string(&p);
	snprintf(out, sizeof out, "%s", s);
	free(s);
	egress_policy_free(&p);
	return out;
}

static const char *error_of(const char *list)
{
	static char out[4096];
	struct egress_policy p = {0};
	struct ab_err err = {0};
	if (egress_policy_add(&p, list, false, SRC, &err) == 0) {
		snprintf(out, sizeof out, "(accepted)");
		egress_policy_free(&p);
		return out;
	}
	snprintf(out, sizeof out, "%s", err.msg);
	egress_policy_free(&p);
	return out;
}

static void valid_shapes(void)
{
	is_str(canon("example.com"), "allow=example.com;deny=", "plain name");
	is_str(canon("Example.COM."), "allow=example.com;deny=", "name lowercased, final dot dropped");
	is_str(canon("example.com:443"), "allow=example.com:443;deny=", "name:port");
	is_str(canon("example.com/tcp"), "allow=example.com/tcp;deny=", "name/proto");
	is_str(canon("example.com:53/UDP"), "allow=example.com:53/udp;deny=", "name:port/proto");
	is_str(canon("*.example.com"), "allow=*.example.com;deny=", "wildcard");
	is_str(canon("*.example.com:443/tcp"), "allow=*.example.com:443/tcp;deny=", "wildcard:port/proto");
	is_str(canon("_dmarc.xn--bcher-kva.example"), "allow=_dmarc.xn--bcher-kva.example;deny=", "underscore and punycode");
	is_str(canon("localhost"), "allow=localhost;deny=", "single label");
	is_str(canon("198.51.100.0/24"), "allow=198.51.100.0/24;deny=", "IPv4 CIDR");
	is_str(canon("198.51.100.7"), "allow=198.51.100.7;deny=", "IPv4 host");
	is_str(canon("198.51.100.7/32"), "allow=198.51.100.7;deny=", "/32 is the host");
	is_str(canon("198.51.100.7:5432"), "allow=198.51.100.7:5432;deny=", "IPv4 host:port");
	is_str(canon("198.51.100.0/24:443/tcp"), "allow=198.51.100.0/24:443/tcp;deny=", "IPv4 CIDR:port/proto");
	is_str(canon("198.51.100.0/24/udp"), "allow=198.51.100.0/24/udp;deny=", "CIDR slash then proto slash");
	is_str(canon("0.0.0.0/0"), "allow=0.0.0.0/0;deny=", "everything IPv4");
	is_str(canon("[2001:db8::1]:22"), "allow=[2001:db8::1]:22;deny=", "IPv6 host:port");
	is_str(canon("[2001:DB8:0:0::1]"), "allow=2001:db8::1;deny=", "bracketed IPv6, normalized");
	is_str(canon("2001:db8::1"), "allow=2001:db8::1;deny=", "bare IPv6 host");
	is_str(canon("2001:db8::/48"), "allow=2001:db8::/48;deny=", "IPv6 CIDR");
	is_str(canon("2001:db8::/48/udp"), "allow=2001:db8::/48/udp;deny=", "IPv6 CIDR/proto");
	is_str(canon("[2001:db8::/48]:443/tcp"), "allow=[2001:db8::/48]:443/tcp;deny=", "IPv6 CIDR:port/proto");
	is_str(canon(" a.test , b.test:80 ,\tc.test "), "allow=a.test,b.test:80,c.test;deny=", "spaces around entries");
	is_str(canon("a.test,A.TEST,a.test."), "allow=a.test;deny=", "duplicates dropped");
	is_str(canon(""), "allow=;deny=", "empty list");
	is_str(canon("  "), "allow=;deny=", "blank list");

	struct egress_policy p = {0};
	struct ab_err err = {0};
	ok(egress_policy_add(&p, "[2001:db8::1]:22/tcp", false, SRC, &err) == 0, "parse for fields");
	const struct egress_entry *e = &p.allow.v[0];
	struct in6_addr want;
	inet_pton(AF_INET6, "2001:db8::1", &want);
	ok(e->kind == EGRESS_CIDR6 && e->prefix == 128 && e->port == 22 && e->proto == IPPROTO_TCP &&
		   memcmp(e->addr, &want, 16) == 0,
	   "fields of [2001:db8::1]:22/tcp");
	egress_policy_free(&p);
}

static void invalid_entries(void)
{
	static const struct {
		const char *in, *err;
	} cases[] = {
		{ "foo:70000", SRC ": entry \"foo:70000\": port 70000 out of range" },
		{ "foo:0", SRC ": entry \"foo:0\": port 0 out of range" },
		{ "foo:99999999999999999999", SRC ": entry \"foo:99999999999999999999\": port 99999999999999999999 out of range" },
		{ "foo:", SRC ": entry \"foo:\": missing port after \":\"" },
		{ "foo:http", SRC ": entry \"foo:http\": port \"http\" is not a number" },
		{ "foo:-1", SRC ": entry \"foo:-1\": port \"-1\" is not a number" },
		{ "foo..com", SRC ": entry \"foo..com\": empty label" },
		{ ".foo.com", SRC ": entry \".foo.com\": empty label" },
		{ "foo.com/sctp", SRC ": entry \"foo.com/sctp\": unknown protocol \"sctp\" (expected /tcp or /udp; an entry has no URL path)" },
		{ "pypi.org/simple", SRC ": entry \"pypi.org/simple\": unknown protocol \"simple\" (expected /tcp or /udp; an entry has no URL path)" },
		/* URLs, the commonest first mistake: the entry they should be */
		{ "https://pypi.org", SRC ": entry \"https://pypi.org\": an entry is a host name or address, not a URL: write pypi.org:443" },
		{ "http://example.com/", SRC ": entry \"http://example.com/\": an entry is a host name or address, not a URL: write example.com:80" },
		{ "HTTPS://u:p@GitHub.com:8443/org/repo?x", SRC ": entry \"HTTPS://u:p@GitHub.com:8443/org/repo?x\": an entry is a host name or address, not a URL: write github.com:8443 (the firewall allows hosts and ports, not paths)" },
		{ "http://[2001:db8::1]/", SRC ": entry \"http://[2001:db8::1]/\": an entry is a host name or address, not a URL: write [2001:db8::1]:80" },
		{ "ssh://git@github.com/org/repo.git", SRC ": entry \"ssh://git@github.com/org/repo.git\": an entry is a host name or address, not a URL: write github.com:22 (the firewall allows hosts and ports, not paths)" },
		{ "s3://bucket.example", SRC ": entry \"s3://bucket.example\": an entry is a host name or address, not a URL: write bucket.example (any port; :PORT after it for one)" },
		{ "https://", SRC ": entry \"https://\": an entry is a host name or address, not a URL" },
		{ "198.51.100.0/x", SRC ": entry \"198.51.100.0/x\": unknown protocol \"x\" (expected /tcp or /udp)" },
		{ "198.51.100.7/24", SRC ": entry \"198.51.100.7/24\": address has bits set beyond the /24 prefix (network is 198.51.100.0/24)" },
		{ "198.51.100.0/33", SRC ": entry \"198.51.100.0/33\": prefix length 33 out of range for IPv4 (0-32)" },
		{ "198.51.100.0/", SRC ": entry \"198.51.100.0/\": missing prefix length after \"/\"" },
		{ "300.1.2.3", SRC ": entry \"300.1.2.3\": invalid IPv4 address \"300.1.2.3\"" },
		{ "1.2.3", SRC ": entry \"1.2.3\": invalid IPv4 address \"1.2.3\"" },
		{ "2001:db8::g", SRC ": entry \"2001:db8::g\": invalid IPv6 address \"2001:db8::g\"" },
		{ "2001:db8::/129", SRC ": entry \"2001:db8::/129\": prefix length 129 out of range for IPv6 (0-128)" },
		{ "[2001:db8::1", SRC ": entry \"[2001:db8::1\": missing \"]\"" },
		{ "[2001:db8::1]x", SRC ": entry \"[2001:db8::1]x\": unexpected \"x\" after \"]\"" },
		{ "[2001:db8::1]:99999", SRC ": entry \"[2001:db8::1]:99999\": port 99999 out of range" },
		{ "[example.com]:22", SRC ": entry \"[example.com]:22\": invalid IPv6 address \"example.com\"" },
		{ "foo.*.com", SRC ": entry \"foo.*.com\": \"*\" is only allowed as the whole first label (\"*.example.com\")" },
		{ "*example.com", SRC ": entry \"*example.com\": a wildcard needs a domain after \"*.\" (\"*.example.com\")" },
		{ "*", SRC ": entry \"*\": a wildcard needs a domain after \"*.\" (\"*.example.com\")" },
		{ "*.", SRC ": entry \"*.\": a wildcard needs a domain after \"*.\" (\"*.example.com\")" },
		{ "-foo.com", SRC ": entry \"-foo.com\": label \"-foo\" starts or ends with \"-\"" },
		{ "foo-.com", SRC ": entry \"foo-.com\": label \"foo-\" starts or ends with \"-\"" },
		{ "foo!.com", SRC ": entry \"foo!.com\": invalid character '!' in name" },
		{ "ex\xc3\xa4mple.com", SRC ": entry \"ex??mple.com\": invalid byte 0xc3 in name" },
		{ "example.com/24", SRC ": entry \"example.com/24\": a prefix length needs an IP address, not a name" },
		{ "/tcp", SRC ": entry \"/tcp\": missing host before the protocol" },
		{ ":80", SRC ": entry \":80\": missing host before \":\"" },
		{ "a.test,,b.test", SRC ": entry 2 is empty" },
		{ "a.test,", SRC ": entry 2 is empty" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		is_str(error_of(cases[i].in), cases[i].err, "invalid: %s", cases[i].in);

	char label[80], name[300];
	memset(label, 'a', 64);
	strcpy(label + 64, ".com");
	is_str(error_of(label), SRC ": entry \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com\": label longer than 63 characters",
	       "64-character label");
	name[0] = 0;
	for (int i = 0; i < 5; i++)
		strcat(name, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."); /* 5 x 51 = 255 */
	strcat(name, "com");
	has_substr(error_of(name), "name longer than 253 characters", "258-character name");

	/* all or nothing */
	struct egress_policy p = {0};
	struct ab_err err = {0};
	ok(egress_policy_add(&p, "a.test", false, SRC, &err) == 0, "first list");
	ok(egress_policy_add(&p, "b.test,c.test:0", false, SRC, &err) < 0, "second list fails");
	ok(p.allow.n == 1, "a failing list adds nothing");
	egress_policy_free(&p);
}

static void matching(void)
{
	struct egress_policy p = {0};
	struct ab_err err = {0};
	ok(egress_policy_add(&p, "*.example.com,exact.test,198.51.100.0/24", false, "allow", &err) == 0, "allow list");
	ok(egress_policy_add(&p, "*.ads.example.com,ssh.example.com:22", true, "deny", &err) == 0, "deny list");
	const struct egress_entry *wild = &p.allow.v[0], *exact = &p.allow.v[1];

	ok(egress_entry_matches_name(wild, "a.example.com"), "wildcard: one label");
	ok(egress_entry_matches_name(wild, "a.b.c.example.com"), "wildcard: many labels");
	ok(!egress_entry_matches_name(wild, "example.com"), "wildcard: not the apex");
	ok(!egress_entry_matches_name(wild, "badexample.com"), "wildcard: not a longer label");
	ok(!egress_entry_matches_name(wild, "a.example.com.evil"), "wildcard: suffix only");
	ok(!egress_entry_matches_name(wild, ".example.com"), "wildcard: not an empty label");
	ok(egress_entry_matches_name(exact, "exact.test"), "name: itself");
	ok(!egress_entry_matches_name(exact, "www.exact.test"), "name: not a subdomain");
	ok(!egress_entry_matches_name(&p.allow.v[2], "198.51.100.1"), "CIDR entries match no name");

	ok(egress_policy_check_name(&p, "www.example.com") == EGRESS_NAME_ALLOW, "allowed by wildcard");
	ok(egress_policy_check_name(&p, "x.ads.example.com") == EGRESS_NAME_DENY, "deny wins over allow");
	ok(egress_policy_check_name(&p, "ads.example.com") == EGRESS_NAME_ALLOW, "deny wildcard spares its apex");
	ok(egress_policy_check_name(&p, "ssh.example.com") == EGRESS_NAME_ALLOW,
	   "a deny with a port still resolves (the port is dropped by the ruleset)");
	ok(egress_policy_check_name(&p, "example.com") == EGRESS_NAME_NONE, "apex not allowed");
	ok(egress_policy_check_name(&p, "other.test") == EGRESS_NAME_NONE, "unknown name");

	ok(egress_policy_has_domains(&p), "has domains");
	ok(!egress_policy_is_empty(&p), "not empty");
	char *s = egress_policy_to_string(&p);
	is_str(s, "allow=*.example.com,exact.test,198.51.100.0/24;deny=*.ads.example.com,ssh.example.com:22", "to_string");
	free(s);
	egress_policy_free(&p);

	struct egress_policy q = {0};
	ok(egress_policy_is_empty(&q), "empty policy");
	ok(egress_policy_add(&q, "198.51.100.7", false, "allow", &err) == 0 && !egress_policy_has_domains(&q),
	   "CIDR only: no domains");
	egress_policy_free(&q);
}

/* special(FAMILY, TEXT): what egress_addr_special says of an address */
static const char *special(const char *text)
{
	uint8_t a[16] = {0};
	int fam = strchr(text, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(fam, text, a) != 1)
		return "BAD ADDRESS";
	const char *what = egress_addr_special(fam, a);
	return what ? what : "-";
}

static void internal_ranges(void)
{
	/* IANA's special-purpose registries: what is not globally reachable */
	is_str(special("127.0.0.53"), "loopback", "127/8");
	is_str(special("169.254.169.254"), "link-local (cloud metadata)", "the metadata service");
	is_str(special("10.0.0.1"), "private", "10/8");
	is_str(special("172.31.255.255"), "private", "172.16/12, last address");
	is_str(special("172.32.0.1"), "-", "just past 172.16/12");
	is_str(special("192.168.1.1"), "private", "192.168/16");
	is_str(special("100.64.0.1"), "shared address space (CGNAT)", "100.64/10");
	is_str(special("100.128.0.1"), "-", "just past 100.64/10");
	is_str(special("0.0.0.0"), "this network", "0/8");
	is_str(special("198.18.42.10"), "benchmarking", "198.18/15 (the tests' range)");
	is_str(special("198.19.255.255"), "benchmarking", "198.18/15, last address");
	is_str(special("192.0.2.1"), "documentation", "TEST-NET-1");
	is_str(special("224.0.0.251"), "multicast", "multicast");
	is_str(special("255.255.255.255"), "reserved", "broadcast");
	is_str(special("192.0.0.9"), "-", "PCP anycast is globally reachable");
	is_str(special("192.0.0.8"), "IETF protocol assignments", "its neighbour is not");
	is_str(special("8.8.8.8"), "-", "a public address");
	is_str(special("::1"), "loopback", "::1");
	is_str(special("::"), "unspecified", "::");
	is_str(special("fe80::1"), "link-local", "fe80::/10");
	is_str(special("fd00::1"), "unique local", "fc00::/7");
	is_str(special("ff02::1"), "multicast", "ff00::/8");
	is_str(special("2001:db8::1"), "documentation", "2001:db8::/32");
	is_str(special("2001:4:112::1"), "-", "AS112 is globally reachable");
	is_str(special("2001:2::1"), "IETF protocol assignments", "benchmarking, inside 2001::/23");
	is_str(special("::ffff:127.0.0.1"), "loopback", "IPv4-mapped: the IPv4 address decides");
	is_str(special("::ffff:8.8.8.8"), "-", "IPv4-mapped public");
	is_str(special("64:ff9b::a9fe:a9fe"), "link-local (cloud metadata)", "NAT64 of the metadata service");
	is_str(special("2002:c0a8:0101::1"), "private", "6to4 of 192.168.1.1");
	is_str(special("2606:4700::1111"), "-", "a public IPv6 address");

	/* what opens a range: an internal entry, or a CIDR allow entry with no port */
	struct egress_policy p = {0};
	struct ab_err err = {0};
	ok(egress_policy_add(&p, "example.com,10.1.0.0/16,192.168.0.0/16:443", false, "allow", &err) == 0, "allow");
	ok(egress_policy_add_internal(&p, "172.16.0.0/12,fd00::/8", "internal", &err) == 0, "internal");
	uint8_t a[16];
	inet_pton(AF_INET, "10.1.2.3", a);
	ok(egress_addr_opened(&p, AF_INET, a), "a CIDR allow entry opens its range");
	inet_pton(AF_INET, "10.2.0.1", a);
	ok(!egress_addr_opened(&p, AF_INET, a), "not beyond it");
	inet_pton(AF_INET, "192.168.1.1", a);
	ok(!egress_addr_opened(&p, AF_INET, a), "an allow entry for one port does not");
	inet_pton(AF_INET, "172.20.0.1", a);
	ok(egress_addr_opened(&p, AF_INET, a), "an internal entry does");
	inet_pton(AF_INET6, "fd12::1", a);
	ok(egress_addr_opened(&p, AF_INET6, a), "IPv6 internal entry");
	char *s = egress_policy_to_string(&p);
	is_str(s, "allow=example.com,10.1.0.0/16,192.168.0.0/16:443;deny=;internal=172.16.0.0/12,fd00::/8",
	       "the text carries the internal list");
	struct egress_policy q = {0};
	ok(egress_policy_from_string(s, "text", &q, &err) == 0, "and reads back");
	char *t = egress_policy_to_string(&q);
	is_str(t, s, "to the same text");
	free(t);
	free(s);
	egress_policy_free(&q);
	ok(egress_policy_from_string("allow=a.test;deny=b.test", "old", &q, &err) == 0 && q.internal.n == 0,
	   "a text without an internal part (older states) reads");
	egress_policy_free(&q);

	/* only ranges, whole */
	is_str(egress_policy_add_internal(&p, "example.com", "--egress-internal", &err) < 0 ? err.msg : "(accepted)",
	       "--egress-internal: entry \"example.com\": an internal entry is an address range with no port or protocol (10.0.0.0/8, fd00::/8)",
	       "a name is refused");
	ok(egress_policy_add_internal(&p, "10.0.0.0/8:443", "x", &err) < 0, "a port is refused");
	ok(egress_policy_add_internal(&p, "10.0.0.0/8/tcp", "x", &err) < 0, "a protocol is refused");

	/* a joiner that opens more ranges is wider than the owner */
	struct egress_policy owner = {0}, mine = {0};
	char what[EGRESS_ENTRY_TEXT];
	bool missing_deny;
	egress_policy_add(&owner, "a.test", false, "o", &err);
	egress_policy_add(&mine, "a.test", false, "m", &err);
	egress_policy_add_internal(&mine, "10.0.0.0/8", "m", &err);
	ok(egress_policy_wider(&mine, &owner, what, sizeof what, &missing_deny), "an internal range the owner lacks");
	is_str(what, "internal 10.0.0.0/8", "named");
	egress_policy_add_internal(&owner, "10.0.0.0/8", "o", &err);
	ok(!egress_policy_wider(&mine, &owner, what, sizeof what, &missing_deny), "the same range: not wider");
	egress_policy_free(&owner);
	egress_policy_free(&mine);
	egress_policy_free(&p);
}

/* Reasons on deny entries: set by any spelling of the entry, all or nothing,
 * left out of the canonical text; found for a name and for an address. */
static void reasons(void)
{
	struct egress_policy p = {0};
	struct ab_err err = {0};
	ok(egress_policy_add(&p, "allowed.test", false, SRC, &err) == 0 &&
		   egress_policy_add(&p, "pypi.org,*.ads.test,198.51.100.0/24,evil.test:22/tcp", true, SRC, &err) == 0,
	   "a policy with deny entries");
	char *before = egress_policy_to_string(&p);
	ok(egress_policy_set_reasons(&p, "PYPI.org.=use the mirror\n*.ads.test=no ads\n198.51.100.0/24=lab\n", "r", &err) == 0,
	   "reasons set (any spelling of an entry)");
	char *after = egress_policy_to_string(&p);
	is_str(after, before, "reasons leave the canonical text alone");
	free(before);
	free(after);
	is_str(egress_deny_reason(&p, "pypi.org", 0, NULL, 0, -1), "use the mirror", "a denied name's reason");
	is_str(egress_deny_reason(&p, "x.ads.test", 0, NULL, 0, -1), "no ads", "a wildcard's reason");
	ok(egress_deny_reason(&p, "allowed.test", 0, NULL, 0, -1) == NULL, "an allowed name has none");
	uint8_t a[16] = {198, 51, 100, 9};
	is_str(egress_deny_reason(&p, NULL, AF_INET, a, IPPROTO_TCP, 443), "lab", "an address in a denied range");
	a[2] = 101;
	ok(egress_deny_reason(&p, NULL, AF_INET, a, IPPROTO_TCP, 443) == NULL, "an address outside it has none");
	ok(egress_policy_set_reasons(&p, "pypi.org=new\nallowed.test=x\n", "r", &err) < 0 &&
		   strstr(err.msg, "r: entry \"allowed.test\" is not a deny entry of the policy") != NULL,
	   "a reason for an allow entry is refused");
	is_str(egress_deny_reason(&p, "pypi.org", 0, NULL, 0, -1), "use the mirror", "all or nothing: the first line not set");
	ok(egress_policy_set_reasons(&p, "pypi.org=a\tb", "r", &err) < 0 && strstr(err.msg, "without control characters"),
	   "a control character is refused");
	ok(egress_policy_set_reasons(&p, "pypi.org", "r", &err) < 0 && strstr(err.msg, "r: line 1: expected ENTRY=REASON"),
	   "a line without = is refused");
	ok(egress_policy_set_reasons(&p, "\n\nevil.test:22/tcp=ssh\n", "r", &err) == 0 &&
		   egress_deny_reason(&p, "evil.test", AF_INET, a, IPPROTO_TCP, 22) != NULL &&
		   egress_deny_reason(&p, "evil.test", 0, NULL, 0, -1) == NULL,
	   "a port entry's reason: for its port, not for the name's lookup");
	egress_policy_free(&p);
}

/* One upstream as text: "ADDR" (port 53 left out). */
static const char *up_text(const struct egress_upstream *u)
{
	static char out[INET6_ADDRSTRLEN + 16];
	inet_ntop(u->family, u->addr, out, sizeof out);
	if (u->port != 53)
		snprintf(out + strlen(out), sizeof out - strlen(out), ":%u", u->port);
	return out;
}

static const char *ups_text(const struct egress_upstream *u, size_t n)
{
	static char out[256];
	out[0] = 0;
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", up_text(&u[i]));
	return out;
}

/* resolv.conf: nameserver lines, and Docker's note of where its embedded
 * resolver forwards */
static void resolv_conf(void)
{
	struct egress_resolv r;
	char a[] = "# a comment\n; nameserver 198.51.100.8\nsearch x.test\nnameserver 198.51.100.1\n"
		   "nameserver bad\nnameserver\t2001:db8::53\nnameserver 198.51.100.2\nnameserver 198.51.100.3\n";
	egress_resolv_conf_parse(a, &r);
	is_str(ups_text(r.ns, r.n_ns), "198.51.100.1 2001:db8::53 198.51.100.2",
	       "nameserver lines: the first three that read as addresses, comments left out");
	ok(!r.has_ext && r.n_ext == 0, "no ExtServers note: nothing said about forwards");

	/* Docker 25 and later: the embedded resolver's servers in a comment */
	char b[] = "nameserver 127.0.0.11\noptions ndots:0\n\n"
		   "# Based on host file: '/etc/resolv.conf' (internal resolver)\n"
		   "# ExtServers: [host(127.0.0.53) 198.51.100.7 2001:db8::7 host(::1)]\n# Overrides: []\n";
	egress_resolv_conf_parse(b, &r);
	is_str(ups_text(r.ns, r.n_ns), "127.0.0.11", "Docker's file: its resolver");
	ok(r.has_ext, "Docker's file: the ExtServers note read");
	is_str(ups_text(r.ext, r.n_ext), "198.51.100.7 2001:db8::7",
	       "ExtServers: the ones asked from the container, not host(...)");

	char c[] = "nameserver 127.0.0.11\n# ExtServers: [host(127.0.0.53)]\n";
	egress_resolv_conf_parse(c, &r);
	ok(r.has_ext && r.n_ext == 0, "ExtServers of host(...) only: known, and nothing forwarded from the box");

	char d[] = "nameserver 127.0.0.11\n# ExtServers: 198.51.100.7\n#ExtServers: [198.51.100.8\n";
	egress_resolv_conf_parse(d, &r);
	ok(!r.has_ext, "an ExtServers note without its brackets is not one");

	char e[] = "nameserver 127.0.0.11\n#ExtServers:[198.51.100.1 198.51.100.2 198.51.100.3 198.51.100.4 x]\n";
	egress_resolv_conf_parse(e, &r);
	is_str(ups_text(r.ext, r.n_ext), "198.51.100.1 198.51.100.2 198.51.100.3", "ExtServers: three at most");

	struct egress_upstream lo = { .family = AF_INET, .addr = { 127, 0, 0, 11 } };
	struct egress_upstream lo6 = { .family = AF_INET6, .addr = { [15] = 1 } };
	struct egress_upstream out = { .family = AF_INET, .addr = { 198, 51, 100, 1 } };
	ok(egress_upstream_is_loopback(&lo) && egress_upstream_is_loopback(&lo6) && !egress_upstream_is_loopback(&out),
	   "loopback: 127.0.0.0/8 and ::1");
}

/* Learn mode: open for any name no deny entry refuses, carried in the
 * canonical text, and wider than any policy that does not learn. */
static void learn_mode(void)
{
	struct egress_policy p = {0};
	struct ab_err err = {0};
	ok(egress_policy_add(&p, "web.test:443", false, SRC, &err) == 0 &&
		   egress_policy_add(&p, "bad.test,*.ads.test", true, SRC, &err) == 0 &&
		   egress_policy_add_internal(&p, "10.0.0.0/8", SRC, &err) == 0,
	   "a policy");
	ok(egress_policy_check_name(&p, "other.test") == EGRESS_NAME_NONE, "enforcing: an unnamed name is refused");
	ok(!egress_policy_allows_names(&(struct egress_policy){0}), "an empty policy allows no name");
	p.learn = true;
	ok(egress_policy_check_name(&p, "other.test") == EGRESS_NAME_ALLOW, "learning: an unnamed name resolves");
	ok(egress_policy_check_name(&p, "bad.test") == EGRESS_NAME_DENY, "learning: a deny entry still refuses");
	ok(egress_policy_check_name(&p, "x.ads.test") == EGRESS_NAME_DENY, "learning: a deny wildcard too");
	struct egress_policy empty = {.learn = true};
	ok(egress_policy_allows_names(&empty), "learning with no entry: names are forwarded");
	char *s = egress_policy_to_string(&p);
	is_str(s, "allow=web.test:443;deny=bad.test,*.ads.test;internal=10.0.0.0/8;mode=learn", "the text says learn");
	struct egress_policy q = {0};
	ok(egress_policy_from_string(s, "text", &q, &err) == 0 && q.learn && q.internal.n == 1 && q.deny.n == 2,
	   "and reads back");
	char *t = egress_policy_to_string(&q);
	is_str(t, s, "to the same text");
	free(t);
	free(s);
	egress_policy_free(&q);
	ok(egress_policy_from_string("allow=;deny=;mode=learn", "text", &q, &err) == 0 && q.learn && q.allow.n == 0 &&
		   q.deny.n == 0,
	   "learning with no entry reads back");
	egress_policy_free(&q);
	ok(egress_policy_from_string("allow=a.test;deny=b.test", "text", &q, &err) == 0 && !q.learn,
	   "a text without a mode enforces");
	egress_policy_free(&q);
	ok(egress_policy_from_string("allow=a.test;deny=;mode=open", "text", &q, &err) < 0,
	   "an unknown mode is no entry: refused");

	/* the ranges learn mode's filter keeps closed, and the exceptions in them */
	struct egress_entry r[128];
	size_t n4 = egress_special_ranges(AF_INET, false, r, 128);
	char text[EGRESS_ENTRY_TEXT];
	bool has10 = false, has_meta = false;
	for (size_t i = 0; i < n4 && i < 128; i++) {
		egress_entry_to_string(&r[i], text, sizeof text);
		has10 |= streq(text, "10.0.0.0/8");
		has_meta |= streq(text, "169.254.0.0/16");
	}
	ok(n4 >= 15 && has10 && has_meta, "IPv4: private and link-local (metadata) among %zu ranges", n4);
	size_t n6 = egress_special_ranges(AF_INET6, false, r, 128);
	bool mapped = false, nat64 = false, sixtofour = false, ula = false;
	for (size_t i = 0; i < n6 && i < 128; i++) {
		egress_entry_to_string(&r[i], text, sizeof text);
		mapped |= streq(text, "::ffff:10.0.0.0/104");
		nat64 |= streq(text, "64:ff9b::a9fe:0/112");
		sixtofour |= streq(text, "2002:7f00::/24");
		ula |= streq(text, "fc00::/7");
	}
	ok(ula && mapped && nat64 && sixtofour, "IPv6: its own ranges, and IPv4's as IPv6 carries them (%zu)", n6);
	ok(egress_special_ranges(AF_INET, false, NULL, 0) == n4, "counted without room");
	n4 = egress_special_ranges(AF_INET, true, r, 128);
	ok(n4 == 2 && streq(egress_entry_to_string(&r[0], text, sizeof text), "192.0.0.9"), "the exceptions");

	/* a learning joiner reaches what an enforcing owner refuses */
	struct egress_policy owner = {0}, mine = {.learn = true};
	char what[EGRESS_ENTRY_TEXT];
	bool missing_deny;
	egress_policy_add(&owner, "a.test", false, "o", &err);
	ok(egress_policy_wider(&mine, &owner, what, sizeof what, &missing_deny), "learn mode is wider");
	is_str(what, "learn mode", "named");
	mine.learn = false;
	owner.learn = true;
	egress_policy_add(&mine, "z.test:443", false, "m", &err);
	ok(!egress_policy_wider(&mine, &owner, what, sizeof what, &missing_deny), "a name within a learning owner's");
	egress_policy_add(&mine, "198.51.100.0/24", false, "m", &err);
	ok(egress_policy_wider(&mine, &owner, what, sizeof what, &missing_deny), "an address range is not");
	egress_policy_free(&owner);
	egress_policy_free(&mine);
	egress_policy_free(&p);
}

int main(void)
{
	valid_shapes();
	invalid_entries();
	matching();
	internal_ranges();
	reasons();
	resolv_conf();
	learn_mode();
	return tap_done();
}
