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

#include "proc/terminal.h"

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

/* The filter on the way down (decision 218), fed whole and one byte at a
 * time: what passes is exactly want. */
static void filtered(const char *in, const char *want)
{
	size_t n = strlen(in);
	char out[4096 + JIG_TERM_SEQ_MAX], one[4096 + JIG_TERM_SEQ_MAX];
	struct jig_term_filter f = {0}, g = {0};
	size_t o = jig_term_filter(&f, in, n, out), k = 0;
	for (size_t i = 0; i < n; i++)
		k += jig_term_filter(&g, in + i, 1, one + k);
	out[o] = one[k] = '\0';
	if (strcmp(out, want) != 0 || strcmp(one, want) != 0)
		fail_msg("filtered \"%s\": whole \"%s\", bytewise \"%s\"", in, out, one);
}

static void down_filter(void **state)
{
	(void)state;
	/* OSC 52 (clipboard write and query), BEL- or ST-terminated. */
	filtered("a\x1b]52;c;ZXZpbA==\x07" "b", "ab");
	filtered("a\x1b]52;c;?\x1b\\b", "ab");
	/* Other OSC strings but titles, cwd, hyperlinks, prompt marks. */
	filtered("\x1b]4;1;?\x07\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]1337;File=x\x07ok", "ok");
	filtered("\x1b]0;title\x07\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "\x1b]0;title\x07\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\");
	filtered("\x1b]2;t\x1b[31m", "\x1b]2;t\x1b[31m"); /* an OSC ended by a new escape */
	/* Report requests: DA, DSR, CPR, DECRQM, window reports, XTVERSION,
	 * DECRQSS and XTGETTCAP (DCS), DECID, ENQ. */
	filtered("x\x1b[c\x1b[0c\x1b[>c\x1b[=c\x1b[5n\x1b[6n\x1b[?6n\x1b[?2026$p\x1b[21t\x1b[14t\x1b[>q\x1b[?u\x1by",
		 "x\x1by");
	filtered("\x1bP$qm\x1b\\\x1bP+q544e\x1b\\\x1bZ\x05\x1b_Gf=1;AAAA\x1b\\z", "z");
	/* Ordinary output passes byte for byte. */
	filtered("\x1b[1;31mred\x1b[0m\r\n\x1b[2J\x1b[H\x1b[?25l\x1b[?1049h\x1b(B\x1b" "7\x1b" "8\xc3\xa9",
		 "\x1b[1;31mred\x1b[0m\r\n\x1b[2J\x1b[H\x1b[?25l\x1b[?1049h\x1b(B\x1b" "7\x1b" "8\xc3\xa9");
	/* A CSI too long to hold is dropped whole, not passed in pieces. */
	char longcsi[200] = "\x1b[";
	memset(longcsi + 2, '1', 150);
	strcat(longcsi, "c!");
	filtered(longcsi, "!");
}

/* After the terminal is restored, what the operator's terminal still holds
 * unread (typed, or a terminal's answer) is discarded (tcflush). */
static void restore_flushes_input(void **state)
{
	(void)state;
	int om = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(om >= 0 && grantpt(om) == 0 && unlockpt(om) == 0);
	int os = open(ptsname(om), O_RDWR | O_NOCTTY);
	assert_true(os >= 0);
	operator_on(os);
	struct jig_terminal t;
	struct jig_error e = {0};
	assert_int_equal(jig_terminal_open(&t, &e), 0);
	struct termios raw;
	tcgetattr(t.slave, &raw);
	cfmakeraw(&raw);
	tcsetattr(t.slave, TCSANOW, &raw); /* nobody reads the slave: the relay backs up */
	assert_int_equal(jig_terminal_start(&t, &e), 0);
	fcntl(om, F_SETFL, fcntl(om, F_GETFL) | O_NONBLOCK);
	char chunk[512];
	memset(chunk, 'a', sizeof(chunk));
	size_t typed = 0;
	for (int i = 0; i < 200; i++) {
		ssize_t n = write(om, chunk, sizeof(chunk));
		if (n > 0)
			typed += (size_t)n;
		usleep(2000);
	}
	int pending_before = 0, pending_after = -1;
	ioctl(os, FIONREAD, &pending_before);
	jig_terminal_stop(&t);
	ioctl(os, FIONREAD, &pending_after);
	operator_off();
	close(os);
	close(om);
	assert_true(typed > 0);
	if (pending_before <= 0)
		fail_msg("nothing left unread in the operator's terminal (%zu typed)", typed);
	assert_int_equal(pending_after, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(relay_resize_restore), cmocka_unit_test(stdin_not_a_tty),
					   cmocka_unit_test(operator_output_gone),
					   cmocka_unit_test(stop_without_start), cmocka_unit_test(down_filter),
					   cmocka_unit_test(restore_flushes_input)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
