/* Plan differences (flow/plan_diff.c) over hand-made Plans: a changed
 * route cap, an added Flow, a changed snapshot, API-backed Agent routes
 * with no provider identity (never "(null)"), and jig run's stale-Plan
 * refusal naming the run's Flow and its change (must-show 5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow/plan_diff.h"

static json_t *parse(const char *txt)
{
	json_error_t je;
	json_t *v = json_loads(txt, 0, &je);
	if (!v)
		fprintf(stderr, "bad test JSON: %s\n", je.text);
	assert_non_null(v);
	return v;
}

#define SNAP(id) "\"snapshot\":{\"id\":\"" id "\",\"launch_identity\":\"x\"}"
#define API_AGENT "{\"route\":\"summarise\",\"api\":\"openai-chat\",\"http\":\"llm\",\"max_prompt_bytes\":1000}"
#define HTTP(cap) "{\"route\":\"llm\",\"method\":\"POST\",\"url\":\"https://x/\",\"max_request_bytes\":" #cap "}"

static const char *texts(json_t *c, char *buf, size_t cap)
{
	buf[0] = '\0';
	size_t i;
	json_t *v;
	json_array_foreach(c, i, v) {
		size_t l = strlen(buf);
		snprintf(buf + l, cap - l, "%s\n", json_string_value(json_object_get(v, "text")));
	}
	return buf;
}

static void one_flow_changed(void **state)
{
	(void)state;
	struct jig_project p = {.rootfd = -1, .statefd = -1};
	json_t *was = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"summarise\",\"agents\":[" API_AGENT "],\"http\":[" HTTP(1000) "]},"
			    "{\"name\":\"other\",\"agents\":[" API_AGENT "],\"http\":[" HTTP(1000) "],\"outputs\":[\"a.md\"]}]}");
	json_t *now = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"summarise\",\"agents\":[" API_AGENT "],\"http\":[" HTTP(1000) "]},"
			    "{\"name\":\"other\",\"agents\":[" API_AGENT "],\"http\":[" HTTP(2000) "],\"outputs\":[\"a.md\",\"b.md\"]},"
			    "{\"name\":\"new\"}]}");
	json_t *c = jig_plan_diff(&p, was, now, true);
	char buf[4096];
	texts(c, buf, sizeof(buf));
	fprintf(stderr, "%s", buf);
	/* Only the changed Flows; the unchanged one (with an API-backed
	 * route, no identity) not at all. */
	assert_null(strstr(buf, "summarise"));
	assert_null(strstr(buf, "(null)"));
	assert_non_null(strstr(buf, "flow other: http route llm max_request_bytes changed (1000 -> 2000)\n"));
	assert_non_null(strstr(buf, "flow other: outputs \"b.md\" added\n"));
	assert_non_null(strstr(buf, "flow new added"));
	assert_int_equal(json_array_size(c), 3);
	/* The refusal of jig run summarise names the Flow that changed. */
	struct jig_error e = {0};
	assert_true(jig_plan_stale(c, "summarise", "aaaa", "bbbb", &e) < 0);
	assert_int_equal(e.code, JIG_E_INTEGRITY);
	assert_null(strstr(e.msg, "(null)"));
	assert_non_null(strstr(e.msg, "flow other: http route llm max_request_bytes changed since review (1000 -> 2000)"));
	assert_non_null(strstr(e.msg, "not only summarise"));
	assert_non_null(strstr(e.msg, "2 more change(s)"));
	assert_non_null(strstr(e.msg, "review again"));
	/* jig run other: its own change first, without the aside. */
	assert_true(jig_plan_stale(c, "other", "aaaa", "bbbb", &e) < 0);
	assert_non_null(strstr(e.msg, "flow other: "));
	assert_null(strstr(e.msg, "not only"));
	json_decref(c);
	json_decref(was);
	json_decref(now);
}

static void snapshot_changed(void **state)
{
	(void)state;
	struct jig_project p = {.rootfd = -1, .statefd = -1};
	json_t *was = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"f\"}]}"), *now = parse("{" SNAP("s2") ",\"flows\":[{\"name\":\"f\"}]}");
	json_t *c = jig_plan_diff(&p, was, now, true);
	assert_int_equal(json_array_size(c), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "change")), "snapshot");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "text")), "the installed snapshot changed (id \"s1\" -> \"s2\")");
	struct jig_error e = {0};
	assert_true(jig_plan_stale(c, "f", "a", "b", &e) < 0);
	assert_non_null(strstr(e.msg, "the installed snapshot changed since review (id \"s1\" -> \"s2\"); nothing was run"));
	json_decref(c);
	/* The scopes' snapshot paths follow from the snapshot: said once. */
	json_t *was2 = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"f\",\"scope\":{\"policy_sha256\":\"a\"},\"outputs\":[]}]}");
	json_t *now2 = parse("{" SNAP("s2") ",\"flows\":[{\"name\":\"f\",\"scope\":{\"policy_sha256\":\"b\"},\"outputs\":[\"o\"]}]}");
	c = jig_plan_diff(&p, was2, now2, true);
	assert_int_equal(json_array_size(c), 2);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(c, 0), "text")), "policy digest changed too (1)"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "text")), "flow f: outputs \"o\" added");
	json_decref(c);
	json_decref(was2);
	json_decref(now2);
	/* Identical Plans: no change; a stale refusal without changes still
	 * says review again. */
	c = jig_plan_diff(&p, was, was, true);
	assert_int_equal(json_array_size(c), 0);
	assert_true(jig_plan_stale(c, "f", "a", "b", &e) < 0);
	assert_non_null(strstr(e.msg, "review again"));
	json_decref(c);
	json_decref(was);
	json_decref(now);
}

/* Issue 47's mutants plan_diff.*: a key a Flow gains or loses is printed,
 * and without a new snapshot a scope's own change is printed too (only a
 * new snapshot's consequences are folded into its line). */
static void keys_and_scopes_printed(void **state)
{
	(void)state;
	struct jig_project p = {.rootfd = -1, .statefd = -1};
	json_t *was = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"f\",\"timeout_ms\":30000,\"outputs\":[],\"scope\":{\"policy_sha256\":\"a\"}}]}");
	json_t *now = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"f\",\"checkpoint\":true,\"outputs\":[\"o\"],\"scope\":{\"policy_sha256\":\"b\"}}]}");
	json_t *c = jig_plan_diff(&p, was, now, true);
	char buf[4096];
	texts(c, buf, sizeof(buf));
	fprintf(stderr, "%s", buf);
	assert_non_null(strstr(buf, "flow f: checkpoint added (true)\n"));
	assert_non_null(strstr(buf, "flow f: timeout_ms removed\n"));
	assert_non_null(strstr(buf, "flow f: outputs \"o\" added\n"));
	assert_non_null(strstr(buf, "flow f: scope policy_sha256 changed"));
	assert_int_equal(json_array_size(c), 4);
	json_decref(c);
	json_decref(was);
	json_decref(now);
	/* Inside a grant: a key gained and a key lost, each printed. */
	was = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"f\",\"http\":[{\"route\":\"llm\",\"method\":\"POST\",\"url\":\"https://x/\",\"deadline_ms\":1000}]}]}");
	now = parse("{" SNAP("s1") ",\"flows\":[{\"name\":\"f\",\"http\":[{\"route\":\"llm\",\"method\":\"POST\",\"url\":\"https://x/\",\"body_schema\":{\"type\":\"object\"}}]}]}");
	c = jig_plan_diff(&p, was, now, true);
	texts(c, buf, sizeof(buf));
	fprintf(stderr, "%s", buf);
	assert_non_null(strstr(buf, "http route llm body_schema added"));
	assert_non_null(strstr(buf, "http route llm deadline_ms removed"));
	assert_int_equal(json_array_size(c), 2);
	json_decref(c);
	json_decref(was);
	json_decref(now);
}

static void capped_per_flow(void **state)
{
	(void)state;
	struct jig_project p = {.rootfd = -1, .statefd = -1};
	json_t *was = parse("{\"flows\":[{\"name\":\"f\",\"outputs\":[]}]}"), *now = parse("{\"flows\":[{\"name\":\"f\",\"outputs\":[]}]}");
	json_t *outs = json_object_get(json_array_get(json_object_get(now, "flows"), 0), "outputs");
	for (int i = 0; i < 20; i++) {
		char n[16];
		snprintf(n, sizeof(n), "o%d", i);
		json_array_append_new(outs, json_string(n));
	}
	json_t *c = jig_plan_diff(&p, was, now, true);
	assert_int_equal(json_array_size(c), JIG_PLAN_DIFF_MAX_PER_FLOW + 1);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(c, JIG_PLAN_DIFF_MAX_PER_FLOW), "text")),
			       "8 more difference(s)"));
	json_decref(c);
	json_decref(was);
	json_decref(now);
}

/* Issue 44: a launch identity that changed with the same snapshot is
 * named by the grant that brought a module, never "the installed
 * snapshot changed". */
static void launch_set_named(void **state)
{
	(void)state;
	struct jig_project p = {.rootfd = -1, .statefd = -1};
	json_t *was = parse("{\"snapshot\":{\"id\":\"s1\",\"manifest_sha256\":\"m\",\"launch_identity\":\"x\"},\"flows\":[{\"name\":\"f\"}]}");
	json_t *now = parse("{\"snapshot\":{\"id\":\"s1\",\"manifest_sha256\":\"m\",\"launch_identity\":\"y\"},\"flows\":[{\"name\":\"f\"},"
			    "{\"name\":\"web\",\"http\":[" HTTP(1) "]}]}");
	json_t *c = jig_plan_diff(&p, was, now, true);
	char buf[4096];
	texts(c, buf, sizeof(buf));
	fprintf(stderr, "%s", buf);
	assert_null(strstr(buf, "installed snapshot changed"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "change")), "launch-set");
	assert_non_null(strstr(buf, "the launch set changed: the HTTP module and worker added (flow web has an HTTP route); "
				    "launch identity \"x\" -> \"y\", the installed snapshot is the same\n"));
	json_decref(c);
	/* And back: the module removed with the last such grant. */
	c = jig_plan_diff(&p, now, was, true);
	texts(c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "the HTTP module and worker removed (no Flow has an HTTP route now)"));
	json_decref(c);
	/* Another manifest is another snapshot. */
	json_object_set_new(json_object_get(now, "snapshot"), "manifest_sha256", json_string("n"));
	c = jig_plan_diff(&p, was, now, true);
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "text")),
			    "the installed snapshot changed (manifest \"m\" -> \"n\")");
	json_decref(c);
	json_decref(was);
	json_decref(now);
}

/* Issue 44: jig run prepares no dependencies, so a changed package has
 * none in its Plan: no "-> nothing" line review never showed. A part one
 * Plan lacks is "added" or "removed", never "-> nothing". */
#define A64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B64 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
static void run_lists_no_unprepared_dependencies(void **state)
{
	(void)state;
	struct jig_project p = {.rootfd = -1, .statefd = -1};
	json_t *was = parse("{\"flows\":[{\"name\":\"f\",\"package\":{\"sha256\":\"" A64 "\"},\"dependencies\":{\"tree\":\"t\"}}]}");
	json_t *now = parse("{\"flows\":[{\"name\":\"f\",\"package\":{\"sha256\":\"" B64 "\"}}]}");
	char buf[4096];
	json_t *c = jig_plan_diff(&p, was, now, false);
	texts(c, buf, sizeof(buf));
	fprintf(stderr, "%s", buf);
	assert_null(strstr(buf, "dependencies"));
	assert_null(strstr(buf, "-> nothing"));
	assert_non_null(strstr(buf, "flow f: package changed (aaaaaaaaaaaa -> bbbbbbbbbbbb;"));
	json_decref(c);
	/* At review (prepared), the Flow truly has none now: removed. */
	c = jig_plan_diff(&p, was, now, true);
	texts(c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "flow f: dependencies removed\n"));
	assert_null(strstr(buf, "-> nothing"));
	json_decref(c);
	/* The same package without its dependencies at run: said as removed
	 * (its preparation is gone), not "-> nothing". */
	json_object_set_new(json_array_get(json_object_get(now, "flows"), 0), "package", json_pack("{s:s}", "sha256", A64));
	c = jig_plan_diff(&p, was, now, false);
	texts(c, buf, sizeof(buf));
	assert_string_equal(buf, "flow f: dependencies removed\n");
	json_decref(c);
	c = jig_plan_diff(&p, now, was, true);
	texts(c, buf, sizeof(buf));
	assert_string_equal(buf, "flow f: dependencies added ({\"tree\":\"t\"})\n");
	json_decref(c);
	json_decref(was);
	json_decref(now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(one_flow_changed), cmocka_unit_test(snapshot_changed),
					   cmocka_unit_test(capped_per_flow), cmocka_unit_test(launch_set_named),
					   cmocka_unit_test(run_lists_no_unprepared_dependencies), cmocka_unit_test(keys_and_scopes_printed)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
