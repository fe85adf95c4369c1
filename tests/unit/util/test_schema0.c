/* Schema/0 (issue 6): the subset is checked strictly, bodies are validated
 * with a path to the first violation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/schema0.h"

static json_t *J(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
	assert_non_null(v);
	return v;
}

static void schema_ok(const char *text)
{
	json_t *s = J(text);
	struct jig_error e = {0};
	assert_int_equal(jig_schema0_check(s, &e), 0);
	json_decref(s);
}

static void schema_bad(const char *text, const char *needle)
{
	json_t *s = J(text);
	struct jig_error e = {0};
	assert_int_equal(jig_schema0_check(s, &e), -JIG_E_USAGE);
	assert_non_null(strstr(e.msg, needle));
	json_decref(s);
}

static void checks_schemas(void **state)
{
	(void)state;
	schema_ok("{}");
	schema_ok("{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{\"a\":{\"type\":\"string\",\"maxLength\":3}},\"additionalProperties\":false}");
	schema_ok("{\"type\":[\"string\",\"null\"],\"enum\":[\"x\",null]}");
	schema_ok("{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":-5,\"maximum\":5},\"minItems\":1,\"maxItems\":3}");
	schema_bad("{\"pattern\":\"^a\"}", "unknown keyword \"pattern\"");
	schema_bad("{\"$ref\":\"#\"}", "unknown keyword");
	schema_bad("{\"type\":\"float\"}", "\"type\"");
	schema_bad("{\"type\":[]}", "\"type\"");
	schema_bad("{\"required\":\"a\"}", "\"required\"");
	schema_bad("{\"additionalProperties\":{}}", "true or false");
	schema_bad("{\"enum\":[]}", "non-empty");
	schema_bad("{\"enum\":[{}]}", "scalars");
	schema_bad("{\"maxLength\":-1}", "non-negative");
	schema_bad("{\"maxLength\":1.5}", "non-negative");
	schema_bad("{\"minimum\":0.5}", "integers");
	schema_bad("[]", "JSON object");
	schema_bad("{\"properties\":{\"a\":{\"bogus\":1}}}", "/properties/a");
	/* 17 levels of items */
	char deep[1024] = "";
	for (int i = 0; i < 18; i++)
		strcat(deep, "{\"items\":");
	strcat(deep, "{}");
	for (int i = 0; i < 18; i++)
		strcat(deep, "}");
	schema_bad(deep, "deeper than 16");
}

static void valid(const char *schema, const char *value)
{
	json_t *s = J(schema), *v = J(value);
	struct jig_error e = {0};
	assert_int_equal(jig_schema0_check(s, &e), 0);
	assert_int_equal(jig_schema0_validate(s, v, &e), 0);
	json_decref(s);
	json_decref(v);
}

static void invalid(const char *schema, const char *value, const char *needle)
{
	json_t *s = J(schema), *v = J(value);
	struct jig_error e = {0};
	assert_int_equal(jig_schema0_check(s, &e), 0);
	assert_int_equal(jig_schema0_validate(s, v, &e), -JIG_E_USAGE);
	assert_non_null(strstr(e.msg, needle));
	json_decref(s);
	json_decref(v);
}

static void validates_bodies(void **state)
{
	(void)state;
	const char *obj = "{\"type\":\"object\",\"required\":[\"q\"],\"additionalProperties\":false,"
			  "\"properties\":{\"q\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4},"
			  "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
			  "\"tags\":{\"type\":\"array\",\"maxItems\":2,\"items\":{\"enum\":[\"a\",\"b\"]}}}}";
	valid(obj, "{\"q\":\"abc\"}");
	valid(obj, "{\"q\":\"\xc3\xa9t\xc3\xa9!\",\"n\":10,\"tags\":[\"a\",\"b\"]}"); /* 4 characters, 6 bytes */
	invalid(obj, "{}", "missing required \"q\"");
	invalid(obj, "{\"q\":\"abcde\"}", "\"/q\": string length");
	invalid(obj, "{\"q\":\"\"}", "string length");
	invalid(obj, "{\"q\":\"a\",\"n\":11}", "\"/n\": integer out of range");
	invalid(obj, "{\"q\":\"a\",\"n\":1.0}", "\"/n\": wrong type");
	invalid(obj, "{\"q\":\"a\",\"tags\":[\"a\",\"c\"]}", "\"/tags/1\": not one of");
	invalid(obj, "{\"q\":\"a\",\"tags\":[\"a\",\"b\",\"a\"]}", "number of items");
	invalid(obj, "{\"q\":\"a\",\"x\":1}", "\"/x\": property not allowed");
	invalid(obj, "[]", "wrong type");
	valid("{\"type\":\"number\"}", "1.5");
	valid("{\"type\":\"number\"}", "2");
	invalid("{\"type\":\"null\"}", "false", "wrong type");
	valid("{}", "{\"anything\":[1,{\"x\":null}]}");
}

/* Issue 46, decision 299: minimum and maximum bound every number, not
 * only integers (a fraction or an exponent used to pass any bound), and
 * the edge is where docs/schema0.md says: an integer is compared exactly;
 * any other number as the double its text reads as, compared with the
 * bound without rounding, so a text within half an ulp of a bound reads
 * as the bound (accepted at it). */
static void number_bounds(void **state)
{
	(void)state;
	const char *amount = "{\"type\":\"number\",\"minimum\":-100,\"maximum\":100}";
	valid(amount, "100");
	valid(amount, "100.0");
	valid(amount, "1e2");
	valid(amount, "-100.0");
	valid(amount, "99.99999999999999"); /* below: its double is below 100 */
	invalid(amount, "100.5", "\"/\": number out of range");
	invalid(amount, "100.00000000000001", "number out of range"); /* the next double above 100 */
	invalid(amount, "-100.5", "number out of range");
	invalid(amount, "1e21", "number out of range");
	invalid(amount, "-1e300", "number out of range");
	invalid(amount, "101", "integer out of range");
	/* the edge: within half an ulp of 100 (7.1e-15) the text reads as 100 */
	valid(amount, "100.000000000000001");
	valid(amount, "-100.000000000000001");
	/* an integer bound past 2^53 against a double: no rounding of the bound */
	const char *big = "{\"maximum\":9007199254740993}"; /* 2^53 + 1 */
	valid(big, "9007199254740993");
	invalid(big, "9007199254740994", "integer out of range");
	valid(big, "9007199254740992.0"); /* 2^53, a double below the bound */
	invalid(big, "9007199254740994.0", "number out of range");
	valid("{\"maximum\":9223372036854775807}", "9.2e18");
	invalid("{\"maximum\":9223372036854775807}", "9.3e18", "number out of range");
	valid("{\"minimum\":-9223372036854775807}", "-9.2e18");
	invalid("{\"minimum\":0}", "-0.000001", "number out of range");
	valid("{\"minimum\":0}", "-0.0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(checks_schemas), cmocka_unit_test(validates_bodies),
					   cmocka_unit_test(number_bounds)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
