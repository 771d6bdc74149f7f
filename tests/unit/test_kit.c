/* Unit tests for the YAML module (lib/yml.c) and kits (oci/kit/kit_*.c):
 * every field, every error with its line and column, extends, show, config.json. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "config.h"
#include "config_linux.h"
#include "json.h"
#include "kit.h"
#include "tap.h"
#include "yml.h"

static char tmpdir[PATH_MAX];

/* ---------------------------------------------------------------- helpers */

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static char *tpath(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
	return buf[i];
}

/* msg with every "tmpdir/" cut out */
static const char *strip_tmpdir(const char *msg)
{
	static char out[AB_ERR_MSG_MAX];
	size_t n = strlen(tmpdir), o = 0;
	for (const char *p = msg; *p && o < sizeof out - 1;) {
		if (strncmp(p, tmpdir, n) == 0 && p[n] == '/') {
			p += n + 1;
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = 0;
	return out;
}

/* Parse kit text as "kit.yaml" in tmpdir (so relative paths and extends work). */
static struct kit *parse(const char *text, struct ab_err *err)
{
	struct kit *k = NULL;
	ab_err_clear(err);
	if (kit_parse(text, strlen(text), tpath("kit.yaml"), &k, err) < 0)
		return NULL;
	return k;
}

/* The error for text, with the tmpdir prefix cut to "kit.yaml:...". */
static const char *parse_err(const char *text)
{
	static struct ab_err err;
	struct kit *k = parse(text, &err);
	if (k) {
		kit_free(k);
		return "(no error)";
	}
	return strip_tmpdir(err.msg);
}

static const char *load_err(const char *name)
{
	static struct ab_err err;
	struct kit *k = NULL;
	ab_err_clear(&err);
	if (kit_load(tpath(name), &k, &err) == 0) {
		kit_free(k);
		return "(no error)";
	}
	return strip_tmpdir(err.msg);
}

static const char *env_of(const struct kit *k, const char *name)
{
	for (size_t i = 0; i < k->n_env; i++)
		if (streq(k->env[i].key, name))
			return k->env[i].value;
	return NULL;
}

/* ---------------------------------------------------------------- yaml */

static void test_yaml_tree(void)
{
	struct arena a = {0};
	struct ab_err err = {0};
	struct yml_node *root;
	const char *text = "a: 1\nb:\n  - x\n  - 'true'\n  - true\nc: {d: ~, e: \"\"}\n";
	ok(yml_parse(&a, text, strlen(text), "t.yaml", &root, &err) == 0, "yaml: parse a small document");
	ok(root && root->kind == YML_MAP && root->n_pairs == 3, "yaml: root mapping with 3 keys");
	struct yml_node *b = yml_map_get(root, "b");
	ok(b && b->kind == YML_SEQ && b->n_items == 3, "yaml: a sequence of 3");
	ok(b && b->line == 3 && b->col == 3, "yaml: the sequence starts at 3:3 (got %u:%u)", b ? b->line : 0, b ? b->col : 0);
	ok(b && !yml_is_bool(b->items[1]) && yml_is_bool(b->items[2]), "yaml: quoted 'true' is a string, plain true a boolean");
	struct yml_node *c = yml_map_get(root, "c");
	ok(yml_is_null(yml_map_get(c, "d")) && !yml_is_null(yml_map_get(c, "e")), "yaml: ~ is null, \"\" is not");
	ok(yml_is_number(yml_map_get(root, "a")), "yaml: plain 1 is a number");
	const struct yml_pair *p = yml_map_pair(root, "c");
	ok(p && p->key->line == 6 && p->key->col == 1, "yaml: key positions");
	static const char *const allowed[] = {"a", "b", NULL};
	ok(yml_check_map(root, "top", allowed, &err) < 0, "yaml: check_map refuses an unknown key");
	is_str(err.msg, "t.yaml:6:1: top.c: unknown field (expected one of: a, b)", "yaml: unknown key message");
	int64_t v;
	ok(yml_get_int(yml_map_get(root, "a"), "a", 0, 10, &v, &err) == 0 && v == 1, "yaml: get_int");
	ok(yml_get_int(yml_map_get(root, "a"), "a", 2, 10, &v, &err) < 0, "yaml: get_int range");
	has_substr(err.msg, "t.yaml:1:4: a: 1 out of range", "yaml: range message has the position");
	bool bv;
	ok(yml_get_bool(b->items[1], "b[1]", &bv, &err) < 0, "yaml: a quoted true is not a boolean");
	has_substr(err.msg, "t.yaml:4:5: b[1]: expected a boolean", "yaml: boolean message");
	ok(yml_expect(b, YML_MAP, "b", &err) < 0, "yaml: expect map on a sequence");
	is_str(err.msg, "t.yaml:3:3: b: expected a mapping, got a sequence", "yaml: type message");
	arena_free(&a);
}

static void yaml_err(const char *text, const char *want, const char *what)
{
	struct arena a = {0};
	struct ab_err err = {0};
	struct yml_node *root;
	int r = yml_parse(&a, text, strlen(text), "y.yaml", &root, &err);
	ok(r < 0, "yaml: %s is refused", what);
	has_substr(err.msg, want, "yaml: %s message", what);
	arena_free(&a);
}

static void test_yaml_errors(void)
{
	yaml_err("a: 1\nb: 2\na: 3\n", "y.yaml:3:1: duplicate key \"a\" (first at line 1)", "a duplicate key");
	yaml_err("a: &x 1\nb: *x\n", "y.yaml:1:4: YAML anchors (&x) are not supported", "an anchor");
	yaml_err("a: !custom 1\n", "y.yaml:1:4: YAML tag \"!custom\" is not supported", "a custom tag");
	yaml_err("a: 1\n---\nb: 2\n", "y.yaml:2:1: more than one YAML document", "a second document");
	yaml_err("a: [1, 2\n", "y.yaml:2:1: invalid YAML", "an unclosed flow sequence");
	yaml_err("a: \"x\\0y\"\n", "y.yaml:1:4: a scalar contains a NUL character", "a NUL in a scalar");
	yaml_err("? [a]\n: 1\n", "y.yaml:1:3: mapping keys must be scalars", "a sequence as a key");
	char deep[400];
	size_t o = 0;
	for (int i = 0; i < 100; i++)
		deep[o++] = '[';
	deep[o] = 0;
	yaml_err(deep, "nested deeper than 64 levels", "deep nesting");

	struct arena a = {0};
	struct ab_err err = {0};
	struct yml_node *root = (struct yml_node *)1;
	ok(yml_parse(&a, "", 0, "e.yaml", &root, &err) == 0 && root == NULL, "yaml: an empty document is NULL");
	ok(yml_parse(&a, "# only a comment\n", 17, "e.yaml", &root, &err) == 0 && root == NULL,
	   "yaml: a comment-only document is NULL");
	ok(yml_parse(&a, "a: !!str 12\n", 12, "e.yaml", &root, &err) == 0 && !yml_is_number(yml_map_get(root, "a")),
	   "yaml: !!str makes a plain scalar a string");
	arena_free(&a);
}

static void test_yaml_emit(void)
{
	struct arena a = {0};
	struct ab_err err = {0};
	struct yml_node *m = yml_new_map(&a);
	yml_map_add(&a, m, "s", yml_new_str(&a, "true"));
	yml_map_add(&a, m, "num", yml_new_str(&a, "0644"));
	yml_map_add(&a, m, "yn", yml_new_str(&a, "yes"));
	yml_map_add(&a, m, "e", yml_new_str(&a, ""));
	yml_map_add(&a, m, "p", yml_new_plain(&a, "42"));
	yml_map_add(&a, m, "t", yml_new_str(&a, "line one\nline two\n"));
	struct yml_node *s = yml_new_seq(&a);
	yml_seq_add(&a, s, yml_new_str(&a, "a: b"));
	yml_seq_add(&a, s, yml_new_str(&a, "- dash"));
	yml_map_add(&a, m, "list", s);
	yml_map_add(&a, m, "empty", yml_new_seq(&a));
	yml_map_set(&a, m, "p", yml_new_plain(&a, "43"));
	char *text = NULL;
	ok(yml_emit(m, &text, NULL, &err) == 0, "yaml emit: ok");
	has_substr(text, "s: \"true\"", "yaml emit: a string that reads as a boolean is quoted");
	has_substr(text, "num: \"0644\"", "yaml emit: a string that reads as a number is quoted");
	has_substr(text, "yn: \"yes\"", "yaml emit: YAML 1.1 booleans are quoted too");
	has_substr(text, "p: 43", "yaml emit: plain numbers stay plain; map_set replaces in place");
	has_substr(text, "t: |", "yaml emit: multi-line text as a literal block");
	has_substr(text, "empty: []", "yaml emit: an empty sequence");
	/* and it reads back the same */
	struct yml_node *back;
	ok(yml_parse(&a, text, strlen(text), "back", &back, &err) == 0, "yaml emit: the output parses");
	is_str(yml_map_get(back, "s")->str, "true", "yaml emit: round trip of \"true\"");
	ok(!yml_is_bool(yml_map_get(back, "s")), "yaml emit: ... still a string");
	is_str(yml_map_get(back, "e")->str, "", "yaml emit: round trip of the empty string");
	ok(!yml_is_null(yml_map_get(back, "e")), "yaml emit: ... not null");
	is_str(yml_map_get(back, "t")->str, "line one\nline two\n", "yaml emit: round trip of a block");
	is_str(yml_map_get(back, "list")->items[0]->str, "a: b", "yaml emit: round trip of \"a: b\"");
	is_str(yml_map_get(back, "list")->items[1]->str, "- dash", "yaml emit: round trip of \"- dash\"");
	ok(yml_map_get(back, "p") && yml_map_get(back, "p") == back->pairs[4].value, "yaml emit: order kept");
	yml_map_del(back, "s");
	ok(!yml_map_get(back, "s") && back->n_pairs == 7, "yaml: map_del");
	free(text);
	arena_free(&a);
}

/* ---------------------------------------------------------------- value parsers */

static void test_value_parsers(void)
{
	int64_t v;
	uint64_t u;
	ok(kit_parse_size("256m", &v) == 0 && v == 256LL << 20, "size 256m");
	ok(kit_parse_size("2g", &v) == 0 && v == 2LL << 30, "size 2g");
	ok(kit_parse_size("2GiB", &v) == 0 && v == 2LL << 30, "size 2GiB");
	ok(kit_parse_size("512Mi", &v) == 0 && v == 512LL << 20, "size 512Mi");
	ok(kit_parse_size("1048576", &v) == 0 && v == 1048576, "size in bytes");
	ok(kit_parse_size("1k", &v) == 0 && v == 1024, "size 1k");
	ok(kit_parse_size("1.5g", &v) < 0, "size 1.5g refused");
	ok(kit_parse_size("-1m", &v) < 0, "size -1m refused");
	ok(kit_parse_size("12x", &v) < 0, "size 12x refused");
	ok(kit_parse_size("99999999999t", &v) < 0, "size overflow refused");
	ok(kit_parse_duration_ms("30s", &v) == 0 && v == 30000, "duration 30s");
	ok(kit_parse_duration_ms("10m", &v) == 0 && v == 600000, "duration 10m");
	ok(kit_parse_duration_ms("1h", &v) == 0 && v == 3600000, "duration 1h");
	ok(kit_parse_duration_ms("500ms", &v) == 0 && v == 500, "duration 500ms");
	ok(kit_parse_duration_ms("90", &v) == 0 && v == 90000, "duration 90 = seconds");
	ok(kit_parse_duration_ms("0s", &v) < 0, "duration 0 refused");
	ok(kit_parse_duration_ms("1d", &v) < 0, "duration 1d refused");
	ok(kit_parse_duration_ms("9999h", &v) < 0, "duration beyond 24 days refused");
	ok(kit_parse_cpus("1.5", &u) == 0 && u == 1500, "cpus 1.5");
	ok(kit_parse_cpus("2", &u) == 0 && u == 2000, "cpus 2");
	ok(kit_parse_cpus("0.25", &u) == 0 && u == 250, "cpus 0.25");
	ok(kit_parse_cpus("0.0005", &u) < 0, "cpus finer than a thousandth refused");
	ok(kit_parse_cpus("0", &u) < 0, "cpus 0 refused");
	ok(kit_parse_cpus("2000", &u) < 0, "cpus 2000 refused");
	ok(kit_parse_cpus("1.", &u) < 0, "cpus '1.' refused");
}

/* ---------------------------------------------------------------- every field */

static void test_fields(void)
{
	struct ab_err err;
	mkdir(tpath("ws"), 0755);
	mkdir(tpath("rootdir"), 0755);
	write_file("token.txt", "t0ken\n");
	const char *text =
		"name: full-kit\n"
		"rootfs: host\n"
		"workspace: ws\n"
		"mounts:\n"
		"  - source: ./cache\n"
		"    target: /home/agent/.cache\n"
		"    readonly: false\n"
		"  - type: tmpfs\n"
		"    target: /scratch\n"
		"    size: 64m\n"
		"env:\n"
		"  GREETING: hello\n"
		"  DEBUG: true\n"
		"  N: 3\n"
		"  UNSET: ~\n"
		"credentials:\n"
		"  - name: GH_TOKEN\n"
		"    from: env:HOST_GH_TOKEN\n"
		"  - name: NETRC\n"
		"    from: file:token.txt\n"
		"    to: file:/run/secrets/netrc\n"
		"files:\n"
		"  - path: /etc/motd\n"
		"    content: \"hi\\n\"\n"
		"    mode: \"0600\"\n"
		"    owner: \"1000:1000\"\n"
		"  - path: /home/agent/.gitconfig\n"
		"    source: ./token.txt\n"
		"network:\n"
		"  allow: [pypi.org, \"*.pythonhosted.org\", \"github.com:22\", 198.18.0.0/15, \"[2001:db8::1]:22\", \"dns.example:53/udp\"]\n"
		"  deny: [169.254.169.254]\n"
		"  proxy: false\n"
		"resources:\n"
		"  memory: 256m\n"
		"  cpus: 1.5\n"
		"  pids: 128\n"
		"  timeout: 10m\n"
		"user: 1234:5678\n"
		"security:\n"
		"  seccomp: default\n"
		"  capabilities: [NET_BIND_SERVICE, cap_kill]\n"
		"  readonly_rootfs: false\n"
		"startup:\n"
		"  - pip install -r requirements.txt\n"
		"  - echo ready\n"
		"command: [python3, -m, pytest]\n";
	struct kit *k = parse(text, &err);
	ok(k != NULL, "kit: a kit with every field parses%s%s", k ? "" : ": ", k ? "" : err.msg);
	if (!k)
		return;
	is_str(k->name, "full-kit", "name");
	ok(k->rootfs == KIT_ROOTFS_HOST, "rootfs: host");
	is_str(k->workspace, tpath("ws"), "workspace: relative to the kit file");
	ok(k->n_mounts == 2, "mounts: 2");
	is_str(k->mounts[0].source, tpath("cache"), "mounts[0].source: relative to the kit file");
	is_str(k->mounts[0].target, "/home/agent/.cache", "mounts[0].target");
	ok(!k->mounts[0].readonly && !k->mounts[0].tmpfs, "mounts[0]: a writable bind");
	ok(k->mounts[1].tmpfs && k->mounts[1].readonly && k->mounts[1].size == 64 << 20, "mounts[1]: a 64m tmpfs, read-only by default");
	ok(k->n_env == 3, "env: 3 set (null leaves one unset)");
	is_str(env_of(k, "GREETING"), "hello", "env.GREETING");
	is_str(env_of(k, "DEBUG"), "true", "env.DEBUG: a boolean's text");
	is_str(env_of(k, "N"), "3", "env.N: a number's text");
	ok(env_of(k, "UNSET") == NULL, "env.UNSET: null = not set");
	ok(k->n_credentials == 2, "credentials: 2");
	ok(k->credentials[0].from == KIT_FROM_ENV && streq(k->credentials[0].from_ref, "HOST_GH_TOKEN") &&
	   k->credentials[0].to == KIT_TO_ENV, "credentials[0]: env -> env (the default)");
	ok(k->credentials[1].from == KIT_FROM_FILE && streq(k->credentials[1].from_ref, tpath("token.txt")) &&
	   k->credentials[1].to == KIT_TO_FILE && streq(k->credentials[1].to_path, "/run/secrets/netrc"),
	   "credentials[1]: file -> file");
	ok(k->n_files == 2, "files: 2");
	ok(streq(k->files[0].content, "hi\n") && k->files[0].has_mode && k->files[0].mode == 0600 &&
	   k->files[0].has_owner && k->files[0].uid == 1000 && k->files[0].gid == 1000, "files[0]: content, mode, owner");
	ok(k->files[1].source && streq(k->files[1].source, tpath("token.txt")) && !k->files[1].has_mode, "files[1]: source");
	ok(k->n_allow == 6 && streq(k->allow[1], "*.pythonhosted.org"), "network.allow: 6 entries");
	ok(k->n_deny == 1 && streq(k->deny[0], "169.254.169.254"), "network.deny");
	ok(!k->deny_reasons[0], "network.deny: a plain entry has no reason");
	ok(!k->proxy, "network.proxy: false");
	ok(k->resources.has_memory && k->resources.memory == 256 << 20, "resources.memory");
	ok(k->resources.has_cpus && k->resources.cpus_milli == 1500, "resources.cpus");
	ok(k->resources.has_pids && k->resources.pids == 128, "resources.pids");
	ok(k->resources.has_timeout && k->resources.timeout_ms == 600000, "resources.timeout");
	ok(k->has_user && k->uid == 1234 && k->gid == 5678, "user");
	is_str(k->seccomp, "default", "security.seccomp");
	ok(k->n_capabilities == 2 && streq(k->capabilities[0], "CAP_NET_BIND_SERVICE") &&
	   streq(k->capabilities[1], "CAP_KILL"), "security.capabilities: normalised");
	ok(!k->readonly_rootfs, "security.readonly_rootfs");
	ok(k->n_startup == 2 && streq(k->startup[1], "echo ready"), "startup");
	ok(k->n_command == 3 && streq(k->command[2], "pytest"), "command");

	/* the config it compiles to */
	struct kit_secret sec[2] = {
		{.cred = &k->credentials[0], .value = "s3cr3t-env", .len = 10},
		{.cred = &k->credentials[1], .value = "s3cr3t-file", .len = 11},
	};
	struct kit_build_opts bo = {.bundle = "/b", .egress_annotations = true};
	char *json = NULL;
	ok(kit_config_json(k, &bo, &json, &err) == 0, "config: generated");
	struct oci_config *c = NULL;
	ok(json && oci_config_parse(json, "kit", &c, &err) == 0, "config: it parses as config.json%s%s", c ? "" : ": ", c ? "" : err.msg);
	ok(json && !strstr(json, "s3cr3t"), "config: no secret without secrets");
	if (c) {
		ok(c->process->user.uid == 1234 && c->process->user.gid == 5678, "config: user");
		ok(c->process->no_new_privileges, "config: noNewPrivileges");
		ok(!c->root_readonly, "config: root.readonly follows the kit");
		is_str(c->process->cwd, "/workspace", "config: cwd /workspace");
		ok(c->process->n_args == 7 && streq(c->process->args[0], "/bin/sh") && streq(c->process->args[1], "-c") &&
		   streq(c->process->args[3], "sh") && streq(c->process->args[4], "python3"),
		   "config: startup wraps the command in one shell");
		has_substr(c->process->args[2], "{ pip install -r requirements.txt\n}", "config: startup[0] in the script");
		has_substr(c->process->args[2], "__kit_step=1\n{ echo ready\n} || exit $?", "config: a failing step is named");
		has_substr(c->process->args[2], "failed with status $s", "config: ... by the EXIT trap");
		has_substr(c->process->args[2], "exec \"$@\"", "config: then the command");
		ok(c->linux_.resources.memory.has_limit && c->linux_.resources.memory.limit == 256 << 20, "config: memory limit");
		ok(c->linux_.resources.cpu.has_quota && c->linux_.resources.cpu.quota == 150000 &&
		   c->linux_.resources.cpu.period == 100000, "config: cpu quota/period");
		ok(c->linux_.resources.pids.has_limit && c->linux_.resources.pids.limit == 128, "config: pids");
		ok(oci_namespace_find(c, NS_NETWORK) && oci_namespace_find(c, NS_PID) && oci_namespace_find(c, NS_IPC) &&
		   oci_namespace_find(c, NS_UTS) && oci_namespace_find(c, NS_MOUNT) && oci_namespace_find(c, NS_CGROUP) &&
		   !oci_namespace_find(c, NS_USER), "config: pid, ipc, uts, mount, network, cgroup namespaces");
		is_str(oci_annotation(c, "agentbox.seccomp.profile"), "default", "config: seccomp annotation");
		is_str(oci_annotation(c, "agentbox.egress.allow"),
		       "pypi.org,*.pythonhosted.org,github.com:22,198.18.0.0/15,[2001:db8::1]:22,dns.example:53/udp",
		       "config: egress allow annotation");
		is_str(oci_annotation(c, "agentbox.egress.deny"), "169.254.169.254", "config: egress deny annotation");
		is_str(oci_annotation(c, "agentbox.egress.proxy"), "false", "config: network.proxy false: no proxy");
		has_substr(oci_annotation(c, "agentbox.kit.credentials"), "\"from\":\"env:HOST_GH_TOKEN\"",
			   "config: credentials as references");
		ok(c->linux_.n_masked_paths > 5 && c->linux_.n_readonly_paths >= 5, "config: masked and read-only paths");
		bool usr = false, ws = false, scratch = false, secrets = false, motd = false, home = false;
		for (size_t i = 0; i < c->n_mounts; i++) {
			const struct oci_mount *m = &c->mounts[i];
			usr |= streq(m->destination, "/usr") && (m->flags & MS_RDONLY);
			ws |= streq(m->destination, "/workspace") && streq(m->source, tpath("ws")) && !(m->flags & MS_RDONLY);
			scratch |= streq(m->destination, "/scratch") && streq(m->type, "tmpfs");
			secrets |= streq(m->destination, "/run/secrets") && streq(m->type, "tmpfs");
			motd |= streq(m->destination, "/etc/motd") && streq(m->source, "/b/files/0");
			home |= streq(m->destination, "/home/agent") && streq(m->type, "tmpfs");
		}
		ok(usr && ws && scratch && secrets && motd && home,
		   "config: /usr ro, workspace rw, tmpfs mounts, a tmpfs for the credential file, files bound");
		oci_config_free(c);
		c = NULL;
	}
	free(json);
	bo.secrets = sec;
	bo.n_secrets = 2;
	bo.egress_annotations = false;
	ok(kit_config_json(k, &bo, &json, &err) == 0 && oci_config_parse(json, "kit", &c, &err) == 0,
	   "config with secrets: generated");
	if (c) {
		bool env = false;
		for (size_t i = 0; i < c->process->n_env; i++)
			env |= streq(c->process->env[i], "GH_TOKEN=s3cr3t-env");
		ok(env, "config with secrets: an env credential is in process.env");
		ok(!strstr(json, "s3cr3t-file"), "config with secrets: a file credential is not");
		ok(!oci_annotation(c, "agentbox.egress.allow"), "config: no egress annotations when asked not to");
		oci_config_free(c);
	}
	free(json);
	kit_free(k);
}

static void test_defaults(void)
{
	struct ab_err err;
	struct kit *k = parse("name: tiny\n", &err);
	ok(k != NULL, "defaults: a kit with only a name");
	if (!k)
		return;
	ok(k->rootfs == KIT_ROOTFS_HOST && k->readonly_rootfs && streq(k->seccomp, "agent") && !k->workspace &&
	   !k->n_allow && !k->has_user, "defaults: host rootfs, read-only, agent profile, no workspace, no network");
	char *json = NULL;
	struct kit_build_opts bo = {.bundle = "/b"};
	struct oci_config *c = NULL;
	ok(kit_config_json(k, &bo, &json, &err) == 0 && oci_config_parse(json, "kit", &c, &err) == 0, "defaults: config");
	if (c) {
		ok(c->process->user.uid == 1000 && c->process->user.gid == 1000, "defaults: uid 1000 without a workspace");
		ok(c->process->n_args == 1 && streq(c->process->args[0], "/bin/sh"), "defaults: command /bin/sh");
		is_str(c->process->cwd, "/home/agent", "defaults: cwd is the home without a workspace");
		ok(c->root_readonly, "defaults: read-only root");
		ok(c->process->caps.bounding == 0 && c->process->caps.effective == 0, "defaults: no capabilities");
		is_str(c->hostname, "tiny", "defaults: hostname is the kit's name");
		is_str(oci_annotation(c, "agentbox.egress.proxy"), "true", "defaults: the box's HTTP proxy (agentbox's to act on)");
		bool proxy_env = false;
		for (size_t i = 0; i < c->process->n_env; i++)
			proxy_env |= strcasestr(c->process->env[i], "_proxy=") != NULL;
		ok(!proxy_env, "defaults: no proxy variable in the bundle (the runtime adds them)");
		oci_config_free(c);
	}
	free(json);
	uint32_t uid, gid;
	kit_effective_user(k, "/", &uid, &gid);
	ok(uid == 1000, "effective user: a root-owned workspace gives 1000");
	ok(chown(tpath("ws"), 4321, 4322) == 0, "chown the workspace");
	kit_effective_user(k, tpath("ws"), &uid, &gid);
	ok(uid == 4321 && gid == 4322, "effective user: the workspace's owner when not root");
	kit_free(k);

	k = kit_default("/tmp");
	ok(k && streq(k->name, "default") && streq(k->workspace, "/tmp") && k->rootfs == KIT_ROOTFS_HOST && !k->n_allow,
	   "the built-in default kit");
	kit_free(k);
}

/* ---------------------------------------------------------------- errors */

struct err_case {
	const char *text;
	const char *want;
};

static void test_image_syntax(void)
{
	struct ab_err err;
	mkdir(tpath("image"), 0755);
	write_file("image/oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
	struct kit *k = parse("rootfs: {image: ./image, tag: latest}\n", &err);
	ok(k && k->rootfs == KIT_ROOTFS_IMAGE && streq(k->rootfs_path, tpath("image")) && streq(k->rootfs_tag, "latest"),
	   "rootfs {image, tag}: an image layout");
	kit_free(k);
	k = parse("rootfs: ./image:v2\n", &err);
	ok(k && k->rootfs == KIT_ROOTFS_IMAGE && streq(k->rootfs_path, tpath("image")) && streq(k->rootfs_tag, "v2"),
	   "rootfs DIR:TAG: an image layout");
	kit_free(k);
	k = parse("rootfs: ./image\n", &err);
	ok(k && k->rootfs == KIT_ROOTFS_IMAGE && !k->rootfs_tag, "rootfs DIR holding oci-layout: its only image");
	kit_free(k);
	mkdir(tpath("plain:dir"), 0755);
	k = parse("rootfs: ./plain:dir\n", &err);
	ok(k && k->rootfs == KIT_ROOTFS_DIR && streq(k->rootfs_path, tpath("plain:dir")), "rootfs DIR with a colon: a directory");
	kit_free(k);
}

static void test_errors(void)
{
	write_file("not-a-dir", "x");
	static const struct err_case cases[] = {
		{"name: x\nfoo: 1\n", "kit.yaml:2:1: foo: unknown field (expected one of: name, extends, rootfs"},
		{"- a\n- b\n", "kit.yaml:1:1: a kit is a mapping of fields, not a sequence"},
		{"name: [a]\n", "kit.yaml:1:7: name: expected a string, got a sequence"},
		{"name: \"bad name\"\n", "kit.yaml:1:7: name: \"bad name\" is not a valid name"},
		{"rootfs: {tag: latest}\n", "kit.yaml:1:9: rootfs: an image needs \"image\""},
		{"rootfs: {image: ./image, tag: \"\"}\n", "kit.yaml:1:31: rootfs.tag: an empty tag"},
		{"rootfs: {image: [a]}\n", "kit.yaml:1:17: rootfs.image: expected a string"},
		{"rootfs: {image: x, digest: y}\n", "kit.yaml:1:20: rootfs.digest: unknown field"},
		{"workspace: {a: 1}\n", "kit.yaml:1:12: workspace: expected a string, got a mapping"},
		{"mounts: {a: 1}\n", "kit.yaml:1:9: mounts: expected a sequence, got a mapping"},
		{"mounts:\n  - target: /x\n", "kit.yaml:2:5: mounts[0].source: missing"},
		{"mounts:\n  - source: /x\n    target: rel\n", "kit.yaml:3:13: mounts[0].target: \"rel\" is not an absolute path"},
		{"mounts:\n  - source: /x\n    target: /a/../b\n", "kit.yaml:3:13: mounts[0].target: \"/a/../b\": \".\" and \"..\" are not allowed"},
		{"mounts:\n  - source: /x\n    target: /proc/sys\n", "kit.yaml:3:13: mounts[0].target: /proc/sys is reserved"},
		{"mounts:\n  - source: /x\n    target: /a\n    type: nfs\n", "kit.yaml:4:11: mounts[0].type: unknown type \"nfs\""},
		{"mounts:\n  - source: /x\n    target: /a\n    readonly: yes\n", "kit.yaml:4:15: mounts[0].readonly: expected a boolean"},
		{"mounts:\n  - source: /x\n    target: /a\n    size: 1m\n", "kit.yaml:4:11: mounts[0].size: only a tmpfs mount has a size"},
		{"mounts:\n  - type: tmpfs\n    target: /a\n    size: lots\n", "kit.yaml:4:11: mounts[0].size: \"lots\" is not a size"},
		{"mounts:\n  - type: tmpfs\n    target: /a\n  - type: tmpfs\n    target: /a\n", "kit.yaml:4:5: mounts[1]: target /a is mounted twice"},
		{"mounts:\n  - source: /x\n    target: /a\n    mode: 1\n", "kit.yaml:4:5: mounts[0].mode: unknown field"},
		{"env: [A]\n", "kit.yaml:1:6: env: expected a mapping, got a sequence"},
		{"env:\n  1BAD: x\n", "kit.yaml:2:3: env.1BAD: not a valid variable name"},
		{"env:\n  A: [1]\n", "kit.yaml:2:6: env.A: expected a string, got a sequence"},
		{"credentials:\n  - from: env:X\n", "kit.yaml:2:5: credentials[0].name: missing"},
		{"credentials:\n  - name: X\n", "kit.yaml:2:5: credentials[0].from: missing"},
		{"credentials:\n  - name: X\n    from: vault:x\n", "kit.yaml:3:11: credentials[0].from: \"vault:x\": expected env:VARIABLE or file:PATH"},
		{"credentials:\n  - name: X\n    from: env:1X\n", "kit.yaml:3:11: credentials[0].from: \"1X\": not a valid variable name"},
		{"credentials:\n  - name: X\n    from: env:Y\n    to: disk\n", "kit.yaml:4:9: credentials[0].to: \"disk\": expected env, file:/PATH or header"},
		{"credentials:\n  - name: X\n    from: env:Y\n    to: file:/token\n", "kit.yaml:4:9: credentials[0].to: /token: a credential file needs a directory of its own"},
		{"credentials:\n  - name: X\n    from: env:Y\n    to: file:/workspace/.token\n", "kit.yaml:4:9: credentials[0].to: /workspace/.token is in the workspace"},
		{"credentials:\n  - name: X\n    from: env:Y\n  - name: X\n    from: env:Z\n", "kit.yaml:4:11: credentials[1].name: credential \"X\" is defined twice"},
		{"credentials:\n  - name: X\n    from: env:Y\n    value: v\n", "kit.yaml:4:5: credentials[0].value: unknown field"},
		{"mounts:\n  - source: /x\n    target: /data\ncredentials:\n  - name: X\n    from: env:Y\n    to: file:/data/t\n",
		 "kit.yaml:5:5: credentials: /data/t is inside the bind mount /data"},
		{"files:\n  - content: x\n", "kit.yaml:2:5: files[0].path: missing"},
		{"files:\n  - path: /a\n", "kit.yaml:2:5: files[0]: give exactly one of content and source"},
		{"files:\n  - path: /a\n    content: x\n    source: /y\n", "kit.yaml:2:5: files[0]: give exactly one of content and source"},
		{"files:\n  - path: /a\n    content: x\n    mode: 644x\n", "kit.yaml:4:11: files[0].mode: \"644x\" is not an octal mode"},
		{"files:\n  - path: /a\n    content: x\n    mode: \"4755\"\n", "kit.yaml:4:11: files[0].mode: \"4755\": setuid, setgid and sticky bits are not allowed"},
		{"files:\n  - path: /a\n    content: x\n    owner: me\n", "kit.yaml:4:12: files[0].owner: \"me\" is not UID:GID"},
		{"files:\n  - path: /a\n    content: x\n  - path: /a\n    content: y\n", "kit.yaml:4:11: files[1].path: /a is given twice"},
		{"network: [a]\n", "kit.yaml:1:10: network: expected a mapping, got a sequence"},
		{"network:\n  allowed: [a]\n", "kit.yaml:2:3: network.allowed: unknown field (expected one of: allow, deny, internal, proxy)"},
		{"network:\n  internal: [pypi.org]\n", "kit.yaml:2:14: network.internal[0]: entry \"pypi.org\": an internal entry is an address range with no port or protocol (10.0.0.0/8, fd00::/8)"},
		{"network:\n  internal: [\"10.0.0.0/8,fd00::/8\"]\n", "kit.yaml:2:14: network.internal[0]: one range per item (\"10.0.0.0/8,fd00::/8\" has a comma)"},
		{"network:\n  deny:\n    - {entry: a.test}\n", "kit.yaml:3:7: network.deny[0]: \"reason\" is missing"},
		{"network:\n  deny:\n    - {reason: x}\n", "kit.yaml:3:7: network.deny[0]: an entry with a reason needs \"entry\""},
		{"network:\n  deny:\n    - {entry: a.test, reason: x, why: y}\n", "network.deny[0].why: unknown field (expected one of: entry, reason)"},
		{"network:\n  deny:\n    - {entry: a.test, reason: \"a\\tb\"}\n", "network.deny[0].reason: a reason is 1 to 200 bytes"},
		{"network:\n  deny:\n    - {entry: \"a.test:99999\", reason: x}\n", "network.deny[0]: entry \"a.test:99999\": port 99999 out of range"},
		{"network:\n  deny:\n    - {entry: [a], reason: x}\n", "network.deny[0].entry: expected a string, got a sequence"},
		{"network:\n  allow: pypi.org\n", "kit.yaml:2:10: network.allow: expected a sequence, got a string"},
		{"network:\n  allow:\n    - pypi.org\n    - example.com:443\n    - example.com:70000\n",
		 "kit.yaml:5:7: network.allow[2]: entry \"example.com:70000\": port 70000 out of range"},
		{"network:\n  allow: [\"a.com,b.com\"]\n", "kit.yaml:2:11: network.allow[0]: one entry per item"},
		{"network:\n  allow: [all]\n", "kit.yaml:2:11: network.allow[0]: \"all\" is not an entry"},
		{"network:\n  deny: [\"bad_name!\"]\n", "kit.yaml:2:10: network.deny[0]: entry \"bad_name!\""},
		{"network:\n  allow: [10.0.0.1/8]\n", "kit.yaml:2:11: network.allow[0]: entry \"10.0.0.1/8\": address has bits set"},
		{"resources:\n  memory: lots\n", "kit.yaml:2:11: resources.memory: \"lots\" is not a size"},
		{"resources:\n  memory: 1m\n", "kit.yaml:2:11: resources.memory: 1m is below the minimum of 4m"},
		{"resources:\n  cpus: many\n", "kit.yaml:2:9: resources.cpus: \"many\" is not a number of CPUs"},
		{"resources:\n  pids: 0\n", "kit.yaml:2:9: resources.pids: 0 out of range"},
		{"resources:\n  pids: ten\n", "kit.yaml:2:9: resources.pids: expected an integer, got \"ten\""},
		{"resources:\n  timeout: forever\n", "kit.yaml:2:12: resources.timeout: \"forever\" is not a duration"},
		{"resources:\n  disk: 1g\n", "kit.yaml:2:3: resources.disk: unknown field"},
		{"user: agent\n", "kit.yaml:1:7: user: \"agent\" is not UID or UID:GID"},
		{"security:\n  seccomp: strict\n", "kit.yaml:2:12: security.seccomp: unknown profile \"strict\""},
		{"security:\n  capabilities: [CAP_FLY]\n", "kit.yaml:2:18: security.capabilities[0]: unknown capability \"CAP_FLY\""},
		{"security:\n  capabilities: [KILL, CAP_KILL]\n", "kit.yaml:2:24: security.capabilities[1]: CAP_KILL is listed twice"},
		{"security:\n  readonly_rootfs: \"false\"\n", "kit.yaml:2:20: security.readonly_rootfs: expected a boolean (true or false), got a string"},
		{"security:\n  privileged: true\n", "kit.yaml:2:3: security.privileged: unknown field"},
		{"startup: echo hi\n", "kit.yaml:1:10: startup: expected a sequence, got a string"},
		{"startup: [[a]]\n", "kit.yaml:1:11: startup[0]: expected a string, got a sequence"},
		{"command: []\n", "kit.yaml:1:10: command: empty"},
		{"command: sh\n", "kit.yaml:1:10: command: expected a sequence, got a string"},
		{"command: [sh, ~]\n", "kit.yaml:1:15: command[1]: expected a string, got null"},
		{"extends: [a]\n", "kit.yaml:1:10: extends: expected a string, got a sequence"},
		{"extends: missing.yaml\n", "kit.yaml:1:10: extends: missing.yaml: No such file or directory"},
		{"name: a\nname: b\n", "kit.yaml:2:1: duplicate key \"name\""},
		{"name: a\n  b: c\n", "kit.yaml:2:4: invalid YAML: mapping values are not allowed in this context"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = parse_err(cases[i].text);
		has_substr(got, cases[i].want, "error %zu: %s", i, cases[i].want);
	}
	ok(strstr(parse_err(""), "empty kit") != NULL, "error: an empty kit");
}

/* A deny item with a reason: kept beside its entry, and shown back the same way. */
static void test_deny_reasons(void)
{
	struct ab_err err;
	struct kit *k = parse("network:\n  deny:\n    - plain.test\n    - {entry: pypi.org, reason: \"use the mirror\"}\n"
			      "    - entry: 198.51.100.7:22/tcp\n      reason: off limits\n",
			      &err);
	ok(k != NULL, "deny reasons parse");
	if (!k)
		return;
	ok(k->n_deny == 3 && streq(k->deny[1], "pypi.org") && streq(k->deny[2], "198.51.100.7:22/tcp"),
	   "deny reasons: the entries");
	ok(!k->deny_reasons[0] && streq(k->deny_reasons[1], "use the mirror") && streq(k->deny_reasons[2], "off limits"),
	   "deny reasons: each beside its entry");
	kit_free(k);
}

/* ---------------------------------------------------------------- extends */

static void test_extends(void)
{
	struct ab_err err;
	write_file("base.yaml",
		   "name: base\n"
		   "workspace: ./ws\n"
		   "env:\n  A: base-a\n  B: base-b\n  C: base-c\n"
		   "network:\n  allow: [pypi.org]\n  deny: [169.254.169.254]\n"
		   "resources:\n  memory: 1g\n  pids: 100\n"
		   "security:\n  capabilities: [KILL]\n"
		   "command: [base-cmd]\n"
		   "startup: [base-step]\n");
	mkdir(tpath("sub"), 0755);
	write_file("sub/middle.yaml",
		   "extends: ../base.yaml\n"
		   "name: middle\n"
		   "env:\n  B: middle-b\n"
		   "network:\n  allow: [registry.npmjs.org]\n"
		   "resources:\n  pids: 200\n"
		   "files:\n  - path: /etc/m\n    source: ./m.txt\n");
	write_file("child.yaml",
		   "extends: sub/middle.yaml\n"
		   "env:\n  C: ~\n  D: child-d\n"
		   "resources:\n  timeout: 5s\n"
		   "startup: ~\n"
		   "command: [child-cmd, arg]\n");
	struct kit *k = NULL;
	ab_err_clear(&err);
	ok(kit_load(tpath("child.yaml"), &k, &err) == 0, "extends: a chain of three loads%s%s", k ? "" : ": ", k ? "" : err.msg);
	if (k) {
		is_str(k->name, "middle", "extends: name from the nearest kit that sets it");
		is_str(k->workspace, tpath("ws"), "extends: a base's relative path is relative to the base's file");
		is_str(env_of(k, "A"), "base-a", "extends: env merges (base key kept)");
		is_str(env_of(k, "B"), "middle-b", "extends: env merges (middle overrides)");
		ok(env_of(k, "C") == NULL, "extends: null removes an inherited key");
		is_str(env_of(k, "D"), "child-d", "extends: env merges (child adds)");
		ok(k->n_allow == 1 && streq(k->allow[0], "registry.npmjs.org"), "extends: lists replace (network.allow)");
		ok(k->n_deny == 1, "extends: network maps merge (deny inherited)");
		ok(k->resources.memory == 1 << 30 && k->resources.pids == 200 && k->resources.timeout_ms == 5000,
		   "extends: resources merge field by field");
		ok(k->n_capabilities == 1, "extends: security inherited");
		ok(k->n_command == 2 && streq(k->command[0], "child-cmd"), "extends: command replaced");
		ok(k->n_startup == 0, "extends: startup removed by null");
		ok(k->n_files == 1 && streq(k->files[0].source, tpath("sub/m.txt")), "extends: files source relative to the middle kit");
		ok(k->n_chain == 3 && strstr(k->chain[0], "base.yaml") && strstr(k->chain[2], "child.yaml"),
		   "extends: the chain, base first");
		char *text = NULL;
		ok(kit_show(k, NULL, &text, &err) == 0, "show: ok");
		has_substr(text, "# The effective kit: ", "show: a comment header");
		has_substr(text, "child.yaml extends ", "show: names the chain");
		has_substr(text, "#   egress allow: registry.npmjs.org", "show: the egress allowlist");
		has_substr(text, "#   egress deny:  169.254.169.254", "show: the egress denylist");
		has_substr(text, "#   seccomp profile: agent", "show: the seccomp profile");
		has_substr(text, "  proxy: true\n", "show: network.proxy, true by default");
		ok(text && !strstr(text, "extends:"), "show: no extends in the effective kit");
		/* the output is a kit, equal to the effective one */
		write_file("shown.yaml", text ? text : "");
		struct kit *k2 = NULL;
		ok(kit_load(tpath("shown.yaml"), &k2, &err) == 0, "show: the output reads back as a kit%s%s", k2 ? "" : ": ", k2 ? "" : err.msg);
		if (k2) {
			char *text2 = NULL;
			ok(kit_show(k2, NULL, &text2, &err) == 0, "show: again");
			const char *y1 = text ? strstr(text, "\nname:") : NULL, *y2 = text2 ? strstr(text2, "\nname:") : NULL;
			ok(y1 && y2 && streq(y1, y2), "show: the effective kit round-trips");
			free(text2);
			kit_free(k2);
		}
		free(text);
		kit_free(k);
	}

	/* YAML ends a comment at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR too:
	 * values in show's comment block must not carry one (a fuzzer found it) */
	write_file("breaks.yaml", "name: b\nworkspace: \"/w\\u2028x: 1\\u0085y: 2\\u2029z: 3\\nq\"\n"
				  "rootfs: \"/r\\u2028s: 4\"\n");
	struct kit *kb = NULL;
	ok(kit_load(tpath("breaks.yaml"), &kb, &err) == 0, "show: a kit with unicode line breaks in its paths loads%s%s",
	   kb ? "" : ": ", kb ? "" : err.msg);
	char *btext = NULL;
	ok(kb && kit_show(kb, NULL, &btext, &err) == 0, "show: it shows");
	has_substr(btext, "workspace: /w?x: 1?y: 2?z: 3?q\n", "show: the comment shows each line break as '?'");
	write_file("breaks-shown.yaml", btext ? btext : "");
	struct kit *kb2 = NULL;
	ok(kit_load(tpath("breaks-shown.yaml"), &kb2, &err) == 0 && streq(kb2->workspace, kb->workspace) &&
	   streq(kb2->rootfs_path, kb->rootfs_path), "show: the output reads back with the same paths%s%s",
	   kb2 ? "" : ": ", kb2 ? "" : err.msg);
	free(btext);
	kit_free(kb2);
	kit_free(kb);

	/* cycles */
	write_file("cyc-a.yaml", "name: a\nextends: cyc-b.yaml\n");
	write_file("cyc-b.yaml", "name: b\nextends: cyc-a.yaml\n");
	const char *e = load_err("cyc-a.yaml");
	has_substr(e, "cyc-b.yaml:2:10: extends: cycle: ", "extends: a cycle is an error at the extends that closes it");
	has_substr(e, "cyc-a.yaml -> ", "extends: the cycle is named");
	write_file("self.yaml", "extends: self.yaml\n");
	has_substr(load_err("self.yaml"), "self.yaml:1:10: extends: cycle: ", "extends: a kit extending itself");
	/* an error in a base names the base */
	write_file("badbase.yaml", "name: ok\nresources:\n  pids: -1\n");
	write_file("usesbad.yaml", "extends: badbase.yaml\nresources:\n  pids: 10\n");
	has_substr(load_err("usesbad.yaml"), "badbase.yaml:3:9: resources.pids: -1 out of range",
		   "extends: an error in a base is reported in the base, even when overridden");
	write_file("unknown-in-base.yaml", "name: ok\nbogus: 1\n");
	write_file("uses-unknown.yaml", "extends: unknown-in-base.yaml\n");
	has_substr(load_err("uses-unknown.yaml"), "unknown-in-base.yaml:2:1: bogus: unknown field",
		   "extends: unknown fields in a base");
	/* too deep */
	for (int i = 0; i < 20; i++) {
		char name[32], body[64];
		snprintf(name, sizeof name, "deep%d.yaml", i);
		snprintf(body, sizeof body, "extends: deep%d.yaml\n", i + 1);
		write_file(name, body);
	}
	write_file("deep20.yaml", "name: bottom\n");
	has_substr(load_err("deep0.yaml"), "more than 16 levels of extends", "extends: depth is bounded");
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_kit.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	test_yaml_tree();
	test_yaml_errors();
	test_yaml_emit();
	test_value_parsers();
	test_fields();
	test_defaults();
	test_image_syntax();
	test_errors();
	test_deny_reasons();
	test_extends();
	struct ab_err err;
	(void)rm_rf_at(AT_FDCWD, tmpdir, &err);
	return tap_done();
}
