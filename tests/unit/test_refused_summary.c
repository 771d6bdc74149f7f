/* kit run's closing summary of refusals (runtime/egress/refused_summary.c):
 * each kind of deny-log record becomes one line saying what, why and the
 * fix; what is no refusal is left out. */
#include <string.h>

#include "refused_summary.h"
#include "tap.h"
#include "util.h"

static const char *line_of(const char *record)
{
	static char out[2048];
	if (!egress_refused_line(record, out, sizeof out))
		snprintf(out, sizeof out, "(none)");
	return out;
}

int main(void)
{
	static const struct {
		const char *record, *line;
	} cases[] = {
		{ "{\"verdict\":\"deny\",\"proto\":\"dns\",\"dst\":\"\",\"name\":\"pypi.org\",\"reason\":\"not-allowed\"}",
		  "  dns  pypi.org  not-allowed: not on the allowlist; allow it with --allow pypi.org:PORT or the kit's network.allow" },
		{ "{\"verdict\":\"deny\",\"proto\":\"tcp\",\"dst\":\"198.51.100.7\",\"port\":5432,\"reason\":\"not-allowed\"}",
		  "  tcp  198.51.100.7:5432  not-allowed: not on the allowlist; allow it with --allow 198.51.100.7:5432 or the kit's network.allow" },
		{ "{\"verdict\":\"deny\",\"proto\":\"tcp\",\"dst\":\"2001:db8::7\",\"port\":22,\"name\":\"git.test\",\"reason\":\"not-allowed\"}",
		  "  tcp  [2001:db8::7]:22 (git.test)  not-allowed: not on the allowlist; allow it with --allow git.test:22 or the kit's network.allow" },
		{ "{\"verdict\":\"deny\",\"proto\":\"dns\",\"dst\":\"198.18.0.9\",\"name\":\"web.test\",\"reason\":\"internal-address\"}",
		  "  dns  web.test -> 198.18.0.9  internal-address: the answer points to an internal address [benchmarking]; open 198.18.0.0/15 with --egress-internal 198.18.0.0/15 or the kit's network.internal" },
		{ "{\"verdict\":\"deny\",\"proto\":\"dns\",\"dst\":\"169.254.169.254\",\"name\":\"meta.test\",\"reason\":\"internal-address\"}",
		  "  dns  meta.test -> 169.254.169.254  internal-address: the answer points to an internal address [link-local (cloud metadata)]; open 169.254.0.0/16 with --egress-internal 169.254.0.0/16 or the kit's network.internal" },
		{ "{\"verdict\":\"deny\",\"proto\":\"dns\",\"dst\":\"8.8.8.8\",\"name\":\"self.test\",\"reason\":\"internal-address\"}",
		  "  dns  self.test -> 8.8.8.8  internal-address: the answer points to an internal address [the host's own]; open 8.8.8.8/32 with --egress-internal 8.8.8.8/32 or the kit's network.internal" },
		/* by address: learn mode's filter, or the box's HTTP proxy asked for a literal */
		{ "{\"verdict\":\"deny\",\"proto\":\"tcp\",\"dst\":\"10.45.0.1\",\"port\":9000,\"reason\":\"internal-address\"}",
		  "  tcp  10.45.0.1:9000  internal-address: its destination is an internal address [private]; open 10.0.0.0/8 with --egress-internal 10.0.0.0/8 or the kit's network.internal" },
		{ "{\"verdict\":\"deny\",\"proto\":\"proxy\",\"dst\":\"169.254.169.254\",\"port\":80,\"reason\":\"internal-address\"}",
		  "  proxy 169.254.169.254:80  internal-address: its destination is an internal address [link-local (cloud metadata)]; open 169.254.0.0/16 with --egress-internal 169.254.0.0/16 or the kit's network.internal" },
		{ "{\"verdict\":\"deny\",\"proto\":\"proxy\",\"dst\":\"127.0.0.1\",\"port\":8080,\"reason\":\"loopback\"}",
		  "  proxy 127.0.0.1:8080  loopback: the box's HTTP proxy does not connect to the box itself; its own addresses are reached directly (NO_PROXY)" },
		{ "{\"verdict\":\"deny\",\"proto\":\"tcp\",\"dst\":\"198.51.100.9\",\"port\":443,\"reason\":\"denied\"}",
		  "  tcp  198.51.100.9:443  denied: a deny entry matches (the kit's network.deny, --egress-deny or the config's egress.deny)" },
		{ "{\"verdict\":\"deny\",\"proto\":\"udp\",\"dst\":\"9.9.9.9\",\"port\":53,\"reason\":\"dns-bypass\"}",
		  "  udp  9.9.9.9:53  dns-bypass: DNS goes through the box's own resolver only (its /etc/resolv.conf)" },
		{ "{\"verdict\":\"deny\",\"proto\":\"tls\",\"dst\":\"198.18.0.7\",\"port\":443,\"name\":\"paste.test\",\"reason\":\"not-allowed\"}",
		  "  tls  198.18.0.7:443 (paste.test)  not-allowed: its TLS name is not on the allowlist; allow it with --allow paste.test:443 or the kit's network.allow" },
		{ "{\"verdict\":\"deny\",\"proto\":\"https\",\"dst\":\"198.18.0.7\",\"port\":443,\"reason\":\"host-mismatch\",\"detail\":\"other.test\"}",
		  "  https 198.18.0.7:443  host-mismatch (other.test); see NAMES ON THE WIRE in agentbox-egress(7)" },
		{ "{\"verdict\":\"deny\",\"proto\":\"proxy\",\"name\":\"example.org\",\"port\":80,\"reason\":\"not-allowed\"}",
		  "  proxy example.org:80  not-allowed: not on the allowlist; allow it with --allow example.org:80 or the kit's network.allow" },
		{ "{\"verdict\":\"deny\",\"proto\":\"https\",\"dst\":\"198.18.0.20\",\"port\":443,\"name\":\"api.test\",\"reason\":\"upstream-unverified\",\"detail\":\"certificate verify failed; give the credential upstream_ca (agentbox-kit(5))\"}",
		  "  https 198.18.0.20:443 (api.test)  upstream-unverified: certificate verify failed; give the credential upstream_ca (agentbox-kit(5))" },
		/* no refusals: a repeat, a credential's use, a policy change, a summary, garbage */
		{ "{\"verdict\":\"deny\",\"proto\":\"tcp\",\"dst\":\"198.51.100.7\",\"port\":1,\"reason\":\"not-allowed\",\"repeats\":4}", "(none)" },
		{ "{\"verdict\":\"credential\",\"proto\":\"https\",\"dst\":\"198.18.0.20\",\"port\":443,\"credential\":\"T\"}", "(none)" },
		{ "{\"verdict\":\"policy\",\"change\":\"allow\",\"entries\":\"a.test\"}", "(none)" },
		{ "{\"verdict\":\"summary\",\"lost\":3}", "(none)" },
		{ "{\"verdict\":\"deny\",", "(none)" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		is_str(line_of(cases[i].record), cases[i].line, "record %zu", i);
	return tap_done();
}
