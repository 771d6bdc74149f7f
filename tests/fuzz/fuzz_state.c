/* ROOT/ID/state.json as every command reads it (state_read), and as delete
 * --force salvages it (state_read_salvage): a file that a careless hand or a
 * broken disk may have truncated or garbled. The
 * status computed from it must never signal or trust a process it did not
 * start (the pid start time is checked). */
#include "fuzz.h"

#include <fcntl.h>
#include <unistd.h>

#include "state.h"

static char fz_state_dir[128];
static int fz_state_dirfd = -1;

static void fz_state_cleanup(void)
{
	fuzz_rm_tree(fz_state_dir);
}

FUZZ_INIT(state)
{
	/* /dev/shm when there is one: no disk writes per input */
	fuzz_scratch_dir(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", "state", fz_state_dir,
			 sizeof fz_state_dir);
	atexit(fz_state_cleanup);
	fz_state_dirfd = open(fz_state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fz_state_dirfd < 0)
		abort();
	return 0;
}

FUZZ_TARGET(state)
{
	int fd = openat(fz_state_dirfd, STATE_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	struct container_state s;
	struct ab_err err = {0};
	/* what delete --force makes of it: all of a good file, the members
	 * before the cut of a truncated one */
	struct container_state salvaged;
	int rs = state_read_salvage(fz_state_dirfd, "fuzz", &salvaged, &err);
	if (rs == 0) {
		FUZZ_CHECK(salvaged.pid >= 0 && salvaged.id && strcmp(salvaged.id, "fuzz") == 0, "salvaged");
	} else {
		FUZZ_CHECK_ERR(&err);
	}
	if (state_read(fz_state_dirfd, "fuzz", &s, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
		FUZZ_CHECK(strstr(err.msg, "\"fuzz\"") != NULL, "error does not name the container: %s", err.msg);
		if (rs == 0)
			state_free(&salvaged);
		return 0;
	}
	FUZZ_CHECK(rs == 0 && salvaged.pid == s.pid && salvaged.pid_start_time == s.pid_start_time &&
		   strcmp(salvaged.cgroup.path, s.cgroup.path) == 0, "salvage differs from a good read");
	state_free(&salvaged);
	/* pid 0: a create killed before its init existed */
	FUZZ_CHECK(s.pid >= 0, "pid %d accepted", (int)s.pid);
	if (s.pid == 0)
		FUZZ_CHECK(!state_init_alive(&s), "pid 0 alive");
	FUZZ_CHECK(s.id && strcmp(s.id, "fuzz") == 0, "id");
	/* our own pid with a start time that is not ours: never "alive" */
	s.pid = getpid();
	s.pid_start_time ^= 1;
	uint64_t mine;
	if (proc_start_time(getpid(), &mine) == 0 && mine != s.pid_start_time)
		FUZZ_CHECK(!state_init_alive(&s), "a process with another start time is taken for the init");
	state_free(&s);
	return 0;
}
