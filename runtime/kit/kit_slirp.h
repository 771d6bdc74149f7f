/* A kit run's user-mode network: slirp4netns --configure attached to the box's
 * network namespace, behind the box's own egress firewall. */
#ifndef AGENTBOX_KIT_SLIRP_H
#define AGENTBOX_KIT_SLIRP_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

struct kit_slirp {
	pid_t pid;              /* 0 when not running */
	int pidfd;
	int exit_fd;            /* our end: closing it stops slirp4netns */
	int ready_fd;           /* its --ready-fd, until it said it is ready */
	bool reaped;
	char log_path[PATH_MAX + 32];
	char exe[PATH_MAX];     /* slirp4netns, found on PATH; "" until then */
};

#define KIT_SLIRP_INIT {.pid = 0, .pidfd = -1, .exit_fd = -1, .ready_fd = -1}

/* Start slirp4netns for the network namespace of box_pid, logging to
 * LOG_DIR/slirp4netns.log; returns once it says it is ready. It exits when our
 * end of its --exit-fd pipe closes (also when agentbox dies). */
int kit_slirp_start(struct kit_slirp *s, pid_t box_pid, const char *log_dir, struct ab_err *err);
/* Find slirp4netns on PATH, once, before anything is made for the box: a box
 * with network cannot start without it (spawn looks it up if not done). */
int kit_slirp_find(struct kit_slirp *s, struct ab_err *err);
/* The same in two steps, so that slirp4netns starts up while the box's init
 * sets itself up: spawn returns once it is forked, for the network namespace
 * NETNS_FD (one the init is about to join; the fd may be closed after the
 * call) or, for -1, box_pid's; ready waits for its word (at once when none
 * was spawned). */
int kit_slirp_spawn(struct kit_slirp *s, pid_t box_pid, int netns_fd, const char *log_dir, struct ab_err *err);
int kit_slirp_ready(struct kit_slirp *s, struct ab_err *err);
/* Stop it and reap it (closing the pipe, then SIGKILL after 2 s); its exit
 * is waited for on its pidfd. */
void kit_slirp_stop(struct kit_slirp *s);
/* Only tell it to go (close the pipe): its exit, ~10-15 ms of the kernel's
 * (its tap device and namespaces), then overlaps whatever comes before
 * kit_slirp_stop. */
void kit_slirp_stop_begin(struct kit_slirp *s);

#endif
