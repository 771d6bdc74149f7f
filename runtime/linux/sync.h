/* Parent/child protocol: small typed records over one SOCK_SEQPACKET socketpair.
 * The child's errors travel the same channel so the parent can report them. */
#ifndef AGENTBOX_SYNC_H
#define AGENTBOX_SYNC_H

#include <stdint.h>

#include "error.h"

#define SYNC_DATA_MAX 32768

enum sync_type {
	SYNC_CONTINUE = 1,      /* parent → child: maps written, cgroup joined; go on */
	SYNC_ERROR,             /* either way: code + message */
	SYNC_RUNTIME_HOOKS,     /* child → parent: namespaces and mounts are ready, run
				 * prestart and createRuntime hooks */
	SYNC_HOOKS_DONE,        /* parent → child: done; data carries the state JSON */
	SYNC_CONSOLE,           /* child → parent: the pty master (SCM_RIGHTS) */
	SYNC_SECCOMP_NOTIFY,    /* child → parent: the seccomp listener fd (SCM_RIGHTS) */
	SYNC_READY,             /* child → parent: blocked before exec, waiting for start */
	SYNC_START,             /* parent → child: exec now (run, exec) */
	SYNC_PID,               /* exec's process → parent: its pid is in the sender's
	                         * credentials (SO_PASSCRED on the parent's end) */
	SYNC_EXEC_FIFO_OWNER,   /* child → parent: in its namespaces, about to become
	                         * process.user: hand it the exec fifo; answered with
	                         * SYNC_CONTINUE */
};

struct sync_msg {
	uint32_t type;
	int32_t code;           /* errno for SYNC_ERROR, a number for SYNC_PID */
	char data[SYNC_DATA_MAX];   /* NUL-terminated; state JSON fits */
};

int sync_socketpair(int fds[2], struct ab_err *err);
/* Send a message (data may be NULL), with an optional fd (-1 for none). */
int sync_send(int fd, enum sync_type type, int32_t code, const char *data, int pass_fd,
	      struct ab_err *err);
/* Send the error err as a SYNC_ERROR record; best effort. */
void sync_send_error(int fd, const struct ab_err *err);
/* Receive one message; *ret_fd gets a passed fd or -1 (may be NULL if none is expected).
 * EOF (peer gone) is an error "peer closed". A SYNC_ERROR record is turned into an
 * error carrying the peer's message unless want == SYNC_ERROR. When want != 0, any
 * other type is a protocol error. */
int sync_recv(int fd, enum sync_type want, struct sync_msg *msg, int *ret_fd, struct ab_err *err);

/* One message with `payload` and pass_fd as SCM_RIGHTS on any socket (the engine's
 * console socket wants exactly this). */
int sync_send_raw_fd(int sock, const char *payload, int pass_fd, struct ab_err *err);

#endif
