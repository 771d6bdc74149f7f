/* Header credentials in config.yaml: parsing with FILE:LINE:COL errors, the
 * choice a runtime flag and an annotation make (narrowing only, unless the
 * admin says otherwise), and reading a secret. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_config.h"
#include "agent_credentials.h"
#include "tap.h"

static char dir[] = "/tmp/test_agent_credentials.XXXXXX";

static int load(const char *yaml, struct arena *a, struct agent_config *c, struct ab_err *err)
{
	char path[128];
	snprintf(path, sizeof path, "%s/config.yaml", dir);
	if (write_file_atomic_at(AT_FDCWD, path, yaml, strlen(yaml), 0600, err) < 0)
		return -1;
	memset(a, 0, sizeof *a);
	return agent_config_load(path, a, c, err);
}

static const char good[] =
	"credentials:\n"
	"  - name: GITHUB_TOKEN\n"
	"    from: file:%s/gh\n"
	"    to: header\n"
	"    hosts: [api.github.com, github.com]\n"
	"    header: \"Authorization: Bearer {}\"\n"
	"    env: GITHUB_TOKEN\n"
	"  - name: NPM\n"
	"    from: env:ABGW_TEST_NPM\n"
	"    to: header\n"
	"    hosts: [\"*.npmjs.org\"]\n"
	"    header: \"Authorization: Bearer {}\"\n"
	"    default: true\n"
	"gateway:\n"
	"  upstream_ca: /etc/agentbox/ca.pem\n";

static const char *sel(struct agent_config *c, const char *flag, const char *ann, struct ab_err *err)
{
	static char out[256];
	size_t idx[CRED_MAX], n;
	if (agent_credentials_select(&c->credentials, flag, ann, idx, &n, err) < 0)
		return NULL;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		strcat(out, i ? "," : "");
		strcat(out, c->credentials.v[idx[i]].name);
	}
	return out;
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	struct arena a;
	struct agent_config c;
	struct ab_err err = {0};
	char yaml[2048];
	snprintf(yaml, sizeof yaml, good, dir);
	ok(load(yaml, &a, &c, &err) == 0, "a config with two header credentials loads (%s)", err.msg);
	ok(c.credentials.n == 2 && c.credentials.v[0].from_file && c.credentials.v[0].n_hosts == 2 &&
	   streq(c.credentials.v[0].placeholder_env, "GITHUB_TOKEN") && !c.credentials.v[0].is_default &&
	   c.credentials.v[1].is_default && !c.credentials.v[1].from_file, "their fields");
	is_str(c.credentials.upstream_ca, "/etc/agentbox/ca.pem", "gateway.upstream_ca");

	is_str(sel(&c, NULL, NULL, &err), "NPM", "without a flag: the default ones");
	is_str(sel(&c, "GITHUB_TOKEN", NULL, &err), "GITHUB_TOKEN,NPM", "--credentials adds to them");
	is_str(sel(&c, "GITHUB_TOKEN", "GITHUB_TOKEN", &err), "GITHUB_TOKEN", "an annotation narrows");
	is_str(sel(&c, "GITHUB_TOKEN", "none", &err), "", "... down to none");
	ok(!sel(&c, NULL, "GITHUB_TOKEN", &err) && strstr(err.msg, "annotation agentbox.credentials: credential \"GITHUB_TOKEN\" is not one this runtime gives"),
	   "an annotation may not widen (%s)", err.msg);
	ok(!sel(&c, "NOPE", NULL, &err) && strstr(err.msg, "--credentials: no credential \"NOPE\""), "an unknown name on the flag is named");
	c.credentials.annotations_may_select = true;
	is_str(sel(&c, NULL, "GITHUB_TOKEN", &err), "GITHUB_TOKEN", "... unless gateway.annotations_may_select");

	char path[128], *secret;
	size_t len;
	snprintf(path, sizeof path, "%s/gh", dir);
	write_file_atomic_at(AT_FDCWD, path, "ghp_abc\n", 8, 0600, &err);
	ok(agent_credential_secret(&c.credentials.v[0], &secret, &len, &err) == 0 && len == 7 && streq(secret, "ghp_abc"),
	   "a file's secret, its final newline dropped");
	agent_credential_secret_free(secret, len);
	unsetenv("ABGW_TEST_NPM");
	ok(agent_credential_secret(&c.credentials.v[1], &secret, &len, &err) < 0 &&
	   strstr(err.msg, "credential NPM: the runtime has no environment variable ABGW_TEST_NPM"), "a missing variable is named");
	setenv("ABGW_TEST_NPM", "a\nb", 1);
	ok(agent_credential_secret(&c.credentials.v[1], &secret, &len, &err) < 0 && strstr(err.msg, "control character"),
	   "a secret with a newline inside is refused");
	arena_free(&a);

	static const struct { const char *yaml, *msg; } bad[] = {
		{ "credentials: {a: 1}\n", "config.yaml:1:14: credentials: expected a sequence" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com]\n",
		  "config.yaml:2:5: credentials[0].header: missing" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: env\n    hosts: [a.com]\n    header: \"A: {}\"\n",
		  "config.yaml:4:9: credentials[0].to: \"env\": only header here" },
		{ "credentials:\n  - name: X\n    from: file:rel\n    to: header\n    hosts: [a.com]\n    header: \"A: {}\"\n",
		  "config.yaml:3:11: credentials[0].from: \"file:rel\": expected file:/ABSOLUTE/PATH or env:VARIABLE" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [10.0.0.0/8]\n    header: \"A: {}\"\n",
		  "config.yaml:5:13: credentials[0].hosts[0]: \"10.0.0.0/8\" is not a host name" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com]\n    header: \"Content-Length: {}\"\n",
		  "config.yaml:6:13: credentials[0].header: the header Content-Length frames the message" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com]\n    header: \"A: {}\"\n    vault: x\n",
		  "config.yaml:7:5: credentials[0].vault: unknown field" },
		{ "gateway:\n  upstream_ca: ca.pem\n", "config.yaml:2:16: gateway.upstream_ca: \"ca.pem\" is not an absolute path" },
		{ "gateway:\n  ca: /x\n", "config.yaml:2:3: gateway.ca: unknown field" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = load(bad[i].yaml, &a, &c, &err);
		ok(r < 0, "bad config %zu refused", i);
		if (r < 0)
			has_substr(err.msg, bad[i].msg, "... naming where");
		arena_free(&a);
	}
	char rm[160];
	snprintf(rm, sizeof rm, "rm -rf %s", dir);
	return system(rm) == 0 ? tap_done() : 1;
}
