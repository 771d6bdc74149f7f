/* Kits: what a `to: header` credential adds (hosts, header, env), read
 * strictly like the other fields; the model is netfilter/policy/credential.h. */
#include "kit_internal.h"
#include "credential.h"
#include "log.h"
#include "sni_policy.h"

#include <stdio.h>
#include <string.h>

/* a credential.c message without its own "what: " prefix: the yml path names it */
static const char *reason(const struct ab_err *e)
{
	const char *c = strstr(e->msg, ": ");
	return c ? c + 2 : e->msg;
}

int kit_read_header_credential(struct kit *k, const struct yml_node *c, const char *p, struct kit_credential *kc,
			       struct ab_err *err)
{
	struct arena *a = &k->arena;
	static const char *const only_header[] = {"hosts", "header", "env", NULL};
	char fp[PATHBUF];
	if (kc->to != KIT_TO_HEADER) {
		for (size_t i = 0; only_header[i]; i++)
			if (yml_map_get(c, only_header[i])) {
				SUBPATH(fp, "%s.%s", p, only_header[i]);
				return yml_error(err, yml_map_get(c, only_header[i]), fp, "only for a credential with to: header");
			}
		return 0;
	}
	const struct yml_node *v = yml_map_get(c, "hosts");
	SUBPATH(fp, "%s.hosts", p);
	if (!v || yml_is_null(v))
		return yml_error(err, c, fp, "missing (the hosts whose requests carry the header)");
	if (yml_get_str_list(a, v, fp, &kc->hosts, &kc->n_hosts, err) < 0)
		return -1;
	if (kc->n_hosts == 0 || kc->n_hosts > CRED_HOSTS_MAX)
		return yml_error(err, v, fp, "give 1 to %d hosts", CRED_HOSTS_MAX);
	for (size_t i = 0; i < kc->n_hosts; i++) {
		struct egress_entry e;
		struct ab_err e2;
		char hp[PATHBUF + 32];
		SUBPATH(hp, "%s[%zu]", fp, i);
		if (cred_host_parse(kc->hosts[i], hp, &e, &e2) < 0)
			return yml_error(err, v->kind == YML_SEQ ? v->items[i] : v, hp, "%s", reason(&e2));
		kc->hosts[i] = arena_printf(a, "%s%s", e.kind == EGRESS_WILDCARD ? "*." : "", e.name);
		free(e.name);
	}
	v = yml_map_get(c, "header");
	SUBPATH(fp, "%s.header", p);
	const char *s;
	if (!v || yml_is_null(v))
		return yml_error(err, c, fp, "missing (e.g. \"Authorization: Bearer {}\")");
	if (yml_get_str(v, fp, &s, err) < 0)
		return -1;
	struct cred_header h;
	struct ab_err e2;
	if (cred_header_parse(s, fp, &h, &e2) < 0)
		return yml_error(err, v, fp, "%s", reason(&e2));
	kc->header = arena_strdup(a, s);
	v = yml_map_get(c, "env");
	SUBPATH(fp, "%s.env", p);
	if (v && !yml_is_null(v)) {
		if (yml_get_str(v, fp, &s, err) < 0)
			return -1;
		if (!kit_env_name_valid(s))
			return yml_error(err, v, fp, "\"%s\": not a valid variable name", s);
		kc->placeholder_env = arena_strdup(a, s);
	}
	return 0;
}

bool kit_has_header_credentials(const struct kit *k)
{
	for (size_t i = 0; i < k->n_credentials; i++)
		if (k->credentials[i].to == KIT_TO_HEADER)
			return true;
	return false;
}

void kit_show_header_credential(struct arena *a, struct yml_node *e, const struct kit_credential *c)
{
	if (c->to != KIT_TO_HEADER)
		return;
	struct yml_node *h = yml_new_seq(a);
	for (size_t j = 0; j < c->n_hosts; j++)
		yml_seq_add(a, h, yml_new_str(a, c->hosts[j]));
	yml_map_add(a, e, "hosts", h);
	yml_map_add(a, e, "header", yml_new_str(a, c->header));
	if (c->placeholder_env)
		yml_map_add(a, e, "env", yml_new_str(a, c->placeholder_env));
}

/* One line for each header credential's host the kit's own network does
 * not allow on TCP/443 (its requests can never be made), each also a
 * warning on stderr; "" when none. In a. */
const char *kit_unreachable_credentials(struct arena *a, const struct kit *k)
{
	struct egress_policy p = {0};
	struct ab_err e;
	for (size_t i = 0; i < k->n_allow; i++)
		(void)egress_policy_add(&p, k->allow[i], false, "network.allow", &e);
	for (size_t i = 0; i < k->n_deny; i++)
		(void)egress_policy_add(&p, k->deny[i], true, "network.deny", &e);
	char *lines = arena_strdup(a, "");
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		for (size_t j = 0; c->to == KIT_TO_HEADER && j < c->n_hosts; j++) {
			struct egress_entry h;
			if (cred_host_parse(c->hosts[j], c->name, &h, &e) < 0)
				continue;
			if (!sni_cred_host_reachable(&p, &h)) {
				const char *w = arena_printf(a, "credential %s: %s is not allowed on TCP/443 by network.allow: "
							    "its requests can never be made", c->name, c->hosts[j]);
				log_warn("%s", w);
				lines = arena_printf(a, "%s#   warning: %s\n", lines, w);
			}
			free(h.name);
		}
	}
	egress_policy_free(&p);
	return lines;
}
