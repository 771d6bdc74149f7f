/* The box's CA and its leaf certificates, and the two TLS contexts: one that
 * faces the box (we are its server) and one that faces the real servers
 * (verified against the host's trust store and upstream_ca). OpenSSL does
 * all the cryptography and every certificate's encoding. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <string.h>
#include <time.h>

#include "tls.h"
#include "util.h"

#define LEAF_CACHE 32
#define CA_DAYS 365
#define LEAF_DAYS 30
#define LEAF_REMINT_S (7 * 86400)   /* a leaf older than this is made again */

struct leaf {
	char host[TLS_NAME_MAX];
	X509 *cert;
	time_t made, used;
};

/* The last session of each upstream host, to resume: the second and later
 * connections to a host skip its full handshake (the box's own handshake
 * with us is the one that cannot be skipped). */
#define SESSION_CACHE 16
struct up_session {
	char host[TLS_NAME_MAX];
	SSL_SESSION *s;
};
static struct up_session sessions[SESSION_CACHE];

static int new_session(SSL *ssl, SSL_SESSION *sess)
{
	const char *host = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	if (!host)
		return 0;
	struct up_session *slot = &sessions[0];
	for (size_t i = 0; i < SESSION_CACHE; i++) {
		if (sessions[i].s && streq(sessions[i].host, host)) {
			slot = &sessions[i];
			break;
		}
		if (!sessions[i].s)
			slot = &sessions[i];
	}
	SSL_SESSION_free(slot->s);
	slot->s = sess;
	snprintf(slot->host, sizeof slot->host, "%s", host);
	return 1;   /* ours now */
}

struct gw_tls {
	EVP_PKEY *ca_key, *leaf_key;
	X509 *ca;
	char *ca_pem;
	size_t ca_pem_len;
	SSL_CTX *box_ctx, *up_ctx;
	struct leaf leaves[LEAF_CACHE];
};

const char *gw_tls_error(void)
{
	static char buf[256];
	unsigned long e = ERR_get_error();
	if (!e)
		return "no detail";
	ERR_error_string_n(e, buf, sizeof buf);
	ERR_clear_error();
	return buf;
}

static int tls_fail(struct ab_err *err, const char *what)
{
	return ab_error(err, 0, "%s: %s", what, gw_tls_error());
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return false;
	bool ok = X509_add_ext(cert, ext, -1) == 1;
	X509_EXTENSION_free(ext);
	return ok;
}

/* a certificate's frame: version 3, a random serial, validity, subject CN */
static X509 *cert_new(EVP_PKEY *key, const char *cn, long days)
{
	X509 *x = X509_new();
	if (!x)
		return NULL;
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	ASN1_INTEGER *ai = NULL;
	if (RAND_bytes(serial, sizeof serial) != 1)
		goto fail;
	serial[0] &= 0x7f;   /* positive */
	bn = BN_bin2bn(serial, sizeof serial, NULL);
	ai = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	X509_NAME *name = X509_get_subject_name(x);
	if (!ai || X509_set_version(x, 2) != 1 || X509_set_serialNumber(x, ai) != 1 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), days * 86400) || X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0) != 1)
		goto fail;
	BN_free(bn);
	ASN1_INTEGER_free(ai);
	return x;
fail:
	BN_free(bn);
	ASN1_INTEGER_free(ai);
	X509_free(x);
	return NULL;
}

/* Name constraints: the CA may only vouch for the credentials' hosts, so even
 * its key could not speak for any other name. */
static char *permitted_names(const struct gw_config *cfg)
{
	size_t cap = 64, len = 0;
	char *s = xmalloc(cap);
	s[0] = 0;
	for (size_t i = 0; i < cfg->n_creds; i++)
		for (size_t k = 0; k < cfg->creds[i].n_hosts; k++) {
			const struct egress_entry *e = &cfg->creds[i].hosts[k];
			size_t need = len + strlen(e->name) + 32;
			if (need > cap)
				s = xrealloc(s, cap = 2 * need);
			/* a DNS constraint covers the name and every name below it */
			len += (size_t)sprintf(s + len, "%spermitted;DNS:%s", len ? "," : "", e->name);
		}
	return s;
}

static int make_ca(struct gw_tls *t, const struct gw_config *cfg, struct ab_err *err)
{
	char cn[300];
	snprintf(cn, sizeof cn, "agentbox gateway CA %.64s", cfg->container_id[0] ? cfg->container_id : "box");
	t->ca_key = EVP_EC_gen("P-256");
	if (!t->ca_key)
		return tls_fail(err, "make the CA key");
	t->ca = cert_new(t->ca_key, cn, CA_DAYS);
	if (!t->ca)
		return tls_fail(err, "make the CA certificate");
	X509_set_issuer_name(t->ca, X509_get_subject_name(t->ca));
	_cleanup_free_ char *names = permitted_names(cfg);
	if (!add_ext(t->ca, t->ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(t->ca, t->ca, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(t->ca, t->ca, NID_subject_key_identifier, "hash") ||
	    !add_ext(t->ca, t->ca, NID_name_constraints, names) ||
	    X509_sign(t->ca, t->ca_key, EVP_sha256()) <= 0)
		return tls_fail(err, "sign the CA certificate");
	BIO *b = BIO_new(BIO_s_mem());
	if (!b || PEM_write_bio_X509(b, t->ca) != 1) {
		BIO_free(b);
		return tls_fail(err, "write the CA certificate");
	}
	char *p;
	long n = BIO_get_mem_data(b, &p);
	t->ca_pem = xmalloc((size_t)n + 1);
	memcpy(t->ca_pem, p, (size_t)n);
	t->ca_pem[n] = 0;
	t->ca_pem_len = (size_t)n;
	BIO_free(b);
	return 0;
}

static X509 *mint_leaf(struct gw_tls *t, const char *host)
{
	X509 *x = cert_new(t->leaf_key, host, LEAF_DAYS);
	if (!x)
		return NULL;
	char san[TLS_NAME_MAX + 8];
	snprintf(san, sizeof san, "DNS:%s", host);
	if (X509_set_issuer_name(x, X509_get_subject_name(t->ca)) != 1 ||
	    !add_ext(x, t->ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, t->ca, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(x, t->ca, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, t->ca, NID_subject_alt_name, san) ||
	    !add_ext(x, t->ca, NID_authority_key_identifier, "keyid:always") ||
	    X509_sign(x, t->ca_key, EVP_sha256()) <= 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

int gw_tls_use_leaf(struct gw_tls *t, SSL *ssl, const char *host)
{
	time_t now = time(NULL);
	struct leaf *slot = &t->leaves[0];
	for (size_t i = 0; i < LEAF_CACHE; i++) {
		struct leaf *l = &t->leaves[i];
		if (l->cert && streq(l->host, host) && now - l->made < LEAF_REMINT_S) {
			slot = l;
			goto use;
		}
		if (!l->cert || l->used < slot->used)
			slot = l;   /* a free one, else the least recently used */
	}
	X509 *x = mint_leaf(t, host);
	if (!x)
		return -1;
	X509_free(slot->cert);
	slot->cert = x;
	snprintf(slot->host, sizeof slot->host, "%s", host);
	slot->made = now;
use:
	slot->used = now;
	if (SSL_use_certificate(ssl, slot->cert) != 1 || SSL_use_PrivateKey(ssl, t->leaf_key) != 1)
		return -1;
	return 0;
}

/* The host's CA bundle, read only for the issuers a connection needs. Loaded
 * whole, its ~140 certificates took ~1 MiB of every gateway's heap; this
 * keeps the file open (the gateway reads no path once it serves) and, when
 * OpenSSL asks for an issuer it has not seen yet, reads the file through for
 * certificates of that subject, which then stay in the store's cache. */
static int bundle_fd = -1;

static int by_subject(X509_LOOKUP *lookup, X509_LOOKUP_TYPE type, const X509_NAME *name, X509_OBJECT *ret)
{
	if (type != X509_LU_X509 || bundle_fd < 0)
		return 0;
	struct stat st;
	if (fstat(bundle_fd, &st) < 0 || st.st_size <= 0 || st.st_size > (16 << 20))
		return 0;
	char *text = malloc((size_t)st.st_size);
	if (!text || pread(bundle_fd, text, (size_t)st.st_size, 0) != st.st_size) {
		free(text);
		return 0;
	}
	BIO *b = BIO_new_mem_buf(text, (int)st.st_size);
	X509 *x, *found = NULL;
	X509_STORE *store = X509_LOOKUP_get_store(lookup);
	while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		if (X509_NAME_cmp(X509_get_subject_name(x), name) == 0) {
			(void)X509_STORE_add_cert(store, x);   /* cached: not read again */
			if (!found && X509_up_ref(x) == 1)
				found = x;
		}
		X509_free(x);
	}
	ERR_clear_error();   /* the end of the file reads as an error */
	BIO_free(b);
	free(text);
	if (!found)
		return 0;
	int ok = X509_OBJECT_set1_X509(ret, found);
	X509_free(found);
	return ok;
}

static int load_upstream_trust(SSL_CTX *ctx, const struct gw_config *cfg, struct ab_err *err)
{
	const char *file = X509_get_default_cert_file();
	const char *env = getenv(X509_get_default_cert_file_env());
	if (env && *env)
		file = env;
	bundle_fd = open(file, O_RDONLY | O_CLOEXEC);
	if (bundle_fd >= 0) {
		X509_LOOKUP_METHOD *m = X509_LOOKUP_meth_new("agentbox host bundle");
		if (!m || X509_LOOKUP_meth_set_get_by_subject(m, by_subject) != 1 ||
		    !X509_STORE_add_lookup(SSL_CTX_get_cert_store(ctx), m))
			return tls_fail(err, "the host's trust store");
	}
	if (cfg->upstream_ca_pem) {
		BIO *b = BIO_new_mem_buf(cfg->upstream_ca_pem, (int)cfg->upstream_ca_len);
		STACK_OF(X509_INFO) *infos = b ? PEM_X509_INFO_read_bio(b, NULL, NULL, NULL) : NULL;
		BIO_free(b);
		int added = 0;
		for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++) {
			X509_INFO *xi = sk_X509_INFO_value(infos, i);
			if (xi->x509 && X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), xi->x509) == 1)
				added++;
		}
		sk_X509_INFO_pop_free(infos, X509_INFO_free);
		if (added == 0)
			return ab_error(err, 0, "upstream_ca: no certificate in it");
	}
	if (bundle_fd < 0 && !cfg->upstream_ca_pem)
		return ab_error(err, errno, "no trust store for upstream servers: %s", file);
	return 0;
}

int gw_tls_init(const struct gw_config *cfg, struct gw_tls **ret, struct ab_err *err)
{
	struct gw_tls *t = xcalloc(1, sizeof *t);
	int r = make_ca(t, cfg, err);
	if (r < 0)
		goto fail;
	t->leaf_key = EVP_EC_gen("P-256");
	if (!t->leaf_key) {
		r = tls_fail(err, "make the leaf key");
		goto fail;
	}
	t->box_ctx = SSL_CTX_new(TLS_server_method());
	t->up_ctx = SSL_CTX_new(TLS_client_method());
	if (!t->box_ctx || !t->up_ctx) {
		r = tls_fail(err, "TLS contexts");
		goto fail;
	}
	SSL_CTX *ctxs[2] = {t->box_ctx, t->up_ctx};
	for (int i = 0; i < 2; i++) {
		SSL_CTX_set_min_proto_version(ctxs[i], TLS1_2_VERSION);
		SSL_CTX_set_mode(ctxs[i], SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
						  SSL_MODE_RELEASE_BUFFERS);
	}
	/* no session cache: every connection is checked anew, and nothing of it stays */
	SSL_CTX_set_session_cache_mode(t->box_ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(t->box_ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_verify(t->up_ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_session_cache_mode(t->up_ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->up_ctx, new_session);
	SSL_CTX_set_options(t->up_ctx, SSL_OP_NO_RENEGOTIATION);
	if ((r = load_upstream_trust(t->up_ctx, cfg, err)) < 0)
		goto fail;
	*ret = t;
	return 0;
fail:
	SSL_CTX_free(t->box_ctx);
	SSL_CTX_free(t->up_ctx);
	EVP_PKEY_free(t->ca_key);
	EVP_PKEY_free(t->leaf_key);
	X509_free(t->ca);
	free(t->ca_pem);
	free(t);
	return r;
}

void gw_tls_box_callbacks(struct gw_tls *t, SSL_client_hello_cb_fn hello, SSL_CTX_alpn_select_cb_func alpn)
{
	SSL_CTX_set_client_hello_cb(t->box_ctx, hello, t);
	SSL_CTX_set_alpn_select_cb(t->box_ctx, alpn, t);
}

const char *gw_tls_ca_pem(const struct gw_tls *t, size_t *len)
{
	*len = t->ca_pem_len;
	return t->ca_pem;
}

SSL *gw_tls_new_client_side(struct gw_tls *t)
{
	return SSL_new(t->box_ctx);
}

SSL *gw_tls_new_upstream_side(struct gw_tls *t, const char *host, const unsigned char *alpn, size_t alpn_len)
{
	SSL *s = SSL_new(t->up_ctx);
	if (!s)
		return NULL;
	/* the real server must prove it is host: chain and name */
	for (size_t i = 0; i < SESSION_CACHE; i++)
		if (sessions[i].s && streq(sessions[i].host, host)) {
			(void)SSL_set_session(s, sessions[i].s);   /* the peer was verified for host when it was made */
			break;
		}
	if (SSL_set_tlsext_host_name(s, host) != 1 || SSL_set1_host(s, host) != 1 ||
	    (alpn_len && SSL_set_alpn_protos(s, alpn, (unsigned)alpn_len) != 0)) {
		SSL_free(s);
		return NULL;
	}
	return s;
}
