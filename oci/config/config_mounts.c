/* config.json mounts[]: the objects, and their fstab-style options turned into
 * mount(2) flags, propagation, mount_setattr(2) attributes and fs data. */
#include <string.h>
#include <sys/mount.h>

#include "config_walk.h"
#include "log.h"
#include "config_linux.h"
#include "config_mounts.h"

/* Options that set (or, with clear, unset) a mount(2) flag. */
static const struct {
	const char *name;
	bool clear;
	unsigned long flag;
} mount_flags[] = {
	{ "defaults", false, 0 },
	{ "ro", false, MS_RDONLY },          { "rw", true, MS_RDONLY },
	{ "nosuid", false, MS_NOSUID },      { "suid", true, MS_NOSUID },
	{ "nodev", false, MS_NODEV },        { "dev", true, MS_NODEV },
	{ "noexec", false, MS_NOEXEC },      { "exec", true, MS_NOEXEC },
	{ "sync", false, MS_SYNCHRONOUS },   { "async", true, MS_SYNCHRONOUS },
	{ "dirsync", false, MS_DIRSYNC },
	{ "remount", false, MS_REMOUNT },
	{ "mand", false, MS_MANDLOCK },      { "nomand", true, MS_MANDLOCK },
	{ "noatime", false, MS_NOATIME },    { "atime", true, MS_NOATIME },
	{ "nodiratime", false, MS_NODIRATIME }, { "diratime", true, MS_NODIRATIME },
	{ "relatime", false, MS_RELATIME },  { "norelatime", true, MS_RELATIME },
	{ "strictatime", false, MS_STRICTATIME }, { "nostrictatime", true, MS_STRICTATIME },
	{ "lazytime", false, MS_LAZYTIME },  { "nolazytime", true, MS_LAZYTIME },
	{ "nosymfollow", false, MS_NOSYMFOLLOW }, { "symfollow", true, MS_NOSYMFOLLOW },
	{ "silent", false, MS_SILENT },      { "loud", true, MS_SILENT },
	{ "iversion", false, MS_I_VERSION }, { "noiversion", true, MS_I_VERSION },
	{ "acl", false, MS_POSIXACL },       { "noacl", true, MS_POSIXACL },
};

static const struct {
	const char *name;
	unsigned long flags;
} propagations[] = {
	{ "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
	{ "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
	{ "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
	{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

/* Recursive attributes for mount_setattr(2) with AT_RECURSIVE. The kernel
 * wants the whole MOUNT_ATTR__ATIME field cleared whenever an atime mode is
 * set; "ratime" and "rnostrictatime" therefore mean back to the default mode,
 * relatime. "rnorelatime" changes nothing: without noatime or strictatime the
 * kernel uses relatime anyway (as it does for plain "norelatime"). */
static const struct {
	const char *name;
	uint64_t set, clr;
} rec_attrs[] = {
	{ "rro", MOUNT_ATTR_RDONLY, 0 },           { "rrw", 0, MOUNT_ATTR_RDONLY },
	{ "rnosuid", MOUNT_ATTR_NOSUID, 0 },       { "rsuid", 0, MOUNT_ATTR_NOSUID },
	{ "rnodev", MOUNT_ATTR_NODEV, 0 },         { "rdev", 0, MOUNT_ATTR_NODEV },
	{ "rnoexec", MOUNT_ATTR_NOEXEC, 0 },       { "rexec", 0, MOUNT_ATTR_NOEXEC },
	{ "rnodiratime", MOUNT_ATTR_NODIRATIME, 0 }, { "rdiratime", 0, MOUNT_ATTR_NODIRATIME },
	{ "rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0 }, { "rsymfollow", 0, MOUNT_ATTR_NOSYMFOLLOW },
	{ "rnoatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME },
	{ "rstrictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
	{ "rrelatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
	{ "ratime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
	{ "rnostrictatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
	{ "rnorelatime", 0, 0 },
};

static bool is_bind(const struct oci_mount *m)
{
	return (m->flags & MS_BIND) != 0;
}

/* What the pass over a mount's options keeps for the checks after it. */
struct option_scan {
	char *data, *d;             /* file system data joined by ',', and its end */
	size_t prop_index, tmpcopyup_index, idmap_index, data_index;
	bool has_idmap_option;
};

static void reset_derived(struct oci_mount *m)
{
	m->flags = 0;
	m->propagation = 0;
	m->recursive_bind = m->tmpcopyup = false;
	m->rec_attr_set = m->rec_attr_clr = 0;
	m->data = NULL;
	m->idmap = m->n_uid_mappings > 0;
	m->recursive_idmap = false;
	if (m->type && streq(m->type, "bind"))
		m->flags |= MS_BIND;
}

/* The tables are scanned for each option: a first letter that differs rules
 * an entry out without a call (~650 strcmp calls a runc config). */
static bool option_is(const char *o, const char *name)
{
	return o[0] == name[0] && streq(o, name);
}

/* Option i if it is in one of the tables (a mount(2) flag, a propagation, a
 * recursive attribute): 1 when it was, 0 when not, -1 on a conflict. */
static int table_option(struct walk *w, struct oci_mount *m, size_t i, struct option_scan *s)
{
	const char *o = m->options[i];
	for (size_t j = 0; j < ARRAY_SIZE(mount_flags); j++) {
		if (!option_is(o, mount_flags[j].name))
			continue;
		if (mount_flags[j].clear)
			m->flags &= ~mount_flags[j].flag;
		else
			m->flags |= mount_flags[j].flag;
		return 1;
	}
	for (size_t j = 0; j < ARRAY_SIZE(propagations); j++) {
		if (!option_is(o, propagations[j].name))
			continue;
		/* One mount has one propagation type; two different ones are
		 * a mistake we should not resolve by guessing. */
		if (m->propagation && m->propagation != propagations[j].flags)
			return walk_fail(w, "conflicting propagation options \"%s\" and \"%s\"",
					 m->options[s->prop_index], o);
		m->propagation = propagations[j].flags;
		s->prop_index = i;
		return 1;
	}
	for (size_t j = 0; j < ARRAY_SIZE(rec_attrs); j++) {
		if (!option_is(o, rec_attrs[j].name))
			continue;
		m->rec_attr_set = (m->rec_attr_set & ~rec_attrs[j].clr) | rec_attrs[j].set;
		m->rec_attr_clr = (m->rec_attr_clr & ~rec_attrs[j].set) | rec_attrs[j].clr;
		return 1;
	}
	return 0;
}

/* Option i when no table has it: bind, rbind, tmpcopyup, idmap, ridmap, z/Z,
 * else file system data. */
static void other_option(struct oci_mount *m, size_t i, struct option_scan *s)
{
	const char *o = m->options[i];
	if (streq(o, "bind")) {
		m->flags |= MS_BIND;
	} else if (streq(o, "rbind")) {
		m->flags |= MS_BIND | MS_REC;
		m->recursive_bind = true;
	} else if (streq(o, "tmpcopyup")) {
		m->tmpcopyup = true;
		s->tmpcopyup_index = i;
	} else if (streq(o, "idmap") || streq(o, "ridmap")) {
		m->idmap = s->has_idmap_option = true;
		m->recursive_idmap |= streq(o, "ridmap");
		s->idmap_index = i;
	} else if (streq(o, "z") || streq(o, "Z")) {
		/* SELinux relabel requests: the engine's job, nothing to mount */
	} else {
		/* Filesystem data: mode=755, size=65536k, newinstance, ... */
		if (s->d == s->data)
			s->data_index = i;
		if (s->d != s->data)
			*s->d++ = ',';
		s->d = stpcpy(s->d, o);
	}
}

/* Options that need another option or a kind of mount, with w's path at
 * "options". A bind's file system data is dropped here. */
static int check_options(struct walk *w, struct oci_mount *m, struct option_scan *s, size_t old)
{
	if (m->tmpcopyup && !(m->type && streq(m->type, "tmpfs"))) {
		walk_push_index(w, s->tmpcopyup_index);
		return walk_fail(w, "tmpcopyup needs a tmpfs mount, type is \"%s\"",
				 m->type ? m->type : "(none)");
	}
	if (s->has_idmap_option && !is_bind(m)) {
		walk_push_index(w, s->idmap_index);
		return walk_fail(w, "%s needs a bind mount", m->options[s->idmap_index]);
	}
	/* A bind takes no file system data (mode=, size=): the kernel ignores
	 * it, as runc and crun do; engines send tmpfs-style defaults on binds. */
	if (s->d != s->data && is_bind(m)) {
		walk_push_index(w, s->data_index);
		log_debug("%s: %s: \"%s\" ignored on a bind mount (it takes no file system data)",
			  w->what, w->path, s->data);
		walk_pop(w, old);
		s->d = s->data;
	}
	return 0;
}

/* Derive the mount's flags from its options, with w's path at the mount. */
static int mount_options(struct walk *w, struct oci_mount *m)
{
	reset_derived(m);
	struct option_scan s = { 0 };
	size_t data_len = 0;
	for (size_t i = 0; i < m->n_options; i++)
		data_len += strlen(m->options[i]) + 1;
	s.data = s.d = arena_alloc(w->a, data_len + 1);

	size_t old = walk_push_key(w, "options");
	for (size_t i = 0; i < m->n_options; i++) {
		size_t old_i = walk_push_index(w, i);
		if (!*m->options[i])
			return walk_fail(w, "empty mount option");
		int r = table_option(w, m, i, &s);
		if (r < 0)
			return r;
		if (r == 0)
			other_option(m, i, &s);
		walk_pop(w, old_i);
	}
	if (check_options(w, m, &s, old) < 0)
		return -1;
	walk_pop(w, old);
	if (!m->type && !is_bind(m)) {
		walk_push_key(w, "type");
		return walk_fail(w, "missing (needed unless options has bind or rbind)");
	}
	if (m->n_uid_mappings && !is_bind(m)) {
		walk_push_key(w, "uidMappings");
		return walk_fail(w, "id-mapped mounts must be bind mounts");
	}
	m->data = s.d != s.data ? s.data : NULL;
	return 0;
}

int oci_mount_parse_options(struct oci_mount *m, struct arena *arena, const char *where,
			    struct ab_err *err)
{
	struct walk w;
	walk_init(&w, arena, where, err);
	return mount_options(&w, m);
}

/* Old spec versions allowed relative destinations; like runc, take them as
 * relative to the container's root. */
static int parse_destination(struct walk *w, yajl_val v, void *at)
{
	char **dest = at;
	int r = walk_nonempty_str(w, v, dest);
	if (r > 0 && (*dest)[0] != '/')
		*dest = arena_printf(w->a, "/%s", *dest);
	/* one spelling for the floor's comparisons and the walk in the root */
	if (r > 0)
		walk_clean_path(*dest);
	return r;
}

#define MNT struct oci_mount
static const struct walk_field mount_fields[] = {
	{ "destination", WF_CUSTOM(MNT, destination, parse_destination), .required = true },
	{ "source", WF_STR(MNT, source) },
	{ "type", WF_NONEMPTY_STR(MNT, type) },
	{ "options", WF_STR_ARRAY(MNT, options, n_options) },
	{ "uidMappings", WF_LIST(MNT, uid_mappings, n_uid_mappings, struct oci_id_mapping), .parse = parse_id_mapping },
	{ "gidMappings", WF_LIST(MNT, gid_mappings, n_gid_mappings, struct oci_id_mapping), .parse = parse_id_mapping },
	{ 0 },
};
#undef MNT

int parse_mount(struct walk *w, yajl_val v, void *at)
{
	struct oci_mount *m = at;
	int r = walk_fields(w, v, mount_fields, m, NULL);
	if (r <= 0)
		return r;
	if (!m->n_uid_mappings != !m->n_gid_mappings) {
		walk_push_key(w, m->n_uid_mappings ? "gidMappings" : "uidMappings");
		return walk_fail(w, "missing (uidMappings and gidMappings go together)");
	}
	return mount_options(w, m);
}

/* The files runc lets a mount cover inside /proc: those lxcfs emulates. */
static const char *const proc_overmounts[] = {
	"/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat", "/proc/swaps", "/proc/uptime",
	"/proc/loadavg", "/proc/slabinfo", "/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
};

const char *oci_proc_overmounts_text(void)
{
	return "/proc/cpuinfo, diskstats, meminfo, stat, swaps, uptime, loadavg, slabinfo, net/dev, "
	       "sys/kernel/ns_last_pid";
}

/* dest with "//", "." and ".." taken lexically ("/a/../b" is "/b"; ".." stops
 * at "/"), into buf. */
static void lexical_clean(const char *dest, char *buf, size_t len)
{
	size_t out = 0;
	buf[0] = 0;
	for (const char *p = dest; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (out > 0 && buf[out - 1] != '/')
				out--;
			if (out > 0)
				out--;          /* the slash before it */
			buf[out] = 0;
		} else if (n && !(n == 1 && p[0] == '.') && out + n + 2 < len) {
			buf[out++] = '/';
			memcpy(buf + out, p, n);
			out += n;
			buf[out] = 0;
		}
		p = end;
	}
	if (!out)
		snprintf(buf, len, "/");
}

enum oci_proc_dest oci_mount_proc_dest(const char *dest)
{
	char clean[PATH_MAX];
	lexical_clean(dest ? dest : "/", clean, sizeof clean);
	if (streq(clean, "/proc"))
		return PROC_DEST_ROOT;
	if (strncmp(clean, "/proc/", 6) != 0)
		return PROC_DEST_OUTSIDE;
	for (size_t i = 0; i < ARRAY_SIZE(proc_overmounts); i++)
		if (streq(clean, proc_overmounts[i]))
			return PROC_DEST_OVERMOUNT;
	return PROC_DEST_INSIDE;
}
