/* User namespaces: the runtime's own, and ids of a container's in the runtime's. */
#include "userns.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
