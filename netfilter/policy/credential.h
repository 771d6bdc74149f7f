/* Header credentials: a secret the box may use but never read. The gateway
 * (netfilter/gateway/) puts it into requests to the credential's hosts as one HTTP
 * header; this is the model every side shares: kits and config.yaml parse
 * into it, the sentry matches server names against its hosts, the runtime
 * hands it to the gateway, and the gateway renders the header.
 *
 *   hosts: [api.github.com, "*.githubusercontent.com"]
 *   header: "Authorization: Bearer {}"     ({} the secret, {base64} it base64'd) */
#ifndef AGENTBOX_CREDENTIAL_H
#define AGENTBOX_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress.h"
#include "error.h"

#define CRED_MAX 64                /* header credentials per box */
#define CRED_HOSTS_MAX 64          /* hosts per credential */
#define CRED_SECRET_MAX 8192       /* bytes of one secret */
#define CRED_HEADER_NAME_MAX 64
#define CRED_TEMPLATE_MAX 1024

enum cred_encoding { CRED_PLAIN, CRED_BASE64 };

/* "Authorization: Bearer {}" taken apart */
struct cred_header {
	char name[CRED_HEADER_NAME_MAX + 1];   /* as written ("Authorization") */
	char prefix[CRED_TEMPLATE_MAX + 1];    /* the value before the placeholder */
	char suffix[CRED_TEMPLATE_MAX + 1];    /* ... and after it */
	enum cred_encoding encoding;
};

/* Parse a header template; `what` names it in errors ("credentials[0].header"). */
int cred_header_parse(const char *text, const char *what, struct cred_header *ret, struct ab_err *err);

/* One host entry: a name or "*.name" (one or more labels below it), as in
 * egress entries but without port, protocol or address. Parsed into e
 * (kind EGRESS_NAME or EGRESS_WILDCARD; e->name allocated, free it). */
int cred_host_parse(const char *text, const char *what, struct egress_entry *ret, struct ab_err *err);

/* Can this secret go into a header value? No control byte but tab, not
 * empty, at most CRED_SECRET_MAX bytes. */
int cred_secret_check(const char *secret, size_t len, const char *what, struct ab_err *err);

/* The header value for a secret: prefix, the secret (or its base64), suffix.
 * Writes at most cap bytes and a NUL; returns the length, -1 if it does not fit. */
ssize_t cred_header_value(const struct cred_header *h, const char *secret, size_t len, char *out, size_t cap);

/* Case-insensitive comparison of two header names */
bool cred_header_name_eq(const char *a, const char *b, size_t b_len);

/* The placeholder a box sees in a credential's variable: says what it is and
 * that it is not the secret. */
#define CRED_PLACEHOLDER_PREFIX "agentbox-credential-placeholder-"

#endif
