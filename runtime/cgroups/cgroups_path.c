/* cgroups: linux.cgroupsPath resolved to a path below each hierarchy's root
 * (absolute, relative to the runtime's own cgroup, systemd "slice:prefix:name", or
 * the default "/agentbox/<id>"). */

#include "cgroups_path.h"
#include "cgroups_host.h"
#include "cgroups_resources.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

/* Clean an absolute or relative cgroup path into "/a/b": no empty or "." parts, and
 * no ".." at all, since it could climb out of the hierarchy's root. */
static int normalize(const char *in, char *out, size_t len, struct ab_err *err)
{
	size_t o = 0;
	out[0] = 0;
	for (const char *p = in; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return ab_error(err, EINVAL, "cgroupsPath \"%s\": \"..\" is not allowed", in);
		if (n && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > len)
				return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", in);
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
			out[o] = 0;
		}
		p = e;
	}
	return 0;
}

/* The runtime's own cgroup, the base of relative cgroupsPaths. With v1 controllers the
 * hierarchies can disagree (here memory sits in /process_api/... while the others are at
 * /), so one is picked: name=systemd, else pids, the hierarchies that only group
 * processes; on v2 the one unified path. */
static int own_cgroup(enum cgroup_mode mode, char *buf, size_t len, struct ab_err *err)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return ab_error(err, errno, "open /proc/self/cgroup");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	/* not zero-filled: 12 KiB of stack written for nothing */
	char systemd[PATH_MAX], pids[PATH_MAX], unified[PATH_MAX];
	systemd[0] = pids[0] = unified[0] = 0;
	bool have_systemd = false, have_pids = false, have_unified = false;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctrls = c1 + 1, *path = c2 + 1;
		struct cg_hier tmp;
		snprintf(tmp.ctrls, sizeof tmp.ctrls, "%s", ctrls);
		if (!*ctrls && strncmp(line, "0:", 2) == 0) {
			snprintf(unified, sizeof unified, "%s", path);
			have_unified = true;
		} else if (cg_hier_has(&tmp, "name=systemd")) {
			snprintf(systemd, sizeof systemd, "%s", path);
			have_systemd = true;
		} else if (cg_hier_has(&tmp, "pids")) {
			snprintf(pids, sizeof pids, "%s", path);
			have_pids = true;
		}
	}
	const char *pick = mode == CGROUP_MODE_V2 ? (have_unified ? unified : NULL)
			 : have_systemd ? systemd : have_pids ? pids : NULL;
	if (!pick)
		return ab_error(err, ENOENT, "cannot find the runtime's own cgroup in /proc/self/cgroup");
	snprintf(buf, len, "%s", streq(pick, "/") ? "" : pick);
	return 0;
}

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" is the root. */
static int expand_slice(const char *slice, char *out, size_t len, struct ab_err *err)
{
	size_t n = strlen(slice);
	const char *suffix = ".slice";
	if (n < 6 || strcmp(slice + n - 6, suffix) != 0 || strchr(slice, '/'))
		return ab_error(err, EINVAL, "invalid systemd slice \"%s\"", slice);
	out[0] = 0;
	if (streq(slice, "-.slice"))
		return 0;
	size_t stem = n - 6, o = 0;
	if (slice[0] == '-' || slice[stem - 1] == '-' || strstr(slice, "--"))
		return ab_error(err, EINVAL, "invalid systemd slice \"%s\"", slice);
	for (size_t i = 0; i <= stem; i++) {
		if (i < stem && slice[i] != '-')
			continue;
		/* each '-' (and the end) closes one level: "/" + slice[0..i) + ".slice" */
		int w = snprintf(out + o, len - o, "/%.*s%s", (int)i, slice, suffix);
		if (w < 0 || (size_t)w >= len - o)
			return ab_error(err, ENAMETOOLONG, "systemd slice \"%s\"", slice);
		o += (size_t)w;
	}
	return 0;
}

static int systemd_path(const char *spec, char *out, size_t len, struct ab_err *err)
{
	_cleanup_free_ char *s = xstrdup(spec);
	char *c1 = strchr(s, ':');
	char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':'))
		return ab_error(err, EINVAL, "cgroupsPath \"%s\": expected \"slice:prefix:name\" "
				"for the systemd cgroup driver", spec);
	*c1 = *c2 = 0;
	const char *slice = *s ? s : "system.slice", *prefix = c1 + 1, *name = c2 + 1;
	if (!cg_plain_file_name(name) || strchr(prefix, '/'))
		return ab_error(err, EINVAL, "cgroupsPath \"%s\": invalid unit name", spec);
	char sl[PATH_MAX];
	if (expand_slice(slice, sl, sizeof sl, err) < 0)
		return ab_wrap(err, "cgroupsPath \"%s\"", spec);
	size_t nl = strlen(name);
	bool is_slice = nl > 6 && streq(name + nl - 6, ".slice");
	int w;
	if (is_slice)
		w = snprintf(out, len, "%s/%s", sl, name);
	else if (*prefix)
		w = snprintf(out, len, "%s/%s-%s.scope", sl, prefix, name);
	else
		w = snprintf(out, len, "%s/%s.scope", sl, name);
	if (w < 0 || (size_t)w >= len)
		return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", spec);
	return 0;
}

/* cgroupsPath as a path below the hierarchies' roots, in mode's view (which
 * of /proc/self/cgroup's lines a relative path is relative to); without one,
 * default_path. */
static int resolve_in(enum cgroup_mode mode, const char *cgroups_path, const char *default_path, bool systemd,
		      const char *systemd_base, char *out, size_t len, struct ab_err *err)
{
	char raw[PATH_MAX * 2];
	if (!cgroups_path || !*cgroups_path) {
		snprintf(raw, sizeof raw, "%s", default_path);
	} else if (systemd) {
		char unit[PATH_MAX];
		if (systemd_path(cgroups_path, unit, sizeof unit, err) < 0)
			return -1;
		if (snprintf(raw, sizeof raw, "%s%s", systemd_base, unit) >= (int)sizeof raw)
			return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", cgroups_path);
		/* No D-Bus client here: the unit's cgroup is made directly, where systemd
		 * would have put it. */
		if (access("/run/systemd/system", F_OK) == 0)
			log_debug("systemd cgroup driver: creating the cgroup directly at %s", raw);
		else
			log_debug("systemd cgroup driver without systemd: using cgroupfs path %s", raw);
	} else if (cgroups_path[0] == '/') {
		snprintf(raw, sizeof raw, "%s", cgroups_path);
	} else {
		char own[PATH_MAX];
		char rel[PATH_MAX];
		/* check ".." before joining, so the message names what the user wrote */
		if (normalize(cgroups_path, rel, sizeof rel, err) < 0)
			return -1;
		if (own_cgroup(mode, own, sizeof own, err) < 0)
			return -1;
		if (snprintf(raw, sizeof raw, "%s%s", own, rel) >= (int)sizeof raw)
			return ab_error(err, ENAMETOOLONG, "cgroupsPath \"%s\"", cgroups_path);
	}
	if (normalize(raw, out, len, err) < 0)
		return -1;
	if (!out[0])
		return ab_error(err, EINVAL, "cgroupsPath \"%s\": the root cgroup cannot be a "
				"container's cgroup", cgroups_path ? cgroups_path : "");
	return 0;
}

static int check_id(const char *id, struct ab_err *err)
{
	if (!id || !container_id_valid(id))
		return ab_error(err, EINVAL, "cgroup path: invalid container id \"%s\"", id ? id : "");
	return 0;
}

int cgroup_resolve(const char *cgroups_path, const char *id, bool systemd, bool disabled,
		   struct cgroup_ref *ret, struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	ret->mode = disabled ? CGROUP_MODE_DISABLED : cgroup_host_mode();
	if (ret->mode == CGROUP_MODE_DISABLED)
		return 0;
	char def[PATH_MAX];
	if ((!cgroups_path || !*cgroups_path) && check_id(id, err) < 0)
		return -1;
	snprintf(def, sizeof def, "/agentbox/%s", id ? id : "");
	return resolve_in(ret->mode, cgroups_path, def, systemd, "", ret->path, sizeof ret->path, err);
}

/* May the caller make (or enter) the cgroup at path of the v2 hierarchy, as a
 * process of the cgroup own? It needs write access to the nearest directory
 * that exists on the way (to make the rest) and to cgroup.procs of the
 * nearest common ancestor of own and path (the kernel's rule for moving a
 * process between delegated cgroups). */
static bool v2_writable(const char *path, const char *own)
{
	char dir[PATH_MAX];
	if (cg_v2_dir(path, dir, sizeof dir) < 0)
		return false;
	char *cut;
	while (access(dir, F_OK) < 0 && (cut = strrchr(dir, '/')) && cut > dir)
		*cut = 0;
	char procs[PATH_MAX + 16];
	snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0 ||
	    faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) < 0)
		return false;
	/* the nearest common ancestor: the leading components both share */
	size_t n = 0;
	for (size_t i = 0;; i++) {
		if ((path[i] == '/' || !path[i]) && (own[i] == '/' || !own[i]))
			n = i;
		if (!path[i] || !own[i] || path[i] != own[i])
			break;
	}
	char common[PATH_MAX];
	snprintf(common, sizeof common, "%.*s", (int)n, path);
	if (cg_v2_dir(common, dir, sizeof dir) < 0)
		return false;
	snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
	return faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
}

/* The cgroup of the user's systemd manager (the leading part of own up to a
 * component "user@N.service"), or "" when own is not below one. */
static void user_manager_cgroup(const char *own, char *buf, size_t len)
{
	buf[0] = 0;
	for (const char *p = own; (p = strstr(p, "/user@"));) {
		const char *end = strchrnul(p + 1, '/');
		size_t n = (size_t)(end - p);
		if (n > 14 && strncmp(end - 8, ".service", 8) == 0) {
			snprintf(buf, len, "%.*s", (int)(end - own), own);
			return;
		}
		p = end;
	}
}

int cgroup_resolve_rootless(const char *cgroups_path, const char *id, bool systemd, bool disabled,
			    const struct oci_resources *res, struct cgroup_ref *ret, bool *ret_skipped,
			    struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	*ret_skipped = false;
	if (disabled)
		return 0;
	bool named = cgroups_path && *cgroups_path;
	if (!named && check_id(id, err) < 0)
		return -1;
	const char *why = "there is no cgroup v2 hierarchy";
	char own[PATH_MAX] = "";
	if (cgroup_host_mode() == CGROUP_MODE_V2 || cgroup_host_mode() == CGROUP_MODE_HYBRID) {
		if (own_cgroup(CGROUP_MODE_V2, own, sizeof own, err) < 0)
			return -1;
		/* runc's place: beside the runtime, below the parent of its own cgroup
		 * (a cgroup with processes cannot enable controllers for a child) */
		char def[PATH_MAX];
		char *slash = strrchr(own, '/');
		snprintf(def, sizeof def, "%.*s/agentbox-%s", slash ? (int)(slash - own) : 0, own, id ? id : "");
		/* a user's systemd slices are below its manager, user@UID.service
		 * (rootless Podman with the systemd cgroup manager) */
		char base[PATH_MAX];
		user_manager_cgroup(own, base, sizeof base);
		if (resolve_in(CGROUP_MODE_V2, cgroups_path, def, systemd, base, ret->path, sizeof ret->path, err) < 0)
			return -1;
		if (v2_writable(ret->path, own)) {
			ret->mode = CGROUP_MODE_V2;
			return 0;
		}
		why = "the user may not write there (no cgroup v2 subtree is delegated to it)";
	}
	/* as runc: without a cgroup, a rootless container may run only when the
	 * config names no cgroup and asks for no limit */
	const char *limit = res ? cg_res_requested(res) : NULL;
	if (named)
		return ab_error(err, EACCES, "cgroupsPath \"%s\": rootless, %s", cgroups_path, why);
	if (limit)
		return ab_error(err, 0, "linux.resources.%s: a limit cannot be applied: rootless, %s", limit,
				ret->path[0] ? why : "there is no cgroup v2 hierarchy");
	memset(ret, 0, sizeof *ret);
	ret->mode = CGROUP_MODE_DISABLED;
	*ret_skipped = true;
	return 0;
}
