#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int caps_last_cap(void)
{
	static int last = -1;
	if (last >= 0)
		return last;
	/* libcap probed the bounding set when it was loaded: no file to read */
	int bits = (int)cap_max_bits();
	if (bits > 1 && bits <= 64)
		return last = bits - 1;
	char buf[16];
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t r = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (r > 0) {
			buf[r] = 0;
			char *end;
			long v = strtol(buf, &end, 10);
			if (end != buf && v > 0 && v < 64)
				return last = (int)v;
		}
	}
	/* the bounding set answers EINVAL past the last capability */
	int n = 0;
	while (n < 64 && prctl(PR_CAPBSET_READ, n, 0, 0, 0) >= 0)
		n++;
	last = n - 1;
	return last;
}

int caps_drop_bounding(uint64_t keep, struct ab_err *err)
{
	int last = caps_last_cap();
	for (int c = 0; c <= last; c++) {
		if (keep & (1ULL << c))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return ab_error(err, errno, "drop capability %d from the bounding set", c);
	}
	return 0;
}

int caps_set_process(const struct oci_capabilities *c, struct ab_err *err)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2] = {
		{.effective = (uint32_t)c->effective, .permitted = (uint32_t)c->permitted,
		 .inheritable = (uint32_t)c->inheritable},
		{.effective = (uint32_t)(c->effective >> 32), .permitted = (uint32_t)(c->permitted >> 32),
		 .inheritable = (uint32_t)(c->inheritable >> 32)},
	};
	if (syscall(SYS_capset, &hdr, data) < 0)
		return ab_error(err, errno, "set capabilities");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return ab_error(err, errno, "clear ambient capabilities");
	int last = caps_last_cap();
	for (int i = 0; i <= last; i++) {
		if (!(c->ambient & (1ULL << i)))
			continue;
		/* ambient needs the cap in permitted and inheritable; like runc and crun, an
		 * ambient cap the other sets do not allow is left out, not an error */
		if (!(c->permitted & c->inheritable & (1ULL << i)))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) < 0)
			return ab_error(err, errno, "raise ambient capability %d", i);
	}
	return 0;
}
