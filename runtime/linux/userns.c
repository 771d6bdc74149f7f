/* User namespaces: the runtime's own, and ids of a container's in the runtime's. */
#include "userns.h"
#include "procfs.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"

/* Find id in the text of a uid_map/gid_map ("inside outside count" lines). */
static bool map_lookup(const char *text, uint32_t id, uint32_t *ret)
{
	for (const char *p = text; p && *p;) {
		unsigned long long in, out, count;
		if (sscanf(p, "%llu %llu %llu", &in, &out, &count) == 3 && id >= in && id - in < count) {
			*ret = (uint32_t)(out + (id - in));
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

bool userns_is_initial(void)
{
	static int initial = -1;
	if (initial < 0) {
		/* the initial namespace maps every id to itself, in one line */
		_cleanup_free_ char *text = NULL;
		struct ab_err e;
		unsigned long long in, out, count;
		bool identity = read_file_at(AT_FDCWD, "/proc/self/uid_map", 4096, &text, NULL, &e) == 0 &&
				sscanf(text, "%llu %llu %llu", &in, &out, &count) == 3 && in == 0 &&
				out == 0 && count == 4294967295ULL;
		const char *nl = identity ? strchr(text, '\n') : NULL;
		initial = identity && (!nl || !nl[1]);
	}
	return initial;
}

bool userns_same_as_self(pid_t pid)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	return stat(path, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

int userns_id_in_self(pid_t pid, bool gid, uint32_t id, uint32_t *ret, struct ab_err *err)
{
	if (userns_same_as_self(pid)) {
		*ret = id;
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, gid ? "gid_map" : "uid_map");
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, path, 64 * 1024, &text, NULL, err) < 0)
		return -1;
	if (!map_lookup(text, id, ret))
		return ab_error(err, 0, "%s %" PRIu32 " is not mapped in the container's user namespace",
				gid ? "gid" : "uid", id);
	return 0;
}

static size_t format_map(const struct oci_id_mapping *m, size_t n, char *buf, size_t len)
{
	size_t off = 0;
	for (size_t i = 0; i < n && off < len - 40; i++)
		off += (size_t)snprintf(buf + off, len - off, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
	return off;
}

/* The setuid helper of shadow's uidmap package, from the usual places only (not
 * the caller's PATH: the helper decides what the user may map). */
static const char *find_helper(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* helper PID inside outside count...: its output goes into err when it fails. */
static int run_helper(const char *helper, pid_t pid, const struct oci_id_mapping *m, size_t n, struct ab_err *err)
{
	char *argv[2 + 3 * 64 + 1];
	char nums[3 * 64 + 1][16];
	if (n > 64)
		return ab_error(err, E2BIG, "%s: more than 64 ranges", helper);
	size_t k = 0;
	argv[k++] = (char *)helper;
	snprintf(nums[0], sizeof nums[0], "%d", (int)pid);
	argv[k++] = nums[0];
	for (size_t i = 0; i < n; i++) {
		uint32_t v[3] = {m[i].container_id, m[i].host_id, m[i].size};
		for (size_t j = 0; j < 3; j++) {
			snprintf(nums[1 + 3 * i + j], sizeof nums[0], "%u", v[j]);
			argv[k++] = nums[1 + 3 * i + j];
		}
	}
	argv[k] = NULL;
	int out[2];
	if (pipe2(out, O_CLOEXEC) < 0)
		return ab_error(err, errno, "pipe");
	pid_t child = fork();
	if (child < 0) {
		close(out[0]);
		close(out[1]);
		return ab_error(err, errno, "fork %s", helper);
	}
	if (child == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(out[1], STDERR_FILENO);
		char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
		execve(helper, argv, envp);
		_exit(127);
	}
	close(out[1]);
	char msg[256];
	ssize_t got = read_all(out[0], msg, sizeof msg - 1);
	close(out[0]);
	if (got < 0)
		got = 0;
	msg[got] = 0;
	msg[strcspn(msg, "\n")] = 0;
	int status;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ab_error(err, 0, "%s: %s", helper, got ? msg : "failed");
	return 0;
}

static bool own_id_only(const struct oci_id_mapping *m, size_t n, uint32_t id)
{
	return n == 1 && m[0].host_id == id && m[0].size == 1;
}

/* The id maps and setgroups go through a procfs handle too (procfs.h): the
 * runtime's own /proc, checked, nothing followed. */
static int write_map(int procfd, pid_t pid, bool gid, const struct oci_id_mapping *m, size_t n, struct ab_err *err)
{
	const char *field = gid ? "linux.gidMappings" : "linux.uidMappings";
	char path[64], text[4096];
	snprintf(path, sizeof path, "%d/%s", (int)pid, gid ? "gid_map" : "uid_map");
	size_t len = format_map(m, n, text, sizeof text);
	struct ab_err direct;
	if (procfs_write(procfd, path, text, len, &direct) == 0)
		return 0;
	if (direct.code != EPERM) {
		*err = direct;
		return ab_wrap(err, "%s", field);
	}
	/* not root of the host: the helper if there is one, else our own id alone */
	char buf[64];
	const char *helper = find_helper(gid ? "newgidmap" : "newuidmap", buf, sizeof buf);
	if (helper)
		return run_helper(helper, pid, m, n, err) < 0 ? ab_wrap(err, "%s", field) : 0;
	if (!own_id_only(m, n, gid ? (uint32_t)getegid() : (uint32_t)geteuid()))
		return ab_error(err, 0, "%s: mapping ids other than the runtime's own %s %u needs %s (package uidmap) and a range in %s",
				field, gid ? "gid" : "uid", gid ? (unsigned)getegid() : (unsigned)geteuid(),
				gid ? "newgidmap" : "newuidmap", gid ? "/etc/subgid" : "/etc/subuid");
	if (gid) {
		char sg[64];
		snprintf(sg, sizeof sg, "%d/setgroups", (int)pid);
		if (procfs_write(procfd, sg, "deny", 4, err) < 0)
			return ab_wrap(err, "%s", field);
	}
	if (procfs_write(procfd, path, text, len, err) < 0)
		return ab_wrap(err, "%s", field);
	return 0;
}

int userns_write_maps(pid_t pid, const struct oci_id_mapping *uids, size_t n_uids,
		      const struct oci_id_mapping *gids, size_t n_gids, struct ab_err *err)
{
	_cleanup_close_ int procfd = procfs_open_own(err);
	if (procfd < 0 || write_map(procfd, pid, false, uids, n_uids, err) < 0 ||
	    write_map(procfd, pid, true, gids, n_gids, err) < 0)
		return -1;
	return 0;
}
