/* A foreground `run` with a terminal and no console socket: relay between our own
 * terminal (raw mode) and the container's pty master. */
#ifndef AGENTBOX_TERMINAL_H
#define AGENTBOX_TERMINAL_H

#include <poll.h>
#include <stdbool.h>
#include <termios.h>

#include "error.h"

struct tty_proxy {
	int master;
	bool raw;                   /* our stdin was a tty put in raw mode */
	bool stdin_open;
	struct termios saved;
};

int tty_proxy_start(struct tty_proxy *p, int master, struct ab_err *err);
/* Fill up to 2 pollfds (stdin, master); returns how many. */
int tty_proxy_pollfds(struct tty_proxy *p, struct pollfd *fds);
void tty_proxy_handle(struct tty_proxy *p, const struct pollfd *fds);
void tty_proxy_resize(struct tty_proxy *p);
/* Copy what the container wrote before it exited. */
void tty_proxy_drain(struct tty_proxy *p);
void tty_proxy_stop(struct tty_proxy *p);

#endif
