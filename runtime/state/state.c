#include "state.h"
#include "state_record.h"
#include "cgroups.h"
#include "cgroups_host.h"
#include "json.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#define OCI_VERSION "1.2.0"

const char *status_name(enum container_status s)
{
	switch (s) {
	case STATUS_CREATING: return "creating";
	case STATUS_CREATED: return "created";
	case STATUS_RUNNING: return "running";
	case STATUS_PAUSED: return "paused";
	default: return "stopped";
	}
}

static int lock_dir(int dirfd, bool exclusive, const char *id, struct ab_err *err)
{
	while (flock(dirfd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
		if (errno != EINTR)
			return ab_error(err, errno, "lock state of container \"%s\"", id);
	}
	return 0;
}

int state_dir_create(const char *root, const char *id, int *ret_dirfd, struct ab_err *err)
{
	if (mkdir(root, 0700) < 0 && errno != EEXIST) {
		if (errno != ENOENT || mkdir_p(root, 0700, err) < 0)
			return ab_error(err, errno, "create state root %s", root);
	}
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ab_error(err, errno, "open state root %s", root);
	/* the runtime's alone: the init reaches its exec fifo through the O_PATH fd
	 * it is given, never by path (container.c, hand_over_exec_fifo) */
	if (mkdirat(rootfd, id, 0700) < 0) {
		if (errno == EEXIST)
			return ab_error(err, EEXIST, "container \"%s\" already exists", id);
		return ab_error(err, errno, "create state directory %s/%s", root, id);
	}
	_cleanup_close_ int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || lock_dir(fd, true, id, err) < 0) {
		int e = errno;
		unlinkat(rootfd, id, AT_REMOVEDIR);
		return ab_error(err, e, "open state directory %s/%s", root, id);
	}
	/* first, before anything of the container exists: a record that names
	 * nothing (state_record.h) */
	struct cleanup_record r = {.id = id};
	if (state_record_write(fd, &r, err) < 0) {
		(void)rm_rf_at(rootfd, id, &(struct ab_err){0});
		return -1;
	}
	*ret_dirfd = TAKE_FD(fd);
	return 0;
}

int state_dir_open(const char *root, const char *id, bool exclusive, int *ret_dirfd,
		   struct ab_err *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", root, id);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return ab_error(err, 0, "container \"%s\" does not exist", id);
		return ab_error(err, errno, "open state of container \"%s\"", id);
	}
	if (lock_dir(fd, exclusive, id, err) < 0)
		return -1;
	/* deleted while we waited for the lock: an unlinked directory has no links */
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_nlink == 0)
		return ab_error(err, 0, "container \"%s\" does not exist", id);
	*ret_dirfd = TAKE_FD(fd);
	return 0;
}

int flock_release(int dirfd)
{
	return flock(dirfd, LOCK_UN);
}

/* "annotations": {...}, in state.json and in the OCI state alike */
static void put_annotations(struct json_out *o, const struct container_state *s)
{
	json_key(o, "annotations");
	json_obj_begin(o);
	for (size_t i = 0; i < s->n_annotations; i++)
		json_kv_str(o, s->annotations[i].key, s->annotations[i].value);
	json_obj_end(o);
}

static void record_of(const struct container_state *s, struct cleanup_record *r)
{
	*r = (struct cleanup_record){
		.id = s->id,
		.pid = s->pid,
		.pid_start_time = s->pid_start_time,
		.own_pidns = s->own_pidns,
		.cgroup = s->cgroup,
		.sentry_pid = s->sentry_pid,
		.sentry_start_time = s->sentry_start_time,
		.gateway_pid = s->gateway_pid,
		.gateway_start_time = s->gateway_start_time,
	};
}

int state_apply_record(int dirfd, const char *id, struct container_state *s, struct ab_err *err)
{
	struct cleanup_record r;
	if (state_record_read(dirfd, id, &r, err) < 0)
		return -1;
	if (!s->id)
		s->id = arena_strdup(&s->arena, id);
	s->pid = r.pid;
	s->pid_start_time = r.pid_start_time;
	s->own_pidns = r.own_pidns;
	s->cgroup = r.cgroup;
	s->sentry_pid = r.sentry_pid;
	s->sentry_start_time = r.sentry_start_time;
	s->gateway_pid = r.gateway_pid;
	s->gateway_start_time = r.gateway_start_time;
	return 0;
}

int state_write(int dirfd, const struct container_state *s, struct ab_err *err)
{
	/* the record first: what delete --force needs, if state.json is lost */
	struct cleanup_record rec;
	record_of(s, &rec);
	if (state_record_write(dirfd, &rec, err) < 0)
		return -1;
	struct json_out *o = json_out_new(false);
	json_obj_begin(o);
	/* what cleanup needs first: a damaged (truncated) file still names it */
	json_kv_str(o, "id", s->id);
	json_kv_int(o, "pid", s->pid);
	json_kv_uint(o, "pidStartTime", s->pid_start_time);
	json_kv_bool(o, "ownPidNs", s->own_pidns);
	json_kv_str(o, "cgroupMode", cgroup_mode_name(s->cgroup.mode));
	json_kv_str(o, "cgroupPath", s->cgroup.path);
	json_kv_bool(o, "systemdCgroup", s->systemd_cgroup);
	json_kv_int(o, "sentryPid", s->sentry_pid);
	json_kv_uint(o, "sentryStartTime", s->sentry_start_time);
	if (s->gateway_pid > 0) {
		json_kv_int(o, "gatewayPid", s->gateway_pid);
		json_kv_uint(o, "gatewayStartTime", s->gateway_start_time);
	}
	json_kv_str(o, "bundle", s->bundle);
	json_kv_str(o, "rootfs", s->rootfs);
	json_kv_str(o, "created", s->created);
	json_kv_bool(o, "started", s->started);
	json_kv_bool(o, "poststartHooks", s->poststart_hooks);
	json_kv_bool(o, "poststopHooks", s->poststop_hooks);
	if (s->egress_policy)
		json_kv_str(o, "egressPolicy", s->egress_policy);
	if (s->egress_token)
		json_kv_str(o, "egressToken", s->egress_token);
	if (s->egress_ceiling)
		json_kv_str(o, "egressCeiling", s->egress_ceiling);
	if (s->egress_may_widen)
		json_kv_bool(o, "egressMayWiden", true);
	if (s->egress_proxy)
		json_kv_bool(o, "egressProxy", true);
	if (s->seccomp_profile)
		json_kv_str(o, "seccompProfile", s->seccomp_profile);
	put_annotations(o, s);
	json_obj_end(o);
	size_t len;
	const char *text = json_out_text(o, &len);
	int r = write_file_atomic_at(dirfd, STATE_FILE, text, len, 0600, err);
	json_out_free(o);
	if (r < 0)
		return ab_wrap(err, "save state of container \"%s\"", s->id);
	return r;
}

static const char *get_str(yajl_val v, const char *key)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
}

static int64_t get_int(yajl_val v, const char *key)
{
	yajl_val x = json_get(v, key);
	return YAJL_IS_INTEGER(x) ? YAJL_GET_INTEGER(x) : 0;
}

/* ROOT/ID/state.json as a path, for errors (the directory's path from /proc). */
static void state_file_path(int dirfd, char *buf, size_t len)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
	ssize_t n = readlink(link, buf, len - sizeof("/" STATE_FILE));
	if (n <= 0)
		snprintf(buf, len, "%s", STATE_FILE);
	else
		snprintf(buf + n, len - (size_t)n, "/%s", STATE_FILE);
}

/* Fill ret from a parsed state document. */
static int state_from_json(yajl_val v, const char *id, const char *path, struct container_state *ret,
			   struct ab_err *err)
{
	memset(ret, 0, sizeof *ret);
	const char *sid = get_str(v, "id");
	if (!sid || !streq(sid, id))
		return ab_error(err, 0, "container \"%s\": corrupt state: %s: id mismatch", id, path);
	/* pid 0: a create that died before its init existed (it reads as stopped) */
	yajl_val pid = json_get(v, "pid");
	if (!YAJL_IS_INTEGER(pid) || YAJL_GET_INTEGER(pid) < 0 || YAJL_GET_INTEGER(pid) > INT32_MAX)
		return ab_error(err, 0, "container \"%s\": corrupt state: %s: no pid", id, path);
	struct arena *a = &ret->arena;
	ret->id = arena_strdup(a, sid);
	ret->pid = (pid_t)YAJL_GET_INTEGER(pid);
	ret->pid_start_time = (uint64_t)get_int(v, "pidStartTime");
	ret->bundle = arena_strdup(a, get_str(v, "bundle") ?: "");
	ret->rootfs = arena_strdup(a, get_str(v, "rootfs") ?: "");
	ret->created = arena_strdup(a, get_str(v, "created") ?: "");
	yajl_val started = json_get(v, "started");
	ret->started = YAJL_IS_TRUE(started);
	ret->systemd_cgroup = YAJL_IS_TRUE(json_get(v, "systemdCgroup"));
	ret->own_pidns = YAJL_IS_TRUE(json_get(v, "ownPidNs"));
	ret->poststart_hooks = YAJL_IS_TRUE(json_get(v, "poststartHooks"));
	ret->poststop_hooks = YAJL_IS_TRUE(json_get(v, "poststopHooks"));
	const char *mode = get_str(v, "cgroupMode");
	if (!mode || cgroup_mode_from_name(mode, &ret->cgroup.mode) < 0)
		ret->cgroup.mode = CGROUP_MODE_DISABLED;
	snprintf(ret->cgroup.path, sizeof ret->cgroup.path, "%s", get_str(v, "cgroupPath") ?: "");
	ret->sentry_pid = (pid_t)get_int(v, "sentryPid");
	ret->sentry_start_time = (uint64_t)get_int(v, "sentryStartTime");
	ret->gateway_pid = (pid_t)get_int(v, "gatewayPid");
	ret->gateway_start_time = (uint64_t)get_int(v, "gatewayStartTime");
	ret->egress_policy = arena_strdup(a, get_str(v, "egressPolicy"));
	ret->egress_token = arena_strdup(a, get_str(v, "egressToken"));
	ret->egress_ceiling = arena_strdup(a, get_str(v, "egressCeiling"));
	ret->egress_may_widen = YAJL_IS_TRUE(json_get(v, "egressMayWiden"));
	ret->egress_proxy = YAJL_IS_TRUE(json_get(v, "egressProxy"));
	ret->seccomp_profile = arena_strdup(a, get_str(v, "seccompProfile"));
	yajl_val ann = json_get(v, "annotations");
	if (YAJL_IS_OBJECT(ann) && ann->u.object.len) {
		ret->n_annotations = ann->u.object.len;
		ret->annotations = arena_alloc(a, sizeof(struct oci_kv) * ret->n_annotations);
		for (size_t i = 0; i < ret->n_annotations; i++) {
			ret->annotations[i].key = arena_strdup(a, ann->u.object.keys[i]);
			ret->annotations[i].value = arena_strdup(a, YAJL_GET_STRING(ann->u.object.values[i]) ?: "");
		}
	}
	return 0;
}

static int state_text(int dirfd, const char *id, const char *path, char **ret, struct ab_err *err)
{
	if (read_file_at(dirfd, STATE_FILE, STATE_FILE_MAX, ret, NULL, err) < 0) {
		if (err->code == ENOENT)
			return ab_error(err, 0, "container \"%s\": state file %s missing (container is being created or was damaged)",
					id, path);
		return ab_wrap(err, "read state of container \"%s\"", id);
	}
	return 0;
}

/* ret from the parsed state v, which goes; on failure ret is freed too. */
static int state_from_parsed(yajl_val v, const char *id, const char *path, struct container_state *ret,
			     struct ab_err *err)
{
	int r = state_from_json(v, id, path, ret, err);
	json_free(v);
	if (r < 0)
		state_free(ret);
	return r;
}

/* What the members before a truncation still say: cut after the last whole member and close the object (or the annotations
 * and the object): in compact JSON `,"` only ever starts a member, since a
 * '"' inside a string is escaped */
static int state_salvage(const char *text, const char *id, const char *path, struct container_state *ret,
			 struct ab_err *err)
{
	struct ab_err e;
	yajl_val v;
	size_t len = strlen(text);
	_cleanup_free_ char *buf = xmalloc(len + 3);
	int tries = 0;
	for (size_t i = len; i-- > 1 && tries < 64;) {
		if (text[i - 1] != ',' || text[i] != '"')
			continue;
		tries++;
		for (int closers = 1; closers <= 2; closers++) {
			memcpy(buf, text, i - 1);
			memcpy(buf + i - 1, "}}", (size_t)closers);
			buf[i - 1 + (size_t)closers] = 0;
			if (json_parse(buf, path, &v, &e) < 0)
				continue;
			if (state_from_parsed(v, id, path, ret, &e) == 0)
				return 0;
		}
	}
	return ab_error(err, 0, "container \"%s\": corrupt state: %s: nothing could be recovered from it", id, path);
}

/* state_read, and with salvage state_read_salvage */
static int state_read_as(int dirfd, const char *id, bool salvage, struct container_state *ret, struct ab_err *err)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX + 16];
	memset(ret, 0, sizeof *ret);
	state_file_path(dirfd, path, sizeof path);
	if (state_text(dirfd, id, path, &text, err) < 0)
		return -1;
	struct ab_err e;
	yajl_val v;
	if (json_parse(text, path, &v, salvage ? &e : err) == 0)
		return state_from_parsed(v, id, path, ret, err);
	if (!salvage)
		return ab_wrap(err, "container \"%s\": corrupt state", id);
	return state_salvage(text, id, path, ret, err);
}

int state_read(int dirfd, const char *id, struct container_state *ret, struct ab_err *err)
{
	return state_read_as(dirfd, id, false, ret, err);
}

int state_read_salvage(int dirfd, const char *id, struct container_state *ret, struct ab_err *err)
{
	return state_read_as(dirfd, id, true, ret, err);
}

void state_free(struct container_state *s)
{
	arena_free(&s->arena);
}

int state_dir_remove(const char *root, const char *id, struct ab_err *err)
{
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errno == ENOENT ? 0 : ab_error(err, errno, "open state root %s", root);
	return rm_rf_at(rootfd, id, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int state_list_ids(const char *root, char ***ret_ids, size_t *ret_n, struct ab_err *err)
{
	*ret_ids = NULL;
	*ret_n = 0;
	_cleanup_closedir_ DIR *d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : ab_error(err, errno, "open state root %s", root);
	char **ids = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !container_id_valid(de->d_name))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		ids = xrealloc(ids, sizeof *ids * (n + 1));
		ids[n++] = xstrdup(de->d_name);
	}
	if (n)
		qsort(ids, n, sizeof *ids, cmp_str);
	*ret_ids = ids;
	*ret_n = n;
	return 0;
}

void state_free_ids(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

bool state_init_alive(const struct container_state *s)
{
	if (!proc_is(s->pid, s->pid_start_time))
		return false;
	char c = proc_state(s->pid);
	return c != 0 && c != 'Z' && c != 'X';
}

enum container_status state_status(const struct container_state *s)
{
	if (!state_init_alive(s))
		return STATUS_STOPPED;
	if (!s->started)
		return STATUS_CREATED;
	if (s->cgroup.mode != CGROUP_MODE_DISABLED) {
		struct ab_err e;
		if (cgroup_is_frozen(&s->cgroup, &e) == 1)
			return STATUS_PAUSED;
	}
	return STATUS_RUNNING;
}

void state_oci_json(struct json_out *o, const struct container_state *s, enum container_status st)
{
	json_obj_begin(o);
	json_kv_str(o, "ociVersion", OCI_VERSION);
	json_kv_str(o, "id", s->id);
	json_kv_int(o, "pid", st == STATUS_STOPPED ? 0 : s->pid);
	json_kv_str(o, "status", status_name(st));
	json_kv_str(o, "bundle", s->bundle);
	json_kv_str(o, "rootfs", s->rootfs);
	json_kv_str(o, "created", s->created);
	json_kv_str(o, "owner", "");
	put_annotations(o, s);
	json_obj_end(o);
}

void state_json_for_hooks(const struct container_state *s, enum container_status st, char *buf, size_t len)
{
	struct json_out *o = json_out_new(false);
	state_oci_json(o, s, st);
	size_t n;
	const char *t = json_out_text(o, &n);
	snprintf(buf, len, "%s", t);
	json_out_free(o);
}
