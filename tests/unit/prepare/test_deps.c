/* A lock entry's os, cpu and libc as the pinned Bun decides (issue 31;
 * docs/dependencies.md, decision 94), and the configured registry's
 * tarball URLs. The platform cases are the ones checked against Bun 1.4.5
 * itself (a frozen install of a lock holding each). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "prepare/deps.h"
#include "util/credential.h"

#if defined(__x86_64__)
#define CPU "x64"
#define OTHER_CPU "arm64"
#else
#define CPU "arm64"
#define OTHER_CPU "x64"
#endif

static bool admits(const char *key, const char *json)
{
	json_t *v = json ? json_loads(json, JSON_DECODE_ANY, NULL) : NULL;
	bool r = jig_deps_platform_admits(key, v);
	json_decref(v);
	return r;
}

static void platform(void **state)
{
	(void)state;
	static const struct {
		const char *key, *value;
		bool admits;
	} cs[] = {
		{"os", NULL, true},
		{"os", "\"linux\"", true},
		{"os", "\"darwin\"", false},
		{"os", "\"!linux\"", false},
		{"os", "[\"!darwin\"]", true},
		{"os", "[\"haiku\"]", false}, /* only unknown names: none */
		{"os", "[\"haiku\", \"!darwin\"]", true},
		{"os", "\"any\"", true},
		{"os", "\"none\"", false},
		{"os", "[]", true},
		{"os", "\"\"", true},
		{"os", "[\"linux\", \"!linux\"]", false},
		{"os", "\"Linux\"", false}, /* names are exact */
		{"os", "[\"!haiku\"]", true},
		{"os", "[\"darwin\", \"linux\"]", true},
		{"cpu", "\"" CPU "\"", true},
		{"cpu", "\"" OTHER_CPU "\"", false},
		{"cpu", "\"!" CPU "\"", false},
		{"cpu", "\"*\"", false}, /* not Bun's wildcard in a lock */
		{"cpu", "[\"" OTHER_CPU "\", \"" CPU "\"]", true},
		{"libc", NULL, true},
		{"libc", "\"glibc\"", true},
		{"libc", "\"musl\"", false},
		{"libc", "\"!musl\"", true},
		{"libc", "\"!glibc\"", false},
		{"libc", "[]", true},
		{"libc", "\"none\"", true}, /* admitting nothing is no constraint */
		{"libc", "\"any\"", true},
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		if (admits(cs[i].key, cs[i].value) != cs[i].admits)
			fail_msg("%s %s: expected %s", cs[i].key, cs[i].value ? cs[i].value : "(absent)", cs[i].admits ? "admitted" : "not");
}

static void tarball_urls(void **state)
{
	(void)state;
	char u[512];
	jig_deps_tarball_url("http://127.0.0.1:4873/", "x", "1.1.0", u, sizeof(u));
	assert_string_equal(u, "http://127.0.0.1:4873/x/-/x-1.1.0.tgz");
	jig_deps_tarball_url("http://127.0.0.1:4873", "@s/n", "1.0.0-rc.1", u, sizeof(u));
	assert_string_equal(u, "http://127.0.0.1:4873/@s/n/-/n-1.0.0-rc.1.tgz");
	jig_deps_tarball_url("https://r.example/npm/", "left-pad", "1.3.0", u, sizeof(u));
	assert_string_equal(u, "https://r.example/npm/left-pad/-/left-pad-1.3.0.tgz");
	/* Every URL of a lock is compared whole with the configured one's. */
	struct jig_deps d = {0};
	struct jig_error e = {0};
	d.packages = json_pack("[{s:s,s:s,s:s,s:s}]", "path", "x", "name", "x", "version", "1.1.0", "url",
			       "http://127.0.0.1:4873/x/-/x-1.1.0.tgz");
	assert_int_equal(jig_deps_check_registry(&d, "f", "http://127.0.0.1:4873/", &e), 0);
	assert_int_equal(jig_deps_check_registry(&d, "f", "http://127.0.0.1:4873", &e), 0);
	assert_int_equal(jig_deps_check_registry(&d, "f", "http://127.0.0.1:4874/", &e), -JIG_E_USAGE);
	assert_non_null(strstr(e.msg, "is not the configured registry's (http://127.0.0.1:4874/)"));
	assert_int_equal(jig_deps_check_registry(&d, "f", "http://localhost:4873/", &e), -JIG_E_USAGE);
	assert_int_equal(jig_deps_check_registry(&d, "f", "http://127.0.0.1:4873/x/", &e), -JIG_E_USAGE);
	json_decref(d.packages);
}

/* R-C14: credentials in a lock or manifest are found (and named without
 * being echoed); scoped paths and look-alike names are not credentials. */
static void credentials(void **state)
{
	(void)state;
	const char *what = NULL;
	static const struct {
		const char *text;
		size_t line;
	} cases[] = {
		{"{\n\"a\": [\"a@1\", \"https://u:p@r.example/a/-/a-1.tgz\"]}", 2},
		{"\"http://tok@127.0.0.1:9/a.tgz\"", 1},
		{"\n\n{\"_authToken\": \"x\"}", 3},
		{"{\"//r.example/:_auth\": \"x\"}", 1},
		{"{\"_password\": 1}", 1},
		{"\"git+ssh://git@github.com/x/y.git\"", 1},
		{"\"http://127.0.0.1:9/@t/n/-/n-6.0.0.tgz\"", 0},
		{"\"npm:@s/a@^1\", \"https://r.example/@s/a/-/a-1.tgz\"", 0},
		{"{\"bin\": {\"authtoken-cli\": \"x@y\"}, \"_authors\": 1}", 0},
		{"\"https://r.example/a?x=@b\"", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got = jig_credential_line(cases[i].text, strlen(cases[i].text), &what);
		if (got != cases[i].line)
			fail_msg("case %zu (%s): line %zu, expected %zu", i, cases[i].text, got, cases[i].line);
		if (got)
			assert_null(strstr(what, "u:p"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(platform),
		cmocka_unit_test(tarball_urls),
		cmocka_unit_test(credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
