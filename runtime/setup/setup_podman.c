/* agentbox setup podman: a drop-in of our own,
 * containers.conf.d/50-agentbox.conf. */
#include "setup.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define PODMAN_MARK "# Written by agentbox setup"

static char *podman_dropin(const char *bin)
{
	return xasprintf(PODMAN_MARK ": the OCI runtime agentbox for Podman\n"
			 "# (podman --runtime agentbox ...); agentbox setup --undo podman removes this file.\n"
			 "# Podman 4 replaces these two lists rather than adding to them, so its own\n"
			 "# defaults are repeated here.\n"
			 "[engine]\n"
			 "runtime_supports_json = [\"crun\", \"runc\", \"kata\", \"runsc\", \"krun\", \"agentbox\"]\n"
			 "runtime_supports_nocgroup = [\"crun\", \"krun\", \"agentbox\"]\n"
			 "\n"
			 "[engine.runtimes]\n"
			 "agentbox = [\"%s\"]\n", bin);
}

int setup_edit_podman(const char *text, const char *what, const char *bin, bool undo,
		      struct setup_change *ret, struct ab_err *err)
{
	*ret = (struct setup_change){0};
	if (text && strncmp(text, PODMAN_MARK, strlen(PODMAN_MARK)) != 0)
		return ab_error(err, 0, "%s: was not written by agentbox setup; left as it is (remove it, or name another file with --config)", what);
	if (undo) {
		if (!text)
			return 0;
		ret->before = xstrdup(text);
		return 1;
	}
	char *want = podman_dropin(bin);
	if (text && streq(text, want)) {
		free(want);
		return 0;
	}
	ret->before = text ? xstrdup(text) : NULL;
	ret->after = want;
	return 1;
}
