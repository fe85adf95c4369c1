/* jig why's explanation table (run/why.c) over hand-made records and
 * last-Run entries: one record per failure kind the issue names (must-show
 * 4: a memory kill, a tasks limit, a deadline, an oversized output, an
 * undeclared output, an ungranted HTTP route, a Run/0 cap, a changed
 * snapshot, a changed Flow file), each with its cause and remedy; text
 * from the record printed inert. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run/why.h"

static json_t *parse(const char *txt)
{
	json_error_t je;
	json_t *v = json_loads(txt, 0, &je);
	if (!v)
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, txt);
	assert_non_null(v);
	return v;
}

/* The one explanation of doc: its kind, and cause and remedy containing
 * the given words. */
static void expect(const char *doc_text, const char *kind, const char *cause, const char *remedy, bool forbids)
{
	json_t *doc = parse(doc_text);
	json_t *ex = jig_why_explain(doc);
	assert_non_null(ex);
	if (json_array_size(ex) != 1) {
		char *d = json_dumps(ex, JSON_INDENT(1));
		fprintf(stderr, "explanations: %s\n", d);
		free(d);
	}
	assert_int_equal(json_array_size(ex), 1);
	json_t *x = json_array_get(ex, 0);
	assert_string_equal(json_string_value(json_object_get(x, "kind")), kind);
	const char *c = json_string_value(json_object_get(x, "cause")), *r = json_string_value(json_object_get(x, "remedy"));
	if (!strstr(c, cause) || !strstr(r, remedy))
		fprintf(stderr, "cause: %s\nremedy: %s\n", c, r);
	assert_non_null(strstr(c, cause));
	assert_non_null(strstr(r, remedy));
	assert_int_equal(json_is_true(json_object_get(x, "contract_forbids")), forbids);
	json_decref(ex);
	json_decref(doc);
}

#define REC(status, error, term, extra)                                                                                          \
	"{\"format\":\"jig-run-record/1\",\"flow\":\"f\",\"status\":\"" status "\",\"error\":\"" error "\",\"timeout_ms\":30000," \
	"\"outputs\":[],\"termination\":" term ",\"scope\":{\"policy\":{\"limits\":{\"memory_bytes\":268435456,\"tasks\":64,"     \
	"\"cpu_quota_us\":100000}}}" extra "}"
#define TERM(oom, pids, sig, outcome) \
	"{\"outcome\":\"" outcome "\",\"oom_kills\":" #oom ",\"pids_max_hits\":" #pids ",\"signal\":" #sig ",\"memory_peak_bytes\":268435456,\"cpu_usec\":900000,\"wall_ms\":1000}"

static void memory_kill(void **state)
{
	(void)state;
	expect(REC("failed", "the Flow was killed by signal 9", TERM(1, 0, 9, "oom"), ""), "memory",
	       "ran out of memory: the kernel killed it 1 time(s) at its scope's limit of 256 MiB", "no flow.json or command flag raises it",
	       true);
}

static void tasks_limit(void **state)
{
	(void)state;
	expect(REC("failed", "the Flow failed: spawn EAGAIN", TERM(0, 3, 0, "exited"), ""), "tasks",
	       "more processes or threads than its scope's limit of 64 tasks (3 refused)", "start fewer processes", true);
}

static void deadline(void **state)
{
	(void)state;
	expect(REC("timeout", "the Run passed its 30000 ms deadline", TERM(0, 0, 0, "timeout"), ""), "deadline",
	       "passed its deadline of 30000 ms", "jig run f --timeout N", false);
	/* CPU-bound: 900 ms of CPU in 1000 ms of one CPU. */
	expect(REC("timeout", "", TERM(0, 0, 0, "timeout"), ""), "deadline", "so it was CPU-bound", "cannot be raised", false);
}

#define REFUSED(error, changes) \
	"{\"format\":\"jig-last-run/1\",\"flow\":\"f\",\"at_ms\":1,\"refusal\":{\"error\":\"" error "\",\"exit_status\":2" changes "}}"

static void oversized_output(void **state)
{
	(void)state;
	expect(REFUSED("output refused, nothing published: output: more than 16777216 bytes", ""), "output-cap",
	       "its output passed a packet's caps (output refused, nothing published: output: more than 16777216 bytes)",
	       "a packet holds at most 16 MiB, 64 files and 256 entries", true);
}

static void undeclared_output(void **state)
{
	(void)state;
	expect(REFUSED("output refused, nothing published: output extra.txt: is not a declared output of the Flow", ""),
	       "output-undeclared", "wrote a file its flow.json does not declare", "add the path to \"outputs\"", false);
}

static void ungranted_http(void **state)
{
	(void)state;
	expect(REC("succeeded", "", TERM(0, 0, 0, "exited"),
		   ",\"effects\":[{\"route\":\"leak\",\"outcome\":\"refused\",\"error\":\"flow f has no reviewed http route \\\"leak\\\"\"}]"),
	       "http-ungranted", "asked for the HTTP route \"leak\", which its flow.json does not grant",
	       "add the route to \"http\" in its flow.json and review again", false);
}

static void run0_cap(void **state)
{
	(void)state;
	expect(REC("failed", "Run/0: more than 64 http requests", TERM(0, 0, 0, "exited"), ""), "run0-cap",
	       "passed a cap on what a Run may ask of jig (Run/0: more than 64 http requests)", "64 HTTP requests", true);
	expect(REC("failed", "Run/0: invalid JSON", TERM(0, 0, 0, "exited"), ""), "run0-protocol", "sent jig something it does not accept",
	       "only through the jig API", true);
}

static void changed_snapshot(void **state)
{
	(void)state;
	expect(REFUSED("the installed snapshot changed since review",
		       ",\"changes\":[{\"change\":\"snapshot\",\"subject\":\"the installed snapshot\",\"detail\":\" (id a -> b)\","
		       "\"text\":\"the installed snapshot changed (id a -> b)\"}]"),
	       "snapshot-changed", "the installed snapshot changed since review: the installed snapshot changed (id a -> b)",
	       "review the project against the new snapshot (jig review)", false);
}

static void changed_flow_file(void **state)
{
	(void)state;
	expect(REFUSED("flow f: main.ts changed since review",
		       ",\"changes\":[{\"flow\":\"f\",\"change\":\"file-changed\",\"subject\":\"main.ts\",\"detail\":\" (1 -> 2 bytes)\","
		       "\"text\":\"flow f: main.ts changed (1 -> 2 bytes)\"}]"),
	       "flow-changed", "the project changed since review: flow f: main.ts changed (1 -> 2 bytes)", "jig review", false);
}

static void child_and_success(void **state)
{
	(void)state;
	/* A child that ran out of memory under a root that failed for it. */
	json_t *doc = parse(REC("succeeded", "", TERM(0, 0, 0, "exited"),
				",\"children\":[{\"id\":\"1\",\"flow\":\"c\",\"binding\":\"b\",\"status\":\"failed\",\"why\":\"killed\","
				"\"termination\":{\"oom_kills\":2},\"children\":[]}]"));
	json_t *ex = jig_why_explain(doc);
	assert_int_equal(json_array_size(ex), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ex, 0), "kind")), "memory");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ex, 0), "where")), "child Flow c (binding b)"));
	json_decref(ex);
	json_decref(doc);
	/* Nothing failed: nothing to explain, and the text says so. */
	doc = parse(REC("succeeded", "", TERM(0, 0, 0, "exited"), ""));
	json_t *w = jig_why_doc(doc, "packet");
	assert_int_equal(json_array_size(json_object_get(w, "explanations")), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jig_why_print(f, w);
	fclose(f);
	assert_non_null(strstr(buf, "nothing was refused and nothing failed"));
	free(buf);
	json_decref(w);
	json_decref(doc);
}

static void printed_inert(void **state)
{
	(void)state;
	json_t *doc = parse(REC("failed", "the Flow failed: \\u001b[31mred\\u0007", TERM(0, 0, 0, "exited"), ""));
	json_t *w = jig_why_doc(doc, "packet");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jig_why_print(f, w);
	fclose(f);
	assert_null(strchr(buf, '\033'));
	assert_null(strchr(buf, '\a'));
	assert_non_null(strstr(buf, "flow-error"));
	free(buf);
	json_decref(w);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(memory_kill),	cmocka_unit_test(tasks_limit),
					   cmocka_unit_test(deadline),		cmocka_unit_test(oversized_output),
					   cmocka_unit_test(undeclared_output), cmocka_unit_test(ungranted_http),
					   cmocka_unit_test(run0_cap),		cmocka_unit_test(changed_snapshot),
					   cmocka_unit_test(changed_flow_file), cmocka_unit_test(child_and_success),
					   cmocka_unit_test(printed_inert)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
