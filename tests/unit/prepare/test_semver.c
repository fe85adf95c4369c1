/* npm's range grammar (issue 31; R-E02): a lock's version checked against
 * package.json's range, as node-semver decides, before any fetch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "prepare/semver.h"

struct c {
	const char *version, *range;
};

static void each(const struct c *cs, size_t n, enum jig_semver_result want)
{
	for (size_t i = 0; i < n; i++) {
		enum jig_semver_result r = jig_semver_satisfies(cs[i].version, cs[i].range);
		if (r != want)
			fail_msg("\"%s\" against \"%s\": %d, expected %d", cs[i].version, cs[i].range, r, want);
	}
}
#define EACH(cs, want) each(cs, sizeof(cs) / sizeof(cs[0]), want)

static void exact_and_x_ranges(void **state)
{
	(void)state;
	static const struct c yes[] = {{"1.2.3", "1.2.3"}, {"1.2.3", "=1.2.3"}, {"1.2.3", "v1.2.3"}, {"1.2.3", "*"},
				       {"1.2.3", ""}, {"1.2.3", "x"}, {"1.2.3", "1.x"}, {"1.2.3", "1.X"},
				       {"1.2.3", "1.2.x"}, {"1.2.3", "1.2.*"}, {"1.2.3", "1"}, {"1.2.3", "1.2"},
				       {"1.2.3", "1.x.9"}, {"1.2.3+build.5", "1.2.3"}, {"1.2.3", "1.2.3+build"},
				       {"1.2.3", " 1.2.3 "}, {"0.0.0", "*"}};
	static const struct c no[] = {{"1.0.0", "1.1.0"}, {"1.1.1", "1.1.0"}, {"2.0.0", "1.x"}, {"0.9.9", "1.x"},
				      {"1.3.0", "1.2.x"}, {"1.1.9", "1.2"}, {"2.0.0", "1"}, {"1.2.3", "=1.2.4"}};
	EACH(yes, JIG_SEMVER_YES);
	EACH(no, JIG_SEMVER_NO);
}

static void caret_and_tilde(void **state)
{
	(void)state;
	static const struct c yes[] = {{"1.2.3", "^1.2.3"}, {"1.9.9", "^1.2.3"}, {"1.1.0", "^1.1.0"}, {"0.2.5", "^0.2.3"},
				       {"0.0.3", "^0.0.3"}, {"1.3.0", "^1.2"}, {"0.0.9", "^0.0"}, {"0.0.9", "^0.0.x"},
				       {"0.9.0", "^0.x"}, {"1.5.0", "^1.x"}, {"1.2.3", "^v1.2.3"}, {"1.2.9", "~1.2.3"},
				       {"1.2.0", "~1.2"}, {"1.9.0", "~1"}, {"0.2.9", "~0.2.3"}, {"1.2.5", "~>1.2.3"},
				       {"1.2.5", "~ 1.2.3"}, {"1.2.5", "^ 1.2.3"}};
	static const struct c no[] = {{"2.0.0", "^1.1.0"}, {"1.0.0", "^1.1.0"}, {"0.3.0", "^0.2.3"}, {"0.2.2", "^0.2.3"},
				      {"0.0.4", "^0.0.3"}, {"0.1.0", "^0.0"}, {"1.0.0", "^0.x"}, {"1.3.0", "~1.2.3"},
				      {"1.2.2", "~1.2.3"}, {"1.3.0", "~1.2"}, {"2.0.0", "~1"}, {"0.3.0", "~0.2.3"}};
	EACH(yes, JIG_SEMVER_YES);
	EACH(no, JIG_SEMVER_NO);
}

static void comparators_hyphens_unions(void **state)
{
	(void)state;
	static const struct c yes[] = {
		{"2.0.0", ">1.2.3"},	 {"1.2.3", ">=1.2.3"},		{"1.2.2", "<1.2.3"},	  {"1.2.3", "<=1.2.3"},
		{"2.0.0", ">1"},	 {"1.3.0", ">1.2"},		{"1.1.9", "<1.2"},	  {"1.2.9", "<=1.2"},
		{"1.5.0", ">=1.2.3 <2.0.0"}, {"1.5.0", ">= 1.2.3 < 2"}, {"1.5.0", "1.2.3 - 2.3.4"}, {"2.3.4", "1.2.3 - 2.3.4"},
		{"2.3.9", "1.2.3 - 2.3"}, {"2.9.9", "1.2.3 - 2"},	{"1.2.0", "1.2 - 2.3.4"}, {"0.0.1", "* - 1"},
		{"3.0.0", "1.x || >=2.5.0"}, {"1.0.0", "1.x || >=2.5.0"}, {"2.5.0", "<1||>=2.5.0"}, {"7.0.0", "1.x || "},
		{"1.2.3", ">=*"},	 {"1.2.3", "=*"}};
	static const struct c no[] = {
		{"1.2.3", ">1.2.3"},	  {"1.2.3", "<1.2.3"},		  {"1.2.9", ">1.2"},	      {"1.2.0", "<1.2"},
		{"1.3.0", "<=1.2"},	  {"1.9.9", ">1"},		  {"2.3.5", "1.2.3 - 2.3.4"}, {"1.2.2", "1.2.3 - 2.3.4"},
		{"2.4.0", "1.2.3 - 2.3"}, {"3.0.0", "1.2.3 - 2"},	  {"2.0.0", "1.x || >=2.5.0"}, {"0.0.1", ">*"},
		{"0.0.1", "<*"},	  {"2.0.0", ">=1.2.3 <2.0.0"}};
	EACH(yes, JIG_SEMVER_YES);
	EACH(no, JIG_SEMVER_NO);
}

static void prereleases(void **state)
{
	(void)state;
	/* A prerelease only where a comparator has one on its own tuple. */
	static const struct c yes[] = {{"1.2.3-beta.2", "1.2.3-beta.2"},	 {"1.2.3-beta.3", ">=1.2.3-beta.2 <1.2.4"},
				       {"1.2.3-alpha.10", ">1.2.3-alpha.9"},	 {"1.2.3-beta", ">1.2.3-alpha"},
				       {"1.0.0-rc.1", "^1.0.0-rc.0"},		 {"1.2.4-beta.3", "^1.2.4-beta.2"},
				       {"1.2.3-beta.4", "~1.2.3-beta.2"},	 {"1.2.3-10", ">1.2.3-9"},
				       {"1.2.3-beta.10", ">1.2.3-beta.9"},	 {"1.2.3-beta", "1.2.3-alpha - 1.2.3"},
				       {"1.2.3-a.b", ">1.2.3-a"},		 {"1.2.3", ">1.2.3-beta"},
				       {"0.0.3-beta", "^0.0.3-beta"},		 {"1.2.3-beta+b", "1.2.3-beta"}};
	static const struct c no[] = {{"1.2.4-beta", "^1.2.3"},		{"1.2.3-beta", "1.2.x"},      {"2.0.0-beta", "<2.0.0"},
				      {"1.2.4-beta.1", ">=1.2.3-beta.2"},	{"1.2.3-beta", "*"},	      {"1.2.3-beta", ""},
				      {"1.2.3-alpha", ">1.2.3-beta"},		{"1.0.0-rc.1", "^1.0.0"},     {"2.0.0-0", "^1.2.3"},
				      {"1.2.3-beta.1", "^1.2.3-beta.2"},	{"1.2.3-10", "1.2.3-9"},      {"1.2.3-9", ">1.2.3-10"},
				      {"1.2.3-beta", "~1.2.3"},			{"1.2.3-a", ">1.2.3-a.b"},    {"1.3.0-0", "~1.2.3-beta"},
				      {"1.2.3-beta", "1.2.3"}};
	EACH(yes, JIG_SEMVER_YES);
	EACH(no, JIG_SEMVER_NO);
}

static void unreadable(void **state)
{
	(void)state;
	/* Never guessed: tags, sources, and anything off the grammar. */
	static const char *const bad[] = {
		"latest", "next", "beta", "git+https://h/x.git", "github:a/b", "a/b", "file:../x", "link:x", "workspace:*",
		"npm:x@1.0.0", "https://h/x.tgz", "1.2.3.4", "01.2.3", "1.02.3", "1.2.3-", "1.2.3-01", "1.2.3-beta..1", "1.2.3+",
		">=", "~", "^", ">>1", "=>1.2", "^~1", "1.2.3 -2", "1.2.3- 2", "1 - 2 - 3", " - 1.2.3", "1.2.3 - ", ">=1 - 2",
		"1.2.3 |", "1.2.3 | 2", "1.2.3 ||| 2", "a.b.c", "1.2.3beta", "1.2.3_4", "12345678901234567.0.0", "1.2.3\n",
		"< 1.2.3 >", "~1.2.3 latest"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (jig_semver_range_ok(bad[i]))
			fail_msg("\"%s\" read as a range", bad[i]);
		assert_int_equal(jig_semver_satisfies("1.2.3", bad[i]), JIG_SEMVER_RANGE);
	}
	/* At most JIG_SEMVER_RANGE_MAX bytes. */
	char longr[JIG_SEMVER_RANGE_MAX + 2];
	memset(longr, ' ', sizeof(longr));
	memcpy(longr, "1.2.3", 5);
	longr[JIG_SEMVER_RANGE_MAX] = '\0';
	assert_int_equal(jig_semver_satisfies("1.2.3", longr), JIG_SEMVER_YES);
	longr[JIG_SEMVER_RANGE_MAX] = ' ';
	longr[JIG_SEMVER_RANGE_MAX + 1] = '\0';
	assert_int_equal(jig_semver_satisfies("1.2.3", longr), JIG_SEMVER_RANGE);
	/* A locked version is exact. */
	static const char *const badv[] = {"1.2", "1.2.3.4", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "", "latest"};
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++)
		assert_int_equal(jig_semver_satisfies(badv[i], "*"), JIG_SEMVER_VERSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_and_x_ranges),
		cmocka_unit_test(caret_and_tilde),
		cmocka_unit_test(comparators_hyphens_unions),
		cmocka_unit_test(prereleases),
		cmocka_unit_test(unreadable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
