/* lsm module: what the AppArmor exec command writes and where (against a
 * stand-in attr directory: the host of these tests has no AppArmor), and what
 * lsm_check refuses on this host. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lsm.h"
#include "tap.h"
#include "util.h"

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char dir[] = "/tmp/agentbox-test-lsm-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	char aa_dir[PATH_MAX], aa_exec[PATH_MAX], old_exec[PATH_MAX];
	snprintf(aa_dir, sizeof aa_dir, "%s/apparmor", dir);
	snprintf(aa_exec, sizeof aa_exec, "%s/apparmor/exec", dir);
	snprintf(old_exec, sizeof old_exec, "%s/exec", dir);
	struct ab_err err = {0};

	/* no attr files at all: an error naming the profile and the file */
	int r = lsm_apparmor_exec_at(dir, "docker-default", &err);
	ok(r < 0, "no attr file: an error");
	has_substr(err.msg, "process.apparmorProfile \"docker-default\"", "the error names the profile");
	has_substr(err.msg, old_exec, "and the file it tried last");

	/* kernels before 5.8: only attr/exec */
	touch(old_exec);
	memset(&err, 0, sizeof err);
	r = lsm_apparmor_exec_at(dir, "docker-default", &err);
	ok(r == 0, "attr/exec: written%s%s", r ? ": " : "", r ? err.msg : "");
	is_str(slurp(old_exec), "exec docker-default", "the change_onexec command, in attr/exec");

	/* the AppArmor directory, when there, wins */
	mkdir(aa_dir, 0700);
	touch(aa_exec);
	touch(old_exec);
	r = lsm_apparmor_exec_at(dir, "my-profile", &err);
	ok(r == 0, "attr/apparmor/exec: written");
	is_str(slurp(aa_exec), "exec my-profile", "the command goes to attr/apparmor/exec");
	is_str(slurp(old_exec), "", "and not to the shared attr/exec");

	/* no profile: nothing written */
	touch(aa_exec);
	ok(lsm_apparmor_exec_at(dir, "", &err) == 0 && lsm_apparmor_exec_at(dir, NULL, &err) == 0,
	   "no profile: nothing to do");
	is_str(slurp(aa_exec), "", "and nothing written");

	/* lsm_check on this host */
	struct oci_process p = {0};
	ok(lsm_check(&p, NULL, "config.json: process.", &err) == 0, "no profile, no label: accepted");
	p.apparmor_profile = "bad\nname";
	memset(&err, 0, sizeof err);
	ok(lsm_check(&p, NULL, "config.json: process.", &err) < 0, "a profile with a newline: refused");
	has_substr(err.msg, "config.json: process.apparmorProfile", "the error names the field");
	p.apparmor_profile = "docker-default";
	memset(&err, 0, sizeof err);
	r = lsm_check(&p, NULL, "process.json: ", &err);
	if (lsm_apparmor_enabled()) {
		ok(r == 0, "AppArmor enabled here: a profile is accepted");
	} else {
		ok(r < 0, "AppArmor not enabled: a profile is refused, not ignored");
		is_str(err.msg, "process.json: apparmorProfile \"docker-default\": AppArmor is not enabled on this host",
		       "the error says why");
	}
	p.apparmor_profile = NULL;
	p.selinux_label = "system_u:system_r:container_t:s0";
	memset(&err, 0, sizeof err);
	ok(lsm_check(&p, NULL, "exec: process.", &err) < 0, "an SELinux label: refused (enabled or not)");
	has_substr(err.msg, "exec: process.selinuxLabel \"system_u:system_r:container_t:s0\": SELinux",
		   "the error names the label");
	p.selinux_label = "";
	r = lsm_check(&p, "system_u:object_r:container_file_t:s0", "config.json: process.", &err);
	if (lsm_selinux_enabled())
		ok(r < 0, "SELinux enabled here: a mount label is refused");
	else
		ok(r == 0, "SELinux not enabled: a mount label alone is ignored, as runc does");

	unlink(aa_exec);
	rmdir(aa_dir);
	unlink(old_exec);
	rmdir(dir);
	return tap_done();
}
