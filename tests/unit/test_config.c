/* Unit tests for the config.json parser (oci/config/config*.c) and the JSON module. */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "config.h"
#include "config_linux.h"
#include "config_mounts.h"
#include "json.h"
#include "tap.h"

static const char *fixtures;

/* Test JSON is written with ' for " to stay readable; swap them back. */
static char *q(const char *s)
{
	char *t = xstrdup(s);
	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	return t;
}

#define BASE "'ociVersion':'1.2.0','root':{'path':'rootfs'}"

/* Parse (quoted) text; returns the config or NULL with err filled. */
static struct oci_config *parse_q(const char *text, struct ab_err *err)
{
	_cleanup_free_ char *t = q(text);
	struct oci_config *c = NULL;
	ab_err_clear(err);
	if (oci_config_parse(t, "config.json", &c, err) < 0)
		return NULL;
	return c;
}

static struct oci_config *load_fixture(const char *name, struct ab_err *err)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", fixtures, name);
	struct oci_config *c = NULL;
	ab_err_clear(err);
	if (oci_config_load(path, &c, err) < 0)
		return NULL;
	return c;
}

static char *read_fixture(const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", fixtures, name);
	char *buf = NULL;
	struct ab_err err;
	if (read_file_at(AT_FDCWD, path, 1 << 20, &buf, NULL, &err) < 0) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	return buf;
}

static const struct oci_mount *find_mount(const struct oci_config *c, const char *dest)
{
	for (size_t i = 0; i < c->n_mounts; i++)
		if (streq(c->mounts[i].destination, dest))
			return &c->mounts[i];
	return NULL;
}

static void test_docker(void)
{
	struct ab_err err;
	struct oci_config *c = load_fixture("docker-create-config.json", &err);
	ok(c != NULL, "docker config parses%s%s", c ? "" : ": ", c ? "" : err.msg);
	if (!c)
		return;
	is_str(c->oci_version, "1.0.2-dev", "docker: ociVersion");
	ok(c->root_path[0] == '/', "docker: absolute root path");
	ok(c->linux_.n_namespaces == 5, "docker: 5 namespaces");
	ok(c->linux_.namespaces[0].kind == NS_MOUNT && c->linux_.namespaces[0].clone_flag == CLONE_NEWNS,
	   "docker: first namespace is mount / CLONE_NEWNS");
	ok(oci_namespace_find(c, NS_NETWORK) != NULL && oci_namespace_find(c, NS_USER) == NULL,
	   "docker: oci_namespace_find");
	ok(c->process && c->process->has_capabilities &&
	   (c->process->caps.bounding & (UINT64_C(1) << CAP_NET_RAW)) &&
	   !(c->process->caps.bounding & (UINT64_C(1) << CAP_SYS_ADMIN)),
	   "docker: bounding has CAP_NET_RAW, not CAP_SYS_ADMIN");
	ok(__builtin_popcountll(c->process->caps.effective) == 14, "docker: 14 effective caps");
	ok(c->process->args[c->process->n_args] == NULL, "docker: args NULL-terminated");

	const struct oci_seccomp *sc = c->linux_.seccomp;
	ok(sc && sc->default_action == SECCOMP_ACT_ERRNO_ && sc->n_architectures == 3,
	   "docker: seccomp default errno, 3 architectures");
	bool masked = false, clone3 = false;
	for (size_t i = 0; sc && i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];
		if (streq(s->names[0], "clone") && s->n_args == 1 && s->args[0].op == SECCOMP_OP_MASKED_EQ &&
		    s->args[0].value == 2114060288 && s->args[0].index == 0)
			masked = true;
		if (streq(s->names[0], "clone3") && s->action == SECCOMP_ACT_ERRNO_ && s->has_errno_ret &&
		    s->errno_ret == 38)
			clone3 = true;
	}
	ok(masked, "docker: clone has a SCMP_CMP_MASKED_EQ arg 2114060288");
	ok(clone3, "docker: clone3 -> errno 38");

	ok(c->linux_.n_masked_paths == 10 && c->linux_.n_readonly_paths == 5,
	   "docker: 10 maskedPaths, 5 readonlyPaths");
	ok(c->linux_.n_sysctl == 2, "docker: 2 sysctls");
	const struct oci_resources *r = &c->linux_.resources;
	ok(c->linux_.has_resources && r->n_devices == 8 && !r->devices[0].allow &&
	   r->devices[0].type == 'a' && r->devices[0].major == -1 && r->devices[0].minor == -1 &&
	   streq(r->devices[0].access, "rwm"),
	   "docker: deny-all device rule is a *:* rwm");
	ok(r->devices[1].allow && r->devices[1].type == 'c' && r->devices[1].major == 1 &&
	   r->devices[1].minor == 5, "docker: c 1:5 allowed");
	ok(r->memory.has_disable_oom_killer && !r->memory.disable_oom_killer && r->cpu.has_shares &&
	   r->cpu.shares == 0 && r->block_io.has_weight, "docker: memory/cpu/blockIO zero values kept");
	is_str(c->linux_.cgroups_path, "/docker/41a05b5ce2f52c5b84d5eb8dfa068acf0fd2d538ddfa5b3b28b29e3cdb59401b",
	       "docker: cgroupsPath");

	const struct oci_mount *m = find_mount(c, "/dev");
	ok(m && m->flags == MS_NOSUID + MS_STRICTATIME && streq(m->data, "mode=755,size=65536k"),
	   "docker: /dev tmpfs flags and data");
	m = find_mount(c, "/dev/pts");
	ok(m && streq(m->data, "newinstance,ptmxmode=0666,mode=0620,gid=5"), "docker: devpts data");
	m = find_mount(c, "/sys/fs/cgroup");
	ok(m && (m->flags & MS_RDONLY) && streq(m->type, "cgroup") && !m->data, "docker: cgroup mount ro");
	m = find_mount(c, "/etc/hosts");
	ok(m && m->flags == (MS_BIND | MS_REC) && m->recursive_bind &&
	   m->propagation == (MS_PRIVATE | MS_REC) && !m->data, "docker: /etc/hosts rbind,rprivate");
	oci_config_free(c);
}

static void test_podman(void)
{
	struct ab_err err;
	struct oci_config *c = load_fixture("podman-create-config.json", &err);
	ok(c != NULL, "podman config parses%s%s", c ? "" : ": ", c ? "" : err.msg);
	if (!c)
		return;
	ok(c->process->user.has_umask && c->process->user.umask == 022, "podman: umask 0022");
	ok(c->process->n_rlimits == 2 && c->process->rlimits[0].resource == RLIMIT_NOFILE &&
	   c->process->rlimits[0].soft == 20000 && c->process->rlimits[1].resource == RLIMIT_NPROC,
	   "podman: rlimits");
	is_str(oci_annotation(c, "io.container.manager"), "libpod", "podman: annotation");
	ok(oci_annotation(c, "nope") == NULL, "podman: absent annotation is NULL");
	ok(c->linux_.seccomp && c->linux_.seccomp->has_default_errno_ret &&
	   c->linux_.seccomp->default_errno_ret == 38, "podman: defaultErrnoRet 38");
	ok(c->linux_.resources.pids.has_limit && c->linux_.resources.pids.limit == 2048,
	   "podman: pids limit 2048");
	const struct oci_mount *m = find_mount(c, "/dev/shm");
	ok(m && (m->flags & MS_BIND) && !m->recursive_bind &&
	   (m->flags & (MS_NOSUID | MS_NOEXEC | MS_NODEV)) == (MS_NOSUID | MS_NOEXEC | MS_NODEV),
	   "podman: /dev/shm is a bind with nosuid,noexec,nodev");
	m = find_mount(c, "/sys/fs/cgroup");
	ok(m && (m->flags & MS_RELATIME) && m->propagation == (MS_PRIVATE | MS_REC),
	   "podman: cgroup mount relatime, rprivate");
	oci_config_free(c);
}

static void test_ctr(void)
{
	struct ab_err err;
	struct oci_config *c = load_fixture("ctr-create-config.json", &err);
	ok(c != NULL, "ctr config parses%s%s", c ? "" : ": ", c ? "" : err.msg);
	if (!c)
		return;
	is_str(c->root_path, "rootfs", "ctr: relative root path kept as written");
	ok(c->process->no_new_privileges, "ctr: noNewPrivileges");
	ok(c->process->n_rlimits == 1 && c->process->rlimits[0].hard == 1024, "ctr: RLIMIT_NOFILE 1024");
	ok(c->linux_.seccomp == NULL && c->hooks.n_hooks[HOOK_PRESTART] == 0, "ctr: no seccomp, no hooks");
	const struct oci_device_rule *d = &c->linux_.resources.devices[8];
	ok(d->major == 136 && d->minor == -1, "ctr: c 136:* (minor absent = wildcard)");
	ok(c->linux_.resources.cpu.shares == 1024, "ctr: cpu shares");
	oci_config_free(c);
}

static void test_exec_and_update(void)
{
	struct ab_err err;
	struct arena a = { 0 };
	_cleanup_free_ char *dp = read_fixture("docker-exec-process.json");
	_cleanup_free_ char *pp = read_fixture("podman-exec-process.json");
	_cleanup_free_ char *du = read_fixture("docker-update-resources.json");
	_cleanup_free_ char *pu = read_fixture("podman-update-resources.json");
	struct oci_process *p = NULL;
	int r = dp ? oci_process_parse(dp, "process.json", &a, &p, &err) : -1;
	ok(r == 0 && p && p->n_args == 2 && streq(p->args[1], "5") && p->has_oom_score_adj,
	   "docker exec process.json%s%s", r ? ": " : "", r ? err.msg : "");
	r = pp ? oci_process_parse(pp, "process.json", &a, &p, &err) : -1;
	ok(r == 0 && p && p->n_env == 4 && streq(p->env[3], "HOME=") && p->n_rlimits == 2,
	   "podman exec process.json%s%s", r ? ": " : "", r ? err.msg : "");

	struct oci_resources res;
	r = du ? oci_resources_parse(du, "update.json", &a, &res, &err) : -1;
	ok(r == 0 && res.memory.has_limit && res.memory.limit == 67108864 && res.memory.swap == 134217728 &&
	   res.cpu.has_quota && res.cpu.quota == 50000 && res.cpu.period == 100000 &&
	   res.pids.limit == 99 && res.memory.has_kernel && res.memory.kernel == 0,
	   "docker update resources%s%s", r ? ": " : "", r ? err.msg : "");
	r = pu ? oci_resources_parse(pu, "update.json", &a, &res, &err) : -1;
	ok(r == 0 && res.memory.limit == 33554432 && res.memory.swap == 67108864 && !res.cpu.has_quota &&
	   !res.pids.has_limit, "podman update resources%s%s", r ? ": " : "", r ? err.msg : "");

	/* Errors in these documents name the path from their own root. */
	r = oci_process_parse("{\"args\":[]}", "process.json", &a, &p, &err);
	ok(r < 0, "process.json with empty args fails");
	is_str(err.msg, "process.json: args: must be a non-empty array of strings", "process.json error path");
	r = oci_resources_parse("{\"memory\":{\"limit\":\"1G\"}}", "update.json", &a, &res, &err);
	is_str(err.msg, "update.json: memory.limit: expected an integer, got a string",
	       "update error path");
	r = oci_resources_parse("[1]", "update.json", &a, &res, &err);
	is_str(err.msg, "update.json: expected a JSON object, got an array", "update: not an object");
	arena_free(&a);
}

static void test_good_details(void)
{
	struct ab_err err;
	struct oci_config *c = parse_q("{" BASE ",'mounts':["
		"{'destination':'/ro','type':'tmpfs','source':'tmpfs','options':['tmpcopyup','mode=755','ro','rw','nosuid']},"
		"{'destination':'relative/dir','source':'/src','options':['rbind','rro','rnosuid','rnoatime','rshared']},"
		"{'destination':'/b','source':'/src','type':'bind','options':['ridmap','rrw','ratime']},"
		"{'destination':'/m','source':'/src','options':['bind','lazytime','remount','idmap'],"
		" 'uidMappings':[{'containerID':0,'hostID':1000,'size':1}],'gidMappings':[{'containerID':0,'hostID':1000,'size':1}]}],"
		"'process':{'args':['sh'],'user':{'uid':1,'gid':2,'additionalGids':[3,4]},'env':null,"
		" 'consoleSize':{'height':24,'width':80},'ioPriority':{'class':'IOPRIO_CLASS_IDLE','priority':7},"
		" 'scheduler':{'policy':'SCHED_BATCH','nice':5,'flags':['SCHED_FLAG_RESET_ON_FORK']},"
		" 'execCPUAffinity':{'initial':'0-3,7','final':'1'},'oomScoreAdj':-1000,"
		" 'apparmorProfile':'p','selinuxLabel':'l','rlimits':[{'type':'RLIMIT_CORE','soft':0,'hard':18446744073709551615}]},"
		"'hostname':'h','domainname':'d','windows':{'whatever':1},'vm':[],"
		"'hooks':{'prestart':[{'path':'/bin/hook','args':['hook','x'],'timeout':5}],'poststop':[{'path':'/p'}]},"
		"'linux':{'namespaces':[{'type':'user'},{'type':'pid','path':'/proc/1/ns/pid'},{'type':'time'}],"
		" 'devices':[{'path':'/dev/fuse','type':'c','major':10,'minor':229,'fileMode':8630,'uid':0,'gid':5},"
		"  {'path':'/dev/fifo','type':'p'}],"
		" 'intelRdt':{},'mountLabel':'m','rootfsPropagation':'slave',"
		" 'personality':{'domain':'LINUX32','flags':[]},"
		" 'timeOffsets':{'monotonic':{'secs':-5,'nanosecs':7},'boottime':{'secs':9}},"
		" 'netDevices':{'eth1':{'name':'ceth0'},'eth2':{}},"
		" 'resources':{'rdma':{'mlx5_1':{'hcaHandles':3}},'unified':{'memory.high':'1G'},"
		"  'network':{'classID':7,'priorities':[{'name':'eth0','priority':2}]},"
		"  'hugepageLimits':[{'pageSize':'2MB','limit':1048576}],"
		"  'blockIO':{'weightDevice':[{'major':8,'minor':0,'weight':500}],'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1000}]},"
		"  'memory':{'swappiness':18446744073709551615,'limit':-1},'cpu':{'cpus':'0-1','mems':'','idle':1}},"
		" 'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/run/l.sock','flags':['SECCOMP_FILTER_FLAG_LOG'],"
		"  'syscalls':[{'names':['mkdir'],'action':'SCMP_ACT_NOTIFY'},{'names':['kill'],'action':'SCMP_ACT_KILL'},"
		"   {'names':['x'],'action':'SCMP_ACT_TRACE','errnoRet':1,'args':[{'index':5,'value':18446744073709551615,'valueTwo':1,'op':'SCMP_CMP_GE'}]}]}}}",
		&err);
	ok(c != NULL, "a config using most of the spec parses%s%s", c ? "" : ": ", c ? "" : err.msg);
	if (!c)
		return;
	const struct oci_mount *m = &c->mounts[0];
	ok(m->tmpcopyup && m->flags == MS_NOSUID && streq(m->data, "mode=755"),
	   "tmpcopyup is a flag, rw undoes ro, data keeps mode=755");
	m = &c->mounts[1];
	is_str(m->destination, "/relative/dir", "relative mount destination made absolute");
	ok(m->flags == (MS_BIND | MS_REC) && m->recursive_bind && m->propagation == (MS_SHARED | MS_REC),
	   "no type with rbind is fine");
	ok(m->rec_attr_set == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOATIME) &&
	   m->rec_attr_clr == MOUNT_ATTR__ATIME, "rro,rnosuid,rnoatime -> MOUNT_ATTR_* set/clr");
	m = &c->mounts[2];
	ok(m->flags == MS_BIND && m->idmap && m->recursive_idmap && m->rec_attr_set == 0 &&
	   m->rec_attr_clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR__ATIME), "type bind, ridmap, rrw, ratime");
	m = &c->mounts[3];
	ok(m->flags == (MS_BIND | MS_LAZYTIME | MS_REMOUNT) && m->idmap && !m->recursive_idmap &&
	   m->n_uid_mappings == 1 && m->uid_mappings[0].host_id == 1000, "idmap bind with mappings");

	const struct oci_process *p = c->process;
	ok(p->user.uid == 1 && p->user.gid == 2 && p->user.n_additional_gids == 2 &&
	   p->user.additional_gids[1] == 4 && !p->user.has_umask, "user");
	ok(p->env == NULL && p->n_env == 0, "env: null is absent");
	is_str(p->cwd, "/", "cwd defaults to /");
	ok(p->has_console_size && p->console_height == 24 && p->console_width == 80, "consoleSize");
	ok(p->has_io_priority && p->io_priority.class == 3 && p->io_priority.priority == 7, "ioPriority");
	ok(p->has_scheduler && p->scheduler.policy_num == 3 && p->scheduler.nice == 5 &&
	   p->scheduler.n_flags == 1, "scheduler");
	ok(streq(p->exec_cpu_affinity_initial, "0-3,7") && streq(p->exec_cpu_affinity_final, "1"),
	   "execCPUAffinity");
	ok(p->has_oom_score_adj && p->oom_score_adj == -1000, "oomScoreAdj");
	ok(p->rlimits[0].hard == UINT64_MAX && p->rlimits[0].resource == RLIMIT_CORE,
	   "rlimit hard 2^64-1 (RLIM_INFINITY) fits");
	ok(streq(p->apparmor_profile, "p") && streq(p->selinux_label, "l"), "apparmor, selinux");
	ok(c->hooks.n_hooks[HOOK_PRESTART] == 1 && c->hooks.hooks[HOOK_PRESTART][0].has_timeout &&
	   c->hooks.hooks[HOOK_PRESTART][0].timeout == 5 && c->hooks.hooks[HOOK_PRESTART][0].n_args == 2 &&
	   c->hooks.n_hooks[HOOK_POSTSTOP] == 1 && !c->hooks.hooks[HOOK_POSTSTOP][0].has_timeout, "hooks");

	const struct oci_linux *l = &c->linux_;
	ok(l->n_namespaces == 3 && l->n_uid_mappings == 0 && l->namespaces[2].clone_flag == 0x80,
	   "user namespace without mappings is accepted; time ns");
	ok(l->n_devices == 2 && l->devices[0].has_file_mode && l->devices[0].file_mode == 020666 &&
	   l->devices[0].major == 10 && l->devices[0].minor == 229 && l->devices[0].has_gid &&
	   l->devices[0].gid == 5 && l->devices[1].type == 'p' && !l->devices[1].has_file_mode,
	   "devices: fileMode kept with S_IFCHR bits; a fifo needs no major/minor");
	is_str(oci_namespace_find(c, NS_PID)->path, "/proc/1/ns/pid", "namespace path");
	ok(l->rootfs_propagation_flags == (MS_SLAVE | MS_REC), "rootfsPropagation slave -> MS_SLAVE|MS_REC");
	ok(l->has_personality && l->personality == 0x0008, "personality LINUX32");
	ok(l->has_time_offsets && l->time_monotonic_secs == -5 && l->time_monotonic_nanosecs == 7 &&
	   l->time_boottime_secs == 9, "timeOffsets");
	ok(l->n_net_devices == 2 && streq(l->net_devices[0].value, "ceth0") && l->net_devices[1].value == NULL,
	   "netDevices");
	const struct oci_resources *r = &l->resources;
	ok(r->n_rdma == 1 && streq(r->rdma[0].value, "hca_handle=3 hca_object=max"), "rdma -> rdma.max syntax");
	ok(r->n_unified == 1 && r->network.has_class_id && r->network.class_id == 7 &&
	   streq(r->network.priorities[0].value, "2"), "unified, network");
	ok(r->n_hugepage_limits == 1 && r->block_io.n_weight_device == 1 &&
	   r->block_io.weight_device[0].weight == 500 && r->block_io.throttle_read_bps[0].rate == 1000,
	   "hugepages, blockIO");
	ok(!r->memory.has_swappiness && r->memory.limit == -1 && r->cpu.has_idle, "memory, cpu");
	const struct oci_seccomp *sc = l->seccomp;
	ok(sc->syscalls[0].action == SECCOMP_ACT_NOTIFY_ && sc->syscalls[1].action == SECCOMP_ACT_KILL_THREAD_ &&
	   sc->syscalls[2].args[0].value == UINT64_MAX && sc->syscalls[2].args[0].index == 5,
	   "seccomp notify, KILL = KILL_THREAD, uint64 arg values");
	oci_config_free(c);

	/* Minimal configs: no process is fine for parsing (create checks it). */
	c = parse_q("{" BASE "}", &err);
	ok(c && !c->process && !c->has_linux && c->n_mounts == 0, "minimal config parses");
	oci_config_free(c);
	c = parse_q("{" BASE ",'process':{'args':['a'],'user':{'uid':0,'gid':0}},'linux':null}", &err);
	ok(c && c->process && !c->has_linux, "linux: null is absent");
	oci_config_free(c);
}

static const struct {
	const char *json;
	const char *want;   /* the whole message, or a prefix ending in "..." */
} bad[] = {
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/run/l.sock',"
	  "'syscalls':[{'names':['mkdir','write'],'action':'SCMP_ACT_NOTIFY'}]}}}",
	  "config.json: linux.seccomp.syscalls[0].names[1]: SCMP_ACT_NOTIFY cannot be used for the write syscall" },
	/* linux.memoryPolicy (runtime-spec 1.3): what set_mempolicy(2) would refuse */
	{ "{" BASE ",'linux':{'memoryPolicy':{}}}", "config.json: linux.memoryPolicy.mode: missing" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'BAD_MODE'}}}",
	  "config.json: linux.memoryPolicy.mode: unknown memory policy mode \"BAD_MODE\"" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_PREFERRED','flags':['BADFLAG']}}}",
	  "config.json: linux.memoryPolicy.flags[0]: unknown memory policy flag \"BADFLAG\"" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_INTERLEAVE'}}}",
	  "config.json: linux.memoryPolicy: MPOL_INTERLEAVE needs nodes" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_LOCAL','nodes':'0'}}}",
	  "config.json: linux.memoryPolicy: MPOL_LOCAL takes no nodes" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_PREFERRED','nodes':'bad'}}}",
	  "config.json: linux.memoryPolicy.nodes: not a node list like \"0-3,7\": \"bad\"" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_PREFERRED','nodes':'10284838'}}}",
	  "config.json: linux.memoryPolicy.nodes: node 10284838 is out of range (0..1023)" },
	{ "{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0','flags':['MPOL_F_RELATIVE_NODES','MPOL_F_STATIC_NODES']}}}",
	  "config.json: linux.memoryPolicy: MPOL_F_RELATIVE_NODES and MPOL_F_STATIC_NODES exclude each other" },
	{ "{" BASE ",'process':{'args':['a'],'ioPriority':{'priority':1}}}",
	  "config.json: process.ioPriority.class: missing" },
	{ "{'ociVersion':'1.2.0'", "config.json: invalid JSON: ..." },
	{ "{'ociVersion':'1.2.0',}", "config.json: invalid JSON: ..." },
	{ "[]", "config.json: expected a JSON object, got an array" },
	{ "{'root':{'path':'r'}}", "config.json: ociVersion: missing" },
	{ "{'ociVersion':1,'root':{'path':'r'}}", "config.json: ociVersion: expected a string, got an integer" },
	{ "{'ociVersion':'2.0.0','root':{'path':'r'}}", "config.json: ociVersion: unsupported version \"2.0.0\" (want 1.x)" },
	{ "{'ociVersion':'1.0.0'}", "config.json: root: missing" },
	{ "{'ociVersion':'1.0.0','root':{'path':''}}", "config.json: root.path: must not be empty" },
	{ "{'ociVersion':'1.0.0','root':{'readonly':true}}", "config.json: root.path: missing" },
	{ "{" BASE ",'foo':1}", "config.json: foo: unknown field" },
	{ "{" BASE ",'root':{'path':'x'}}", "config.json: duplicate key \"root\"" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':0,'gid':0,'name':'x'}}}",
	  "config.json: process.user.name: unknown field" },
	{ "{" BASE ",'process':{'args':[]}}", "config.json: process.args: must be a non-empty array of strings" },
	{ "{" BASE ",'process':{'cwd':'/'}}", "config.json: process.args: must be a non-empty array of strings" },
	{ "{" BASE ",'process':{'args':'sh'}}", "config.json: process.args: must be a non-empty array of strings" },
	{ "{" BASE ",'process':{'args':['a',1]}}", "config.json: process.args[1]: expected a string, got an integer" },
	{ "{" BASE ",'process':{'args':['a'],'args':['b']}}", "config.json: process: duplicate key \"args\"" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':'0','gid':0}}}",
	  "config.json: process.user.uid: expected an integer, got a string" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':-1,'gid':0}}}",
	  "config.json: process.user.uid: must not be negative, got -1" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':0,'gid':4294967296}}}",
	  "config.json: process.user.gid: 4294967296 is out of range (0..4294967295)" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':1.5,'gid':0}}}",
	  "config.json: process.user.uid: expected an integer, got 1.5" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'gid':0}}}", "config.json: process.user.uid: missing" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':0,'gid':0,'umask':512}}}",
	  "config.json: process.user.umask: 512 is out of range (0..511)" },
	{ "{" BASE ",'process':{'args':['a'],'user':{'uid':0,'gid':0,'additionalGids':[1,-2]}}}",
	  "config.json: process.user.additionalGids[1]: must not be negative, got -2" },
	{ "{" BASE ",'process':{'args':['a'],'cwd':'tmp'}}",
	  "config.json: process.cwd: must be an absolute path, got \"tmp\"" },
	{ "{" BASE ",'process':{'args':['a'],'env':['PATH=/bin','NOEQUALS']}}",
	  "config.json: process.env[1]: must be KEY=VALUE, got \"NOEQUALS\"" },
	{ "{" BASE ",'process':{'args':['a'],'terminal':'yes'}}",
	  "config.json: process.terminal: expected a boolean, got a string" },
	{ "{" BASE ",'process':{'args':['a'],'capabilities':{'bounding':['CAP_CHOWN','CAP_CHOWN','CAP_FOO']}}}",
	  "config.json: process.capabilities.bounding[2]: unknown capability \"CAP_FOO\"" },
	{ "{" BASE ",'process':{'args':['a'],'capabilities':{'effective':['chown']}}}",
	  "config.json: process.capabilities.effective[0]: unknown capability \"chown\"" },
	{ "{" BASE ",'process':{'args':['a'],'capabilities':{'everything':[]}}}",
	  "config.json: process.capabilities.everything: unknown field" },
	{ "{" BASE ",'process':{'args':['a'],'rlimits':[{'type':'RLIMIT_FOO','soft':1,'hard':1}]}}",
	  "config.json: process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"" },
	{ "{" BASE ",'process':{'args':['a'],'rlimits':[{'type':'RLIMIT_NOFILE','soft':10,'hard':5}]}}",
	  "config.json: process.rlimits[0]: soft limit 10 is above the hard limit 5" },
	{ "{" BASE ",'process':{'args':['a'],'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,'hard':1},{'type':'RLIMIT_NOFILE','soft':1,'hard':2}]}}",
	  "config.json: process.rlimits[1]: duplicate rlimit RLIMIT_NOFILE (also at index 0)" },
	{ "{" BASE ",'process':{'args':['a'],'rlimits':[{'type':'RLIMIT_NOFILE','soft':1}]}}",
	  "config.json: process.rlimits[0].hard: missing" },
	{ "{" BASE ",'process':{'args':['a'],'oomScoreAdj':2000}}",
	  "config.json: process.oomScoreAdj: 2000 is out of range (-1000..1000)" },
	{ "{" BASE ",'process':{'args':['a'],'ioPriority':{'class':'IOPRIO_CLASS_FAST','priority':1}}}",
	  "config.json: process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_FAST\"" },
	{ "{" BASE ",'process':{'args':['a'],'scheduler':{'policy':'SCHED_FAST'}}}",
	  "config.json: process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"" },
	{ "{" BASE ",'process':{'args':['a'],'execCPUAffinity':{'initial':'0-'}}}",
	  "config.json: process.execCPUAffinity.initial: not a CPU list (like \"0-3,7\"): \"0-\"" },
	{ "{" BASE ",'process':{'args':['a'],'consoleSize':{'height':1}}}",
	  "config.json: process.consoleSize.width: missing" },
	{ "{" BASE ",'hostname':['h']}", "config.json: hostname: expected a string, got an array" },
	{ "{" BASE ",'annotations':{'a.b':1}}", "config.json: annotations[\"a.b\"]: expected a string, got an integer" },
	{ "{" BASE ",'hooks':{'prestart':[{'path':'hook'}]}}",
	  "config.json: hooks.prestart[0].path: must be an absolute path, got \"hook\"" },
	{ "{" BASE ",'hooks':{'poststop':[{'path':'/h','timeout':0}]}}",
	  "config.json: hooks.poststop[0].timeout: must be greater than zero, got 0" },
	{ "{" BASE ",'hooks':{'prestop':[]}}", "config.json: hooks.prestop: unknown field" },
	{ "{" BASE ",'hooks':{'createRuntime':[{'args':['x']}]}}", "config.json: hooks.createRuntime[0].path: missing" },
	{ "{" BASE ",'mounts':[{'type':'tmpfs'}]}", "config.json: mounts[0].destination: missing" },
	{ "{" BASE ",'mounts':[{'destination':'/a','type':'tmpfs','size':1}]}", "config.json: mounts[0].size: unknown field" },
	{ "{" BASE ",'mounts':[{'destination':'/a','source':'/b'}]}",
	  "config.json: mounts[0].type: missing (needed unless options has bind or rbind)" },
	{ "{" BASE ",'mounts':[{'destination':'/a','source':'/b','options':['rbind','rprivate','rshared']}]}",
	  "config.json: mounts[0].options[2]: conflicting propagation options \"rprivate\" and \"rshared\"" },
	{ "{" BASE ",'mounts':[{'destination':'/a','source':'/b','options':['bind','tmpcopyup']}]}",
	  "config.json: mounts[0].options[1]: tmpcopyup needs a tmpfs mount, type is \"(none)\"" },
	{ "{" BASE ",'mounts':[{'destination':'/a','type':'tmpfs','options':['idmap']}]}",
	  "config.json: mounts[0].options[0]: idmap needs a bind mount" },
	{ "{" BASE ",'mounts':[{'destination':'/a','type':'tmpfs','options':['nosuid','']}]}",
	  "config.json: mounts[0].options[1]: empty mount option" },
	{ "{" BASE ",'mounts':[{'destination':'/a','options':['bind'],'uidMappings':[{'containerID':0,'hostID':1,'size':1}]}]}",
	  "config.json: mounts[0].gidMappings: missing (uidMappings and gidMappings go together)" },
	{ "{" BASE ",'linux':{'namespaces':[{'type':'pid'},{'type':'uts'},{'type':'foo'}]}}",
	  "config.json: linux.namespaces[2].type: unknown namespace type \"foo\"" },
	{ "{" BASE ",'linux':{'namespaces':[{'type':'pid'},{'type':'pid','path':'/proc/1/ns/pid'}]}}",
	  "config.json: linux.namespaces[1]: duplicate namespace type \"pid\" (also at index 0)" },
	{ "{" BASE ",'linux':{'namespaces':[{'type':'network','path':'netns'}]}}",
	  "config.json: linux.namespaces[0].path: must be an absolute path, got \"netns\"" },
	{ "{" BASE ",'linux':{'namespaces':[{'type':'pid'}],'uidMappings':[{'containerID':0,'hostID':1000,'size':1}]}}",
	  "config.json: linux.uidMappings: given without a user namespace in linux.namespaces" },
	{ "{" BASE ",'linux':{'namespaces':[{'type':'user'}],'uidMappings':[{'containerID':0,'hostID':1000,'size':0}]}}",
	  "config.json: linux.uidMappings[0].size: must be greater than zero" },
	{ "{" BASE ",'linux':{'devices':[{'type':'x','path':'/dev/x','major':1,'minor':1}]}}",
	  "config.json: linux.devices[0].type: unknown device type \"x\" (want c, b, u or p)" },
	{ "{" BASE ",'linux':{'devices':[{'type':'c','path':'/dev/x','minor':1}]}}",
	  "config.json: linux.devices[0].major: missing" },
	{ "{" BASE ",'linux':{'devices':[{'type':'c','path':'dev/x','major':1,'minor':1}]}}",
	  "config.json: linux.devices[0].path: must be an absolute path, got \"dev/x\"" },
	{ "{" BASE ",'linux':{'rootfsPropagation':'sideways'}}",
	  "config.json: linux.rootfsPropagation: unknown propagation \"sideways\" (want private, shared, slave or unbindable)" },
	{ "{" BASE ",'linux':{'maskedPaths':['/proc/kcore','sys/firmware']}}",
	  "config.json: linux.maskedPaths[1]: must be an absolute path, got \"sys/firmware\"" },
	{ "{" BASE ",'linux':{'sysctl':{'../../etc/passwd':'x'}}}",
	  "config.json: linux.sysctl[\"../../etc/passwd\"]: not a sysctl name" },
	{ "{" BASE ",'linux':{'personality':{'domain':'LINUX','flags':['SHORT_INODE']}}}",
	  "config.json: linux.personality.flags[0]: unknown personality flag \"SHORT_INODE\": not applied, so refused" },
	{ "{" BASE ",'linux':{'intelRdt':{'closID':'guaranteed'}}}",
	  "config.json: linux.intelRdt.closID: Intel RDT (resctrl) is not supported by agentbox: refused rather than ignored" },
	{ "{" BASE ",'linux':{'personality':{'domain':'LINUX64'}}}",
	  "config.json: linux.personality.domain: unknown personality domain \"LINUX64\" (want LINUX or LINUX32)" },
	{ "{" BASE ",'linux':{'timeOffsets':{'monotonic':{'nanosecs':1000000000}}}}",
	  "config.json: linux.timeOffsets.monotonic.nanosecs: 1000000000 is out of range (0..999999999)" },
	{ "{" BASE ",'linux':{'timeOffsets':{'realtime':{'secs':1}}}}",
	  "config.json: linux.timeOffsets.realtime: unknown clock (want monotonic or boottime)" },
	{ "{" BASE ",'linux':{'netDevices':{'eth0/x':{}}}}",
	  "config.json: linux.netDevices[\"eth0/x\"]: not a network interface name" },
	{ "{" BASE ",'linux':{'resources':{'memory':{'limit':-2}}}}",
	  "config.json: linux.resources.memory.limit: -2 is out of range (-1..9223372036854775807)" },
	{ "{" BASE ",'linux':{'resources':{'memory':{'swappiness':101}}}}",
	  "config.json: linux.resources.memory.swappiness: 101 is out of range (0..100)" },
	{ "{" BASE ",'linux':{'resources':{'devices':[{'allow':true,'access':'rwx'}]}}}",
	  "config.json: linux.resources.devices[0].access: \"rwx\" is not a combination of r, w and m" },
	{ "{" BASE ",'linux':{'resources':{'devices':[{'access':'r'}]}}}",
	  "config.json: linux.resources.devices[0].allow: missing" },
	{ "{" BASE ",'linux':{'resources':{'unified':{'../x':'1'}}}}",
	  "config.json: linux.resources.unified[\"../x\"]: not a cgroup file name" },
	{ "{" BASE ",'linux':{'resources':{'hugepageLimits':[{'pageSize':'2M','limit':1}]}}}",
	  "config.json: linux.resources.hugepageLimits[0].pageSize: not a page size (like \"2MB\"): \"2M\"" },
	{ "{" BASE ",'linux':{'resources':{'pids':{}}}}", "config.json: linux.resources.pids.limit: missing" },
	{ "{" BASE ",'linux':{'resources':{'cpu':{'cpus':'a'}}}}",
	  "config.json: linux.resources.cpu.cpus: not a list (like \"0-3,7\"): \"a\"" },
	{ "{" BASE ",'linux':{'resources':{'blockIO':{'throttleReadBpsDevice':[{'major':8,'minor':0}]}}}}",
	  "config.json: linux.resources.blockIO.throttleReadBpsDevice[0].rate: missing" },
	{ "{" BASE ",'linux':{'resources':{'network':{'classID':'x'}}}}",
	  "config.json: linux.resources.network.classID: expected an integer, got a string" },
	{ "{" BASE ",'linux':{'resources':{'rdma':{'mlx5_1':{'hcaHandles':-1}}}}}",
	  "config.json: linux.resources.rdma[\"mlx5_1\"].hcaHandles: must not be negative, got -1" },
	{ "{" BASE ",'linux':{'seccomp':{'syscalls':[]}}}", "config.json: linux.seccomp.defaultAction: missing" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_FOO'}]}}}",
	  "config.json: linux.seccomp.syscalls[0].action: unknown seccomp action \"SCMP_ACT_FOO\"" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_ERRNO','args':[{'index':0,'value':1,'op':'SCMP_CMP_APPROX'}]}]}}}",
	  "config.json: linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator \"SCMP_CMP_APPROX\"" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_ERRNO','args':[{'index':6,'value':1,'op':'SCMP_CMP_EQ'}]}]}}}",
	  "config.json: linux.seccomp.syscalls[0].args[0].index: 6 is out of range (0..5)" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_ALLOW','errnoRet':1}]}}}",
	  "config.json: linux.seccomp.syscalls[0].errnoRet: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':[],'action':'SCMP_ACT_ALLOW'}]}}}",
	  "config.json: linux.seccomp.syscalls[0].names: must be a non-empty array of strings" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_NOTIFY'}]}}}",
	  "config.json: linux.seccomp.listenerPath: missing (syscalls[0] uses SCMP_ACT_NOTIFY)" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_NOTIFY'}}}",
	  "config.json: linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_KILL','architectures':['SCMP_ARCH_Z80']}}}",
	  "config.json: linux.seccomp.architectures[0]: unknown architecture \"SCMP_ARCH_Z80\"" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_KILL','flags':['SECCOMP_FILTER_FLAG_FAST']}}}",
	  "config.json: linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_FAST\"" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','defaultErrnoRet':1}}}",
	  "config.json: linux.seccomp.defaultErrnoRet: only valid with a defaultAction of SCMP_ACT_ERRNO or SCMP_ACT_TRACE" },
	{ "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':65536}}}",
	  "config.json: linux.seccomp.defaultErrnoRet: 65536 is out of range (0..65535)" },
	{ "{" BASE ",'linux':{'mystery':1}}", "config.json: linux.mystery: unknown field" },
	{ "{'ociVersion':'1.2.0','root':{'path':'r\\u0000x'}}", "config.json: invalid JSON: a string contains \\u0000" },
};

static void test_bad(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct ab_err err;
		struct oci_config *c = parse_q(bad[i].json, &err);
		size_t n = strlen(bad[i].want);
		bool prefix = n > 3 && streq(bad[i].want + n - 3, "...");
		bool match = !c && (prefix ? strncmp(err.msg, bad[i].want, n - 3) == 0 : streq(err.msg, bad[i].want));
		ok(match, "bad config %zu: %s", i, bad[i].want);
		if (!match)
			printf("#   got: %s\n", c ? "(parsed fine)" : err.msg);
		ok(!strchr(err.msg, '\n'), "bad config %zu: error is one line", i);
		oci_config_free(c);
	}

	/* Nesting deep enough to hurt yajl_tree_free is refused up front. */
	struct ab_err err;
	size_t depth = 100000;
	char *deep = xmalloc(depth + 1);
	memset(deep, '[', depth);
	deep[depth] = 0;
	struct oci_config *c = NULL;
	ok(oci_config_parse(deep, "config.json", &c, &err) < 0, "deep nesting refused");
	is_str(err.msg, "config.json: invalid JSON: nested deeper than 256 levels", "deep nesting message");
	free(deep);

	c = parse_q("{'ociVersion':\n'1.2.0' 'root'}", &err);
	has_substr(err.msg, "at line 2, column", "invalid JSON names line and column");
}

/* What runc and crun accept and engines send, taken the same way. */
static void test_peer_compat(void)
{
	struct ab_err err;
	struct oci_config *c = parse_q("{" BASE ",'mounts':["
		"{'destination':'//test//test/','type':'tmpfs','source':'tmpfs'},"
		"{'destination':'/a/./b/.','source':'/src','options':['rbind','mode=755','size=1m','nosuid']},"
		"{'destination':'rel//x/','type':'tmpfs','source':'tmpfs'}],"
		"'process':{'args':['a'],'cwd':'/w//x/','ioPriority':{'class':'IOPRIO_CLASS_IDLE'}},"
		"'linux':{'devices':[{'path':'/mnt/','type':'c','major':1,'minor':3}],"
		" 'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0,2-3,65','flags':['MPOL_F_STATIC_NODES']}}}", &err);
	ok(c != NULL, "peer-compatible config parses: %s", c ? "" : err.msg);
	if (!c)
		return;
	is_str(c->mounts[0].destination, "/test/test", "destination: repeated and trailing slashes go");
	is_str(c->mounts[1].destination, "/a/b", "destination: \".\" components go");
	is_str(c->mounts[2].destination, "/rel/x", "relative destination: made absolute and clean");
	ok(c->mounts[1].data == NULL && c->mounts[1].flags == (MS_BIND | MS_REC | MS_NOSUID),
	   "bind: file system data ignored, flags kept");
	is_str(c->linux_.devices[0].path, "/mnt", "device path: trailing slash goes");
	is_str(c->process->cwd, "/w/x", "process.cwd cleaned");
	ok(c->process->has_io_priority && c->process->io_priority.class == 3 && c->process->io_priority.priority == 0,
	   "ioPriority without priority: 0");
	const struct oci_memory_policy *mp = &c->linux_.memory_policy;
	ok(c->linux_.has_memory_policy && mp->mode_num == 2 && mp->flags == (1u << 15), "memoryPolicy mode and flags");
	ok(mp->nodemask[0] == (1UL | 1UL << 2 | 1UL << 3) && mp->nodemask[1] == (1UL << 1) && mp->maxnode == 67,
	   "memoryPolicy nodes as a mask, maxnode = highest + 2");
	oci_config_free(c);
	c = parse_q("{" BASE ",'linux':{'memoryPolicy':{'mode':'MPOL_DEFAULT','nodes':''}}}", &err);
	ok(c && c->linux_.has_memory_policy && c->linux_.memory_policy.maxnode == 0, "MPOL_DEFAULT, empty nodes");
	oci_config_free(c);
}

static void test_writer(void)
{
	for (int pretty = 0; pretty < 2; pretty++) {
		struct json_out *o = json_out_new(pretty);
		json_obj_begin(o);
		json_kv_str(o, "s", "a \"quoted\"\n\tstring ü");
		json_kv_int(o, "neg", INT64_MIN);
		json_kv_uint(o, "big", UINT64_MAX);
		json_kv_bool(o, "t", true);
		json_key(o, "nil");
		json_null(o);
		json_key(o, "nullstr");
		json_str(o, NULL);
		json_key(o, "arr");
		json_arr_begin(o);
		json_int(o, 1);
		json_uint(o, 2);
		json_bool(o, false);
		json_obj_begin(o);
		json_obj_end(o);
		json_arr_end(o);
		json_obj_end(o);
		size_t len;
		const char *text = json_out_text(o, &len);
		ok(text && strlen(text) == len, "writer (pretty=%d) gives NUL-terminated text", pretty);
		ok(pretty == (strchr(text, '\n') != NULL), "writer (pretty=%d) layout", pretty);

		yajl_val v;
		struct ab_err err;
		int r = json_parse(text, "out", &v, &err);
		ok(r == 0, "writer output parses back (pretty=%d)", pretty);
		if (r == 0) {
			is_str(YAJL_GET_STRING(json_get(v, "s")), "a \"quoted\"\n\tstring ü", "string round-trips");
			/* yajl's own integer reader refuses INT64_MIN; the config
			 * parser reads the raw text, so check that. */
			is_str(YAJL_GET_NUMBER(json_get(v, "neg")), "-9223372036854775808", "INT64_MIN round-trips");
			is_str(YAJL_GET_NUMBER(json_get(v, "big")), "18446744073709551615", "UINT64_MAX round-trips");
			ok(YAJL_IS_TRUE(json_get(v, "t")) && YAJL_IS_NULL(json_get(v, "nil")) &&
			   YAJL_IS_NULL(json_get(v, "nullstr")), "bool and nulls");
			yajl_val arr = json_get(v, "arr");
			ok(YAJL_IS_ARRAY(arr) && arr->u.array.len == 4 && YAJL_IS_FALSE(arr->u.array.values[2]) &&
			   YAJL_IS_OBJECT(arr->u.array.values[3]), "array");
			ok(json_get(v, "missing") == NULL && json_get(arr, "s") == NULL, "json_get misses");
			json_free(v);
		}
		json_out_free(o);
	}
	struct json_out *o = json_out_new(false);
	is_str(json_out_text(o, NULL), "", "empty writer gives an empty string");
	json_out_free(o);
}

static void test_misc(void)
{
	ok(streq(oci_ns_kind_name(NS_NETWORK), "network") && streq(oci_ns_kind_name(NS_TIME), "time"),
	   "oci_ns_kind_name");
	struct ab_err err;
	struct oci_config *c = NULL;
	ok(oci_config_load("/nonexistent/config.json", &c, &err) < 0, "load of a missing file fails");
	has_substr(err.msg, "/nonexistent/config.json", "load error names the path");

	/* oci_mount_parse_options on its own, as kit code may build mounts. */
	struct arena a = { 0 };
	char *opts[] = { "ro", "nodev", "size=1m", "rslave", "acl", "rnorelatime", "rstrictatime",
			 "rnostrictatime", NULL };
	struct oci_mount m = { .destination = "/x", .type = "tmpfs", .options = opts, .n_options = 8 };
	ok(oci_mount_parse_options(&m, &a, "kit.yaml: mounts[0]", &err) == 0 &&
	   m.flags == (MS_RDONLY | MS_NODEV | MS_POSIXACL) && streq(m.data, "size=1m") &&
	   m.propagation == (MS_SLAVE | MS_REC) && m.rec_attr_set == MOUNT_ATTR_RELATIME &&
	   m.rec_attr_clr == MOUNT_ATTR__ATIME, "oci_mount_parse_options");

	/* Every option runc 1.1.5 advertises is understood, none lands in data. */
	_cleanup_free_ char *feat = read_fixture("runc-1.1.5-features.json");
	yajl_val fv = NULL, mo = NULL;
	if (feat && json_parse(feat, "features", &fv, &err) == 0)
		mo = json_get(fv, "mountOptions");
	ok(YAJL_IS_ARRAY(mo), "runc features fixture has mountOptions");
	for (size_t i = 0; mo && i < mo->u.array.len; i++) {
		char *one[] = { (char *)YAJL_GET_STRING(mo->u.array.values[i]), NULL };
		struct oci_mount t = { .destination = "/x", .type = "tmpfs", .options = one, .n_options = 1 };
		if (oci_mount_parse_options(&t, &a, "x", &err) < 0 || t.data)
			ok(0, "mount option %s understood%s%s", one[0], t.data ? " but kept as data " : ": ",
			   t.data ? t.data : err.msg);
	}
	json_free(fv);
	char *opts2[] = { "shared", "private", NULL };
	m.options = opts2;
	m.n_options = 2;
	ok(oci_mount_parse_options(&m, &a, "kit.yaml: mounts[0]", &err) < 0, "conflict found standalone");
	is_str(err.msg, "kit.yaml: mounts[0]: options[1]: conflicting propagation options \"shared\" and \"private\"",
	       "standalone error prefix");
	arena_free(&a);
}

/* Every file in tests/data/bad-configs must fail, naming the path its name says. */
static void test_bad_config_files(void)
{
	static const struct {
		const char *file, *want;
	} files[] = {
		{ "unknown-namespace.json", "linux.namespaces[1].type: unknown namespace type \"net\"" },
		{ "relative-hook-path.json", "hooks.prestart[0].path: must be an absolute path" },
		{ "soft-above-hard-rlimit.json", "process.rlimits[0]: soft limit" },
		{ "bad-capability.json", "process.capabilities.bounding[1]: unknown capability \"CAP_SYS_GOD\"" },
		{ "uid-mappings-without-userns.json", "linux.uidMappings: given without a user namespace" },
		{ "truncated.json", "invalid JSON" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *path = xasprintf("tests/data/bad-configs/%s", files[i].file);
		struct oci_config *c = NULL;
		struct ab_err err;
		int r = oci_config_load(path, &c, &err);
		ok(r < 0, "%s is refused", files[i].file);
		has_substr(err.msg, files[i].want, "%s: error names the problem", files[i].file);
		oci_config_free(c);
	}
}

int main(void)
{
	fixtures = getenv("AGENTBOX_FIXTURES");
	if (!fixtures)
		fixtures = "tests/data/engine-fixtures";
	test_docker();
	test_podman();
	test_ctr();
	test_exec_and_update();
	test_good_details();
	test_bad();
	test_peer_compat();
	test_writer();
	test_misc();
	test_bad_config_files();
	return tap_done();
}
