/* Inert text (issue 12): every control, DEL, C1, invalid UTF-8 and bidi
 * control is shown escaped; printable text, UTF-8 included, is unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/error.h"
#include "util/text.h"

static void inert_is(const char *in, size_t len, const char *want)
{
	char out[512];
	jig_text_inert(out, sizeof(out), in, len);
	assert_string_equal(out, want);
	/* Idempotent: escaping the escaped form changes nothing. */
	char again[512];
	jig_text_inert(again, sizeof(again), out, strlen(out));
	assert_string_equal(again, want);
}
#define INERT(lit, want) inert_is(lit, sizeof(lit) - 1, want)

static void printable_unchanged(void **state)
{
	(void)state;
	INERT("plain text: a/b.c 100% \\ ok", "plain text: a/b.c 100% \\ ok");
	INERT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac");
}

static void controls_escaped(void **state)
{
	(void)state;
	INERT("a\nb\rc\td", "a\\nb\\rc\\td");
	INERT("\x1b[2K\x1b]0;title\x07", "\\x1b[2K\\x1b]0;title\\x07");
	INERT("\x1b]52;c;cHduZWQ=\x07", "\\x1b]52;c;cHduZWQ=\\x07");
	INERT("x\x08\x08y\x7f", "x\\x08\\x08y\\x7f");
	inert_is("a\0b", 3, "a\\x00b");
	/* C1 as characters and as raw bytes (8-bit CSI). */
	INERT("\xc2\x9b" "31m", "\\u009b31m");
	INERT("\x9b" "31m", "\\x9b31m");
	INERT("\xc2\x85", "\\u0085");
}

static void bidi_escaped(void **state)
{
	(void)state;
	INERT("gnp\xe2\x80\xae.exe", "gnp\\u202e.exe");
	INERT("\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069");
	INERT("\xe2\x80\x8f\xe2\x80\x8e\xd8\x9c", "\\u200f\\u200e\\u061c");
	INERT("\xe2\x80\xa8\xe2\x80\xa9", "\\u2028\\u2029");
}

static void invalid_utf8_escaped(void **state)
{
	(void)state;
	INERT("\xc0\xaf", "\\xc0\\xaf");		      /* overlong */
	INERT("\xed\xa0\x80", "\\xed\\xa0\\x80");     /* surrogate */
	INERT("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	INERT("\xe2\x80", "\\xe2\\x80");	      /* truncated */
	INERT("\xff", "\\xff");
}

static void truncation_keeps_whole_pieces(void **state)
{
	(void)state;
	char out[6];
	/* "ab" + "\x1b" (4) does not fit in 5: stops before the escape. */
	assert_int_equal(jig_text_inert(out, sizeof(out), "ab\x1b", 3), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(jig_text_inert(out, 3, "a\xc3\xa9", 3), 1);
	assert_string_equal(out, "a");
	char *d = jig_text_inert_dup("\x9b\x9b\x9b");
	assert_string_equal(d, "\\x9b\\x9b\\x9b");
	free(d);
}

static void errors_are_one_inert_line(void **state)
{
	(void)state;
	struct jig_error e = {0};
	jig_err(&e, JIG_E_USAGE, "output %s: refused", "x\n\x1b[1Ajig: flow f succeeded\x07");
	assert_string_equal(e.msg, "output x\\n\\x1b[1Ajig: flow f succeeded\\x07: refused");
	for (const char *p = e.msg; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
}

/* Issue 46: a stack trace as lines, each inert, after jig's own indent. */
static void lines_stay_inert(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jig_text_put_lines(f, "    ", "Error: a\n  at b\x1b[2J\r\n  at c\rjig: d\n");
	fclose(f);
	assert_string_equal(buf, "Error: a\n      at b\\x1b[2J\n      at c\\rjig: d\n    ");
	free(buf);
	assert_int_equal(jig_text_first_line("Error: a\r\nb"), 8);
	assert_int_equal(jig_text_first_line("one"), 3);
	assert_int_equal(jig_text_first_line(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(printable_unchanged),	     cmocka_unit_test(controls_escaped),
		cmocka_unit_test(bidi_escaped),		     cmocka_unit_test(invalid_utf8_escaped),
		cmocka_unit_test(truncation_keeps_whole_pieces), cmocka_unit_test(errors_are_one_inert_line),
		cmocka_unit_test(lines_stay_inert),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
