/* egress suggest (netfilter/policy/egress_suggest.c): learn records merged
 * into the allowlist they call for, wildcards folded no higher than a
 * registrable domain, and what stays out said in comments. */
#include <string.h>

#include "egress_suggest.h"
#include "public_suffix.h"
#include "tap.h"

#define T0 "2026-01-01T10:00:00.000000000Z"
#define T1 "2026-01-01T10:00:05.000000000Z"

static void add_conn(struct egress_suggest *g, const char *name, const char *dst, const char *proto, int port,
		     const char *via, int count, const char *first, const char *last)
{
	char line[1024];
	snprintf(line, sizeof line,
		 "{\"time\":\"%s\",\"container\":\"c\",\"learn\":\"connect\",\"proto\":\"%s\",\"dst\":\"%s\",\"port\":%d%s%s%s%s%s%s,"
		 "\"count\":%d,\"first\":\"%s\",\"last\":\"%s\"}",
		 first, proto, dst, port, name ? ",\"name\":\"" : "", name ? name : "", name ? "\"" : "", via ? ",\"via\":\"" : "",
		 via ? via : "", via ? "\"" : "", count, first, last);
	ok(egress_suggest_add(g, line), "record taken: %s %s:%d", name ? name : dst, proto, port);
}

static void add_lookup(struct egress_suggest *g, const char *name, const char *answer)
{
	char line[512];
	snprintf(line, sizeof line,
		 "{\"time\":\"" T0 "\",\"container\":\"c\",\"learn\":\"lookup\",\"name\":\"%s\",\"answer\":\"%s\",\"count\":1,"
		 "\"first\":\"" T0 "\",\"last\":\"" T0 "\"}",
		 name, answer);
	ok(egress_suggest_add(g, line), "lookup taken: %s", name);
}

static void suffixes(void)
{
	ok(!egress_suffix_foldable("com"), "never *.com");
	ok(!egress_suffix_foldable("test"), "nor *.test");
	ok(egress_suffix_foldable("example.com"), "*.example.com");
	ok(!egress_suffix_foldable("co.uk"), "never *.co.uk");
	ok(egress_suffix_foldable("example.co.uk"), "*.example.co.uk");
	ok(!egress_suffix_foldable("github.io"), "never *.github.io: each subdomain is someone's");
	ok(egress_suffix_foldable("me.github.io"), "*.me.github.io");
	ok(!egress_suffix_foldable("s3.amazonaws.com"), "never *.s3.amazonaws.com");
}

static void allowlist(void)
{
	struct egress_suggest *g = egress_suggest_new();
	add_lookup(g, "registry.npm.test", "ok");
	add_conn(g, "registry.npm.test", "198.18.45.65", "tcp", 443, "dns", 2, T0, T1);
	add_conn(g, "registry.npm.test", "198.18.45.65", "tcp", 443, "dns", 3, T1, T1);   /* counts add up */
	add_conn(g, "registry.npm.test", "198.18.45.65", "tcp", 443, "tls", 2, T0, T0);
	add_conn(g, "git.test", "198.18.45.66", "tcp", 443, "tls", 1, T0, T0);
	add_conn(g, "git.test", "198.18.45.66", "tcp", 8443, "dns", 1, T0, T0);
	add_conn(g, "ntp.test", "198.18.45.67", "udp", 123, "dns", 1, T0, T0);
	add_conn(g, "both.test", "198.18.45.68", "udp", 53000, "dns", 1, T0, T0);
	add_conn(g, "both.test", "198.18.45.68", "tcp", 53000, "dns", 1, T0, T0);
	add_lookup(g, "onlylook.test", "ok");
	add_lookup(g, "nope.test", "nxdomain");
	add_lookup(g, "db.test", "ok");
	ok(egress_suggest_add(g, "{\"time\":\"" T0 "\",\"learn\":\"inside\",\"name\":\"db.test\",\"dst\":\"10.1.2.3\","
				 "\"what\":\"private\",\"count\":1,\"first\":\"" T0 "\",\"last\":\"" T0 "\"}"),
	   "inside taken");
	add_conn(g, NULL, "203.0.113.9", "tcp", 9000, NULL, 1, T0, T0);
	add_conn(g, "sni.test", "203.0.113.10", "tcp", 443, "tls", 1, T0, T0);
	add_conn(g, "sni.test", "203.0.113.10", "tcp", 443, "tls-address", 1, T0, T0);
	add_conn(g, "git.test", "203.0.113.10", "tcp", 443, "tls", 1, T0, T0);   /* another name, same address */
	add_conn(g, NULL, "2001:db8:45::7", "tcp", 22, NULL, 1, T0, T0);
	ok(!egress_suggest_add(g, "{\"time\":\"" T0 "\",\"learn\":\"conn"), "a torn line is no record");
	ok(!egress_suggest_add(g, "{\"verdict\":\"deny\"}"), "a deny record is no learn record");

	struct egress_suggest_summary s;
	egress_suggest_summary(g, &s);
	ok(s.names == 7 && s.lookups_only == 1 && s.addresses == 3 && s.inside == 1 && s.nxdomain == 1,
	   "summary: %zu names (%zu only looked up), %zu addresses, %zu inside, %zu no such name", s.names,
	   s.lookups_only, s.addresses, s.inside, s.nxdomain);

	char *text = egress_suggest_text(g, "kit-1", false, false);
	has_substr(text, "network:\n  allow:\n", "a network.allow block");
	has_substr(text, "\n    - both.test:53000\n", "tcp and udp on one port: the port");
	has_substr(text, "\n    - git.test:443\n    - git.test:8443\n", "a name's ports, each an entry, sorted");
	has_substr(text, "\n    - ntp.test:123/udp\n", "udp only: /udp");
	has_substr(text, "onlylook.test ", "a name only looked up: resolvable");
	has_substr(text, "# looked up only, never connected to: every port is open to it", "... and said so");
	has_substr(text, "\n    - registry.npm.test:443\n", "merged into one entry");
	has_substr(text, "\n    - sni.test:443\n", "a TLS name");
	has_substr(text, "    - 203.0.113.10:443", "a TLS name reached over an IP: its address too");
	has_substr(text, "# by address (no lookup), TLS name sni.test", "... with the name it asked for");
	has_substr(text, "    - 203.0.113.9:9000 ", "by address only");
	has_substr(text, "    - \"[2001:db8:45::7]:22\"", "IPv6 with a port: bracketed and quoted for YAML");
	has_substr(text, "#   db.test -> 10.1.2.3 (private)", "what pointed inside: a comment");
	has_substr(text, "--egress-internal", "... and how to open it on purpose");
	ok(!strstr(text, "- db.test"), "not an entry: it is withheld all the same");
	has_substr(text, "#   nope.test", "no such name: a comment");
	ok(!strstr(text, "- nope.test"), "not an entry");
	ok(!strstr(text, "INCOMPLETE"), "nothing missed");
	free(text);

	text = egress_suggest_text(g, "kit-1", false, true);
	has_substr(text, "{\"entry\":\"git.test:8443\",\"by_address\":false}", "JSON: the entries");
	has_substr(text, "\"inside\":[{\"name\":\"db.test\",\"dst\":\"10.1.2.3\",\"what\":\"private\"}]", "JSON: inside");
	has_substr(text, "\"no_such_name\":[\"nope.test\"]", "JSON: no such name");
	free(text);
	egress_suggest_free(g);
}

static void wildcards(void)
{
	struct egress_suggest *g = egress_suggest_new();
	const char *names[] = { "a.cdn.example.com", "b.cdn.example.com", "c.cdn.example.com", "x.other.com",
				"y.other.com", "w.one.test", "v.two.test", "u.three.test", "p.co.uk", "q.co.uk",
				"r.co.uk", "d.cdn.example.com" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		add_conn(g, names[i], "198.18.45.70", "tcp", i == 11 ? 80 : 443, "dns", 1, T0, T0);
	char *text = egress_suggest_text(g, "kit-2", false, false);
	has_substr(text, "- a.cdn.example.com:443\n", "without --wildcards: names as they are");
	free(text);
	text = egress_suggest_text(g, "kit-2", true, false);
	has_substr(text, "- \"*.cdn.example.com:443\" ", "three siblings under one port: folded, quoted for YAML");
	ok(!strstr(text, "- a.cdn.example.com:443"), "the folded names are gone");
	has_substr(text, "- d.cdn.example.com:80\n", "another port is not folded in");
	has_substr(text, "- x.other.com:443\n", "two are not enough");
	has_substr(text, "- u.three.test:443\n", "never above a registrable domain (*.test)");
	has_substr(text, "- p.co.uk:443\n", "never *.co.uk");
	free(text);
	ok(egress_suggest_add(g, "{\"learn\":\"summary\",\"lost\":4}"), "a summary record");
	text = egress_suggest_text(g, "kit-2", true, false);
	has_substr(text, "# INCOMPLETE: 4 connections were not recorded", "a flood's loss is said");
	free(text);
	egress_suggest_free(g);

	g = egress_suggest_new();
	text = egress_suggest_text(g, "kit-3", true, false);
	has_substr(text, "network:\n  allow: []\n", "nothing reached: an empty list");
	free(text);
	egress_suggest_free(g);
}

int main(void)
{
	suffixes();
	allowlist();
	wildcards();
	return tap_done();
}
