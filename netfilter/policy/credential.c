/* Header credentials: templates, hosts, secrets (see credential.h). */
#include "credential.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* RFC 9110 5.6.2: token = 1*tchar */
static bool tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Headers the gateway owns or that frame the message: a credential may not
 * set them (it would let a template split or smuggle requests). */
static const char *const reserved[] = {
	"host", "connection", "content-length", "transfer-encoding", "upgrade", "te", "trailer",
	"keep-alive", "proxy-connection", "proxy-authorization", "expect", "http2-settings", NULL,
};

bool cred_header_name_eq(const char *a, const char *b, size_t b_len)
{
	return strlen(a) == b_len && strncasecmp(a, b, b_len) == 0;
}

static bool value_bytes_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

int cred_header_parse(const char *text, const char *what, struct cred_header *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	const char *colon = strchr(text, ':');
	if (!colon)
		return ab_error(err, 0, "%s: \"%s\" is not \"Name: value with {}\"", what, text);
	size_t n = (size_t)(colon - text);
	if (n == 0 || n > CRED_HEADER_NAME_MAX)
		return ab_error(err, 0, "%s: the header name must have 1 to %d characters", what, CRED_HEADER_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!tchar((unsigned char)text[i]))
			return ab_error(err, 0, "%s: \"%.*s\" is not a header name (letters, digits and !#$%%&'*+-.^_`|~)",
					what, (int)n, text);
	for (size_t i = 0; reserved[i]; i++)
		if (cred_header_name_eq(reserved[i], text, n))
			return ab_error(err, 0, "%s: the header %.*s frames the message and cannot carry a credential",
					what, (int)n, text);
	memcpy(ret->name, text, n);
	const char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	size_t vlen = strlen(v);
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (!value_bytes_ok(v, vlen))
		return ab_error(err, 0, "%s: the value has a control character", what);
	const char *ph = NULL;
	size_t ph_len = 0;
	for (const char *p = v; p < v + vlen; p++) {
		size_t len = strncmp(p, "{base64}", 8) == 0 ? 8 : strncmp(p, "{}", 2) == 0 ? 2 : 0;
		if (!len)
			continue;
		if (ph)
			return ab_error(err, 0, "%s: more than one {} in \"%s\"", what, text);
		ph = p;
		ph_len = len;
		p += len - 1;
	}
	if (!ph)
		return ab_error(err, 0, "%s: \"%s\" has no {} where the secret goes", what, text);
	size_t pre = (size_t)(ph - v), post = vlen - pre - ph_len;
	if (pre > CRED_TEMPLATE_MAX || post > CRED_TEMPLATE_MAX)
		return ab_error(err, 0, "%s: longer than %d characters", what, CRED_TEMPLATE_MAX);
	memcpy(ret->prefix, v, pre);
	memcpy(ret->suffix, ph + ph_len, post);
	ret->encoding = ph_len == 8 ? CRED_BASE64 : CRED_PLAIN;
	return 0;
}

int cred_host_parse(const char *text, const char *what, struct egress_entry *ret, struct ab_err *err)
{
	struct egress_policy p = {0};
	if (strchr(text, ',') || strchr(text, ':') || strchr(text, '/'))
		return ab_error(err, 0, "%s: \"%s\" is not a host name (no port, protocol, address or list)", what, text);
	if (egress_policy_add(&p, text, false, what, err) < 0)
		return -1;
	if (p.allow.n != 1 || (p.allow.v[0].kind != EGRESS_NAME && p.allow.v[0].kind != EGRESS_WILDCARD)) {
		egress_policy_free(&p);
		return ab_error(err, 0, "%s: \"%s\" is not a host name (a credential goes to names, not addresses)",
				what, text);
	}
	*ret = p.allow.v[0];
	ret->name = xstrdup(ret->name);
	egress_policy_free(&p);
	return 0;
}

int cred_secret_check(const char *secret, size_t len, const char *what, struct ab_err *err)
{
	if (len == 0)
		return ab_error(err, 0, "%s: the secret is empty", what);
	if (len > CRED_SECRET_MAX)
		return ab_error(err, 0, "%s: the secret is longer than %d bytes", what, CRED_SECRET_MAX);
	if (!value_bytes_ok(secret, len))
		return ab_error(err, 0, "%s: the secret has a control character (a newline?), so it cannot go into a header",
				what);
	return 0;
}

static size_t base64(const unsigned char *in, size_t n, char *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	return o;
}

ssize_t cred_header_value(const struct cred_header *h, const char *secret, size_t len, char *out, size_t cap)
{
	size_t pre = strlen(h->prefix), post = strlen(h->suffix);
	size_t mid = h->encoding == CRED_BASE64 ? (len + 2) / 3 * 4 : len;
	if (pre + mid + post + 1 > cap)
		return -1;
	memcpy(out, h->prefix, pre);
	if (h->encoding == CRED_BASE64)
		base64((const unsigned char *)secret, len, out + pre);
	else
		memcpy(out + pre, secret, len);
	memcpy(out + pre + mid, h->suffix, post);
	out[pre + mid + post] = 0;
	return (ssize_t)(pre + mid + post);
}
