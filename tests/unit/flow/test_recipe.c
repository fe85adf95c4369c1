/* A Markdown recipe's front matter (issue 20; host/flow/recipe.c): where
 * it ends, what libyaml's events may be, what comes back (R-M02). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow/recipe.h"

static json_t *parse(const char *text, size_t *body, int want)
{
	json_t *fm = NULL;
	struct jig_error e = {0};
	assert_int_equal(jig_recipe_front_matter(text, strlen(text), "r.md", &fm, body, &e), want);
	if (want)
		assert_non_null(strstr(e.msg, "r.md: "));
	return fm;
}

static void accepts(void **state)
{
	(void)state;
	size_t body = 0;
	const char *t = "---\nname: x\noutputs: [a.md, 'b c']\nallowed-tools: \"Bash, Read\"\n---\n# Steps\n";
	json_t *fm = parse(t, &body, 0);
	assert_string_equal(json_string_value(json_object_get(fm, "name")), "x");
	assert_string_equal(json_string_value(json_array_get(json_object_get(fm, "outputs"), 1)), "b c");
	assert_string_equal(json_string_value(json_object_get(fm, "allowed-tools")), "Bash, Read");
	assert_string_equal(t + body, "# Steps\n");
	json_decref(fm);
	/* Block lists, and a closing fence at the very end (no body). */
	fm = parse("---\ninputs:\n  - notes\n  - more\n---", &body, 0);
	assert_int_equal(json_array_size(json_object_get(fm, "inputs")), 2);
	assert_int_equal(body, strlen("---\ninputs:\n  - notes\n  - more\n---"));
	json_decref(fm);
	/* YAML 1.1 scalars stay text: libyaml does not type them. */
	fm = parse("---\nname: yes\n---\n", &body, 0);
	assert_string_equal(json_string_value(json_object_get(fm, "name")), "yes");
	json_decref(fm);
	/* "---" inside the body is the body's. */
	fm = parse("---\nname: x\n---\nsee\n---\nmore\n", &body, 0);
	assert_int_equal(json_object_size(fm), 1);
	json_decref(fm);
}

static void rejects(void **state)
{
	(void)state;
	size_t body = 0;
	static const char *const bad[] = {
		"", "# no front matter\n", "--- \nname: x\n---\n", "---\nname: x\n", "---\nname: x\n----\n",
		"---\n---\n", "---\n- a\n---\n", "---\nplain\n---\n", "---\nname: {a: b}\n---\n",
		"---\nname: [a, [b]]\n---\n", "---\nname: &a x\nother: *a\n---\n", "---\nname: !!str x\n---\n",
		"---\nname: x\nname: y\n---\n", "---\nname: [a\n---\n", "---\nname: x\n...\nother: y\n---\n",
		"---\n? [a, b]\n: c\n---\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_null(parse(bad[i], &body, -JIG_E_USAGE));
	/* A NUL byte anywhere. */
	json_t *fm = NULL;
	struct jig_error e = {0};
	assert_int_equal(jig_recipe_front_matter("---\nname: x\n---\na\0b", 19, "r.md", &fm, &body, &e), -JIG_E_USAGE);
	assert_non_null(strstr(e.msg, "NUL"));
	assert_null(parse("---\nname: x\n---\n\xff\xfe\n", &body, -JIG_E_USAGE));
	/* A front matter longer than its cap. */
	static char big[JIG_RECIPE_FRONT_MAX + 64];
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "---\nname: ", 10);
	memcpy(big + sizeof(big) - 7, "\n---\n", 6);
	assert_null(parse(big, &body, -JIG_E_USAGE));
	assert_true(jig_recipe_is("a/recipe.md") && !jig_recipe_is(".md") && !jig_recipe_is("main.ts") && !jig_recipe_is("x.md.ts"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(accepts), cmocka_unit_test(rejects)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
