/* Rootless detection and the user's runtime directory (rootless.h). */
#include "rootless.h"
#include "state.h"
#include "userns.h"
#include "log.h"
#include "util.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* $XDG_RUNTIME_DIR when it names a directory of the user's. `su USER` keeps
 * the caller's (root's /run/user/0), `sudo -E` too: another user's directory
 * is not ours to use, and the fallback is what the user gets without one. */
static bool xdg_runtime_dir_usable(const char *xdg)
{
	struct stat st;
	if (!xdg || xdg[0] != '/')
		return false;
	if (stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		return true;
	log_debug("XDG_RUNTIME_DIR=%s is not a directory of uid %u: not used", xdg, (unsigned)geteuid());
	return false;
}

/* pam_systemd's directory, when the session has one without saying so, else
 * one of ours in /tmp. Not $TMPDIR: su, sudo and a login shell differ in it,
 * and every command of the user must find the same state (Debian's package
 * keeps systemd-tmpfiles' age cleaning away from /tmp/agentbox-*). */
static int decide_runtime_dir(char *buf, size_t len, struct ab_err *err)
{
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (xdg_runtime_dir_usable(xdg)) {
		if (snprintf(buf, len, "%s", xdg) >= (int)len)
			return ab_error(err, ENAMETOOLONG, "XDG_RUNTIME_DIR %s", xdg);
		return 0;
	}
	struct stat st;
	snprintf(buf, len, "/run/user/%u", (unsigned)geteuid());
	if (lstat(buf, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077))
		return 0;
	snprintf(buf, len, "%s/agentbox-%u", ROOTLESS_FALLBACK_TMP, (unsigned)geteuid());
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return ab_error(err, errno, "create the runtime directory %s", buf);
	return check_private_dir(buf, err);
}

/* Decided once: a kit command goes on as root of a user namespace of the
 * user's (rootless_enter_userns decides first), where geteuid() is 0 and the
 * environment unchanged, and must keep the user's paths there. */
static char runtime_dir[PATH_MAX - 16];
static const char *default_root;

int rootless_user_runtime_dir(char *buf, size_t len, struct ab_err *err)
{
	if (!runtime_dir[0] && decide_runtime_dir(runtime_dir, sizeof runtime_dir, err) < 0) {
		runtime_dir[0] = 0;
		return -1;
	}
	if (snprintf(buf, len, "%s", runtime_dir) >= (int)len)
		return ab_error(err, ENAMETOOLONG, "the runtime directory %s", runtime_dir);
	return 0;
}

static const char *decide_state_root(struct ab_err *err)
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

const char *rootless_default_state_root(struct ab_err *err)
{
	if (!default_root)
		default_root = decide_state_root(err);
	return default_root;
}

/* A sysctl's value as a number, or -1 when the host has no such file. */
static long read_sysctl(const char *path)
{
	_cleanup_free_ char *text = NULL;
	struct ab_err e;
	if (read_file_at(AT_FDCWD, path, 64, &text, NULL, &e) < 0)
		return -1;
	return strtol(text, NULL, 10);
}

const char *rootless_userns_refused(void)
{
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
		return "this host allows no user namespaces (user.max_user_namespaces = 0): a rootless box needs "
		       "one; ask the administrator to set it above 0 (sysctl -w user.max_user_namespaces=15000)";
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		return "this host forbids unprivileged user namespaces (kernel.unprivileged_userns_clone = 0): a "
		       "rootless box needs one; ask the administrator to set it to 1 (sysctl -w "
		       "kernel.unprivileged_userns_clone=1)";
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		return "AppArmor forbids unprivileged user namespaces here "
		       "(kernel.apparmor_restrict_unprivileged_userns = 1): a rootless box needs one; ask the "
		       "administrator to set it to 0, or to give agentbox an AppArmor profile that allows userns";
	return NULL;
}

/* The user's subordinate range in /etc/subuid (or /etc/subgid): the first
 * line naming the user or its number. False when there is none. */
static bool subid_range(const char *file, const char *name, uint32_t id, uint32_t *start, uint32_t *count)
{
	_cleanup_free_ char *text = NULL;
	struct ab_err e;
	if (read_file_at(AT_FDCWD, file, 1 << 20, &text, NULL, &e) < 0)
		return false;
	char num[16];
	snprintf(num, sizeof num, "%u", id);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = 0;
		if (!streq(line, num) && !(name && streq(line, name)))
			continue;
		char *end1, *end2;
		unsigned long long s = strtoull(c1 + 1, &end1, 10), n = strtoull(c2 + 1, &end2, 10);
		if (end1 != c2 || end2 == c2 + 1 || n == 0 || s > UINT32_MAX || n > UINT32_MAX - s)
			continue;
		*start = (uint32_t)s;
		*count = (uint32_t)(n > UINT32_MAX - 1 ? UINT32_MAX - 1 : n);
		return true;
	}
	return false;
}

#define SUBID_FIRST 100000u        /* where useradd starts handing out ranges */
#define SUBID_COUNT 65536u

/* The first SUBID_COUNT ids at or above SUBID_FIRST that no line of
 * /etc/subuid or /etc/subgid gives anyone: past every range it overlaps,
 * until none does. 0 when there is no such room. */
static uint32_t free_subid_start(void)
{
	static const char *const files[] = {"/etc/subuid", "/etc/subgid"};
	/* two variables: a cleanup attribute on an array frees its first item only */
	_cleanup_free_ char *uids = NULL, *gids = NULL;
	char **text[2] = {&uids, &gids};
	struct ab_err e;
	for (size_t i = 0; i < 2; i++)
		if (read_file_at(AT_FDCWD, files[i], 1 << 20, text[i], NULL, &e) < 0)
			*text[i] = xstrdup("");
	uint64_t s = SUBID_FIRST;
	for (bool moved = true; moved && s + SUBID_COUNT <= UINT32_MAX;) {
		moved = false;
		for (size_t i = 0; i < 2; i++)
			for (const char *line = *text[i]; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
				const char *c1 = strchr(line, ':'), *nl = strchr(line, '\n');
				if (!c1 || (nl && c1 > nl))
					continue;
				char *end;
				uint64_t start = strtoull(c1 + 1, &end, 10);
				uint64_t n = *end == ':' ? strtoull(end + 1, NULL, 10) : 0;
				if (n && start < s + SUBID_COUNT && s < start + n) {
					s = start + n;
					moved = true;
				}
			}
	}
	return s + SUBID_COUNT <= UINT32_MAX ? (uint32_t)s : 0;
}

/* A user without a range: the command that gives one no other user has. */
static int missing_range_error(const struct passwd *pw, bool no_uids, bool no_gids, struct ab_err *err)
{
	const char *user = pw ? pw->pw_name : "USER";
	uint32_t s = free_subid_start();
	char range[32] = "START-END";
	if (s)
		snprintf(range, sizeof range, "%u-%u", s, s + SUBID_COUNT - 1);
	return ab_error(err, 0, "rootless: the user %s has no range in %s: a box needs ids besides the user's own "
			"(as root: usermod%s%s%s%s %s, a range no user has in /etc/subuid or /etc/subgid)",
			pw ? pw->pw_name : "(unnamed)", no_uids ? "/etc/subuid" : "/etc/subgid",
			no_uids ? " --add-subuids " : "", no_uids ? range : "", no_gids ? " --add-subgids " : "",
			no_gids ? range : "", user);
}

/* The helper that writes our maps from outside: waits for the word that we
 * are in the new namespace, writes, sends back an error's text (nothing when
 * all went well). */
static void map_writer(pid_t target, int go, int report, const struct oci_id_mapping *u, size_t nu,
		       const struct oci_id_mapping *g, size_t ng)
{
	char c;
	ssize_t n;
	while ((n = read(go, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1);
	struct ab_err e;
	if (userns_write_maps(target, u, nu, g, ng, &e) < 0) {
		(void)!write(report, e.msg, strlen(e.msg));
		_exit(1);
	}
	_exit(0);
}

int rootless_enter_userns(bool need_range, struct ab_err *err)
{
	/* the user's paths, while we are still the user (see default_root) */
	if (!rootless_default_state_root(err))
		return -1;
	const char *refused = rootless_userns_refused();
	if (refused)
		return ab_error(err, 0, "%s", refused);
	uid_t uid = geteuid();
	gid_t gid = getegid();
	struct oci_id_mapping um[2] = {{0, uid, 1}}, gm[2] = {{0, gid, 1}};
	size_t nu = 1, ng = 1;
	struct passwd *pw = getpwuid(uid);
	struct group *gr = getgrgid(gid);
	uint32_t start, count;
	if (subid_range("/etc/subuid", pw ? pw->pw_name : NULL, uid, &start, &count))
		um[nu++] = (struct oci_id_mapping){1, start, count};
	if (subid_range("/etc/subgid", pw ? pw->pw_name : gr ? gr->gr_name : NULL, gid, &start, &count))
		gm[ng++] = (struct oci_id_mapping){1, start, count};
	/* a box has ids besides root's (tty's group for devpts, nobody, its
	 * programs' own): without a range it would fail deep in create */
	if (need_range && (nu == 1 || ng == 1))
		return missing_range_error(pw, nu == 1, ng == 1, err);

	int go[2], report[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	if (pipe2(report, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return ab_error(err, errno, "pipe");
	}
	pid_t self = getpid();
	pid_t writer = fork();
	if (writer < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(report[0]);
		close(report[1]);
		return ab_error(err, e, "fork");
	}
	if (writer == 0) {
		close(go[1]);
		close(report[0]);
		map_writer(self, go[0], report[1], um, nu, gm, ng);
	}
	close(go[0]);
	close(report[1]);
	int r = unshare(CLONE_NEWUSER);
	int e = errno;
	if (r == 0)
		(void)!write(go[1], "u", 1);
	close(go[1]);
	char msg[512];
	ssize_t got = read_all(report[0], msg, sizeof msg - 1);
	close(report[0]);
	msg[got > 0 ? got : 0] = 0;
	int status;
	while (waitpid(writer, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0) {
		if (e == EPERM || e == ENOSPC || e == EUSERS)
			return ab_error(err, e, "rootless: this host refuses a user namespace to the user %u (ask the "
					"administrator to allow unprivileged user namespaces: user.max_user_namespaces "
					"above 0, kernel.unprivileged_userns_clone = 1 where it exists)", (unsigned)uid);
		return ab_error(err, e, "rootless: unshare a user namespace");
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ab_error(err, 0, "rootless: the user namespace's id maps: %s", got > 0 ? msg : "not written");
	/* root of it; a map newgidmap wrote leaves setgroups allowed: drop the
	 * user's supplementary groups, which the namespace cannot name */
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return ab_error(err, errno, "rootless: become root of the user namespace");
	if (ng > 1 && setgroups(0, NULL) < 0)
		return ab_error(err, errno, "rootless: setgroups");
	/* a changed uid made us undumpable: /proc/self would be the host root's */
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (unshare(CLONE_NEWNS) < 0)
		return ab_error(err, errno, "rootless: unshare a mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return ab_error(err, errno, "rootless: make the mounts of / slaves");
	return 0;
}
