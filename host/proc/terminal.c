/* The session's terminal: a pty pair, relayed (see terminal.h). */
#include "proc/terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* One direction of the relay: what was read and not yet written (down:
 * filtered, which may add a held sequence). */
struct leg {
	char buf[JIG_TERMINAL_BUF + JIG_TERM_SEQ_MAX];
	size_t off, len;
};

enum { F_GROUND, F_ESC, F_CSI, F_STR, F_STR_ESC };

/* OSC numbers that pass: titles, cwd, hyperlinks, prompt marks. */
static bool osc_allowed(unsigned n)
{
	return n == 0 || n == 1 || n == 2 || n == 7 || n == 8 || n == 133;
}

/* A whole CSI (p: parameters and intermediates after "ESC [", final f):
 * true when it asks the terminal for a report. */
static bool csi_request(const char *p, size_t n, char f)
{
	char prefix = n && strchr("<=>?", p[0]) ? p[0] : 0, inter = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] >= 0x20 && p[i] <= 0x2f)
			inter = p[i];
	return f == 'c' || f == 'n' || f == 'x' || f == 't' || (inter == '$' && (f == 'p' || f == 'w')) ||
	       (prefix == '?' && (f == 'u' || f == 'm' || f == 'S')) || (prefix == '>' && f == 'q');
}

size_t jig_term_filter(struct jig_term_filter *f, const char *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		switch (f->st) {
		case F_GROUND:
			if (c == 0x1b)
				f->st = F_ESC;
			else if (c != 0x05) /* ENQ: the answerback */
				out[o++] = c;
			break;
		case F_ESC:
			f->n = 0;
			f->overflow = false;
			if (c == '[') {
				f->st = F_CSI;
				f->seq[f->n++] = 0x1b, f->seq[f->n++] = '[';
			} else if (c == ']') {
				f->st = F_STR, f->osc_head = true, f->osc = 0, f->pass = false;
				f->seq[f->n++] = 0x1b, f->seq[f->n++] = ']';
			} else if (c == 'P' || c == 'X' || c == '^' || c == '_')
				f->st = F_STR, f->osc_head = false, f->pass = false;
			else if (c == 'Z') /* DECID */
				f->st = F_GROUND;
			else if (c == 0x1b || c == 0x05)
				; /* a new escape; ENQ dropped */
			else
				out[o++] = 0x1b, out[o++] = c, f->st = F_GROUND;
			break;
		case F_CSI:
			if (c >= 0x20 && c <= 0x3f) {
				if (f->n < sizeof(f->seq))
					f->seq[f->n++] = c;
				else
					f->overflow = true; /* dropped whole */
			} else if (c >= 0x40 && c <= 0x7e) {
				if (!f->overflow && !csi_request(f->seq + 2, f->n - 2, c)) {
					memcpy(out + o, f->seq, f->n);
					o += f->n;
					out[o++] = c;
				}
				f->st = F_GROUND;
			} else if (c == 0x1b)
				f->st = F_ESC;
			else if (c == 0x18 || c == 0x1a || (unsigned char)c >= 0x7f)
				out[o++] = c, f->st = F_GROUND; /* cancelled */
			else if (c != 0x05)
				out[o++] = c; /* a C0 control acts inside a CSI */
			break;
		case F_STR:
			if (f->osc_head) {
				if (c >= '0' && c <= '9' && f->n < sizeof(f->seq)) {
					f->seq[f->n++] = c;
					f->osc = f->osc < 100000 ? f->osc * 10 + (unsigned)(c - '0') : f->osc;
					break;
				}
				f->osc_head = false;
				f->pass = f->n > 2 && (c == ';' || c == 0x07 || c == 0x1b) && osc_allowed(f->osc);
				if (f->pass) {
					memcpy(out + o, f->seq, f->n);
					o += f->n;
				}
			}
			if (c == 0x07 || c == 0x18 || c == 0x1a) {
				if (f->pass)
					out[o++] = c;
				f->st = F_GROUND;
			} else if (c == 0x1b)
				f->st = F_STR_ESC;
			else if (f->pass)
				out[o++] = c;
			break;
		case F_STR_ESC:
			if (c == '\\') {
				if (f->pass)
					out[o++] = 0x1b, out[o++] = c;
				f->st = F_GROUND;
			} else {
				/* The string ended there; ESC starts a new escape. */
				f->st = F_ESC;
				i--;
			}
			break;
		}
	}
	return o;
}

int jig_terminal_open(struct jig_terminal *t, struct jig_error *e)
{
	*t = (struct jig_terminal){.master = -1, .slave = -1, .in = 0, .out = 1, .wake = {-1, -1}, .winch = -1};
	char name[128];
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || grantpt(t->master) < 0 || unlockpt(t->master) < 0 ||
	    ptsname_r(t->master, name, sizeof(name)) != 0 ||
	    (t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		int err = errno;
		jig_terminal_stop(t);
		return jig_err(e, JIG_E_HOST, "cannot allocate a pseudo-terminal: %s", strerror(err));
	}
	t->in_tty = isatty(t->in);
	/* The pty starts as the operator's terminal is (erase, interrupt, ...). */
	struct termios tio;
	if (t->in_tty && tcgetattr(t->in, &tio) == 0)
		tcsetattr(t->slave, TCSANOW, &tio);
	struct winsize ws;
	if (ioctl(t->in, TIOCGWINSZ, &ws) == 0 || ioctl(t->out, TIOCGWINSZ, &ws) == 0)
		ioctl(t->master, TIOCSWINSZ, &ws);
	return 0;
}

/* The operator's window size to the pty (the kernel sends SIGWINCH to the
 * pty's foreground process group). */
static void copy_winsize(struct jig_terminal *t)
{
	struct signalfd_siginfo si;
	while (read(t->winch, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	struct winsize ws;
	if (ioctl(t->in, TIOCGWINSZ, &ws) == 0 || ioctl(t->out, TIOCGWINSZ, &ws) == 0)
		ioctl(t->master, TIOCSWINSZ, &ws);
}

/* Writes what leg holds to fd once (fd was writable); -1 when fd is gone. */
static int flush_once(int fd, struct leg *l)
{
	ssize_t n = write(fd, l->buf + l->off, l->len - l->off);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	l->off += (size_t)n;
	if (l->off == l->len)
		l->off = l->len = 0;
	return 0;
}

/* stdin ended: a payload reading its terminal in canonical mode gets an
 * end of file (its VEOF character); in raw mode nothing is sent. */
static void input_ended(struct jig_terminal *t)
{
	struct termios tio;
	if (tcgetattr(t->slave, &tio) == 0 && (tio.c_lflag & ICANON)) {
		char eof = (char)tio.c_cc[VEOF];
		if (write(t->master, &eof, 1) < 0) {
		}
	}
}

/* After the stop request: what the pty and the buffer still hold goes to
 * the operator (the master is non-blocking; jig holds the slave, so an
 * empty pty answers EAGAIN, not EIO). */
static void drain(struct jig_terminal *t, struct leg *down, bool out_open)
{
	for (int rounds = 0; out_open && rounds < 1024; rounds++) {
		if (down->len == 0) {
			char raw[JIG_TERMINAL_BUF];
			ssize_t n = read(t->master, raw, sizeof(raw));
			if (n <= 0)
				break;
			down->len = jig_term_filter(&t->down, raw, (size_t)n, down->buf), down->off = 0;
			if (down->len == 0)
				continue;
		}
		struct pollfd p = {.fd = t->out, .events = POLLOUT};
		if (poll(&p, 1, 1000) <= 0 || flush_once(t->out, down) < 0)
			break;
	}
}

/* The relay: operator's stdin -> master, master -> operator's stdout,
 * SIGWINCH -> the pty's window size, until the stop request. */
static void *relay(void *arg)
{
	struct jig_terminal *t = arg;
	/* An operator's output that went away (a closed pipe) fails with
	 * EPIPE here instead of killing jig. */
	sigset_t pipe_sig;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);
	struct leg *up = calloc(1, sizeof(*up)), *down = calloc(1, sizeof(*down));
	bool in_open = up && down, out_open = true;
	for (; up && down;) {
		struct pollfd p[5] = {
			{.fd = in_open && !up->len ? t->in : -1, .events = POLLIN},
			{.fd = t->master, .events = (short)((down->len ? 0 : POLLIN) | (up->len ? POLLOUT : 0))},
			{.fd = out_open && down->len ? t->out : -1, .events = POLLOUT},
			{.fd = t->wake[0], .events = POLLIN},
			{.fd = t->winch, .events = POLLIN}};
		if (poll(p, 5, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[3].revents)
			break;
		if (p[4].revents & POLLIN)
			copy_winsize(t);
		if (p[0].revents) {
			ssize_t n = read(t->in, up->buf, sizeof(up->buf));
			if (n > 0)
				up->len = (size_t)n, up->off = 0;
			else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				in_open = false;
				if (!t->in_tty)
					input_ended(t);
			}
		}
		if (up->len && (p[1].revents & POLLOUT) && flush_once(t->master, up) < 0)
			break;
		if (!down->len && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			char raw[JIG_TERMINAL_BUF];
			ssize_t n = read(t->master, raw, sizeof(raw));
			if (n > 0) /* no operator output: dropped */
				down->len = out_open ? jig_term_filter(&t->down, raw, (size_t)n, down->buf) : 0, down->off = 0;
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				break; /* no slave left */
		}
		if (down->len && p[2].revents && (!(p[2].revents & POLLOUT) || flush_once(t->out, down) < 0))
			out_open = false, down->len = down->off = 0; /* the operator's output is gone */
	}
	if (down)
		drain(t, down, out_open);
	free(up);
	free(down);
	return NULL;
}

int jig_terminal_start(struct jig_terminal *t, struct jig_error *e)
{
	sigset_t w;
	sigemptyset(&w);
	sigaddset(&w, SIGWINCH);
	if (pipe2(t->wake, O_CLOEXEC) < 0)
		return jig_err(e, JIG_E_INTERNAL, "pipe: %s", strerror(errno));
	t->masked = pthread_sigmask(SIG_BLOCK, &w, &t->mask) == 0;
	t->winch = signalfd(-1, &w, SFD_CLOEXEC | SFD_NONBLOCK);
	int fl = fcntl(t->master, F_GETFL);
	if (t->winch < 0 || fl < 0 || fcntl(t->master, F_SETFL, fl | O_NONBLOCK) < 0)
		return jig_err(e, JIG_E_INTERNAL, "the terminal relay: %s", strerror(errno));
	if (t->in_tty && tcgetattr(t->in, &t->saved) == 0) {
		struct termios raw = t->saved;
		cfmakeraw(&raw);
		t->raw = tcsetattr(t->in, TCSADRAIN, &raw) == 0;
	}
	copy_winsize(t); /* a resize between open and now */
	int r = pthread_create(&t->thread, NULL, relay, t);
	if (r != 0)
		return jig_err(e, JIG_E_INTERNAL, "the terminal relay: %s", strerror(r));
	t->running = true;
	return 0;
}

void jig_terminal_stop(struct jig_terminal *t)
{
	if (t->running) {
		if (write(t->wake[1], "x", 1) < 0) {
		}
		pthread_join(t->thread, NULL);
		t->running = false;
	}
	if (t->raw) {
		tcsetattr(t->in, TCSADRAIN, &t->saved);
		/* What the operator typed (or a terminal answered) during the
		 * session and nobody read is not for the operator's shell. */
		tcflush(t->in, TCIFLUSH);
	}
	t->raw = false;
	if (t->masked)
		pthread_sigmask(SIG_SETMASK, &t->mask, NULL);
	t->masked = false;
	int *fds[] = {&t->master, &t->slave, &t->wake[0], &t->wake[1], &t->winch};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
