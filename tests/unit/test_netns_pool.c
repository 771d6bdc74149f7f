/* netns_pool: filling, taking and what is refused, in a pool directory of the
 * test's own (needs root: it makes network namespaces and bind mounts). */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress.h"
#include "netns_pool.h"
#include "ruleset.h"
#include "util.h"
#include "tap.h"

static char dir[64];

/* netns_pool_fill moves its caller into new namespaces: run it in a child */
static int fill_with(const char *size, const char *policy)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(netns_pool_fill(dir, size, policy));
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int fill(const char *size)
{
	return fill_with(size, NULL);
}

static int take(const char *key, char *token, bool *firewalled)
{
	return netns_pool_take(dir, key, token, firewalled);
}

static int take_pristine(void)
{
	bool fw;
	return take(NULL, NULL, &fw);
}

static ino_t ns_ino(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

static void cleanup(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "for f in %s/ns-* %s/fw-*; do umount \"$f\" 2>/dev/null; done; rm -rf %s", dir, dir, dir);
	if (system(cmd) != 0)
		printf("# cleanup of %s failed\n", dir);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # skip needs root (network namespaces, bind mounts)\n");
		return 0;
	}
	snprintf(dir, sizeof dir, "/run/agentbox-test-netns-pool-%d", (int)getpid());

	ok(take_pristine() == -1, "no pool directory: nothing to take");
	ok(netns_pool_count(dir, NULL) == 0, "and nothing counted");

	ok(fill("2") == 0, "fill 2");
	struct stat st;
	ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700 && st.st_uid == 0, "the pool directory is root's, mode 0700");
	ok(netns_pool_count(dir, NULL) == 2, "2 namespaces pinned (%u)", netns_pool_count(dir, NULL));
	ok(fill("2") == 0 && netns_pool_count(dir, NULL) == 2, "filling a full pool adds none");

	char self[64];
	snprintf(self, sizeof self, "/proc/self/ns/net");
	int me = open(self, O_RDONLY | O_CLOEXEC);
	int a = take_pristine();
	ok(a >= 0 && ioctl(a, NS_GET_NSTYPE) == CLONE_NEWNET, "take: a network namespace");
	ok(a >= 0 && ns_ino(a) != ns_ino(me), "not ours");
	ok(netns_pool_count(dir, NULL) == 1, "one left in the pool");
	int b = take_pristine();
	ok(b >= 0 && ns_ino(b) != ns_ino(a), "the second take: another namespace");
	ok(take_pristine() == -1 && netns_pool_count(dir, NULL) == 0, "then the pool is empty");
	/* no entry file is left for the taken ones */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "[ -z \"$(ls %s | grep '^ns-')\" ]", dir);
	ok(system(cmd) == 0, "their files are gone");

	/* a taken namespace is pristine: only lo, up (127.0.0.1 and ::1 in place) */
	pid_t pid = fork();
	if (pid == 0) {
		if (setns(a, CLONE_NEWNET) < 0)
			_exit(2);
		_exit(system("[ \"$(ip -o link show | wc -l)\" = 1 ] && "
			     "ip -o link show lo | grep -q '<LOOPBACK,UP' && ip -o addr show lo | grep -q 'inet 127.0.0.1/8' && "
			     "ip -o addr show lo | grep -q 'inet6 ::1/128' && [ -z \"$(nft list ruleset)\" ]") == 0 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a pooled pristine namespace has lo only, up with its addresses, and no ruleset");
	close(a);
	close(b);

	/* a file that pins nothing (a pin made in another mount namespace, or
	 * lost) is not taken, and goes */
	char stale[128];
	snprintf(stale, sizeof stale, "%s/ns-00000000deadbeef", dir);
	int fd = open(stale, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
	ok(take_pristine() == -1, "a stale entry is not taken");
	ok(access(stale, F_OK) < 0 && errno == ENOENT, "and removed");

	/* a directory others could write to is not trusted */
	ok(fill("1") == 0 && netns_pool_count(dir, NULL) == 1, "refilled with one");
	chmod(dir, 0755);
	ok(take_pristine() == -1, "mode 0755: nothing is taken");
	ok(netns_pool_count(dir, NULL) == 0, "nor counted");
	chmod(dir, 0700);
	ok(netns_pool_count(dir, NULL) == 1, "mode 0700 again: the entry counts");

	ok(fill("17") == 1, "fill refuses a size above %d", NETNS_POOL_MAX_SIZE);
	ok(fill("x") == 1, "and a size that is not a number");

	/* firewalled entries: the ruleset of one policy, taken only by that policy */
	const char *policy = "allow=example.com,198.18.0.0/24;deny=";
	char key[NETNS_POOL_KEY_LEN + 1], key2[NETNS_POOL_KEY_LEN + 1], again[NETNS_POOL_KEY_LEN + 1];
	netns_pool_key(policy, key);
	netns_pool_key(policy, again);
	netns_pool_key("allow=198.18.0.0/24;deny=", key2);
	ok(strlen(key) == NETNS_POOL_KEY_LEN && streq(key, again) && !streq(key, key2),
	   "a policy's key: %d hex digits, the same each time, another for another policy", NETNS_POOL_KEY_LEN);
	unsigned pristine = netns_pool_count(dir, NULL);
	ok(fill_with("2", policy) == 0, "fill 2 with a policy");
	ok(netns_pool_count(dir, key) == 2 && netns_pool_count(dir, "") == 2, "2 firewalled entries of its key (%u)",
	   netns_pool_count(dir, key));
	ok(netns_pool_count(dir, NULL) == pristine, "the pristine ones as they were");
	ok(fill_with("2", "allow=EXAMPLE.com;deny=") == 1 && netns_pool_count(dir, "") == 2,
	   "a policy text not in canonical form is refused, nothing added");
	ok(fill_with("2", "allow=bad..name;deny=") == 1 && fill_with("2", "deny=") == 1 && netns_pool_count(dir, "") == 2,
	   "and one that does not parse");

	char token[NETNS_POOL_TOKEN_LEN + 1] = "";
	bool fw = false;
	int f = take(key2, token, &fw);
	ok(f >= 0 && !fw && netns_pool_count(dir, key) == 2, "another policy's take: a pristine one, not these");
	if (f >= 0)
		close(f);
	f = take(key, token, &fw);
	ok(f >= 0 && fw && strlen(token) == NETNS_POOL_TOKEN_LEN, "the policy's take: a firewalled one, token %s", token);
	ok(netns_pool_count(dir, key) == 1, "one firewalled left");
	char owner[64] = "", want[64];
	struct ab_err e;
	snprintf(want, sizeof want, "@%s", token);
	ok(f >= 0 && egress_table_owner(f, owner, sizeof owner, &e) == 1 && streq(owner, want),
	   "its table's comment names the token (%s)", owner);
	if (f >= 0)
		close(f);
	/* the pool's ruleset is the policy's: a container's install into it finds one */
	f = take(key, token, &fw);
	struct egress_policy pol = {0};
	ok(egress_policy_from_string(policy, "test", &pol, &e) == 0, "the policy parses back");
	ok(f >= 0 && fw && egress_install_new(f, &pol, "x", EGRESS_SENTRY_PORT, &e) == 1,
	   "the second firewalled one has the table in place too");
	egress_policy_free(&pol);
	if (f >= 0)
		close(f);
	ok(fill("1") == 0, "one pristine again");
	f = take(key, token, &fw);
	ok(f >= 0 && !fw, "none left of the policy's: a pristine one");
	if (f >= 0)
		close(f);

	/* at most NETNS_POOL_KINDS policies' worth, the newest one's first */
	char text[64], last[NETNS_POOL_KEY_LEN + 1];
	for (int i = 0; i < NETNS_POOL_KINDS + 2; i++) {
		snprintf(text, sizeof text, "allow=198.18.%d.0/24;deny=", i);
		ok(fill_with("1", text) == 0, "fill 1 for policy %d", i);
	}
	netns_pool_key(text, last);
	ok(netns_pool_count(dir, "") == NETNS_POOL_KINDS, "%d firewalled entries in all (%u)", NETNS_POOL_KINDS,
	   netns_pool_count(dir, ""));
	ok(netns_pool_count(dir, last) == 1, "the newest policy's among them");
	/* the entries made least recently make room first: the newest policy's
	 * entry, made again a second later, outlives the older ones */
	char last_text[64];
	snprintf(last_text, sizeof last_text, "%s", text);
	sleep(1);
	f = take(last, token, &fw);
	ok(f >= 0 && fw, "the newest policy's entry taken");
	if (f >= 0)
		close(f);
	ok(fill_with("1", last_text) == 0 && netns_pool_count(dir, last) == 1, "and made again");
	for (int i = NETNS_POOL_KINDS + 2; i < 2 * NETNS_POOL_KINDS + 1; i++) {
		snprintf(text, sizeof text, "allow=198.18.%d.0/24;deny=", i);
		ok(fill_with("1", text) == 0 && netns_pool_count(dir, last) == 1,
		   "it stays while policy %d takes the place of an older one", i);
	}
	ok(netns_pool_count(dir, "") == NETNS_POOL_KINDS, "the bound holds (%u)", netns_pool_count(dir, ""));

	close(me);
	cleanup();
	return tap_done();
}
