/* A remembered admission's bytes and host facts (flow/memo.c,
 * policy/host_fact.c; decision 179): the memo parser takes only a
 * well-formed memo whose Plan text is its digest's (every prefix of a good
 * one, an extra or missing key, a wrong type, a scope or fact of the wrong
 * shape, an oversized one: none); a host fact holds while the host shows
 * the same and not after a change (a file's bytes, its removal, a link
 * repointed), and a malformed fact never holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "flow/memo.h"
#include "policy/host_fact.h"
#include "util/crypto.h"

#define PLAN "{\"format\":\"jig-plan/1\"}"
#define KEY "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SCOPE "{\"flow\":\"a\",\"route\":null,\"policy\":\"{}\",\"argv\":[\"/bin/x\"],\"hold\":null}"

/* A memo text with fields filled in (the Plan's digest computed). */
static char *memo(const char *fmt_field, const char *facts, const char *scopes, const char *extra)
{
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(PLAN, strlen(PLAN), d);
	jig_hex(d, JIG_SHA256_LEN, hex);
	char *out = malloc(8192);
	snprintf(out, 8192,
		 "{\"format\":\"%s\",\"key\":\"" KEY "\",\"facts\":%s,\"plan\":\"{\\\"format\\\":\\\"jig-plan/1\\\"}\","
		 "\"plan_sha256\":\"%s\",\"scopes\":%s%s}",
		 fmt_field, facts, hex, scopes, extra);
	return out;
}

static bool parses(const char *txt)
{
	json_t *doc = jig_memo_parse(txt, strlen(txt));
	json_decref(doc);
	return doc != NULL;
}

static void test_good_memo_parses(void **state)
{
	(void)state;
	char *m = memo(JIG_MEMO_FORMAT, "[{\"stat\":\"/x\",\"errno\":2}]", "[" SCOPE "]", "");
	assert_true(parses(m));
	/* Every proper prefix (a truncated file) is refused. */
	for (size_t n = 0; n < strlen(m); n++) {
		json_t *doc = jig_memo_parse(m, n);
		assert_null(doc);
	}
	free(m);
}

static void test_bad_memos_refused(void **state)
{
	(void)state;
	const char *bad[][4] = {
		{"jig-admission-memo/2", "[]", "[" SCOPE "]", ""},	       /* another format */
		{JIG_MEMO_FORMAT, "[]", "[" SCOPE "]", ",\"more\":1"},	       /* an extra key */
		{JIG_MEMO_FORMAT, "{}", "[" SCOPE "]", ""},		       /* facts not a list */
		{JIG_MEMO_FORMAT, "[1]", "[" SCOPE "]", ""},		       /* a fact not an object */
		{JIG_MEMO_FORMAT, "[]", "[]", ""},			       /* no scope */
		{JIG_MEMO_FORMAT, "[]", "[{\"flow\":\"a\"}]", ""},	       /* a scope missing keys */
		{JIG_MEMO_FORMAT, "[]", "[{\"flow\":\"a\",\"route\":null,\"policy\":\"{}\",\"argv\":[1],\"hold\":null}]", ""},
		{JIG_MEMO_FORMAT, "[]", "[{\"flow\":\"a\",\"route\":null,\"policy\":\"{}\",\"argv\":[],\"hold\":null}]", ""},
		{JIG_MEMO_FORMAT, "[]", "[{\"flow\":\"a\",\"route\":7,\"policy\":\"{}\",\"argv\":[\"x\"],\"hold\":null}]", ""},
		{JIG_MEMO_FORMAT, "[]", "[{\"flow\":\"a\",\"route\":null,\"policy\":\"{}\",\"argv\":[\"x\"],\"hold\":null,\"z\":1}]", ""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *m = memo(bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
		if (parses(m))
			fail_msg("accepted bad memo %zu: %s", i, m);
		free(m);
	}
	/* A Plan text that is not its digest's, a key that is not hex, a
	 * duplicate key, trailing bytes, over the cap. */
	char *m = memo(JIG_MEMO_FORMAT, "[]", "[" SCOPE "]", "");
	char *p = strstr(m, "jig-plan/1");
	p[4] = 'X';
	assert_false(parses(m));
	free(m);
	m = memo(JIG_MEMO_FORMAT, "[]", "[" SCOPE "]", "");
	strstr(m, KEY)[0] = 'g';
	assert_false(parses(m));
	free(m);
	m = memo(JIG_MEMO_FORMAT, "[]", "[" SCOPE "]", ",\"key\":\"" KEY "\"");
	assert_false(parses(m));
	free(m);
	m = memo(JIG_MEMO_FORMAT, "[]", "[" SCOPE "]", "");
	strcat(m, " {}");
	assert_false(parses(m));
	assert_null(jig_memo_parse(m, (size_t)JIG_MEMO_MAX_BYTES + 1));
	free(m);
}

static void test_stat_fact(void **state)
{
	(void)state;
	char dir[] = "/tmp/jig-memo-test.XXXXXX", path[128];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	FILE *f = fopen(path, "w");
	fputs("one", f);
	fclose(f);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	json_t *fact = jig_host_fact_stat(path, &st, 0);
	assert_true(jig_host_fact_holds(fact));
	f = fopen(path, "a"); /* its bytes change: size, mtime, ctime */
	fputs("two", f);
	fclose(f);
	assert_false(jig_host_fact_holds(fact));
	json_decref(fact);
	assert_int_equal(stat(path, &st), 0);
	fact = jig_host_fact_stat(path, &st, 0);
	assert_true(jig_host_fact_holds(fact));
	unlink(path); /* gone */
	assert_false(jig_host_fact_holds(fact));
	json_decref(fact);
	fact = jig_host_fact_stat(path, NULL, 2); /* absent, as noted */
	assert_true(jig_host_fact_holds(fact));
	json_decref(fact);
	rmdir(dir);
}

static void test_realpath_fact(void **state)
{
	(void)state;
	char dir[] = "/tmp/jig-memo-test.XXXXXX", link[128], a[128], b[128], real[4096];
	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/l", dir);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	assert_int_equal(symlink("a", link), 0);
	assert_non_null(realpath(link, real));
	json_t *fact = jig_host_fact_realpath(link, real, 0);
	assert_true(jig_host_fact_holds(fact));
	unlink(link); /* repointed */
	assert_int_equal(symlink("b", link), 0);
	assert_false(jig_host_fact_holds(fact));
	json_decref(fact);
	unlink(link);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
}

static void test_malformed_facts_never_hold(void **state)
{
	(void)state;
	const char *bad[] = {"{}", "{\"stat\":\"rel/path\",\"errno\":2}", "{\"stat\":7}", "[]", "{\"realpath\":\"\"}",
			     "{\"stat\":\"/\",\"errno\":2}", "{\"other\":\"/\"}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *v = json_loads(bad[i], JSON_DECODE_ANY, NULL);
		assert_non_null(v);
		assert_false(jig_host_fact_holds(v));
		json_decref(v);
	}
}

static void test_note_once(void **state)
{
	(void)state;
	json_t *noted = json_array();
	jig_host_fact_note(noted, jig_host_fact_stat("/nonexistent-x", NULL, 2));
	jig_host_fact_note(noted, jig_host_fact_stat("/nonexistent-x", NULL, 2));
	jig_host_fact_note(noted, jig_host_fact_realpath("/nonexistent-x", NULL, 2));
	jig_host_fact_note(NULL, jig_host_fact_stat("/nonexistent-x", NULL, 2)); /* not noting: consumed */
	assert_int_equal(json_array_size(noted), 2);
	json_decref(noted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_memo_parses),    cmocka_unit_test(test_bad_memos_refused),
		cmocka_unit_test(test_stat_fact),	    cmocka_unit_test(test_realpath_fact),
		cmocka_unit_test(test_malformed_facts_never_hold), cmocka_unit_test(test_note_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
