/* Header credentials for engine-run containers (agentbox-config(5)): the
 * admin defines them in config.yaml; a runtime's --credentials (Docker's
 * runtimeArgs: per runtime name) and `default: true` choose which a container
 * gets, and the annotation agentbox.credentials may only narrow that choice
 * unless gateway.annotations_may_select says otherwise. The secret is read
 * when the container is created and goes only to its gateway. */
#ifndef AGENTBOX_AGENT_CREDENTIALS_H
#define AGENTBOX_AGENT_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "credential.h"
#include "error.h"
#include "util.h"

#define ANNOTATION_CREDENTIALS "agentbox.credentials"

struct agent_credential {
	const char *name;
	bool from_file;            /* file:PATH, else env:VARIABLE (the runtime's environment) */
	const char *from_ref;
	char **hosts;
	size_t n_hosts;
	const char *header;        /* "Authorization: Bearer {}" */
	const char *placeholder_env;
	bool is_default;           /* every container of this config gets it */
};

/* config.yaml's header credentials and their gateway's settings */
struct agent_credentials {
	struct agent_credential *v;
	size_t n;
	const char *upstream_ca;          /* gateway.upstream_ca: a PEM file, or NULL */
	bool annotations_may_select;      /* gateway.annotations_may_select */
	const char *file;                 /* the config file, for "set X in FILE" */
};

struct yml_node;
/* config.yaml's `credentials` list and `gateway` map into ret; file names the
 * config in errors */
int agent_credentials_load(struct arena *a, const struct yml_node *creds, const struct yml_node *gateway,
			   const char *file, struct agent_credentials *ret, struct ab_err *err);

/* Which credentials a container gets: indexes into cc->v, in config order.
 * flag is --credentials (comma list, or NULL), annotation the value of
 * agentbox.credentials (or NULL); "none" names none. */
int agent_credentials_select(const struct agent_credentials *cc, const char *flag, const char *annotation,
			     size_t *ret_idx, size_t *ret_n, struct ab_err *err);

/* The secret of c, read now (a file's final newline dropped), checked to fit
 * a header; free with agent_credential_secret_free. */
int agent_credential_secret(const struct agent_credential *c, char **ret, size_t *ret_len, struct ab_err *err);
void agent_credential_secret_free(char *s, size_t len);

#endif
