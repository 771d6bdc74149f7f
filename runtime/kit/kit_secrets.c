#include "credential.h"
#include "kit_secrets.h"
#include "mounts.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>

#define SECRET_MAX (1u << 20)

void kit_secrets_wipe(struct kit_secrets *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].value) {
			explicit_bzero(s->v[i].value, s->v[i].len);
			free(s->v[i].value);
		}
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int kit_secrets_read(const struct kit *k, struct kit_secrets *s, struct ab_err *err)
{
	s->v = xcalloc(k->n_credentials + 1, sizeof *s->v);
	for (size_t i = 0; i < k->n_credentials; i++) {
		const struct kit_credential *c = &k->credentials[i];
		struct kit_secret *v = &s->v[s->n++];
		v->cred = c;
		if (c->from == KIT_FROM_ENV) {
			const char *e = getenv(c->from_ref);
			if (!e)
				return ab_error(err, 0, "credentials[%zu] (%s): the host has no environment variable %s",
						i, c->name, c->from_ref);
			v->len = strlen(e);
			v->value = xstrdup(e);
		} else {
			struct ab_err e;
			if (read_file_at(AT_FDCWD, c->from_ref, SECRET_MAX, &v->value, &v->len, &e) < 0)
				return ab_error(err, 0, "credentials[%zu] (%s): %s", i, c->name, e.msg);
		}
		if (c->from == KIT_FROM_ENV && c->to == KIT_TO_FILE && (!v->len || v->value[v->len - 1] != '\n')) {
			/* a file's text ends with a newline (ssh keys must); $(cat f) took it off */
			v->value = xrealloc(v->value, v->len + 2);
			v->value[v->len++] = '\n';
			v->value[v->len] = 0;
		}
		if (c->to == KIT_TO_HEADER) {
			/* a token file's final newline is no part of the header */
			if (v->len && v->value[v->len - 1] == '\n')
				v->value[--v->len] = 0;
			if (v->len && v->value[v->len - 1] == '\r')
				v->value[--v->len] = 0;
			char what[160];
			snprintf(what, sizeof what, "credentials[%zu] (%s)", i, c->name);
			if (cred_secret_check(v->value, v->len, what, err) < 0)
				return -1;
		}
		if (c->to == KIT_TO_ENV) {
			if (memchr(v->value, 0, v->len))
				return ab_error(err, 0, "credentials[%zu] (%s): the value has a NUL byte, so it cannot be an environment variable",
						i, c->name);
			/* a token file usually ends with a newline the variable must not have */
			if (v->len && v->value[v->len - 1] == '\n')
				v->value[--v->len] = 0;
			if (v->len && v->value[v->len - 1] == '\r')
				v->value[--v->len] = 0;
		}
	}
	return 0;
}

int kit_secrets_write_files(const struct kit_secrets *s, pid_t pid, uid_t uid, gid_t gid,
			    struct ab_err *err)
{
	_cleanup_close_ int rootfd = -1;
	for (size_t i = 0; i < s->n; i++) {
		const struct kit_secret *v = &s->v[i];
		if (v->cred->to != KIT_TO_FILE)
			continue;
		if (rootfd < 0) {
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/root", (int)pid);
			rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (rootfd < 0)
				return ab_error(err, errno, "open %s", p);
		}
		const char *path = v->cred->to_path;
		const char *slash = strrchr(path, '/');
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
		_cleanup_close_ int dfd = -1;
		if (open_in_root(rootfd, dir, O_PATH | O_DIRECTORY, &dfd, err) < 0)
			return ab_wrap(err, "credential %s: %s", v->cred->name, path);
		struct statfs sf;
		if (fstatfs(dfd, &sf) < 0)
			return ab_error(err, errno, "credential %s: statfs %s", v->cred->name, dir);
		if (sf.f_type != TMPFS_MAGIC)
			return ab_error(err, 0, "credential %s: %s in the box is not a tmpfs: refused to write it there",
					v->cred->name, dir);
		_cleanup_close_ int fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
		if (fd < 0)
			return ab_error(err, errno, "credential %s: create %s", v->cred->name, path);
		if (write_all(fd, v->value, v->len) < 0)
			return ab_error(err, errno, "credential %s: write %s", v->cred->name, path);
		if (fchown(fd, uid, gid) < 0)
			return ab_error(err, errno, "credential %s: chown %s", v->cred->name, path);
	}
	return 0;
}
