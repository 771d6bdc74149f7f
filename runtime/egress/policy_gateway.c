/* A box's credential gateway in the lifecycle (policy.h): which header
 * credentials it gets (config.yaml and the flags, or the kit), their secrets
 * read now, the gateway started before the box is cloned, and the box's
 * trust store given the gateway's CA:
 *
 *   - every usual CA bundle the box has (Debian's, Red Hat's, Alpine's,
 *     SUSE's) gets a read-only bind of a copy with the CA appended;
 *   - the variables that programs bringing their own store read
 *     (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, GIT_SSL_CAINFO,
 *     NODE_EXTRA_CA_CERTS) name the first of them, unless the box sets them.
 *
 * The files are public certificates in the state directory; the CA's key
 * never leaves the gateway's memory. */
#include "policy_gateway.h"
#include "agent_credentials.h"
#include "config_mounts.h"
#include "gateway.h"
#include "log.h"
#include "sni_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define GATEWAY_CA_FILE "gateway-ca.pem"
#define GATEWAY_BUNDLE_FILE "gateway-bundle-%zu.pem"

static const char *const bundle_paths[] = {
	"/etc/ssl/certs/ca-certificates.crt",                 /* Debian, Ubuntu, Alpine, Arch */
	"/etc/pki/tls/certs/ca-bundle.crt",                   /* Fedora, RHEL */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  /* RHEL's extracted one */
	"/etc/ssl/ca-bundle.pem",                             /* SUSE */
	"/etc/ssl/cert.pem",                                  /* Alpine, BSD-style */
};

/* Where path inside the box comes from on the host: the last bind mount
 * that covers it, else the rootfs. */
static void host_view(const struct oci_config *c, const char *rootfs, const char *path, char *out, size_t len)
{
	for (size_t i = c->n_mounts; i-- > 0;) {
		const struct oci_mount *m = &c->mounts[i];
		size_t dl = strlen(m->destination);
		if (!(m->flags & MS_BIND) || !m->source || m->source[0] != '/' || strncmp(path, m->destination, dl) != 0 ||
		    (path[dl] != '/' && path[dl] != 0))
			continue;
		snprintf(out, len, "%s%s", m->source, path + dl);
		return;
	}
	snprintf(out, len, "%s%s", rootfs, path);
}

static int add_bind(struct oci_config *c, const char *source, const char *dest, struct ab_err *err)
{
	struct oci_mount *m = arena_alloc(&c->arena, (c->n_mounts + 1) * sizeof *m);
	memcpy(m, c->mounts, c->n_mounts * sizeof *m);
	struct oci_mount *n = &m[c->n_mounts];
	n->destination = arena_strdup(&c->arena, dest);
	n->source = arena_strdup(&c->arena, source);
	n->type = arena_strdup(&c->arena, "bind");
	n->options = arena_alloc(&c->arena, 4 * sizeof(char *));
	n->options[0] = arena_strdup(&c->arena, "bind");
	n->options[1] = arena_strdup(&c->arena, "ro");
	n->options[2] = arena_strdup(&c->arena, "nosuid");
	n->n_options = 3;
	if (oci_mount_parse_options(n, &c->arena, "credential gateway: trust store", err) < 0)
		return -1;
	c->mounts = m;
	c->n_mounts++;
	return 0;
}

static void set_env(struct oci_config *c, const char *name, const char *value)
{
	struct oci_process *p = c->process;
	size_t nl = strlen(name);
	for (size_t i = 0; i < p->n_env; i++)
		if (strncmp(p->env[i], name, nl) == 0 && p->env[i][nl] == '=')
			return;   /* the box's own choice stays */
	char **env = arena_alloc(&c->arena, (p->n_env + 2) * sizeof *env);
	memcpy(env, p->env, p->n_env * sizeof *env);
	env[p->n_env] = arena_printf(&c->arena, "%s=%s", name, value);
	p->env = env;
	p->n_env++;
}

static int write_state_file(int dirfd, const char *name, const char *a, size_t alen, const char *b, size_t blen,
			    struct ab_err *err)
{
	_cleanup_free_ char *text = xmalloc(alen + blen + 2);
	memcpy(text, a, alen);
	size_t n = alen;
	if (n && text[n - 1] != '\n')
		text[n++] = '\n';
	memcpy(text + n, b, blen);
	return write_file_atomic_at(dirfd, name, text, n + blen, 0644, err);
}

static int trust_store(struct agent_policy *p, struct oci_config *c, const char *rootfs, int dirfd, struct ab_err *err)
{
	const char *ca = p->gateway.ca_pem;
	size_t ca_len = p->gateway.ca_pem_len;
	char dir[PATH_MAX], fdlink[64];
	snprintf(fdlink, sizeof fdlink, "/proc/self/fd/%d", dirfd);
	ssize_t dl = readlink(fdlink, dir, sizeof dir - 1);
	if (dl < 0)
		return ab_error(err, errno, "credential gateway: find the state directory");
	dir[dl] = 0;
	if (write_state_file(dirfd, GATEWAY_CA_FILE, ca, ca_len, "", 0, err) < 0)
		return ab_wrap(err, "credential gateway");
	const char *first = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(bundle_paths); i++) {
		char host[PATH_MAX * 2];
		host_view(c, rootfs, bundle_paths[i], host, sizeof host);
		struct stat st;
		if (lstat(host, &st) < 0 || !S_ISREG(st.st_mode))
			continue;   /* absent, or a link to one of the others */
		_cleanup_free_ char *base = NULL;
		size_t blen;
		struct ab_err e;
		if (read_file_at(AT_FDCWD, host, 16u << 20, &base, &blen, &e) < 0) {
			log_warn("credential gateway: %s in the box: %s (left as it is)", bundle_paths[i], e.msg);
			continue;
		}
		char name[64], src[PATH_MAX + 64];
		snprintf(name, sizeof name, GATEWAY_BUNDLE_FILE, i);
		snprintf(src, sizeof src, "%s/%s", dir, name);
		if (write_state_file(dirfd, name, base, blen, ca, ca_len, err) < 0 ||
		    add_bind(c, src, bundle_paths[i], err) < 0)
			return ab_wrap(err, "credential gateway");
		if (!first)
			first = bundle_paths[i];
	}
	const char *bundle = first;
	if (!bundle)
		log_warn("credential gateway: the box has no CA bundle at the usual paths: programs in it must be told to trust %s/" GATEWAY_CA_FILE,
			 dir);
	static const char *const vars[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};
	for (size_t i = 0; bundle && i < ARRAY_SIZE(vars); i++)
		set_env(c, vars[i], bundle);
	/* node keeps its own store and adds this one */
	if (bundle)
		set_env(c, "NODE_EXTRA_CA_CERTS", bundle);
	return 0;
}

/* The credentials of config.yaml this container gets, with their secrets */
static int config_creds(struct agent_policy *p, const struct global_opts *g, const struct oci_config *c,
			struct gateway_cred *out, char **secrets, size_t *n, struct ab_err *err)
{
	size_t idx[CRED_MAX], k;
	if (agent_credentials_select(&p->config.credentials, g->credentials, oci_annotation(c, ANNOTATION_CREDENTIALS), idx, &k,
				     err) < 0)
		return -1;
	for (size_t i = 0; i < k; i++) {
		const struct agent_credential *ac = &p->config.credentials.v[idx[i]];
		struct gateway_cred *gc = &out[(*n)++];
		gc->name = ac->name;
		gc->hosts = (const char *const *)ac->hosts;
		gc->n_hosts = ac->n_hosts;
		gc->header = ac->header;
		if (agent_credential_secret(ac, &secrets[*n - 1], &gc->secret_len, err) < 0)
			return -1;
		gc->secret = secrets[*n - 1];
	}
	return 0;
}

static void placeholders(const struct agent_policy *p, const struct global_opts *g, struct oci_config *c)
{
	size_t idx[CRED_MAX], k;
	struct ab_err e;
	if (agent_credentials_select(&p->config.credentials, g->credentials, oci_annotation(c, ANNOTATION_CREDENTIALS), idx, &k, &e) < 0)
		return;
	for (size_t i = 0; i < k; i++) {
		const struct agent_credential *ac = &p->config.credentials.v[idx[i]];
		if (ac->placeholder_env)
			set_env(c, ac->placeholder_env, arena_printf(&c->arena, CRED_PLACEHOLDER_PREFIX "%s", ac->name));
	}
}

/* A header credential whose host the policy does not allow on TCP/443 can
 * never be used: one line each, so the first refused request is no mystery */
static void warn_unreachable(const struct agent_policy *p, const struct gateway_cred *creds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < creds[i].n_hosts; k++) {
			struct egress_entry e;
			struct ab_err err;
			if (cred_host_parse(creds[i].hosts[k], creds[i].name, &e, &err) < 0)
				continue;
			if (!sni_cred_host_reachable(&p->egress, &e))
				log_warn("credential %s: %s is not allowed on TCP/443 by the egress policy (network.allow): "
					 "its requests can never be made",
					 creds[i].name, creds[i].hosts[k]);
			free(e.name);
		}
}

int policy_gateway_start(struct agent_policy *p, const struct global_opts *g, const struct create_opts *o,
			 struct oci_config *c, struct container_state *st, int state_dirfd, struct ab_err *err)
{
	struct gateway_cred creds[2 * CRED_MAX];
	char *secrets[2 * CRED_MAX] = {0};
	size_t n = 0;
	int r = -1;
	if (config_creds(p, g, c, creds, secrets, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < o->n_gateway_creds && n < ARRAY_SIZE(creds); i++)
		creds[n++] = o->gateway_creds[i];
	if (n == 0) {
		r = 0;
		goto out;
	}
	if (n > CRED_MAX) {
		r = ab_error(err, 0, "credential gateway: more than %d header credentials", CRED_MAX);
		goto out;
	}
	if (!p->egress_enforced) {
		r = ab_error(err, 0, "credential gateway: header credentials need the egress firewall (it takes the box's connections to the gateway): refused with the firewall off");
		goto out;
	}
	warn_unreachable(p, creds, n);
	struct gateway_spec spec = {
		.container_id = st->id,
		.creds = creds,
		.n_creds = n,
		.upstream_ca = o->gateway_upstream_ca ? o->gateway_upstream_ca : p->config.credentials.upstream_ca,
	};
	if (gateway_spawn(&spec, &p->gateway, err) < 0)
		goto out;
	p->gateway_started = true;
	st->gateway_pid = p->gateway.pid;
	(void)proc_start_time(p->gateway.pid, &st->gateway_start_time);
	if (state_write(state_dirfd, st, err) < 0 || trust_store(p, c, st->rootfs, state_dirfd, err) < 0)
		goto out;
	placeholders(p, g, c);
	r = 0;
out:
	for (size_t i = 0; i < ARRAY_SIZE(secrets); i++)
		if (secrets[i])
			agent_credential_secret_free(secrets[i], strlen(secrets[i]));
	return r;
}

void policy_gateway_stop(struct agent_policy *p)
{
	if (!p->gateway_started)
		return;
	gateway_child_free(&p->gateway, true);
	p->gateway_started = false;
}

void policy_gateway_forget(struct agent_policy *p)
{
	if (!p->gateway_started)
		return;
	/* it lives on, ours to reap no more: the container's delete stops it */
	gateway_child_free(&p->gateway, false);
	p->gateway_started = false;
}

void policy_gateway_teardown(const struct container_state *s)
{
	if (s->gateway_pid > 0 && proc_is(s->gateway_pid, s->gateway_start_time))
		kill(s->gateway_pid, SIGKILL);
}
