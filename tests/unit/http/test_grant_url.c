/* The grant URL rule is host policy (issue 13): the host decides over the
 * http module's reading of a URL. On every case the worker's own check
 * knows, the host's verdict is the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/grant_url.h"
#include "url.h"

static int host_rule(const char *url, char *why, size_t cap)
{
	struct jig_http_url u = {.struct_size = sizeof(u)};
	if (jig_http_url_parse(url, &u, why, cap) < 0)
		return -1;
	return jig_grant_url_allowed(url, &u, why, cap);
}

static void same_verdicts(void **state)
{
	(void)state;
	static const char *const urls[] = {
		"https://example.com/", "https://example.com/v1/items?limit=10", "http://127.0.0.1:8080/echo",
		"https://api.example.org:8443/x", "file:///etc/passwd", "gopher://example.com/", "ftp://example.com/x",
		"example.com/x", "//example.com/x", "http://example.com/", "http://localhost:8080/", "http://127.1:8080/",
		"http://2130706433:8080/", "http://0x7f.1:8080/", "http://[::1]:8080/", "HTTPS://example.com/",
		"https://user:pw@example.com/", "https://example.com/#frag", "https://example.com/a b", "https://example.com",
		"", "https://", "https://example.com:443/", "http://127.0.0.1:80/x", NULL};
	for (const char *const *u = urls; *u; u++) {
		char a[512] = "", b[512] = "";
		int host = host_rule(*u, a, sizeof(a)), worker = jig_http_url_check(*u, b, sizeof(b));
		if (host != worker)
			fail_msg("%s: host %d (%s), worker %d (%s)", *u, host, a, worker, b);
		if (host < 0 && !a[0])
			fail_msg("%s refused without a reason", *u);
	}
}

static void reasons(void **state)
{
	(void)state;
	char why[512];
	assert_true(host_rule("http://localhost:8080/", why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "only https, or http to the numeric loopback"));
	assert_true(host_rule("https://u:p@example.com/", why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "credentials"));
	assert_true(host_rule("https://example.com:443/", why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "write it as https://example.com/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(same_verdicts), cmocka_unit_test(reasons)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
