/* Grant URLs (issue 6 item 2): exact, normal form, https or numeric
 * loopback http only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "url.h"

static void accepts(void **state)
{
	(void)state;
	static const char *const ok[] = {"https://example.com/", "https://example.com/v1/items?limit=10",
					 "http://127.0.0.1:8080/echo", "https://api.example.org:8443/x", NULL};
	for (const char *const *u = ok; *u; u++) {
		char why[512] = "";
		if (jig_http_url_check(*u, why, sizeof(why)) != 0)
			fail_msg("%s refused: %s", *u, why);
	}
}

static void refuses(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"file:///etc/passwd", "gopher://example.com/", "ftp://example.com/x", "example.com/x",
		"//example.com/x", "http://example.com/", "http://localhost:8080/", "http://127.1:8080/",
		"http://2130706433:8080/", "http://0x7f.1:8080/", "http://[::1]:8080/", "HTTPS://example.com/",
		"https://user:pw@example.com/", "https://example.com/#frag", "https://example.com/a b",
		"https://example.com", "", "https://", NULL};
	for (const char *const *u = bad; *u; u++) {
		char why[512] = "";
		if (jig_http_url_check(*u, why, sizeof(why)) == 0)
			fail_msg("%s accepted", *u);
		assert_true(why[0] != '\0');
	}
}

/* A space, a control byte, DEL or a non-ASCII byte is refused by jig's own
 * byte check, before libcurl reads the URL (issue 47's mutant
 * http_url.control_bytes). */
static void bytes_refused_first(void **state)
{
	(void)state;
	static const char *const bad[] = {"https://example.com/a b", "https://example.com/a\tb", "https://example.com/a\x7f",
					  "https://example.com/\xc3\xa9", NULL};
	for (const char *const *u = bad; *u; u++) {
		char why[512] = "";
		assert_int_equal(jig_http_url_check(*u, why, sizeof(why)), -1);
		assert_string_equal(why, "contains a space, control or non-ASCII byte; percent-encode it");
	}
}

static void exact(void **state)
{
	(void)state;
	assert_int_equal(jig_http_url_same("http://127.0.0.1:8080/echo", "http://127.0.0.1:8080/echo"), 0);
	assert_int_equal(jig_http_url_same("http://127.0.0.1:8080/echo", "http://127.0.0.1:8080/echO"), -1);
	assert_int_equal(jig_http_url_same("http://127.0.0.1:8080/echo", "http://127.1:8080/echo"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(accepts), cmocka_unit_test(refuses), cmocka_unit_test(bytes_refused_first),
					   cmocka_unit_test(exact)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
