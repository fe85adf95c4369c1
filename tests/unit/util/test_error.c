/* Errors told again in a caller's words (issue 32): jig_err_prefix puts
 * its text before the message and sets the code; jig_err may take e->msg
 * as an argument; jig_json_usage turns the readers' integrity code into
 * usage and leaves every other code alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/error.h"
#include "util/json.h"

static void prefix(void **state)
{
	(void)state;
	struct jig_error e = {0};
	assert_int_equal(jig_err(&e, JIG_E_INTERNAL, "files/: %s", "No such file"), -JIG_E_INTERNAL);
	assert_int_equal(jig_err_prefix(&e, JIG_E_INTEGRITY, "%s: ", "pkt"), -JIG_E_INTEGRITY);
	assert_int_equal(e.code, JIG_E_INTEGRITY);
	assert_string_equal(e.msg, "pkt: files/: No such file");
	/* The prefix is made inert like any message; the message stays as it was. */
	jig_err(&e, JIG_E_USAGE, "a\\x1b");
	jig_err_prefix(&e, JIG_E_USAGE, "flow %s: ", "x\ny");
	assert_string_equal(e.msg, "flow x\\ny: a\\x1b");
	/* A message at its cap keeps the prefix and is cut at the end. */
	char big[sizeof(e.msg) + 10];
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	jig_err(&e, JIG_E_USAGE, "%s", big);
	jig_err_prefix(&e, JIG_E_USAGE, "p: ");
	assert_int_equal(strlen(e.msg), sizeof(e.msg) - 1);
	assert_memory_equal(e.msg, "p: mmm", 6);
	assert_int_equal(jig_err_prefix(NULL, JIG_E_HOST, "x"), -JIG_E_HOST);
}

static void message_as_argument(void **state)
{
	(void)state;
	struct jig_error e = {0};
	jig_err(&e, JIG_E_INTEGRITY, "bun.lock: line 3: bad");
	assert_int_equal(jig_err(&e, JIG_E_USAGE, "%s; not admitted", e.msg), -JIG_E_USAGE);
	assert_string_equal(e.msg, "bun.lock: line 3: bad; not admitted");
}

static void json_usage(void **state)
{
	(void)state;
	struct jig_error e = {0};
	assert_int_equal(jig_json_usage(jig_err(&e, JIG_E_INTEGRITY, "x"), &e), -JIG_E_USAGE);
	assert_int_equal(e.code, JIG_E_USAGE);
	assert_int_equal(jig_json_usage(jig_err(&e, JIG_E_INTERNAL, "out of memory"), &e), -JIG_E_INTERNAL);
	assert_int_equal(e.code, JIG_E_INTERNAL);
	assert_int_equal(jig_json_usage(0, &e), 0);
	assert_int_equal(jig_json_usage(-JIG_E_INTEGRITY, NULL), -JIG_E_INTEGRITY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(prefix), cmocka_unit_test(message_as_argument),
					   cmocka_unit_test(json_usage)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
