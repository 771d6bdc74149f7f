/* A live policy change (egress allow/deny) reaching a running sentry. The
 * runtime writes the new canonical policy into the file the sentry holds
 * (EGRESS_POLICY_FILE in the state dir, never in the box's reach), then sends
 * SIGHUP; the sentry reads it, takes it in place of its own, and says so in
 * the file's first word:
 *
 *   "pending N\n<policy>"   the runtime's change number N, to apply
 *   "applied N\n"           done (N 0: the sentry listens for changes)
 *   "refused N <why>\n"     not applied, the old policy stays
 *
 * The ruleset is the runtime's to replace; here only what the sentry judges
 * with the policy changes: answers for names, the SNI check. A name denied
 * now: "applied N" is followed by a line "cut ENTRY" for each address its
 * answers held (sentry_names.h), with the deny entry's port and protocol,
 * for the runtime to end the flows open to it; in learn mode, where nothing
 * else would refuse them, they go into the deny sets too. A sentry started
 * without its helpers (a policy that allowed no name) or without the SNI check
 * cannot take a policy that needs them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "egress_internal.h"
#include "sentry_helper.h"
#include "sentry_names.h"
#include "sentry_reload.h"
#include "sentry_state.h"
#include "sni_proxy.h"
#include "util.h"

#define POLICY_FILE_MAX (1u << 20)
#define CUT_MAX 256        /* addresses a deny names for the runtime to cut */
#define CUT_TEXT_MAX (CUT_MAX * (EGRESS_ENTRY_TEXT + 6))

/* The answer: word, the change's number, why; then the cut lines, if any. */
static void say(struct sentry *s, const char *word, unsigned long n, const char *why, const char *more)
{
	char line[320];
	int len = snprintf(line, sizeof line, "%s %lu%s%s\n", word, n, why ? " " : "", why ? why : "");
	if (len <= 0 || (size_t)len >= sizeof line || ftruncate(s->policy_fd, 0) < 0)
		return;
	/* the cut lines first, the word last: the runtime reads once it sees the word */
	size_t m = more ? strlen(more) : 0;
	if (m)
		(void)!pwrite(s->policy_fd, more, m, len);
	(void)!pwrite(s->policy_fd, line, (size_t)len, 0);
}

static bool has_entry(const struct egress_list *l, const struct egress_entry *e)
{
	char a[EGRESS_ENTRY_TEXT], b[EGRESS_ENTRY_TEXT];
	egress_entry_to_string(e, a, sizeof a);
	for (size_t i = 0; i < l->n; i++)
		if (streq(a, egress_entry_to_string(&l->v[i], b, sizeof b)))
			return true;
	return false;
}

/* In learn mode the address goes into the deny set of d's shape, for as
 * long as an answer would have lived. */
static void deny_learnt(struct sentry *s, const struct egress_entry *d, int family, const uint8_t *addr)
{
	struct eg_set set;
	uint8_t key[24], protos[2];
	unsigned idx = eg_set_index(EG_DYNAMIC, true, family, eg_entry_shape(d));
	eg_set_get(idx, &set);
	size_t np = eg_entry_protos(d, protos);
	for (size_t i = 0; i < (np ? np : 1); i++) {
		eg_key(&set, addr, np ? protos[i] : 0, d->port, key);
		(void)sentry_helper_add(s, idx, key, s->ttl_max * 1000);
	}
}

/* For each name np denies that old did not: "cut ENTRY" lines, one for each
 * address learnt for it (the entry's port and protocol kept), into out. */
static void denied_addresses(struct sentry *s, const struct egress_policy *old, const struct egress_policy *np,
			     char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	int fam[CUT_MAX];
	uint8_t (*addrs)[16] = malloc(CUT_MAX * 16);
	for (size_t i = 0; addrs && i < np->deny.n; i++) {
		const struct egress_entry *d = &np->deny.v[i];
		if ((d->kind != EGRESS_NAME && d->kind != EGRESS_WILDCARD) || has_entry(&old->deny, d))
			continue;
		size_t n = sentry_names_addrs(s, d, fam, addrs, CUT_MAX);
		for (size_t k = 0; k < n && k < CUT_MAX; k++) {
			struct egress_entry c = { .kind = fam[k] == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6,
						  .prefix = fam[k] == AF_INET ? 32 : 128, .proto = d->proto, .port = d->port };
			memcpy(c.addr, addrs[k], 16);
			char text[EGRESS_ENTRY_TEXT];
			int w = snprintf(out + o, len - o, "cut %s\n", egress_entry_to_string(&c, text, sizeof text));
			if (w < 0 || (size_t)w >= len - o)
				break;
			o += (size_t)w;
			if (np->learn && s->helper >= 0)
				deny_learnt(s, d, fam[k], addrs[k]);
		}
	}
	free(addrs);
}

int sentry_reload_start(struct sentry *s, struct ab_err *err)
{
	s->reload_fd = -1;
	if (!s->sp->reloadable)
		return 0;
	s->policy_fd = s->sp->policy_fd;
	sigset_t hup;
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &hup, NULL) < 0)
		return ab_error(err, errno, "block SIGHUP");
	s->reload_fd = signalfd(-1, &hup, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->reload_fd < 0)
		return ab_error(err, errno, "signalfd");
	say(s, "applied", 0, NULL, NULL);
	return 0;
}

void sentry_reload(struct sentry *s)
{
	struct signalfd_siginfo si;
	while (read(s->reload_fd, &si, sizeof si) == (ssize_t)sizeof si)
		;
	char *text = malloc(POLICY_FILE_MAX + 1);
	if (!text)
		return;
	ssize_t len = pread(s->policy_fd, text, POLICY_FILE_MAX, 0);
	unsigned long n = 0;
	int off = 0;
	if (len <= 0 || (text[len] = 0, sscanf(text, "pending %lu\n%n", &n, &off) != 1) || off == 0) {
		free(text);
		return;   /* nothing asked (a stray SIGHUP), or answered already */
	}
	struct egress_policy np = {0};
	struct ab_err e;
	const char *why = NULL;
	if (egress_policy_from_string(text + off, "the changed policy", &np, &e) < 0)
		why = e.msg;
	else if (egress_policy_allows_names(&np) && (!s->sp->dns || !s->sp->n_upstream || s->net < 0 || s->helper < 0))
		why = s->sp->dns && s->sp->n_upstream
			      ? "the sentry was started for a policy that allowed no name: it has no helpers to resolve one"
			      : "the box has no upstream resolver: a name cannot be resolved";
	else if (sni_policy_needs_proxy(&np) && s->sni_fd[0] < 0 && s->sni_fd[1] < 0)
		why = "the sentry was started without the SNI check (its policy allowed no TCP/443)";
	if (why) {
		say(s, "refused", n, why, NULL);
		egress_policy_free(&np);
		free(text);
		return;
	}
	/* in place: the DNS code and the SNI check hold this very pointer */
	struct egress_policy *cur = (struct egress_policy *)s->p;
	char *cuts = malloc(CUT_TEXT_MAX);
	if (cuts)
		denied_addresses(s, cur, &np, cuts, CUT_TEXT_MAX);
	egress_policy_free(cur);
	*cur = np;
	say(s, "applied", n, NULL, cuts);
	free(cuts);
	free(text);
}
