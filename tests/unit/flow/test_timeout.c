/* --timeout parsing (issue 5 item 6; R-L01). */
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

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(accepts), cmocka_unit_test(rejects)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
