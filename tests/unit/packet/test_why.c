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

#include "packet/why.h"

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
	json_t *ex = jig_why_explain(doc, NULL);
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
	expect(REFUSED("output refused, no file published: output: more than 16777216 bytes", ""), "output-cap",
	       "its output passed a packet's caps (output refused, no file published: output: more than 16777216 bytes)",
	       "a packet holds at most 16 MiB, 64 files and 256 entries", true);
}

static void undeclared_output(void **state)
{
	(void)state;
	expect(REFUSED("output refused, no file published: output extra.txt: is not a declared output of the Flow", ""),
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
	json_t *ex = jig_why_explain(doc, NULL);
	assert_int_equal(json_array_size(ex), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ex, 0), "kind")), "memory");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ex, 0), "where")), "child Flow c (binding b)"));
	json_decref(ex);
	json_decref(doc);
	/* Nothing failed: nothing to explain, and the text says so. */
	doc = parse(REC("succeeded", "", TERM(0, 0, 0, "exited"), ""));
	json_t *w = jig_why_doc(doc, "packet", "pkt");
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
	json_t *w = jig_why_doc(doc, "packet", "pkt");
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

/* Issue 46: one headline per outcome, from the table's first row (the
 * cause of the Run's end before the Flow's own error that followed it). */
static void headline_is(const char *doc_text, const char *packet, const char *want, const char *first_kind)
{
	json_t *doc = parse(doc_text);
	char head[1024];
	jig_why_headline(doc, packet, head, sizeof(head));
	if (strcmp(head, want) != 0)
		fprintf(stderr, "headline: %s\nwanted:   %s\n", head, want);
	assert_string_equal(head, want);
	json_t *w = jig_why_doc(doc, "packet", packet);
	assert_string_equal(json_string_value(json_object_get(w, "headline")), want);
	json_t *ex = json_object_get(w, "explanations"), *x;
	if (first_kind)
		assert_string_equal(json_string_value(json_object_get(json_array_get(ex, 0), "kind")), first_kind);
	size_t i;
	json_array_foreach(ex, i, x) { /* never beside a refusal, never a packet that is not there */
		assert_null(strstr(json_string_value(json_object_get(x, "remedy")), "nothing jig refused"));
		if (!packet)
			assert_null(strstr(json_string_value(json_object_get(x, "remedy")), "jig inspect PACKET"));
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jig_why_print(f, w);
	fclose(f);
	assert_int_equal(strncmp(buf, want, strlen(want)), 0); /* jig why's first line */
	free(buf);
	json_decref(w);
	json_decref(doc);
}

#define TERMX(outcome, sig, core) \
	"{\"outcome\":\"" outcome "\",\"oom_kills\":0,\"pids_max_hits\":0,\"signal\":" #sig ",\"core_dumped\":" core ",\"memory_peak_bytes\":1,\"wall_ms\":1}"

static void headlines(void **state)
{
	(void)state;
	headline_is(REC("failed", "the Flow did not complete", TERM(1, 0, 9, "oom"), ""), "pkt",
		    "flow f ran out of memory: the kernel killed it 1 time(s) at its scope's limit of 256 MiB (peak 256 MiB)", "memory");
	headline_is(REC("timeout", "the Run passed its 30000 ms deadline", TERM(0, 0, 0, "timeout"), ""), "pkt",
		    "flow f passed its deadline of 30000 ms and was fenced; it used 900 ms of CPU in 1000 ms, most of its 1.0 CPU share, so it was CPU-bound; "
		    "its memory reached its scope's limit of 256 MiB",
		    "deadline");
	headline_is(REC("cancelled", "cancelled by the operator: SIGINT (signal 2); the scope was fenced", TERMX("cancelled", 0, "false"), ""),
		    "pkt", "flow f was cancelled by the operator: SIGINT (signal 2); the scope was fenced", "cancelled");
	headline_is(REC("cancelled", "cancelled: the command's expiry of 4000 ms passed (SIGTERM); the scope was fenced",
			TERMX("cancelled", 0, "false"), ""),
		    "pkt", "flow f was cancelled: the command's expiry of 4000 ms passed (SIGTERM); the scope was fenced", "expiry");
	headline_is(REC("failed", "the Flow was killed by SIGSEGV (signal 11, core dumped)", TERMX("crashed", 11, "true"), ""), NULL,
		    "flow f crashed with SIGSEGV (signal 11, core dumped)", "signal");
	headline_is(REC("failed", "the Flow was killed by SIGKILL (signal 9, no core dumped)", TERMX("signaled", 9, "false"), ""), "pkt",
		    "flow f was killed by SIGKILL (signal 9, no core dumped)", "signal");
	/* A refused effect, then the Flow's own error: the refusal heads. */
	headline_is(REC("failed", "the Flow failed: Error: refused\\n    at main", TERM(0, 0, 0, "exited"),
			",\"effects\":[{\"route\":\"leak\",\"outcome\":\"refused\",\"error\":\"flow f has no reviewed http route \\\"leak\\\"\"}]"),
		    NULL,
		    "flow f asked for the HTTP route \"leak\", which its flow.json does not grant: refused, nothing sent (flow f has no reviewed http route \"leak\")",
		    "http-ungranted");
	/* A failed child, then the caller's error: the child heads, named. */
	headline_is(REC("failed", "the Flow failed: Error: the child failed", TERM(0, 0, 0, "exited"),
			",\"children\":[{\"id\":\"1\",\"flow\":\"c\",\"binding\":\"b\",\"status\":\"failed\",\"why\":\"killed\","
			"\"termination\":{\"oom_kills\":2,\"memory_peak_bytes\":134217728},\"limits\":{\"memory_bytes\":134217728},\"children\":[]}]"),
		    "pkt", "flow f failed: child Flow c (binding b) ran out of memory: the kernel killed it 2 time(s) at its scope's limit of 128 MiB (peak 128 MiB)",
		    "memory");
	/* A stack trace: its first line heads; the remedy names the packet. */
	headline_is(REC("failed", "the Flow failed: Error: first\\n    at second", TERM(0, 0, 0, "exited"), ""), "out/pkt",
		    "flow f failed in its own code: Error: first", "flow-error");
	json_t *doc = parse(REC("failed", "the Flow failed: Error: first", TERM(0, 0, 0, "exited"), ""));
	json_t *ex = jig_why_explain(doc, "out/pkt");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ex, 0), "remedy")), "jig inspect out/pkt"));
	json_decref(ex);
	json_decref(doc);
	/* An undeclared output is a failed packet now; refused before a Run,
	 * no packet is named. */
	headline_is(REC("failed", "output refused, no file published: output extra.md: is not a declared output of the Flow (it declares a.md)",
			TERM(0, 0, 0, "exited"), ""),
		    "pkt",
		    "flow f wrote a file its flow.json does not declare (output refused, no file published: output extra.md: is not a declared output of the Flow (it declares a.md)); no file was published",
		    "output-undeclared");
	headline_is(REFUSED("flow f declares no input \\\"x\\\"; its inputs (flow.json): mode", ""), NULL,
		    "flow f declares no input \"x\"; its inputs (flow.json): mode", "failed");
	headline_is(REC("succeeded", "", TERM(0, 0, 0, "exited"), ""), "pkt", "flow f succeeded", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(memory_kill),	cmocka_unit_test(tasks_limit),
					   cmocka_unit_test(deadline),		cmocka_unit_test(oversized_output),
					   cmocka_unit_test(undeclared_output), cmocka_unit_test(ungranted_http),
					   cmocka_unit_test(run0_cap),		cmocka_unit_test(changed_snapshot),
					   cmocka_unit_test(changed_flow_file), cmocka_unit_test(child_and_success),
					   cmocka_unit_test(printed_inert),		   cmocka_unit_test(headlines)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
