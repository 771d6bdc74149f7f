/* A live policy change (egress allow/deny) replaces the whole ruleset in one
 * batch: new entries may need sets and rules in the middle of the chains. What
 * the sentry put in the sets (its upstream resolvers, the addresses of allowed
 * names with what is left of their timeouts) is read first and added back in
 * the same batch, so neither its lookups nor the box's flows to names it
 * resolved notice. */
#include <netinet/in.h> /* before the linux/ headers */
#include <errno.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "egress_internal.h"
#include "ruleset.h"
#include "util.h"

#define CARRY_MAX (4 * EGRESS_SET_ELEMS_MAX)

struct carried {
	unsigned set;
	struct eg_elem e;
};

struct carry {
	struct carried *v;
	size_t n, cap;
	unsigned set;       /* the set being read */
	uint32_t key_len;
	int error;
};

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	struct carry *c = data;
	struct nftnl_set *s = nftnl_set_alloc();
	if (!s)
		return MNL_CB_ERROR;
	struct nftnl_set_elems_iter *it = NULL;
	if (nftnl_set_elems_nlmsg_parse(nlh, s) == 0)
		it = nftnl_set_elems_iter_create(s);
	struct nftnl_set_elem *e;
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		uint32_t len = 0;
		const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
		if (!key || len != c->key_len || c->n >= CARRY_MAX)
			continue;
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			struct carried *v = realloc(c->v, cap * sizeof *v);
			if (!v) {
				c->error = ENOMEM;
				break;
			}
			c->v = v;
			c->cap = cap;
		}
		struct carried *x = &c->v[c->n++];
		memset(x, 0, sizeof *x);
		x->set = c->set;
		memcpy(x->e.key, key, len);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION)) {
			uint64_t left = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION);
			x->e.timeout_ms = left < 1000 ? 1000 : left;   /* about to go: a second more */
		}
	}
	if (it)
		nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
	return MNL_CB_OK;
}

/* The elements of one set; a set the ruleset does not have is empty. */
static int read_set(struct mnl_socket *nl, uint32_t *seq, unsigned idx, struct carry *c, struct ab_err *err)
{
	struct eg_set s;
	eg_set_get(idx, &s);
	char *buf = malloc(MNL_SOCKET_BUFFER_SIZE * 4);
	struct nftnl_set *set = nftnl_set_alloc();
	if (!buf || !set) {
		free(buf);
		if (set)
			nftnl_set_free(set);
		return ab_error(err, ENOMEM, "read set %s", s.name);
	}
	nftnl_set_set_str(set, NFTNL_SET_TABLE, EGRESS_TABLE);
	nftnl_set_set_str(set, NFTNL_SET_NAME, s.name);
	uint32_t this_seq = ++*seq;
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP, this_seq);
	nftnl_set_elems_nlmsg_build_payload(nlh, set);
	nftnl_set_free(set);
	c->set = idx;
	c->key_len = s.key_len;
	int r = 0;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		r = ab_error(err, errno, "read set %s", s.name);
	uint32_t portid = mnl_socket_get_portid(nl);
	while (r == 0) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
		if (n < 0) {
			r = ab_error(err, errno, "read set %s", s.name);
			break;
		}
		int cb = mnl_cb_run(buf, (size_t)n, this_seq, portid, elems_cb, c);
		if (cb < 0 && errno != ENOENT)
			r = ab_error(err, errno, "read set %s", s.name);
		if (cb <= 0)
			break;
	}
	free(buf);
	if (r == 0 && c->error)
		r = ab_error(err, c->error, "read set %s", s.name);
	return r;
}

static void put_carried(struct eg_batch *b, const bool used[EG_N_SETS], void *data)
{
	const struct carry *c = data;
	for (size_t i = 0; i < c->n;) {
		size_t k = i;
		while (k < c->n && c->v[k].set == c->v[i].set && k - i < 256)
			k++;
		if (used[c->v[i].set]) {
			struct eg_set s;
			struct eg_elem elems[256];
			eg_set_get(c->v[i].set, &s);
			for (size_t j = i; j < k; j++)
				elems[j - i] = c->v[j].e;
			eg_batch_elems(b, &s, NFT_MSG_NEWSETELEM, NLM_F_CREATE, elems, k - i, "add elements to set");
		}
		i = k;
	}
}

int egress_reinstall(int netns_fd, const struct egress_policy *p, const char *container_id, uint16_t sentry_port,
		     bool keep_names, struct ab_err *err)
{
	struct mnl_socket *nl;
	if (eg_nl_open(netns_fd, &nl, err) < 0)
		return ab_wrap(err, "egress: change the ruleset");
	struct carry c = {0};
	uint32_t seq = (uint32_t)time(NULL);
	int r = 0;
	for (unsigned idx = 0; idx < EG_N_SETS && r == 0; idx++) {
		struct eg_set s;
		eg_set_get(idx, &s);
		if (s.kind == EG_STATIC || (s.kind == EG_DYNAMIC && !s.deny && !keep_names))
			continue;   /* the policy's own, made again; or no longer to be trusted */
		r = read_set(nl, &seq, idx, &c, err);
	}
	mnl_socket_close(nl);
	if (r == 0) {
		struct eg_more more = { put_carried, &c };
		r = eg_ruleset_install(netns_fd, p, container_id, sentry_port, true, &more, err);
	}
	free(c.v);
	return r < 0 ? ab_wrap(err, "egress: change the ruleset") : 0;
}
