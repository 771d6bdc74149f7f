/* The workspaces a kit refuses unless asked explicitly (kit_workspace.h):
 * "/", a user's home directory or a directory above one, and a directory that
 * holds credentials at its top. A box writes its workspace and reads all of
 * it: run from $HOME, it would read ~/.ssh and rewrite ~/.bashrc.
 *
 * Homes come from /etc/passwd (root's and those of ordinary users, uid 1000
 * to 59999, as Debian's adduser makes them), $HOME and $SUDO_USER's, read
 * directly rather than through NSS, which may load modules or ask a network
 * directory on every kit run. */
#include "kit_sensitive.h"
#include "kit_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define UID_MIN_LOGIN 1000
#define UID_MAX_LOGIN 59999
#define MAX_HOMES 64

/* Credentials that live at the top of a home directory. */
static const char *const secret_names[] = {
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker/config.json", ".config/gcloud",
	".config/gh", ".netrc", ".git-credentials", ".pypirc", ".password-store", ".vault-token",
	".cargo/credentials", ".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json",
};

struct home {
	char whose[80];         /* "root's", "alice's", "your" */
	char path[PATH_MAX];
};

/* A home worth guarding: an existing directory other than "/", real path. */
static bool add_home(struct home *v, size_t *n, size_t max, const char *whose, const char *path)
{
	char real[PATH_MAX];
	struct stat st;
	if (*n >= max || !path || path[0] != '/' || !realpath(path, real) || streq(real, "/") ||
	    stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	for (size_t i = 0; i < *n; i++)
		if (streq(v[i].path, real))
			return true;
	snprintf(v[*n].whose, sizeof v[*n].whose, "%s", whose);
	snprintf(v[*n].path, sizeof v[*n].path, "%s", real);
	(*n)++;
	return true;
}

/* The homes of root, of the login users and of whoever runs us (looked up
 * once: kit run asks twice). */
static size_t find_homes_uncached(struct home *v, size_t max);

static const struct home *homes(size_t *ret_n)
{
	static struct home *cache;
	static size_t n_cache;
	if (!cache) {
		cache = xcalloc(MAX_HOMES, sizeof *cache);
		n_cache = find_homes_uncached(cache, MAX_HOMES);
	}
	*ret_n = n_cache;
	return cache;
}

static size_t find_homes_uncached(struct home *v, size_t max)
{
	size_t n = 0;
	const char *sudo_user = getenv("SUDO_USER");
	_cleanup_fclose_ FILE *f = fopen("/etc/passwd", "re");
	char line[4096];
	while (f && fgets(line, sizeof line, f)) {
		char *field[7];
		char *p = line;
		size_t k = 0;
		for (; k < 7 && p; k++) {
			field[k] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = 0;
		}
		if (k < 7)
			continue;
		field[6][strcspn(field[6], "\n")] = 0;
		int64_t uid;
		if (parse_int64(field[2], 0, UINT32_MAX, &uid) < 0)
			continue;
		bool login = uid == 0 || (uid >= UID_MIN_LOGIN && uid <= UID_MAX_LOGIN) ||
			     (sudo_user && streq(field[0], sudo_user));
		char whose[80];
		snprintf(whose, sizeof whose, "%.64s's", field[0]);
		if (login)
			add_home(v, &n, max, whose, field[5]);
	}
	add_home(v, &n, max, "your", getenv("HOME"));
	return n;
}

bool kit_workspace_is_home(const char *ws)
{
	size_t n;
	const struct home *h = homes(&n);
	for (size_t i = 0; i < n; i++)
		if (streq(h[i].path, ws))
			return true;
	return false;
}

/* An .npmrc with a token written in it (not a ${VARIABLE} reference). */
static bool npmrc_has_token(int wsfd)
{
	_cleanup_close_ int fd = openat(wsfd, ".npmrc", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	_cleanup_fclose_ FILE *f = fdopen(TAKE_FD(fd), "r");
	char line[4096];
	while (f && fgets(line, sizeof line, f)) {
		const char *keys[] = {"_authToken", "_auth", "_password"};
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			const char *k = strstr(line, keys[i]);
			if (!k || line[0] == '#' || line[0] == ';')
				continue;
			const char *eq = strchr(k, '=');
			if (!eq)
				continue;
			eq++;
			while (*eq == ' ' || *eq == '\t')
				eq++;
			if (*eq && *eq != '\n' && strncmp(eq, "${", 2) != 0)
				return true;
		}
	}
	return false;
}

int kit_workspace_check_sensitive(const char *ws, struct ab_err *err)
{
	static const char how[] = "to run there anyway, pass --allow-sensitive-workspace or set "
				  "workspace_allow_sensitive: true in the kit";
	if (streq(ws, "/"))
		return ab_error(err, 0, "workspace /: the whole file system (a box would read every user's "
				"files and could write where the host runs code); %s", how);
	size_t n;
	const struct home *h = homes(&n);
	for (size_t i = 0; i < n; i++) {
		if (streq(h[i].path, ws))
			return ab_error(err, 0, "workspace %s: %s home directory (a box would read its "
					"credentials and could rewrite the files its shell runs); %s", ws, h[i].whose, how);
		if (kit_path_under(h[i].path, ws))
			return ab_error(err, 0, "workspace %s: holds %s, %s home directory (a box would read "
					"its credentials and could rewrite the files its shell runs); %s",
					ws, h[i].path, h[i].whose, how);
	}
	_cleanup_close_ int wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0)
		return ab_error(err, errno, "workspace %s", ws);
	for (size_t i = 0; i < ARRAY_SIZE(secret_names); i++) {
		struct stat st;
		if (fstatat(wsfd, secret_names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			return ab_error(err, 0, "workspace %s: holds %s, credentials a box would read; %s",
					ws, secret_names[i], how);
	}
	if (npmrc_has_token(wsfd))
		return ab_error(err, 0, "workspace %s: holds .npmrc with a registry token, which a box would "
				"read (a ${VARIABLE} reference there is fine); %s", ws, how);
	return 0;
}
