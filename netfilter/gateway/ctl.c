/* The runtime's records (netfilter/wire/gateway_proto.h) and where the secrets
 * live: locked, undumpable pages that are wiped before they go back. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctl.h"
#include "gateway_proto.h"
#include "util.h"

/* Pages of their own for each secret's rendered value: locked, never in a
 * core dump, wiped on fork. One or a few pages a credential, not an arena
 * sized for the worst case (mlock makes every page of it resident). */
void *gw_secure_alloc(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	len = (len + page - 1) / page * page;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, len, MADV_DONTDUMP);
	(void)madvise(p, len, MADV_WIPEONFORK);
	(void)mlock(p, len);   /* may fail without RLIMIT_MEMLOCK room: still undumpable */
	return p;
}

void gw_secure_free(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	len = (len + page - 1) / page * page;
	explicit_bzero(p, len);
	munmap(p, len);
}

static int read_full(int fd, void *buf, size_t len, struct ab_err *err)
{
	ssize_t n = read_all(fd, buf, len);
	if (n < 0)
		return ab_error(err, errno, "read the runtime's configuration");
	if ((size_t)n != len)
		return ab_error(err, 0, "the runtime's configuration ended early");
	return 0;
}

/* the record's bytes, NUL-terminated; a secret's go to buf (locked) */
static int read_record(int fd, uint32_t *type, char **data, uint32_t *len, char *secret_buf, struct ab_err *err)
{
	uint32_t h[2];
	if (read_full(fd, h, sizeof h, err) < 0)
		return -1;
	*type = h[0];
	*len = h[1];
	if (h[1] > GW_REC_MAX)
		return ab_error(err, 0, "a configuration record of %u bytes", h[1]);
	if (h[0] == GW_REC_CRED_SECRET) {
		if (h[1] > CRED_SECRET_MAX)
			return ab_error(err, 0, "a secret longer than %d bytes", CRED_SECRET_MAX);
		*data = secret_buf;
	} else {
		*data = xmalloc(h[1] + 1);
	}
	if (read_full(fd, *data, h[1], err) < 0)
		return -1;
	(*data)[h[1]] = 0;
	return 0;
}

int gw_config_read(int fd, struct gw_config *cfg, struct ab_err *err)
{
	char *secret = gw_secure_alloc(CRED_SECRET_MAX + 1);
	if (!secret)
		return ab_error(err, ENOMEM, "locked memory for secrets");
	struct gw_cred *c = NULL;
	int r = 0;
	for (;;) {
		uint32_t type, len;
		char *data = NULL;
		if (read_record(fd, &type, &data, &len, secret, err) < 0) {
			r = -1;
			break;
		}
		if (type == GW_REC_END)
			break;
		switch (type) {
		case GW_REC_CONTAINER:
			snprintf(cfg->container_id, sizeof cfg->container_id, "%s", data);
			break;
		case GW_REC_CRED_NAME:
			if (cfg->n_creds == CRED_MAX) {
				r = ab_error(err, 0, "more than %d credentials", CRED_MAX);
				break;
			}
			c = &cfg->creds[cfg->n_creds++];
			snprintf(c->name, sizeof c->name, "%s", data);
			break;
		case GW_REC_CRED_HOST:
			if (!c || c->n_hosts == CRED_HOSTS_MAX)
				r = ab_error(err, 0, "a host outside a credential, or too many");
			else if (cred_host_parse(data, c->name, &c->hosts[c->n_hosts], err) == 0)
				c->n_hosts++;
			else
				r = -1;
			break;
		case GW_REC_CRED_HEADER:
			if (!c)
				r = ab_error(err, 0, "a header outside a credential");
			else
				r = cred_header_parse(data, c->name, &c->header, err);
			break;
		case GW_REC_CRED_SECRET: {
			if (!c || !c->header.name[0]) {
				r = ab_error(err, 0, "a secret before its credential's header");
				break;
			}
			if (cred_secret_check(secret, len, c->name, err) < 0) {
				r = -1;
				break;
			}
			size_t cap = strlen(c->header.prefix) + strlen(c->header.suffix) + len * 4 / 3 + 8;
			c->value = gw_secure_alloc(cap);
			/* the secret itself, for the responses' scan (scan.c) */
			c->secret = gw_secure_alloc(len + 1);
			ssize_t n = c->value ? cred_header_value(&c->header, secret, len, c->value, cap) : -1;
			if (n < 0 || !c->secret) {
				r = ab_error(err, ENOMEM, "%s: locked memory for its value", c->name);
			} else {
				c->value_len = (size_t)n;
				memcpy(c->secret, secret, len);
				c->secret_len = len;
			}
			break;
		}
#ifdef AGENTBOX_TEST_HOOKS
		case GW_REC_TEST_UNPROTECTED:
			/* a test build's reference: the gateway as it was before it
			 * looked at responses (tests/security/gateway-echo.bats) */
			cfg->unprotected = true;
			break;
#endif
		case GW_REC_UPSTREAM_CA:
			free(cfg->upstream_ca_pem);
			cfg->upstream_ca_pem = TAKE_PTR(data);
			cfg->upstream_ca_len = len;
			break;
		default:
			r = ab_error(err, 0, "unknown configuration record %u", type);
		}
		explicit_bzero(secret, CRED_SECRET_MAX + 1);
		if (data != secret)
			free(data);
		if (r < 0)
			break;
	}
	gw_secure_free(secret, CRED_SECRET_MAX + 1);
	if (r == 0)
		for (size_t i = 0; i < cfg->n_creds; i++)
			if (!cfg->creds[i].value || !cfg->creds[i].n_hosts)
				return ab_error(err, 0, "credential %s: no secret, header or host", cfg->creds[i].name);
	if (r == 0 && cfg->n_creds == 0)
		return ab_error(err, 0, "no credential to inject");
	return r;
}

const struct gw_config *gw_cfg;

size_t gw_creds_for(const char *host, size_t idx[CRED_MAX])
{
	size_t n = 0;
	for (size_t i = 0; i < gw_cfg->n_creds; i++)
		for (size_t k = 0; k < gw_cfg->creds[i].n_hosts; k++)
			if (egress_entry_matches_name(&gw_cfg->creds[i].hosts[k], host)) {
				idx[n++] = i;
				break;
			}
	return n;
}
