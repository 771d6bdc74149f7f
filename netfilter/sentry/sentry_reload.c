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
 * with the policy changes: answers for names, the SNI check. A sentry started
 * without its helpers (a policy that allowed no name) or without the SNI check
 * cannot take a policy that needs them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sentry_reload.h"
#include "sentry_state.h"
#include "sni_proxy.h"
#include "util.h"

#define POLICY_FILE_MAX (1u << 20)

static void say(struct sentry *s, const char *word, unsigned long n, const char *why)
{
	char line[320];
	int len = snprintf(line, sizeof line, "%s %lu%s%s\n", word, n, why ? " " : "", why ? why : "");
	if (len > 0 && (size_t)len < sizeof line && ftruncate(s->policy_fd, 0) == 0)
		(void)!pwrite(s->policy_fd, line, (size_t)len, 0);
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
	say(s, "applied", 0, NULL);
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
		say(s, "refused", n, why);
		egress_policy_free(&np);
		free(text);
		return;
	}
	/* in place: the DNS code and the SNI check hold this very pointer */
	struct egress_policy *cur = (struct egress_policy *)s->p;
	egress_policy_free(cur);
	*cur = np;
	say(s, "applied", n, NULL);
	free(text);
}
