/* agentbox setup ENGINE: the engine's file read, edited (setup_docker.c,
 * setup_podman.c, setup_containerd.c), shown as a diff, then written
 * atomically with its mode and owner, or removed when undo leaves it empty.
 * Errors name the file; nothing is written before the edit is known good. */
#include "setup.h"
#include "setup_text.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SETUP_MAX_FILE (4u << 20)

struct engine {
	const char *name;
	setup_edit_fn edit;
	const char *file;         /* as root */
	const char *user_file;    /* below $XDG_CONFIG_HOME for other users, or NULL */
	const char *added, *removed;
};

static const struct engine engines[] = {
	{"docker", setup_edit_docker, "/etc/docker/daemon.json", NULL,
	 "dockerd reads its runtimes again on SIGHUP: kill -HUP $(pidof dockerd) (or systemctl reload docker); "
	 "then docker run --runtime=agentbox ...",
	 "dockerd forgets the runtime on SIGHUP: kill -HUP $(pidof dockerd) (or systemctl reload docker)"},
	{"podman", setup_edit_podman, "/etc/containers/containers.conf.d/50-agentbox.conf",
	 "containers/containers.conf.d/50-agentbox.conf",
	 "podman reads it on every run, nothing to reload: podman --runtime agentbox run ...",
	 "podman reads its configuration on every run, nothing to reload"},
	{"containerd", setup_edit_containerd, "/etc/containerd/config.toml", NULL,
	 "restart containerd to load the handler (systemctl restart containerd); "
	 "a Kubernetes RuntimeClass with handler: agentbox then selects it",
	 "restart containerd to drop the handler (systemctl restart containerd)"},
};

static const struct engine *engine_named(const char *name, struct ab_err *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		if (streq(engines[i].name, name))
			return &engines[i];
	ab_error(err, 0, "setup: unknown engine \"%s\" (docker, podman or containerd)", name);
	return NULL;
}

/* the binary to register: --path, or the one running */
static int setup_binary(const char *opt, bool undo, char *buf, size_t size, struct ab_err *err)
{
	if (opt) {
		snprintf(buf, size, "%s", opt);
	} else {
		ssize_t n = readlink("/proc/self/exe", buf, size - 1);
		if (n < 0)
			return ab_error(err, errno, "setup: readlink /proc/self/exe (give --path)");
		buf[n] = 0;
		if (n > 10 && streq(buf + n - 10, " (deleted)"))
			return ab_error(err, 0, "setup: the running agentbox (%s) was deleted; give --path", buf);
	}
	if (buf[0] != '/')
		return ab_error(err, 0, "setup: --path %s: not an absolute path", buf);
	for (const char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\' || *p == 0x7f)
			return ab_error(err, 0, "setup: --path %s: quotes, backslashes and control characters are refused", buf);
	if (!undo && access(buf, X_OK) < 0)
		return ab_error(err, errno, "setup: --path %s", buf);
	return 0;
}

/* the engine's file: --config, else the default (a user's own for podman) */
static int setup_file(const struct engine *e, const char *opt, char *buf, size_t size, struct ab_err *err)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	if (opt)
		snprintf(buf, size, "%s", opt);
	else if (geteuid() == 0 || !e->user_file)
		snprintf(buf, size, "%s", e->file);
	else if (xdg && xdg[0] == '/')
		snprintf(buf, size, "%s/%s", xdg, e->user_file);
	else if (home && home[0] == '/')
		snprintf(buf, size, "%s/.config/%s", home, e->user_file);
	else
		return ab_error(err, 0, "setup: neither XDG_CONFIG_HOME nor HOME is set: give --config FILE");
	/* a symlink is followed: the file it names is edited */
	char real[PATH_MAX];
	struct stat st;
	if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!realpath(buf, real))
			return ab_error(err, errno, "setup: %s", buf);
		snprintf(buf, size, "%s", real);
	}
	return 0;
}

/* the file's text, or NULL when there is none */
static int setup_read(const char *path, char **ret, struct stat *st, struct ab_err *err)
{
	*ret = NULL;
	if (stat(path, st) < 0) {
		if (errno == ENOENT)
			return 0;
		return ab_error(err, errno, "setup: %s", path);
	}
	if (!S_ISREG(st->st_mode))
		return ab_error(err, 0, "setup: %s: not a regular file", path);
	size_t len;
	if (read_file_at(AT_FDCWD, path, SETUP_MAX_FILE, ret, &len, err) < 0)
		return ab_wrap(err, "setup");
	if (strlen(*ret) != len) {
		free(*ret);
		*ret = NULL;
		return ab_error(err, 0, "setup: %s: holds NUL bytes, not a configuration file", path);
	}
	return 0;
}

/* write (same mode and owner) or remove the file */
static int setup_apply(const char *path, const char *after, const struct stat *old, struct ab_err *err)
{
	if (!after) {
		if (unlink(path) < 0 && errno != ENOENT)
			return ab_error(err, errno, "setup: remove %s", path);
		return 0;
	}
	_cleanup_free_ char *dir = xstrdup(path);
	if (mkdir_p(dirname(dir), 0755, err) < 0)
		return ab_wrap(err, "setup");
	mode_t mode = old ? old->st_mode & 07777 : 0644;
	if (write_file_atomic_at(AT_FDCWD, path, after, strlen(after), mode, err) < 0)
		return ab_wrap(err, "setup");
	/* the umask may have taken bits the file had */
	if (old && (chmod(path, mode) < 0 || chown(path, old->st_uid, old->st_gid) < 0))
		return ab_error(err, errno, "setup: %s written, but its mode or owner could not be restored", path);
	return 0;
}

/* a file of root's, and we are not: say how to run it */
static int as_root_hint(const struct engine *e, bool undo, struct ab_err *err)
{
	if (geteuid() != 0 && (err->code == EACCES || err->code == EPERM)) {
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof err->msg - n, " (as root: sudo agentbox setup%s %s)",
			 undo ? " --undo" : "", e->name);
	}
	return -1;
}

static int setup_run(const struct engine *e, const char *path, const char *bin, bool undo, bool dry_run,
		     struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct stat st;
	if (setup_read(path, &text, &st, err) < 0)
		return as_root_hint(e, undo, err);
	struct setup_change c;
	int r = e->edit(text, path, bin, undo, &c, err);
	if (r < 0)
		return ab_wrap(err, "setup %s", e->name);
	if (r == 0) {
		printf("%s: nothing to change (agentbox is %s)\n", path, undo ? "not registered there by agentbox setup" : "registered already");
		return 0;
	}
	if (c.note)
		printf("# %s: %s\n", path, c.note);
	setup_print_diff(path, c.before, c.after);
	if (dry_run) {
		printf("dry run: %s not changed\n", path);
	} else {
		fflush(stdout);
		r = setup_apply(path, c.after, text ? &st : NULL, err);
		if (r < 0)
			as_root_hint(e, undo, err);
		else
			printf("%s %s\n%s\n", c.after ? "wrote" : "removed", path, undo ? e->removed : e->added);
	}
	setup_change_free(&c);
	return r < 0 ? r : 0;
}

int setup_engine(const struct setup_request *r, struct ab_err *err)
{
	const struct engine *e = engine_named(r->engine, err);
	if (!e)
		return -1;
	char bin[PATH_MAX], path[PATH_MAX];
	if (setup_binary(r->bin, r->undo, bin, sizeof bin, err) < 0 ||
	    setup_file(e, r->config, path, sizeof path, err) < 0)
		return -1;
	return setup_run(e, path, bin, r->undo, r->dry_run, err);
}
