/* host/display/policy.c: the request rules as a pure function, one
 * assertion per rule (the raw-socket tests prove them through the parser). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "display/display.h"

static struct jig_display_policy pol;

static struct jig_display_decision ask(const char *method, const char *target, int has_query, int has_body,
				       const char *const *hv)
{
	const char *names[16], *values[16];
	size_t n = 0;
	for (; hv && hv[2 * n]; n++) {
		names[n] = hv[2 * n];
		values[n] = hv[2 * n + 1];
	}
	struct jig_display_request rq = {.struct_size = sizeof(rq), .method = method, .target = target,
					 .version = "HTTP/1.1", .has_query = (uint32_t)has_query,
					 .has_body = (uint32_t)has_body, .n_headers = n, .names = names, .values = values};
	return jig_display_authorize(&pol, &rq);
}

#define HOST "Host", "127.0.0.1:4242"
#define CAP "X-Jig-Capability", pol.cap

static void test_page_and_assets(void **st)
{
	(void)st;
	const char *h[] = {HOST, NULL};
	assert_int_equal(ask("GET", "/", 0, 0, h).route, JIG_ROUTE_ASSET);
	assert_string_equal(ask("GET", "/app.js", 0, 0, h).asset, "app.js");
	assert_int_equal(ask("GET", "/index.html", 0, 0, h).status, 404);
	assert_int_equal(ask("GET", "/", 1, 0, h).status, 404);
	const char *none[] = {HOST, "Sec-Fetch-Site", "none", NULL};
	assert_int_equal(ask("GET", "/", 0, 0, none).route, JIG_ROUTE_ASSET);
	assert_int_equal(ask("GET", "/app.js", 0, 0, none).status, 403);
}

static void test_host(void **st)
{
	(void)st;
	const char *bad[] = {"localhost:4242", "127.0.0.1", "127.0.0.1:4243", "127.0.0.2:4242", "[::1]:4242",
			     "127.0.0.1.:4242", "127.0.0.1:04242", "", NULL};
	for (size_t i = 0; bad[i]; i++) {
		const char *h[] = {"Host", bad[i], CAP, NULL};
		assert_int_equal(ask("GET", "/api/view", 0, 0, h).status, 421);
	}
	const char *none[] = {CAP, NULL};
	assert_int_equal(ask("GET", "/api/view", 0, 0, none).status, 421);
	const char *two[] = {HOST, HOST, CAP, NULL};
	assert_int_equal(ask("GET", "/api/view", 0, 0, two).status, 421);
	const char *h[] = {HOST, CAP, NULL};
	assert_int_equal(ask("GET", "http://127.0.0.1:4242/api/view", 0, 0, h).status, 421);
	assert_int_equal(ask("GET", "/api/view", 0, 0, h).route, JIG_ROUTE_VIEW);
}

static void test_origin_and_site(void **st)
{
	(void)st;
	const char *ok[] = {HOST, CAP, "Origin", "http://127.0.0.1:4242", "Sec-Fetch-Site", "same-origin", NULL};
	assert_int_equal(ask("GET", "/api/view", 0, 0, ok).route, JIG_ROUTE_VIEW);
	const char *origins[] = {"null", "http://127.0.0.1:4243", "https://127.0.0.1:4242", "http://localhost:4242", NULL};
	for (size_t i = 0; origins[i]; i++) {
		const char *h[] = {HOST, CAP, "Origin", origins[i], NULL};
		assert_int_equal(ask("GET", "/api/view", 0, 0, h).status, 403);
	}
	const char *sites[] = {"cross-site", "same-site", "none", NULL};
	for (size_t i = 0; sites[i]; i++) {
		const char *h[] = {HOST, CAP, "Sec-Fetch-Site", sites[i], NULL};
		assert_int_equal(ask("GET", "/api/view", 0, 0, h).status, 403);
	}
}

static void test_capability(void **st)
{
	(void)st;
	char prefix[64];
	memcpy(prefix, pol.cap, 63);
	prefix[63] = '\0';
	const char *h1[] = {HOST, NULL};
	const char *h2[] = {HOST, "X-Jig-Capability", prefix, NULL};
	const char *h3[] = {HOST, "Cookie", pol.cap, NULL};
	const char *h4[] = {HOST, CAP, CAP, NULL};
	assert_int_equal(ask("GET", "/api/view", 0, 0, h1).status, 401);
	assert_int_equal(ask("GET", "/api/view", 0, 0, h2).status, 401);
	assert_int_equal(ask("GET", "/api/view", 0, 0, h3).status, 401);
	assert_int_equal(ask("GET", "/api/view", 0, 0, h4).status, 401);
	assert_int_equal(ask("GET", "/api/view", 1, 0, h1).status, 401);
	const char *h[] = {HOST, CAP, NULL};
	assert_int_equal(ask("GET", "/api/view", 1, 0, h).status, 404);
}

static void test_methods_bodies_routes(void **st)
{
	(void)st;
	const char *h[] = {HOST, CAP, "Origin", "http://127.0.0.1:4242", NULL};
	assert_int_equal(ask("POST", "/api/view", 0, 0, h).status, 405);
	assert_int_equal(ask("HEAD", "/", 0, 0, h).status, 405);
	assert_int_equal(ask("GET", "/api/close", 0, 0, h).status, 405);
	assert_int_equal(ask("POST", "/api/close", 0, 0, h).route, JIG_ROUTE_CLOSE);
	assert_int_equal(ask("POST", "/api/close", 0, 1, h).status, 400);
	assert_int_equal(ask("GET", "/api/view", 0, 1, h).status, 400);
	const char *no_origin[] = {HOST, CAP, NULL};
	assert_int_equal(ask("POST", "/api/close", 0, 0, no_origin).status, 403);
	const char *id = "/api/artifact/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct jig_display_decision d = ask("GET", id, 0, 0, h);
	assert_int_equal(d.route, JIG_ROUTE_ARTIFACT);
	assert_string_equal(d.artifact, id + 14);
	const char *bad[] = {"/api/artifact/../../etc/passwd", "/api/artifact/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
			     "/api/artifact/", "/api/view/", "/api//view", "/api/./view", NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(ask("GET", bad[i], 0, 0, h).status, 404);
}

int main(void)
{
	struct jig_error e = {0};
	if (jig_display_policy_init(&pol, 4242, &e) != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_and_assets), cmocka_unit_test(test_host),
		cmocka_unit_test(test_origin_and_site), cmocka_unit_test(test_capability),
		cmocka_unit_test(test_methods_bodies_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
