/* The floor's device rules. Every container gets a device cgroup (v1
 * devices.deny/allow, or the v2 BPF program), deny-all first, whatever its
 * config holds, then runc's default set and the config's rules in order; with floor.refuse_host_devices (the default) a config may only
 * reach character devices of the standard set an engine gives, and those the
 * admin adds with floor.allow_devices, and no block device. The config reaches
 * devices three ways, each checked here: linux.devices (nodes the runtime
 * makes), linux.resources.devices (cgroup rules, wildcards included) and bind
 * mounts of device nodes. A bind of a directory shows the nodes in it, but the
 * device cgroup refuses to open any not allowed; a bind of the host's /dev
 * itself is refused outright. */
#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "floor_devices.h"
#include "util.h"

/* What every container may open: runc's default set, but /dev/net/tun, which
 * runc keeps for old Docker setups and the floor leaves to floor.allow_devices
 * (an engine that wants it lists it, as for fuse). */
static const struct floor_device granted_chars[] = {
	{'c', 1, 3},      /* null */
	{'c', 1, 5},      /* zero */
	{'c', 1, 7},      /* full */
	{'c', 1, 8},      /* random */
	{'c', 1, 9},      /* urandom */
	{'c', 5, 0},      /* tty */
	{'c', 5, 2},      /* ptmx */
	{'c', 136, -1},   /* pts */
};

/* What a config may ask for besides: the console, which Docker and containerd
 * list. Not granted unasked: with CAP_MKNOD a node for c 5:1 would be the
 * host's console (a container's /dev/console is a pts bind). */
static const struct floor_device console_char = {'c', 5, 1};

static bool covers(const struct floor_device *allow, char type, int64_t major, int64_t minor)
{
	if (allow->type != type)
		return false;
	if (allow->major >= 0 && allow->major != major)
		return false;   /* a wildcard asked for is covered only by a wildcard */
	if (allow->minor >= 0 && allow->minor != minor)
		return false;
	return true;
}

/* type 'c' or 'b'; major/minor -1 = every number (a rule's wildcard). */
static bool device_allowed(const struct agent_config *cfg, char type, int64_t major, int64_t minor)
{
	for (size_t i = 0; type == 'c' && i < ARRAY_SIZE(granted_chars); i++)
		if (covers(&granted_chars[i], type, major, minor))
			return true;
	if (covers(&console_char, type, major, minor))
		return true;
	for (size_t i = 0; i < cfg->n_allow_devices; i++)
		if (covers(&cfg->allow_devices[i], type, major, minor))
			return true;
	return false;
}

bool floor_char_device_allowed(const struct agent_config *cfg, int64_t major, int64_t minor)
{
	return device_allowed(cfg, 'c', major, minor);
}

static const char *type_name(char type)
{
	return type == 'b' ? "block" : "character";
}

static void dev_text(char *buf, size_t len, char type, int64_t major, int64_t minor)
{
	char maj[24] = "*", min[24] = "*";
	if (major >= 0)
		snprintf(maj, sizeof maj, "%lld", (long long)major);
	if (minor >= 0)
		snprintf(min, sizeof min, "%lld", (long long)minor);
	snprintf(buf, len, "%c %s:%s", type, maj, min);
}

static int refuse(struct ab_err *err, const struct agent_config *cfg, const char *where, const char *what,
		  char type, int64_t major, int64_t minor)
{
	char dev[64];
	dev_text(dev, sizeof dev, type, major, minor);
	return ab_error(err, 0, "floor: host devices are refused: %s %s (%s), which is not on the floor's device allowlist (add \"%s\" to floor.allow_devices, or set floor.refuse_host_devices: false in %s)",
			where, what, dev, dev, agent_config_name(cfg));
}

static int check_bind(const struct agent_config *cfg, const struct oci_mount *m, size_t i,
		      struct ab_err *err)
{
	struct stat st, dev;
	if (!m->source || stat(m->source, &st) < 0)
		return 0;     /* the mount itself says what is wrong */
	char where[64];
	snprintf(where, sizeof where, "mounts[%zu]", i);
	char what[PATH_MAX + 64];
	/* the whiteout device (character 0:0): no driver has that number, so
	 * nothing opens it (kit run's placeholders are such nodes) */
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))
		return 0;
	if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) {
		char type = S_ISBLK(st.st_mode) ? 'b' : 'c';
		if (device_allowed(cfg, type, major(st.st_rdev), minor(st.st_rdev)))
			return 0;
		snprintf(what, sizeof what, "binds the %s device %s", type_name(type), m->source);
		return refuse(err, cfg, where, what, type, major(st.st_rdev), minor(st.st_rdev));
	}
	if (S_ISDIR(st.st_mode) && stat("/dev", &dev) == 0 && st.st_dev == dev.st_dev)
		return ab_error(err, 0, "floor: host devices are refused: mounts[%zu] binds %s, a directory of the host's /dev, which holds its device nodes (set floor.refuse_host_devices: false in %s)",
				i, m->source, agent_config_name(cfg));
	return 0;
}

int floor_devices(const struct agent_config *cfg, const struct oci_config *c, struct ab_err *err)
{
	if (!cfg->refuse_host_devices)
		return 0;
	const struct oci_linux *l = &c->linux_;
	char where[64], what[PATH_MAX + 64];
	for (size_t i = 0; i < l->n_devices; i++) {
		const struct oci_device *d = &l->devices[i];
		if (d->type == 'p')
			continue;
		char type = d->type == 'b' ? 'b' : 'c';
		if (device_allowed(cfg, type, d->major, d->minor))
			continue;
		snprintf(where, sizeof where, "linux.devices[%zu]", i);
		snprintf(what, sizeof what, "is the %s device %s", type_name(type), d->path);
		return refuse(err, cfg, where, what, type, d->major, d->minor);
	}
	const struct oci_resources *r = &l->resources;
	for (size_t i = 0; l->has_resources && i < r->n_devices; i++) {
		const struct oci_device_rule *d = &r->devices[i];
		if (!d->allow || !strpbrk(d->access, "rw"))
			continue;   /* a deny, or mknod alone: opens nothing */
		const char *types = d->type == 'a' ? "bc" : d->type == 'b' ? "b" : "c";
		for (const char *t = types; *t; t++) {
			if (device_allowed(cfg, *t, d->major, d->minor))
				continue;
			snprintf(where, sizeof where, "linux.resources.devices[%zu]", i);
			snprintf(what, sizeof what, "allows %s%s devices", d->type == 'a' ? "all " : "",
				 type_name(*t));
			return refuse(err, cfg, where, what, *t, d->major, d->minor);
		}
	}
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct oci_mount *m = &c->mounts[i];
		bool bind = (m->flags & MS_BIND) || (m->type && streq(m->type, "bind"));
		if (bind && check_bind(cfg, m, i, err) < 0)
			return -1;
	}
	return 0;
}

/* Where the config's rules start to count: after its last deny-all, which
 * resets what came before it (the v1 kernel clears its list; the granted set
 * before it is the floor's, and stays). */
static size_t rules_after_deny_all(const struct oci_resources *r)
{
	size_t from = 0;
	for (size_t i = 0; i < r->n_devices; i++) {
		const struct oci_device_rule *d = &r->devices[i];
		if (!d->allow && d->type == 'a' && d->major < 0 && d->minor < 0 && strchr(d->access, 'r') &&
		    strchr(d->access, 'w') && strchr(d->access, 'm'))
			from = i + 1;
	}
	return from;
}

int floor_device_rules(struct oci_config *c, struct ab_err *err)
{
	static const struct oci_device_rule head[] = {
		{.allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm"},
		/* mknod of any node (opening it is another matter), as runc */
		{.allow = true, .type = 'c', .major = -1, .minor = -1, .access = "m"},
		{.allow = true, .type = 'b', .major = -1, .minor = -1, .access = "m"},
	};
	struct oci_linux *l = &c->linux_;
	struct oci_resources *r = &l->resources;
	if (!l->has_resources)
		r->n_devices = 0;
	size_t from = rules_after_deny_all(r);
	size_t n = ARRAY_SIZE(head) + ARRAY_SIZE(granted_chars) + r->n_devices - from;
	struct oci_device_rule *rules = arena_alloc(&c->arena, sizeof *rules * n);
	size_t k = 0;
	for (size_t i = 0; i < ARRAY_SIZE(head); i++)
		rules[k++] = head[i];
	/* the granted set before the config's rules, so that its own denials win */
	for (size_t i = 0; i < ARRAY_SIZE(granted_chars); i++)
		rules[k++] = (struct oci_device_rule){.allow = true, .type = 'c', .major = granted_chars[i].major,
						      .minor = granted_chars[i].minor, .access = "rwm"};
	/* then the config's, in order, as runc applies them; a device in
	 * linux.devices is made, and opened only if a rule allows it (runc) */
	for (size_t i = from; i < r->n_devices; i++)
		rules[k++] = r->devices[i];
	r->devices = rules;
	r->n_devices = k;
	l->has_resources = true;
	return 0;
}
