/* The session's terminal without a scope (issue 34): the operator's
 * terminal is a pty of the test's own on descriptors 0 and 1; what a
 * scope would hold is the terminal's slave. Typed input reaches the slave,
 * the slave's output reaches the operator, a resize (SIGWINCH on jig)
 * reaches the pty, the operator's mode is raw while relayed and exactly
 * restored after, stop is idempotent; stdin that is not a terminal is
 * relayed without raw mode and its end is an end of file. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "run/terminal.h"

/* Reads from fd until want appears (5 s); the bytes in buf. */
static bool read_until(int fd, const char *want, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < 50 && !strstr(buf, want); i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
	return strstr(buf, want) != NULL;
}

static int saved0 = -1, saved1 = -1;

/* Descriptors 0 and 1 become fd (the operator's side). */
static void operator_on(int fd)
{
	saved0 = dup(0);
	saved1 = dup(1);
	dup2(fd, 0);
	dup2(fd, 1);
}

static void operator_off(void)
{
	dup2(saved0, 0);
	dup2(saved1, 1);
	close(saved0);
	close(saved1);
}

static void relay_resize_restore(void **state)
{
	(void)state;
	int om = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(om >= 0);
	assert_int_equal(grantpt(om), 0);
	assert_int_equal(unlockpt(om), 0);
	int os = open(ptsname(om), O_RDWR | O_NOCTTY);
	assert_true(os >= 0);
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	ioctl(om, TIOCSWINSZ, &ws);
	struct termios before, during, after;
	/* Compared whole below: the padding too must be equal (zero). */
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	assert_int_equal(tcgetattr(os, &before), 0);

	operator_on(os);
	struct jig_terminal t;
	struct jig_error e = {0};
	int r_open = jig_terminal_open(&t, &e);
	int r_start = r_open ? -1 : jig_terminal_start(&t, &e);
	tcgetattr(os, &during);
	/* The operator types; the scope's side reads it. */
	char buf[512], out[512], typed[512];
	if (write(om, "hello\r", 6) != 6) {
	}
	bool got_in = read_until(t.slave, "hello", typed, sizeof(typed));
	/* The scope writes; the operator sees it. */
	if (write(t.slave, "from-scope\n", 11) != 11) {
	}
	bool got_out = read_until(om, "from-scope", out, sizeof(out));
	/* A resize of the operator's window: SIGWINCH on jig. */
	struct winsize inner0, inner1 = {0};
	ioctl(t.slave, TIOCGWINSZ, &inner0);
	ws = (struct winsize){.ws_row = 30, .ws_col = 100};
	ioctl(om, TIOCSWINSZ, &ws);
	kill(getpid(), SIGWINCH);
	for (int i = 0; i < 50 && inner1.ws_row != 30; i++) {
		usleep(20000);
		ioctl(t.slave, TIOCGWINSZ, &inner1);
	}
	jig_terminal_stop(&t);
	jig_terminal_stop(&t); /* idempotent */
	tcgetattr(os, &after);
	operator_off();

	assert_int_equal(r_open, 0);
	assert_int_equal(r_start, 0);
	assert_false(during.c_lflag & (ICANON | ECHO | ISIG));
	assert_true(got_in);
	assert_true(got_out);
	assert_int_equal(inner0.ws_row, 24);
	assert_int_equal(inner0.ws_col, 80);
	assert_int_equal(inner1.ws_row, 30);
	assert_int_equal(inner1.ws_col, 100);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(t.master, -1);
	assert_int_equal(t.slave, -1);
	/* SIGWINCH is no longer blocked: the caller's mask is back. */
	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	assert_false(sigismember(&now, SIGWINCH));
	(void)buf;
	close(os);
	close(om);
}

static void stdin_not_a_tty(void **state)
{
	(void)state;
	int p[2], om = posix_openpt(O_RDWR | O_NOCTTY);
	assert_int_equal(pipe(p), 0);
	assert_true(om >= 0);
	grantpt(om);
	unlockpt(om);
	int os = open(ptsname(om), O_RDWR | O_NOCTTY);
	saved0 = dup(0);
	saved1 = dup(1);
	dup2(p[0], 0);
	dup2(os, 1);
	struct jig_terminal t;
	struct jig_error e = {0};
	int r = jig_terminal_open(&t, &e);
	bool raw = false;
	if (!r)
		r = jig_terminal_start(&t, &e), raw = t.raw;
	if (write(p[1], "line\n", 5) != 5) {
	}
	close(p[1]);
	/* Canonical mode: the line, then the end of file (a read of 0). */
	char buf[128];
	bool got = read_until(t.slave, "line", buf, sizeof(buf));
	struct pollfd pf = {.fd = t.slave, .events = POLLIN};
	ssize_t eof = poll(&pf, 1, 2000) == 1 ? read(t.slave, buf, sizeof(buf)) : -2;
	jig_terminal_stop(&t);
	dup2(saved0, 0);
	dup2(saved1, 1);
	close(saved0);
	close(saved1);
	assert_int_equal(r, 0);
	assert_false(raw);
	assert_true(got);
	assert_int_equal(eof, 0);
	close(p[0]);
	close(os);
	close(om);
}

/* The operator's output goes away (a pipe whose reader closed): jig is
 * not killed by SIGPIPE and the program's output keeps draining, so it
 * never blocks on a full pty. */
static void operator_output_gone(void **state)
{
	(void)state;
	int p[2], in[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(in), 0);
	close(p[0]);
	saved0 = dup(0);
	saved1 = dup(1);
	dup2(in[0], 0);
	dup2(p[1], 1);
	struct jig_terminal t;
	struct jig_error e = {0};
	int r = jig_terminal_open(&t, &e);
	if (!r)
		r = jig_terminal_start(&t, &e);
	/* 1 MiB from the scope's side, far more than the pty holds. */
	int fl = fcntl(t.slave, F_GETFL);
	fcntl(t.slave, F_SETFL, fl | O_NONBLOCK);
	static char chunk[4096];
	memset(chunk, 'y', sizeof(chunk));
	size_t sent = 0;
	for (int tries = 0; tries < 5000 && sent < (1u << 20); tries++) {
		ssize_t n = write(t.slave, chunk, sizeof(chunk));
		if (n > 0)
			sent += (size_t)n;
		else
			usleep(1000);
	}
	jig_terminal_stop(&t);
	dup2(saved0, 0);
	dup2(saved1, 1);
	close(saved0);
	close(saved1);
	assert_int_equal(r, 0);
	assert_true(sent >= (1u << 20));
	close(p[1]);
	close(in[0]);
	close(in[1]);
}

/* A stop without a start (the launch failed first) closes the pair. */
static void stop_without_start(void **state)
{
	(void)state;
	struct jig_terminal t;
	struct jig_error e = {0};
	assert_int_equal(jig_terminal_open(&t, &e), 0);
	assert_true(isatty(t.slave));
	jig_terminal_stop(&t);
	assert_int_equal(t.master, -1);
	jig_terminal_stop(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(relay_resize_restore), cmocka_unit_test(stdin_not_a_tty),
					   cmocka_unit_test(operator_output_gone),
					   cmocka_unit_test(stop_without_start)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
