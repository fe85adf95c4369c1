/* --timeout parsing (issue 5 item 6; R-L01); --expiry and the default
 * command expiry (issue 33; R-L05). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow/timeout.h"

static void accepts(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		uint64_t ms;
	} ok[] = {{"1ms", 1}, {"250ms", 250}, {"30s", 30000}, {"5m", 300000}, {"2h", 7200000},
		  {"24h", 86400000}, {"1440m", 86400000}, {"86400000ms", 86400000}};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t ms = 0;
		struct jig_error e = {0};
		assert_int_equal(jig_parse_timeout(ok[i].in, &ms, &e), 0);
		assert_int_equal(ms, ok[i].ms);
	}
}

static void rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {"0", "0s", "-1s", "+1s", "1.5s", "25h", "1441m", "86400001ms", "10x",
					  "10", "", "s", " 1s", "1s ", "1 s", "01s", "1S", "1sec", "99999999999999999999h",
					  "1e3ms", "0x10s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ms = 7;
		struct jig_error e = {0};
		assert_int_equal(jig_parse_timeout(bad[i], &ms, &e), -JIG_E_USAGE);
		assert_int_equal(ms, 7);
		assert_non_null(strstr(e.msg, "--timeout"));
	}
}

/* --expiry: the same syntax and bounds, its own name in the message. */
static void expiry_parsed(void **state)
{
	(void)state;
	uint64_t ms = 0;
	struct jig_error e = {0};
	assert_int_equal(jig_parse_expiry("250ms", &ms, &e), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(jig_parse_expiry("24h", &ms, &e), 0);
	assert_int_equal(ms, 86400000);
	static const char *const bad[] = {"0", "1.5s", "25h", "86400001ms", "10", "-1s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ms = 7;
		assert_int_equal(jig_parse_expiry(bad[i], &ms, &e), -JIG_E_USAGE);
		assert_int_equal(ms, 7);
		assert_non_null(strstr(e.msg, "--expiry"));
		assert_null(strstr(e.msg, "--timeout"));
	}
}

/* The default expiry is the deadline plus 2 minutes (30 s by default:
 * 150 s); --display web has none; an explicit one holds, also there. */
static void expiry_default(void **state)
{
	(void)state;
	assert_int_equal(JIG_RUN_TIMEOUT_DEFAULT_MS, 30000);
	assert_int_equal(jig_run_expiry_ms(JIG_RUN_TIMEOUT_DEFAULT_MS, 0, false), 150000);
	assert_int_equal(jig_run_expiry_ms(86400000, 0, false), 86400000 + 120000);
	assert_int_equal(jig_run_expiry_ms(1, 0, false), 120001);
	assert_int_equal(jig_run_expiry_ms(30000, 0, true), 0);
	assert_int_equal(jig_run_expiry_ms(30000, 5000, true), 5000);
	assert_int_equal(jig_run_expiry_ms(30000, 5000, false), 5000);
	assert_int_equal(JIG_EXPIRY_GRACE_MS, 250);
	assert_int_equal(JIG_SETTLE_MS, 60000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(accepts), cmocka_unit_test(rejects), cmocka_unit_test(expiry_parsed),
					   cmocka_unit_test(expiry_default)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
