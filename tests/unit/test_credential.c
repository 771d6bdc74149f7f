/* Header credentials (netfilter/policy/credential.c) and their kit form: templates,
 * hosts, secrets, the rendered value, and every bad input named. */
#include <string.h>

#include "credential.h"
#include "kit.h"
#include "tap.h"

static struct kit *parse(const char *text, struct ab_err *err)
{
	struct kit *k = NULL;
	if (kit_parse(text, strlen(text), "/tmp/kit.yaml", &k, err) < 0)
		return NULL;
	return k;
}

int main(void)
{
	struct cred_header h;
	struct ab_err err;
	char out[256];

	ok(cred_header_parse("Authorization: Bearer {}", "t", &h, &err) == 0 && streq(h.name, "Authorization") &&
	   streq(h.prefix, "Bearer ") && streq(h.suffix, "") && h.encoding == CRED_PLAIN, "Bearer template");
	ok(cred_header_value(&h, "tok", 3, out, sizeof out) == 10 && streq(out, "Bearer tok"), "rendered");
	ok(cred_header_value(&h, "tok", 3, out, 10) == -1, "a value that does not fit is refused");
	ok(cred_header_parse("Authorization:Basic {base64}", "t", &h, &err) == 0 && h.encoding == CRED_BASE64 &&
	   streq(h.prefix, "Basic "), "base64 template, no space after the colon");
	ok(cred_header_value(&h, "x-access-token:abc", 18, out, sizeof out) > 0 &&
	   streq(out, "Basic eC1hY2Nlc3MtdG9rZW46YWJj"), "base64 of user:token");
	ok(cred_header_value(&h, "a", 1, out, sizeof out) > 0 && streq(out, "Basic YQ=="), "base64 padding");
	ok(cred_header_parse("X-Api-Key: {} ", "t", &h, &err) == 0 && streq(h.prefix, "") && streq(h.suffix, ""),
	   "the secret alone, trailing blanks dropped");
	ok(cred_header_parse("Cookie: s={}; path=x", "t", &h, &err) == 0 && streq(h.suffix, "; path=x"), "a suffix");

	static const struct { const char *text, *msg; } bad[] = {
		{ "Authorization Bearer {}", "is not \"Name: value with {}\"" },
		{ ": {}", "header name must have 1 to" },
		{ "Auth orization: {}", "is not a header name" },
		{ "Host: {}", "frames the message" },
		{ "content-length: {}", "frames the message" },
		{ "Transfer-Encoding: {}", "frames the message" },
		{ "Authorization: Bearer", "has no {}" },
		{ "Authorization: {} {}", "more than one {}" },
		{ "Authorization: {}\r\nX-Evil: 1", "control character" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = cred_header_parse(bad[i].text, "credentials[0].header", &h, &err);
		ok(r < 0, "template %zu refused", i);
		if (r < 0)
			has_substr(err.msg, bad[i].msg, "... saying why");
	}

	struct egress_entry e;
	ok(cred_host_parse("API.GitHub.com", "t", &e, &err) == 0 && e.kind == EGRESS_NAME && streq(e.name, "api.github.com"),
	   "a host is lowercased");
	free(e.name);
	ok(cred_host_parse("*.example.com", "t", &e, &err) == 0 && e.kind == EGRESS_WILDCARD && streq(e.name, "example.com"),
	   "a wildcard host");
	free(e.name);
	static const char *const bad_hosts[] = { "198.19.96.1", "2001:db8::1", "a.com:443", "a.com,b.com", "a.com/tcp", "bad!name", "" };
	for (size_t i = 0; i < ARRAY_SIZE(bad_hosts); i++)
		ok(cred_host_parse(bad_hosts[i], "hosts[0]", &e, &err) < 0 && strstr(err.msg, "hosts[0]"),
		   "host \"%s\" refused, named (%s)", bad_hosts[i], err.msg);

	ok(cred_secret_check("ghp_abc", 7, "t", &err) == 0, "a token is a fine secret");
	ok(cred_secret_check("a\nb", 3, "cred X", &err) < 0 && strstr(err.msg, "cred X") && strstr(err.msg, "newline"),
	   "a newline in a secret is refused (it would split the header)");
	ok(cred_secret_check("", 0, "t", &err) < 0, "an empty secret is refused");
	ok(cred_secret_check("a\0b", 3, "t", &err) < 0, "a NUL is refused");

	/* the kit form */
	struct kit *k = parse("credentials:\n"
			      "  - name: GITHUB_TOKEN\n"
			      "    from: env:GH_TOKEN\n"
			      "    to: header\n"
			      "    hosts: [API.github.com, \"*.githubusercontent.com\"]\n"
			      "    header: \"Authorization: Bearer {}\"\n"
			      "    env: GITHUB_TOKEN\n"
			      "  - name: PLAIN\n"
			      "    from: env:P\n"
			      "upstream_ca: ca/private.pem\n", &err);
	ok(k, "a kit with a header credential parses (%s)", k ? "" : err.msg);
	if (k) {
		const struct kit_credential *c = &k->credentials[0];
		ok(c->to == KIT_TO_HEADER && c->n_hosts == 2 && streq(c->hosts[0], "api.github.com") &&
		   streq(c->hosts[1], "*.githubusercontent.com") && streq(c->header, "Authorization: Bearer {}") &&
		   streq(c->placeholder_env, "GITHUB_TOKEN"), "hosts, header and env read");
		ok(kit_has_header_credentials(k) && k->credentials[1].to == KIT_TO_ENV, "the other stays an env credential");
		is_str(k->upstream_ca, "/tmp/ca/private.pem", "upstream_ca relative to the kit file");
		char *text = NULL;
		ok(kit_show(k, NULL, &text, &err) == 0 && strstr(text, "to: header") && strstr(text, "api.github.com") &&
		   strstr(text, "upstream_ca: /tmp/ca/private.pem"), "kit show writes them back");
		free(text);
		struct kit_build_opts bo = { .bundle = "/tmp/b" };
		char *json = NULL;
		ok(kit_config_json(k, &bo, &json, &err) == 0 && strstr(json, "GITHUB_TOKEN=" CRED_PLACEHOLDER_PREFIX "GITHUB_TOKEN") &&
		   strstr(json, "\\\"to\\\":\\\"header\\\""), "the box's variable holds a placeholder (%s)", json ? "" : err.msg);
		free(json);
		kit_free(k);
	}

	static const struct { const char *yaml, *msg; } bad_kits[] = {
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    header: \"A: {}\"\n",
		  "kit.yaml:2:5: credentials[0].hosts: missing" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com]\n",
		  "kit.yaml:2:5: credentials[0].header: missing" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com, 198.19.96.1]\n    header: \"A: {}\"\n",
		  "kit.yaml:5:20: credentials[0].hosts[1]: \"198.19.96.1\" is not a host name" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: []\n    header: \"A: {}\"\n",
		  "credentials[0].hosts: give 1 to 64 hosts" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com]\n    header: \"Host: {}\"\n",
		  "kit.yaml:6:13: credentials[0].header: the header Host frames the message" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: header\n    hosts: [a.com]\n    header: \"A: {}\"\n    env: 1X\n",
		  "kit.yaml:7:10: credentials[0].env: \"1X\": not a valid variable name" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    hosts: [a.com]\n",
		  "kit.yaml:4:12: credentials[0].hosts: only for a credential with to: header" },
		{ "credentials:\n  - name: X\n    from: env:Y\n    to: file:/run/x/y\n    header: \"A: {}\"\n",
		  "credentials[0].header: only for a credential with to: header" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad_kits); i++) {
		k = parse(bad_kits[i].yaml, &err);
		ok(!k, "bad kit %zu refused", i);
		if (!k)
			has_substr(err.msg, bad_kits[i].msg, "... naming the field");
		kit_free(k);
	}
	return tap_done();
}
