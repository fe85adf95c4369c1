/* Progress on a terminal (issue 35, util/progress.h) as a unit, on a
 * pseudo-terminal of its own: off unless started on a terminal (a pipe
 * keeps it off, every call then writes nothing); a status is the erase,
 * "jig: [ N.Ns] " and the text made inert (a control sequence in a name
 * is shown escaped, never acted on), cut to the terminal's width at a
 * UTF-8 boundary; a line stays (ends with \n) and is not cut; clear writes
 * the erase alone; byte counts in human units. */
#include <fcntl.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/progress.h"

static int master = -1, slave = -1;

/* Everything the terminal got so far (raw mode: no \n -> \r\n). */
static size_t drain(char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(master, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

static void off_without_terminal(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_false(jig_progress_start(p[1]));
	assert_false(jig_progress_on());
	jig_progress_status("nothing %d", 1);
	jig_progress_line("nothing");
	jig_progress_clear();
	close(p[1]);
	char c;
	assert_int_equal(read(p[0], &c, 1), 0); /* nothing was written */
	close(p[0]);
}

static void status_line_clear(void **state)
{
	(void)state;
	struct winsize ws = {.ws_row = 24, .ws_col = 120};
	assert_int_equal(openpty(&master, &slave, NULL, NULL, &ws), 0);
	struct termios t;
	assert_int_equal(tcgetattr(slave, &t), 0);
	cfmakeraw(&t);
	assert_int_equal(tcsetattr(slave, TCSANOW, &t), 0);
	fcntl(master, F_SETFL, O_NONBLOCK);
	assert_true(jig_progress_start(slave));
	assert_true(jig_progress_on());
	char buf[4096];

	/* A name with ESC ] (a title) and a newline: shown escaped. */
	jig_progress_status("flow %s: running", "x\033]0;pwned\a\n");
	drain(buf, sizeof(buf));
	assert_non_null(strstr(buf, "\r\033[Kjig: ["));
	assert_non_null(strstr(buf, "s] flow x\\x1b]0;pwned\\x07\\n: running"));
	assert_null(strchr(buf + 3, '\033')); /* the erase is the only control */
	assert_null(strchr(buf, '\n'));

	/* Over 40 columns: cut to 39, whole characters (é is two bytes). */
	ws.ws_col = 40;
	assert_int_equal(ioctl(master, TIOCSWINSZ, &ws), 0);
	jig_progress_status("%s", "ééééééééééééééééééééééééééééééééééééééééé");
	size_t n = drain(buf, sizeof(buf));
	assert_true(n - strlen("\r\033[K") <= 39);
	assert_true(((unsigned char)buf[n - 1] & 0xc0) != 0xc0); /* not a lead byte left alone */
	assert_true(((unsigned char)buf[n - 1] & 0xc0) == 0x80 || (unsigned char)buf[n - 1] < 0x80);

	/* A line stays and is not cut. */
	jig_progress_line("flow x: child y (binding z): succeeded (1.2s) and a good deal more text");
	drain(buf, sizeof(buf));
	assert_non_null(strstr(buf, "succeeded (1.2s) and a good deal more text\n"));
	assert_int_equal(strncmp(buf, "\r\033[Kjig: [", 9), 0);

	jig_progress_clear();
	drain(buf, sizeof(buf));
	assert_string_equal(buf, "\r\033[K");
	close(slave);
	close(master);
}

static void human_bytes(void **state)
{
	(void)state;
	char b[32];
	jig_progress_bytes(b, sizeof(b), 512);
	assert_string_equal(b, "512 B");
	jig_progress_bytes(b, sizeof(b), 12 * 1024 + 100);
	assert_string_equal(b, "12.1 KiB");
	jig_progress_bytes(b, sizeof(b), 3u << 20);
	assert_string_equal(b, "3.0 MiB");
	jig_progress_bytes(b, sizeof(b), 5ull << 30);
	assert_string_equal(b, "5.0 GiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(off_without_terminal), cmocka_unit_test(status_line_clear),
					   cmocka_unit_test(human_bytes)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
