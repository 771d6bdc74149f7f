/* Header credentials in config.yaml (agent_credentials.h). */
#include "agent_credentials.h"
#include "yml.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static bool var_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* the message of a credential.c error without its own prefix (the yml path says where) */
static const char *reason(const struct ab_err *e)
{
	const char *c = strstr(e->msg, ": ");
	return c ? c + 2 : e->msg;
}

static int load_one(struct arena *a, const struct yml_node *c, size_t i, struct agent_credential *ret,
		    struct agent_credential *prev, struct ab_err *err)
{
	static const char *const keys[] = {"name", "from", "to", "hosts", "header", "env", "default", NULL};
	char p[64], fp[96];
	snprintf(p, sizeof p, "credentials[%zu]", i);
	if (yml_check_map(c, p, keys, err) < 0)
		return -1;
	const struct yml_node *v;
	const char *s;
	static const char *const required[] = {"name", "from", "to", "hosts", "header"};
	for (size_t k = 0; k < ARRAY_SIZE(required); k++)
		if (!(v = yml_map_get(c, required[k])) || yml_is_null(v)) {
			snprintf(fp, sizeof fp, "%s.%s", p, required[k]);
			return yml_error(err, c, fp, "missing");
		}
	snprintf(fp, sizeof fp, "%s.name", p);
	v = yml_map_get(c, "name");
	if (yml_get_str(v, fp, &ret->name, err) < 0)
		return -1;
	if (!var_name_ok(ret->name))
		return yml_error(err, v, fp, "\"%s\" is not a valid name (letters, digits and _)", ret->name);
	for (size_t k = 0; k < i; k++)
		if (streq(prev[k].name, ret->name))
			return yml_error(err, v, fp, "credential \"%s\" is defined twice", ret->name);
	snprintf(fp, sizeof fp, "%s.from", p);
	v = yml_map_get(c, "from");
	if (yml_get_str(v, fp, &s, err) < 0)
		return -1;
	if (strncmp(s, "file:/", 6) == 0) {
		ret->from_file = true;
		ret->from_ref = s + 5;
	} else if (strncmp(s, "env:", 4) == 0 && var_name_ok(s + 4)) {
		ret->from_ref = s + 4;
	} else {
		return yml_error(err, v, fp, "\"%s\": expected file:/ABSOLUTE/PATH or env:VARIABLE", s);
	}
	snprintf(fp, sizeof fp, "%s.to", p);
	v = yml_map_get(c, "to");
	if (yml_get_str(v, fp, &s, err) < 0)
		return -1;
	if (!streq(s, "header"))
		return yml_error(err, v, fp, "\"%s\": only header here (a secret an engine's container could read would defeat the gateway)", s);
	snprintf(fp, sizeof fp, "%s.hosts", p);
	v = yml_map_get(c, "hosts");
	if (yml_get_str_list(a, v, fp, &ret->hosts, &ret->n_hosts, err) < 0)
		return -1;
	if (ret->n_hosts == 0 || ret->n_hosts > CRED_HOSTS_MAX)
		return yml_error(err, v, fp, "give 1 to %d hosts", CRED_HOSTS_MAX);
	for (size_t k = 0; k < ret->n_hosts; k++) {
		struct egress_entry e;
		struct ab_err e2;
		char hp[128];
		snprintf(hp, sizeof hp, "%s[%zu]", fp, k);
		if (cred_host_parse(ret->hosts[k], hp, &e, &e2) < 0)
			return yml_error(err, v->kind == YML_SEQ ? v->items[k] : v, hp, "%s", reason(&e2));
		free(e.name);
	}
	snprintf(fp, sizeof fp, "%s.header", p);
	v = yml_map_get(c, "header");
	if (yml_get_str(v, fp, &ret->header, err) < 0)
		return -1;
	struct cred_header h;
	struct ab_err e2;
	if (cred_header_parse(ret->header, fp, &h, &e2) < 0)
		return yml_error(err, v, fp, "%s", reason(&e2));
	if ((v = yml_map_get(c, "env")) && !yml_is_null(v)) {
		snprintf(fp, sizeof fp, "%s.env", p);
		if (yml_get_str(v, fp, &ret->placeholder_env, err) < 0)
			return -1;
		if (!var_name_ok(ret->placeholder_env))
			return yml_error(err, v, fp, "\"%s\": not a valid variable name", ret->placeholder_env);
	}
	if ((v = yml_map_get(c, "default")) && !yml_is_null(v)) {
		snprintf(fp, sizeof fp, "%s.default", p);
		if (yml_get_bool(v, fp, &ret->is_default, err) < 0)
			return -1;
	}
	return 0;
}

int agent_credentials_load(struct arena *a, const struct yml_node *creds, const struct yml_node *gateway,
			   const char *file, struct agent_credentials *cfg, struct ab_err *err)
{
	cfg->file = file;
	if (creds && !yml_is_null(creds)) {
		if (yml_expect(creds, YML_SEQ, "credentials", err) < 0)
			return -1;
		if (creds->n_items > CRED_MAX)
			return yml_error(err, creds, "credentials", "at most %d credentials", CRED_MAX);
		cfg->v = arena_alloc(a, (creds->n_items + 1) * sizeof *cfg->v);
		for (size_t i = 0; i < creds->n_items; i++)
			if (load_one(a, creds->items[i], i, &cfg->v[i], cfg->v, err) < 0)
				return -1;
		cfg->n = creds->n_items;
	}
	if (gateway && !yml_is_null(gateway)) {
		static const char *const keys[] = {"upstream_ca", "annotations_may_select", NULL};
		if (yml_check_map(gateway, "gateway", keys, err) < 0)
			return -1;
		const struct yml_node *v;
		if ((v = yml_map_get(gateway, "upstream_ca")) && !yml_is_null(v)) {
			if (yml_get_str(v, "gateway.upstream_ca", &cfg->upstream_ca, err) < 0)
				return -1;
			if (cfg->upstream_ca[0] != '/')
				return yml_error(err, v, "gateway.upstream_ca", "\"%s\" is not an absolute path",
						 cfg->upstream_ca);
		}
		if ((v = yml_map_get(gateway, "annotations_may_select")) &&
		    yml_get_bool(v, "gateway.annotations_may_select", &cfg->annotations_may_select, err) < 0)
			return -1;
	}
	return 0;
}

static int find(const struct agent_credentials *cfg, const char *name, size_t len)
{
	for (size_t i = 0; i < cfg->n; i++)
		if (strlen(cfg->v[i].name) == len && strncmp(cfg->v[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/* each name of a comma list into sel (a bitmap by index); -1 and err naming source */
static int names(const struct agent_credentials *cfg, const char *list, const char *source, bool *sel, struct ab_err *err)
{
	if (streq(list, "none"))
		return 0;
	for (const char *p = list; *p;) {
		const char *e = strchrnul(p, ',');
		while (p < e && *p == ' ')
			p++;
		size_t len = (size_t)(e - p);
		while (len && p[len - 1] == ' ')
			len--;
		if (len) {
			int i = find(cfg, p, len);
			if (i < 0)
				return ab_error(err, 0, "%s: no credential \"%.*s\" in %s", source, (int)len, p,
						cfg->file);
			sel[i] = true;
		}
		p = *e ? e + 1 : e;
	}
	return 0;
}

int agent_credentials_select(const struct agent_credentials *cfg, const char *flag, const char *annotation,
			     size_t *ret_idx, size_t *ret_n, struct ab_err *err)
{
	bool runtime[CRED_MAX] = {0}, ann[CRED_MAX] = {0};
	*ret_n = 0;
	for (size_t i = 0; i < cfg->n; i++)
		runtime[i] = cfg->v[i].is_default;
	if (flag && names(cfg, flag, "--credentials", runtime, err) < 0)
		return -1;
	const bool *chosen = runtime;
	if (annotation) {
		if (names(cfg, annotation, "annotation " ANNOTATION_CREDENTIALS, ann, err) < 0)
			return -1;
		/* the workload's side may only narrow what the runtime gives */
		for (size_t i = 0; i < cfg->n; i++)
			if (ann[i] && !runtime[i] && !cfg->annotations_may_select)
				return ab_error(err, 0, "annotation %s: credential \"%s\" is not one this runtime gives: refused (give it with --credentials or default: true, or set gateway.annotations_may_select in %s)",
						ANNOTATION_CREDENTIALS, cfg->v[i].name,
						cfg->file);
		chosen = ann;
	}
	for (size_t i = 0; i < cfg->n; i++)
		if (chosen[i])
			ret_idx[(*ret_n)++] = i;
	return 0;
}

int agent_credential_secret(const struct agent_credential *c, char **ret, size_t *ret_len, struct ab_err *err)
{
	char *v = NULL;
	size_t len = 0;
	if (c->from_file) {
		struct ab_err e;
		if (read_file_at(AT_FDCWD, c->from_ref, CRED_SECRET_MAX + 2, &v, &len, &e) < 0)
			return ab_error(err, 0, "credential %s: %s", c->name, e.msg);
	} else {
		const char *s = getenv(c->from_ref);
		if (!s)
			return ab_error(err, 0, "credential %s: the runtime has no environment variable %s", c->name, c->from_ref);
		v = xstrdup(s);
		len = strlen(v);
	}
	/* a token file ends with a newline the header must not have */
	if (len && v[len - 1] == '\n')
		v[--len] = 0;
	if (len && v[len - 1] == '\r')
		v[--len] = 0;
	char what[160];
	snprintf(what, sizeof what, "credential %s", c->name);
	if (cred_secret_check(v, len, what, err) < 0) {
		agent_credential_secret_free(v, len);
		return -1;
	}
	*ret = v;
	*ret_len = len;
	return 0;
}

void agent_credential_secret_free(char *s, size_t len)
{
	if (!s)
		return;
	explicit_bzero(s, len);
	free(s);
}
