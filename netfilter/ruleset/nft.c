/* The set layout of table inet agentbox and a minimal nftables batch sender:
 * libnftnl builds the messages, libmnl carries them, every message asks for an
 * ack for the last message of a batch (errors come for any), matched by sequence
 * number and port id. */
#include "egress_internal.h"
#include "netns.h"

#include <netinet/in.h> /* before the linux/ headers */
#include <errno.h>
#include <fcntl.h>
#include <libnftnl/common.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

/* By index: [dns_]{allow,deny}_v{4,6}[_proto|_port], then the upstream and guard sets */
static const char *const set_names[EG_N_SETS] = {
	"allow_v4", "allow_v4_proto", "allow_v4_port", "allow_v6", "allow_v6_proto", "allow_v6_port",
	"deny_v4", "deny_v4_proto", "deny_v4_port", "deny_v6", "deny_v6_proto", "deny_v6_port",
	"dns_allow_v4", "dns_allow_v4_proto", "dns_allow_v4_port",
	"dns_allow_v6", "dns_allow_v6_proto", "dns_allow_v6_port",
	"dns_deny_v4", "dns_deny_v4_proto", "dns_deny_v4_port",
	"dns_deny_v6", "dns_deny_v6_proto", "dns_deny_v6_port",
	"dns_upstream_v4", "dns_upstream_v6", "dns_guard_v4", "dns_guard_v6",
};

void eg_set_get(unsigned idx, struct eg_set *s)
{
	memset(s, 0, sizeof *s);
	s->name = set_names[idx];
	if (idx < 24) {
		s->kind = idx < 12 ? EG_STATIC : EG_DYNAMIC;
		unsigned r = idx % 12;
		s->deny = r >= 6;
		s->family = (r % 6) >= 3 ? AF_INET6 : AF_INET;
		s->shape = (enum eg_shape)(r % 3);
	} else {
		s->kind = idx < 26 ? EG_UPSTREAM : EG_GUARD;
		s->family = idx % 2 ? AF_INET6 : AF_INET;
		s->shape = EG_SHAPE_ANY;
	}
	uint32_t alen = s->family == AF_INET ? 4 : 16;
	s->key_len = alen + (s->shape >= EG_SHAPE_PROTO ? 4 : 0) + (s->shape == EG_SHAPE_PORT ? 4 : 0);
}

unsigned eg_set_index(enum eg_kind kind, bool deny, int family, enum eg_shape shape)
{
	unsigned v6 = family == AF_INET6;
	switch (kind) {
	case EG_STATIC:
		return (deny ? 6 : 0) + v6 * 3 + (unsigned)shape;
	case EG_DYNAMIC:
		return 12 + (deny ? 6 : 0) + v6 * 3 + (unsigned)shape;
	case EG_UPSTREAM:
		return 24 + v6;
	case EG_GUARD:
		return 26 + v6;
	}
	return 0;
}

enum eg_shape eg_entry_shape(const struct egress_entry *e)
{
	if (e->port)
		return EG_SHAPE_PORT;
	return e->proto ? EG_SHAPE_PROTO : EG_SHAPE_ANY;
}

size_t eg_entry_protos(const struct egress_entry *e, uint8_t protos[2])
{
	if (e->proto) {
		protos[0] = e->proto;
		return 1;
	}
	if (!e->port)
		return 0;
	/* "host:port" without a protocol means both */
	protos[0] = IPPROTO_TCP;
	protos[1] = IPPROTO_UDP;
	return 2;
}

size_t eg_key(const struct eg_set *s, const uint8_t *addr, uint8_t proto, uint16_t port, uint8_t out[24])
{
	size_t alen = s->family == AF_INET ? 4 : 16, n = alen;
	memset(out, 0, 24);
	memcpy(out, addr, alen);
	if (s->shape >= EG_SHAPE_PROTO) {
		out[n] = proto;
		n += 4;
	}
	if (s->shape == EG_SHAPE_PORT) {
		out[n] = (uint8_t)(port >> 8);
		out[n + 1] = (uint8_t)port;
		n += 4;
	}
	return n;
}

struct nl_open {
	struct mnl_socket *nl;
	int e;
};

static int nl_open_here(void *arg, struct ab_err *err)
{
	struct nl_open *o = arg;
	o->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	o->e = errno;
	return 0;
}

int eg_nl_open(int netns_fd, struct mnl_socket **ret, struct ab_err *err)
{
	/* A netlink socket talks to the namespace it was created in: create it
	 * there (a child does, or we do when we are there already). */
	struct nl_open o = { NULL, 0 };
	if (netns_fd < 0)
		(void)nl_open_here(&o, err);
	else if (egress_in_netns(netns_fd, nl_open_here, &o, err) < 0)
		return -1;
	struct mnl_socket *nl = o.nl;
	if (!nl)
		return ab_error(err, o.e, "open netlink socket");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;
		mnl_socket_close(nl);
		return ab_error(err, e, "bind netlink socket");
	}
	*ret = nl;
	return 0;
}

/* Room for a message of up to room bytes; returns where to build it, or NULL
 * (the batch failed: nothing more is added, and eg_batch_send says why). */
static char *batch_reserve(struct eg_batch *b, size_t room)
{
	if (b->error)
		return NULL;
	if (b->cap - b->len < room) {
		size_t cap = b->cap ? b->cap : 16384;
		while (cap - b->len < room)
			cap *= 2;
		char *buf = realloc(b->buf, cap);
		if (!buf) {
			eg_batch_fail(b, ENOMEM);
			return NULL;
		}
		memset(buf + b->len, 0, cap - b->len);
		b->buf = buf;
		b->cap = cap;
	}
	return b->buf + b->len;
}

void eg_batch_init(struct eg_batch *b, uint32_t seq)
{
	memset(b, 0, sizeof *b);
	b->seq_first = b->seq_next = seq + 1;
	char *p = batch_reserve(b, 64);
	if (!p)
		return;
	struct nlmsghdr *nlh = nftnl_batch_begin(p, seq);
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

void eg_batch_fail(struct eg_batch *b, int e)
{
	if (!b->error)
		b->error = e;
}

void eg_batch_free(struct eg_batch *b)
{
	free(b->what);
	free(b->buf);
	memset(b, 0, sizeof *b);
}

struct nlmsghdr *eg_batch_msg(struct eg_batch *b, size_t room, uint16_t type, uint16_t flags)
{
	char *p = batch_reserve(b, room);
	return p ? nftnl_nlmsg_build_hdr(p, type, NFPROTO_INET, flags | NLM_F_ACK, b->seq_next) : NULL;
}

void eg_batch_commit(struct eg_batch *b, const char *verb, const char *object)
{
	if (b->error)
		return;
	if (b->n_what == b->cap_what) {
		size_t cap = b->cap_what ? b->cap_what * 2 : 32;
		struct eg_what *what = realloc(b->what, cap * sizeof *what);
		if (!what) {
			eg_batch_fail(b, ENOMEM);
			return;
		}
		b->what = what;
		b->cap_what = cap;
	}
	struct nlmsghdr *nlh = (struct nlmsghdr *)(b->buf + b->len);
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	b->what[b->n_what++] = (struct eg_what){ verb, object };
	b->seq_next++;
}

static void grow_buf(int fd, int force, int plain, size_t want)
{
	int v = want > (size_t)1 << 30 ? 1 << 30 : (int)want;
	/* FORCE needs CAP_NET_ADMIN, which every caller has; else take what we get */
	if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof v) < 0)
		(void)setsockopt(fd, SOL_SOCKET, plain, &v, sizeof v);
}

/* "VERB OBJECT", for an error message */
static const char *what_text(const struct eg_what *w, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", w->verb, w->object ? " " : "", w->object ? w->object : "");
	return buf;
}

int eg_batch_send(struct mnl_socket *nl, struct eg_batch *b, struct ab_err *err)
{
	char *p = batch_reserve(b, 64);
	if (!p)
		return ab_error(err, b->error, "build the nftables batch");
	struct nlmsghdr *end = nftnl_batch_end(p, b->seq_next);
	size_t total = b->len + NLMSG_ALIGN(end->nlmsg_len);
	int fd = mnl_socket_get_fd(nl);
	uint32_t portid = mnl_socket_get_portid(nl);
	int one = 1;
	/* acks without a copy of the request keep the replies small */
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
	if (total > 65536)
		grow_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, total * 2);
	if (b->n_what > 64)
		grow_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, b->n_what * 1024 + 65536);

	/* Only the last message asks for an ack: a message that fails is reported
	 * with or without NLM_F_ACK (and the batch is aborted), so a single ack at the
	 * end proves the whole batch went in. An ack per message cost ~86 recv calls
	 * for the default ruleset. */
	struct nlmsghdr *last = NULL;
	int left = (int)b->len;
	for (struct nlmsghdr *nlh = (struct nlmsghdr *)b->buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_seq >= b->seq_first && nlh->nlmsg_seq < b->seq_next) {
			nlh->nlmsg_flags &= (uint16_t)~NLM_F_ACK;
			last = nlh;
		}
	}
	if (last)
		last->nlmsg_flags |= NLM_F_ACK;

	if (mnl_socket_sendto(nl, b->buf, total) < 0)
		return ab_error(err, errno, "send nftables batch");

	/* The kernel handles the batch inside sendmsg, so every reply is queued by now. */
	bool last_acked = false;   /* only the last message asked for an ack */
	int first_err = 0;
	struct eg_what first_what = { NULL, NULL };
	char rbuf[16384];
	for (;;) {
		ssize_t n = recv(fd, rbuf, sizeof rbuf, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return ab_error(err, errno, "receive nftables acks");
		}
		int left = (int)n;
		for (struct nlmsghdr *nlh = (struct nlmsghdr *)rbuf; mnl_nlmsg_ok(nlh, left);
		     nlh = mnl_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_pid != portid)
				continue;
			uint32_t seq = nlh->nlmsg_seq;
			struct eg_what what = { "nftables batch", NULL };
			if (seq >= b->seq_first && seq < b->seq_next) {
				size_t i = seq - b->seq_first;
				what = b->what[i];
				if (i == b->n_what - 1)
					last_acked = true;
			} else if (seq != b->seq_first - 1 && seq != b->seq_next)
				continue;
			if (mnl_cb_run(nlh, nlh->nlmsg_len, seq, portid, NULL, NULL) < 0 && !first_err) {
				first_err = errno ? errno : EPROTO;
				first_what = what;
			}
		}
	}
	char text[160];
	if (first_err)
		return ab_error(err, first_err, "%s", what_text(&first_what, text, sizeof text));
	if (b->n_what > 0 && !last_acked)
		return ab_error(err, EPROTO, "%s: no acknowledgement from the kernel",
				what_text(&b->what[b->n_what - 1], text, sizeof text));
	return 0;
}

void eg_batch_elems(struct eg_batch *b, const struct eg_set *s, uint16_t type, uint16_t flags,
		    const struct eg_elem *elems, size_t n, const char *verb)
{
	struct nftnl_set *set = nftnl_set_alloc();
	if (!set) {
		eg_batch_fail(b, ENOMEM);
		return;
	}
	nftnl_set_set_str(set, NFTNL_SET_TABLE, EGRESS_TABLE);
	nftnl_set_set_str(set, NFTNL_SET_NAME, s->name);
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	for (size_t i = 0; i < n; i++) {
		struct nftnl_set_elem *e = nftnl_set_elem_alloc();
		if (!e) {
			nftnl_set_free(set);
			eg_batch_fail(b, ENOMEM);
			return;
		}
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, elems[i].key, s->key_len);
		if (elems[i].has_end)
			nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY_END, elems[i].key_end, s->key_len);
		if (elems[i].flags)
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, elems[i].flags);
		if (elems[i].timeout_ms)
			nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, elems[i].timeout_ms);
		nftnl_set_elem_add(set, e);
	}
	/* an element costs well under 128 bytes on the wire */
	struct nlmsghdr *nlh = eg_batch_msg(b, 512 + n * 128, type, flags);
	if (nlh) {
		nftnl_set_elems_nlmsg_build_payload(nlh, set);
		eg_batch_commit(b, verb, s->name);
	}
	nftnl_set_free(set);
}
