/* Rootless detection and the user's runtime directory (rootless.h). */
#include "rootless.h"
#include "state.h"
#include "userns.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool rootless_detect(void)
{
	static int rootless = -1;
	if (rootless < 0)
		rootless = geteuid() != 0 || !userns_is_initial();
	return rootless;
}

/* A directory of ours alone: not a symlink, owned by us, no access for others.
 * A shared /tmp lets anyone make /tmp/agentbox-UID first. */
static int check_private_dir(const char *dir, struct ab_err *err)
{
	struct stat st;
	if (lstat(dir, &st) < 0)
		return ab_error(err, errno, "the runtime directory %s", dir);
	if (!S_ISDIR(st.st_mode))
		return ab_error(err, ENOTDIR, "the runtime directory %s", dir);
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return ab_error(err, 0, "the runtime directory %s is not the user's alone (owner %u, mode %03o): refused (set XDG_RUNTIME_DIR, or give --root)",
				dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
	return 0;
}

int rootless_user_runtime_dir(char *buf, size_t len, struct ab_err *err)
{
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (xdg && *xdg) {
		if (snprintf(buf, len, "%s", xdg) >= (int)len)
			return ab_error(err, ENAMETOOLONG, "XDG_RUNTIME_DIR %s", xdg);
		return 0;
	}
	/* pam_systemd's directory, when the session has one without saying so */
	struct stat st;
	snprintf(buf, len, "/run/user/%u", (unsigned)geteuid());
	if (lstat(buf, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077))
		return 0;
	const char *tmp = secure_getenv("TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (snprintf(buf, len, "%s/agentbox-%u", tmp, (unsigned)geteuid()) >= (int)len)
		return ab_error(err, ENAMETOOLONG, "TMPDIR %s", tmp);
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return ab_error(err, errno, "create the runtime directory %s", buf);
	return check_private_dir(buf, err);
}

const char *rootless_default_state_root(struct ab_err *err)
{
	static char root[PATH_MAX];
	if (!rootless_detect())
		return DEFAULT_STATE_ROOT;
	if (geteuid() == 0) {
		/* root of a user namespace: a runtime inside a container keeps the
		 * usual place, the runtime of a rootless engine the user's */
		const char *user = getenv("USER");
		const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
		if (!xdg || !*xdg || (user && streq(user, "root")))
			return DEFAULT_STATE_ROOT;
	}
	char dir[PATH_MAX - 16];
	if (rootless_user_runtime_dir(dir, sizeof dir, err) < 0)
		return NULL;
	snprintf(root, sizeof root, "%s/agentbox", dir);
	return root;
}
