#include "terminal.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

int tty_proxy_start(struct tty_proxy *p, int master, struct ab_err *err)
{
	p->master = master;
	p->raw = false;
	p->stdin_open = true;
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &p->saved) == 0) {
		struct termios raw = p->saved;
		cfmakeraw(&raw);
		raw.c_oflag |= OPOST;   /* keep our own output sane if we log */
		if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
			return ab_error(err, errno, "set terminal raw mode");
		p->raw = true;
	}
	tty_proxy_resize(p);
	int fl = fcntl(master, F_GETFL);
	(void)fcntl(master, F_SETFL, fl | O_NONBLOCK);
	return 0;
}

int tty_proxy_pollfds(struct tty_proxy *p, struct pollfd *fds)
{
	int n = 0;
	fds[n++] = (struct pollfd){.fd = p->master, .events = POLLIN};
	if (p->stdin_open)
		fds[n++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
	return n;
}

static bool copy_once(int from, int to)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof buf);
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	return write_all(to, buf, (size_t)n) == 0;
}

void tty_proxy_handle(struct tty_proxy *p, const struct pollfd *fds)
{
	if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
		(void)copy_once(p->master, STDOUT_FILENO);
	if (p->stdin_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
		if (!copy_once(STDIN_FILENO, p->master)) {
			/* stdin ended: pass EOF on as the terminal's EOF character */
			p->stdin_open = false;
			(void)write(p->master, "\x04", 1);
		}
	}
}

void tty_proxy_resize(struct tty_proxy *p)
{
	struct winsize ws;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(p->master, TIOCSWINSZ, &ws);
}

void tty_proxy_drain(struct tty_proxy *p)
{
	char buf[16384];
	ssize_t n;
	while ((n = read(p->master, buf, sizeof buf)) > 0)
		(void)write_all(STDOUT_FILENO, buf, (size_t)n);
}

void tty_proxy_stop(struct tty_proxy *p)
{
	if (p->raw)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &p->saved);
}
