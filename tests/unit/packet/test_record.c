/* Packet validation as a unit (issue 13): jig-run-record/1 read back,
 * files checked against it, the record shown inert. */
#include <fcntl.h>
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

#include "util/limits.h"
#include "packet/record.h"
#include "util/units.h"

static char dir[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* What jig inspect prints of rec for the packet pkt (free it); its length
 * in *len when len is not NULL. */
static char *printed(const char *pkt, json_t *rec, size_t *len)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, len ? len : &n);
	assert_non_null(f);
	jig_record_print(f, pkt, rec);
	fclose(f);
	return out;
}

static int fresh(void)
{
	char cmd[128];
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(dir, sizeof(dir), "/tmp/jig-record-test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	char p[128];
	snprintf(p, sizeof(p), "%s/files", dir);
	mkdir(p, 0700);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	return fd;
}

/* "hello\n": 6 bytes. */
#define HELLO_SHA "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"

static int load(int fd, json_t **rec, struct jig_error *e)
{
	return jig_record_load(fd, "pkt", rec, e);
}

static void good_packet(void **state)
{
	(void)state;
	int fd = fresh();
	put("files/a.txt", "hello\n");
	put("record.json", "{\"format\":\"jig-run-record/1\",\"status\":\"succeeded\",\"error\":\"\",\"flow\":\"f\","
			   "\"outputs\":[{\"path\":\"a.txt\",\"size\":6,\"sha256\":\"" HELLO_SHA "\"}]}");
	json_t *rec;
	struct jig_error e = {0};
	assert_int_equal(load(fd, &rec, &e), 0);
	assert_int_equal(jig_record_verify_files(fd, rec, &e), 0);
	/* A changed, an extra and a missing file are each refused. */
	put("files/a.txt", "hellO\n");
	assert_true(jig_record_verify_files(fd, rec, &e) < 0);
	assert_non_null(strstr(e.msg, "a.txt is missing or differs"));
	put("files/a.txt", "hello\n");
	put("files/b.txt", "x");
	assert_true(jig_record_verify_files(fd, rec, &e) < 0);
	assert_non_null(strstr(e.msg, "holds 2 files, the record lists 1"));
	json_decref(rec);
	/* A record that lists a.txt twice: the counts agree (two files, two
	 * entries), yet b.txt is unlisted; refused (issue 32). */
	put("record.json", "{\"format\":\"jig-run-record/1\",\"status\":\"succeeded\",\"error\":\"\",\"flow\":\"f\","
			   "\"outputs\":[{\"path\":\"a.txt\",\"size\":6,\"sha256\":\"" HELLO_SHA "\"},"
			   "{\"path\":\"a.txt\",\"size\":6,\"sha256\":\"" HELLO_SHA "\"}]}");
	assert_int_equal(load(fd, &rec, &e), 0);
	assert_true(jig_record_verify_files(fd, rec, &e) < 0);
	assert_int_equal(e.code, JIG_E_INTEGRITY);
	assert_non_null(strstr(e.msg, "the record lists a.txt twice"));
	json_decref(rec);
	close(fd);
}

static void refused_records(void **state)
{
	(void)state;
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{"{\"format\":\"jig-run-record/2\",\"outputs\":[]}", "not a jig packet"},
		{"{\"outputs\":[]}", "not a jig packet"},
		{"{\"format\":\"jig-run-record/1\"}", "no outputs list"},
		{"{\"format\":\"jig-run-record/1\",\"outputs\":{}}", "no outputs list"},
		{"{\"format\":\"jig-run-record/1\",\"format\":\"jig-run-record/1\",\"outputs\":[]}", "record.json"},
		{"not json", "record.json"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = fresh();
		put("record.json", bad[i].text);
		json_t *rec = NULL;
		struct jig_error e = {0};
		assert_true(load(fd, &rec, &e) < 0);
		assert_null(rec);
		if (!strstr(e.msg, bad[i].needle))
			fail_msg("\"%s\" does not say \"%s\"", e.msg, bad[i].needle);
		close(fd);
	}
	int fd = fresh(); /* no record at all */
	json_t *rec;
	struct jig_error e = {0};
	assert_true(load(fd, &rec, &e) < 0);
	close(fd);
}

static void printed_inert(void **state)
{
	(void)state;
	json_error_t je;
	json_t *rec = json_loads("{\"format\":\"jig-run-record/1\",\"status\":\"failed\",\"flow\":\"f\","
				 "\"error\":\"x\\n\\u001b]52;c;AA==\\u0007jig: flow f succeeded\\u202e\","
				 "\"termination\":{\"outcome\":\"crashed\",\"signal\":11,\"core_dumped\":true},"
				 "\"outputs\":[],\"logs\":[\"\\u009b31m\\r\"],"
				 "\"effects\":[{\"route\":\"r\",\"outcome\":\"refused\",\"error\":\"\\u001b[1A\"}]}",
				 0, &je);
	assert_non_null(rec);
	size_t len = 0;
	char *out = printed("pkt\x1b[2J", rec, &len);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 && out[i] != '\n')
			fail_msg("raw control 0x%02x in: %s", out[i], out);
	/* the headline (the error's first line), then the error as lines:
	 * each after jig's indent, so none can pass for jig's own line */
	assert_non_null(strstr(out, "packet pkt\\x1b[2J: flow f crashed with SIGSEGV (signal 11, core dumped): x\n"
				    "  status failed: x\n    \\x1b]52;c;AA==\\x07jig: flow f succeeded\\u202e\n"));
	assert_non_null(strstr(out, "signal 11 (core dumped)"));
	assert_non_null(strstr(out, "  log \\u009b31m\\r\n"));
	assert_non_null(strstr(out, "  http r refused: \\x1b[1A\n"));
	free(out);
	json_decref(rec);
}

/* jig inspect names a checkpoint save as one (it was printed as "http"):
 * its number, outcome and bytes, or the refusal's reason (R-O01). */
static void printed_checkpoint(void **state)
{
	(void)state;
	json_error_t je;
	json_t *rec = json_loads("{\"format\":\"jig-run-record/1\",\"status\":\"succeeded\",\"flow\":\"f\",\"error\":\"\",\"outputs\":[],"
				 "\"effects\":[{\"effect\":\"checkpoint\",\"save\":1,\"outcome\":\"accepted\",\"bytes\":40,\"sha256\":\"ab\"},"
				 "{\"effect\":\"checkpoint\",\"outcome\":\"refused\",\"error\":\"a second save was sent while one was in flight\"},"
				 "{\"effect\":\"http\",\"route\":\"r\",\"outcome\":\"ok\",\"status\":200}]}",
				 0, &je);
	assert_non_null(rec);
	char *out = printed("pkt", rec, NULL);
	assert_non_null(strstr(out, "\n  checkpoint save 1 accepted, 40 bytes\n  checkpoint refused: a second save was sent while one was in flight\n  http r ok status 200\n"));
	free(out);
	json_decref(rec);
}

/* Issue 35: the tree of child Flows drawn as a tree, each child's effects,
 * outputs and logs under it, human units beside exact values, the root's
 * effects counted apart from its children's, limits against what was used. */
static void printed_tree(void **state)
{
	(void)state;
	json_error_t je;
	json_t *rec = json_loads(
		"{\"format\":\"jig-run-record/1\",\"status\":\"succeeded\",\"flow\":\"root\",\"error\":\"\",\"outputs\":"
		"[{\"path\":\"r.md\",\"size\":2048,\"sha256\":\"aa\"}],\"started_ms\":1700000000000,\"timeout_ms\":90000,"
		"\"termination\":{\"outcome\":\"exited\",\"exit_status\":0,\"signal\":0,\"wall_ms\":4200,\"cpu_usec\":1500000,"
		"\"memory_peak_bytes\":12582912,\"cleanup_confirmed\":true},"
		"\"scope\":{\"policy\":{\"limits\":{\"memory_bytes\":268435456,\"tasks\":64,\"cpu_quota_us\":100000,\"wall_ms\":90000}}},"
		"\"logs\":[\"root says\"],\"effects\":[],\"children\":["
		"{\"binding\":\"x\",\"flow\":\"a\",\"level\":1,\"status\":\"succeeded\",\"started_ms\":1700000000500,"
		"\"reservation\":{\"memory_bytes\":805306368,\"tasks\":256,\"cpu_quota_us\":150000},\"reservation_released\":true,"
		"\"inputs\":[{\"input\":\"plan\",\"from\":\"plan\"},{\"input\":\"docs\",\"resource\":\"shared/docs\",\"sha256\":\"cc\"}],"
		"\"termination\":{\"outcome\":\"exited\",\"exit_status\":0,\"signal\":0,\"wall_ms\":2100,\"cpu_usec\":700000,"
		"\"memory_peak_bytes\":31457280},\"scope_policy_sha256\":\"ef\","
		"\"limits\":{\"memory_bytes\":268435456,\"tasks\":64,\"cpu_quota_us\":50000,\"wall_ms\":60000},"
		"\"outputs\":[{\"path\":\"result.json\",\"size\":120,\"sha256\":\"bb\"}],"
		"\"effects\":[{\"effect\":\"agent\",\"route\":\"ask\",\"outcome\":\"answer\",\"api\":\"fake\",\"model\":\"m1\",\"answer_bytes\":9}],"
		"\"logs\":[\"a says \\u001b[1m\"],\"children\":[{\"binding\":\"y\",\"flow\":\"b\",\"level\":2,\"status\":\"succeeded\","
		"\"effects\":[{\"effect\":\"command\",\"route\":\"run\",\"outcome\":\"exited\",\"exit_code\":0}],\"logs\":[\"b says\"]}]},"
		"{\"binding\":\"z\",\"flow\":\"c\",\"level\":1,\"status\":\"failed\",\"why\":\"boom\",\"reservation_released\":false,"
		"\"reservation\":{\"memory_bytes\":268435456,\"tasks\":64,\"cpu_quota_us\":100000}}]}",
		0, &je);
	assert_non_null(rec);
	char *out = printed("pkt", rec, NULL);
	static const char *const want[] = {
		"\n  started 2023-11-14 22:13:20.000 UTC (1700000000000 ms since the epoch); deadline 90000 ms (1 min 30 s)\n",
		"\n  termination exited, exit 0, signal 0, wall 4200 ms (4.2 s), CPU 1500000 us (1.50 s), peak memory 12582912 bytes (12 MiB), cleanup confirmed\n",
		"\n  limits memory 268435456 bytes (256 MiB), peak 4.7% of it; 64 tasks; CPU 100000 us per 100 ms (1.00 CPU), used 0.36 CPU on average; deadline 90000 ms (1 min 30 s)\n",
		"\n  file r.md  2048 bytes (2 KiB)  sha256 aa  verified\n",
		"\n  effects: 0 of its own, 2 made by child Flows (under each child below)\n",
		"\n  child Flows: 2 called by the root, 3 in all\n"
		"  |-- child x -> flow a: succeeded\n"
		"  |   started 2023-11-14 22:13:20.500 UTC (1700000000500 ms since the epoch), 500 ms into the Run\n"
		"  |   reserved 768 MiB, 256 tasks, 1.5 CPU; released after confirmed cleanup\n"
		"  |   given plan <- plan, docs <- resource tree shared/docs\n"
		"  |   termination exited, exit 0, signal 0, wall 2100 ms (2.1 s), CPU 700000 us (0.700 s), peak memory 31457280 bytes (30 MiB); scope ef\n"
		"  |   limits memory 268435456 bytes (256 MiB), peak 11.7% of it; 64 tasks; CPU 50000 us per 100 ms (0.50 CPU), used 0.33 CPU on average; deadline 60000 ms (1 min 0 s)\n"
		"  |   output result.json  120 bytes  sha256 bb\n"
		"  |   agent ask answer (fake, model m1) 9 answer bytes\n"
		"  |   log a says \\x1b[1m\n"
		"  |   `-- child y -> flow b: succeeded\n"
		"  |       command run exited exit 0\n"
		"  |       log b says\n"
		"  `-- child z -> flow c: failed: boom\n"
		"      reserved 256 MiB, 64 tasks, 1.0 CPU; HELD: cleanup not confirmed\n"
		"  log root says\n"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("missing:\n%s\nin:\n%s", want[i], out);
	free(out);
	json_decref(rec);
}

/* The human units at their edges, and values a hand-edited record may
 * hold (negative, huge): never more than the buffer, "?" for no date. */
static void units_edges(void **state)
{
	(void)state;
	char b[48];
	assert_string_equal(jig_units_bytes(b, sizeof(b), 0), "0 B");
	assert_string_equal(jig_units_bytes(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(jig_units_bytes(b, sizeof(b), 1024), "1 KiB");
	assert_string_equal(jig_units_bytes(b, sizeof(b), 1536), "1.5 KiB");
	assert_string_equal(jig_units_bytes(b, sizeof(b), 12345678), "11.8 MiB");
	assert_string_equal(jig_units_bytes(b, sizeof(b), 1ull << 30), "1 GiB");
	assert_string_equal(jig_units_bytes(b, sizeof(b), UINT64_MAX), "16777216.0 TiB");
	assert_string_equal(jig_units_ms(b, sizeof(b), 999), "999 ms");
	assert_string_equal(jig_units_ms(b, sizeof(b), 1000), "1.0 s");
	assert_string_equal(jig_units_ms(b, sizeof(b), 60000), "1 min 0 s");
	assert_string_equal(jig_units_ms(b, sizeof(b), 86400000), "24 h 0 min");
	assert_string_equal(jig_units_usec(b, sizeof(b), 4321), "0.004 s");
	assert_string_equal(jig_units_usec(b, sizeof(b), 2804415), "2.80 s");
	assert_string_equal(jig_units_usec(b, sizeof(b), 75000000), "75 s");
	assert_string_equal(jig_units_date(b, sizeof(b), 0), "1970-01-01 00:00:00.000 UTC");
	assert_string_equal(jig_units_date(b, sizeof(b), 1700000000123), "2023-11-14 22:13:20.123 UTC");
	assert_string_equal(jig_units_date(b, sizeof(b), -1), "?");
	jig_units_date(b, sizeof(b), INT64_MAX); /* a year past 9999: a date or "?", within b */
	assert_true(strlen(b) < sizeof(b));
	char small[8];
	jig_units_date(small, sizeof(small), 1700000000123);
	assert_true(strlen(small) < sizeof(small));
}

/* An edited packet may nest children past a Run's five levels: the tree
 * is drawn to eight and says how many are below. */
static void printed_deep(void **state)
{
	(void)state;
	json_t *kid = json_pack("{s:s,s:s,s:s}", "binding", "b", "flow", "f", "status", "succeeded");
	for (int i = 0; i < 11; i++)
		kid = json_pack("{s:s,s:s,s:s,s:[o]}", "binding", "b", "flow", "f", "status", "succeeded", "children", kid);
	json_t *rec = json_pack("{s:s,s:s,s:[],s:[o]}", "format", "jig-run-record/1", "status", "succeeded", "outputs", "children", kid);
	char *out = printed("pkt", rec, NULL);
	assert_non_null(strstr(out, "  child Flows: 1 called by the root, 8 in all\n"));
	assert_non_null(strstr(out, "(1 more child Flows below: not drawn past 8 levels)\n"));
	free(out);
	json_decref(rec);
}

/* --- issue 31: the record as a whole ------------------------------------- */

/* A record as jig run writes it, with n log lines of len bytes, n effects
 * of len bytes and a child with n log lines: large on every channel. */
static json_t *big_record(size_t n, size_t len)
{
	char *text = malloc(len + 1);
	memset(text, 'x', len);
	text[len] = '\0';
	json_t *logs = json_array(), *effects = json_array(), *clogs = json_array();
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(logs, json_string(text));
		json_array_append_new(clogs, json_string(text));
		json_array_append_new(effects, json_pack("{s:s,s:s,s:s,s:s}", "effect", "http", "route", text, "outcome", "refused", "error", text));
	}
	free(text);
	return json_pack("{s:s,s:s,s:s,s:s,s:[{s:s,s:I,s:s}],s:o,s:o,s:[{s:I,s:s,s:s,s:i,s:s,s:o,s:[]}],s:{s:s,s:{s:s}}}", "format",
			 "jig-run-record/1", "status", "succeeded", "error", "", "flow", "f", "outputs", "path", "a.txt", "size",
			 (json_int_t)6, "sha256", HELLO_SHA, "logs", logs, "effects", effects, "children", "id", (json_int_t)1, "binding",
			 "b", "flow", "c", "level", 1, "status", "succeeded", "logs", clogs, "children", "scope", "policy_sha256", "p",
			 "policy", "format", "jig-scope-policy/1");
}

/* A record of exactly the cap is published as it is; one byte over, it is
 * cut to fit (logs first), failed with a reason, and jig inspect reads it. */
static void record_at_and_over_cap(void **state)
{
	(void)state;
	json_t *rec = big_record(4, 100);
	size_t n = json_dumpb(rec, NULL, 0, JSON_INDENT(2) | JSON_SORT_KEYS);
	bool cut = true;
	char *txt = jig_record_text(rec, n, &cut);
	assert_false(cut);
	assert_int_equal(strlen(txt), n);
	assert_string_equal(json_string_value(json_object_get(rec, "status")), "succeeded");
	free(txt);
	txt = jig_record_text(rec, n - 1, &cut);
	assert_true(cut);
	assert_true(strlen(txt) <= n - 1);
	assert_string_equal(json_string_value(json_object_get(rec, "status")), "failed");
	const char *why = json_string_value(json_object_get(rec, "error"));
	assert_non_null(strstr(why, "cut to fit: its logs; the Run was succeeded"));
	assert_null(strchr(why, '\n'));
	assert_int_equal(json_array_size(json_object_get(rec, "logs")), 0);
	assert_int_equal(json_integer_value(json_object_get(rec, "logs_removed_for_size")), 4);
	assert_int_equal(json_array_size(json_object_get(rec, "effects")), 4); /* not needed: kept whole */
	assert_non_null(json_object_get(json_array_get(json_object_get(rec, "effects"), 0), "error"));
	free(txt);
	json_decref(rec);
}

/* Over JIG_RECORD_MAX_BYTES on every channel: cut step by step, published
 * within the cap, and the packet passes jig_record_load and the file check. */
static void record_over_reader_cap(void **state)
{
	(void)state;
	json_t *rec = big_record(300, 16 << 10); /* about 24 MB */
	bool cut = false;
	char *txt = jig_record_text(rec, JIG_RECORD_MAX_BYTES, &cut);
	assert_non_null(txt);
	assert_true(cut);
	assert_true(strlen(txt) <= JIG_RECORD_MAX_BYTES);
	const char *why = json_string_value(json_object_get(rec, "error"));
	assert_non_null(strstr(why, "its logs, its effects' evidence but kind, route and outcome"));
	json_t *ev = json_array_get(json_object_get(rec, "effects"), 0);
	assert_null(json_object_get(ev, "error"));
	assert_int_equal(json_string_length(json_object_get(ev, "route")), 64);
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(rec, "children"), 0), "logs")), 0);
	int fd = fresh();
	put("files/a.txt", "hello\n");
	put("record.json", txt);
	json_t *back = NULL;
	struct jig_error e = {0};
	assert_int_equal(load(fd, &back, &e), 0);
	assert_int_equal(jig_record_verify_files(fd, back, &e), 0);
	assert_string_equal(json_string_value(json_object_get(back, "status")), "failed");
	json_decref(back);
	close(fd);
	free(txt);
	json_decref(rec);
	/* Nothing fits a cap smaller than the record's own facts: NULL. */
	rec = big_record(1, 10);
	assert_null(jig_record_text(rec, 64, &cut));
	json_decref(rec);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* The recovery-only coordinator's record (run/recovery.c) comes from the
 * one writer: the same facts, its termination "coordinator_lost" with only
 * what is known of it (issue 32; R-O03: interrupted, apart from completed). */
static void record_lost(void **state)
{
	(void)state;
	json_t *in = json_array(), *out = json_array(), *logs = json_array();
	struct jig_record_facts f = {.status = "interrupted", .why = "lost", .flow = "saver", .plan_sha256 = "aa",
				     .package_sha256 = "bb", .timeout_ms = 30000, .started_ms = 1764900000123,
				     .inputs = in, .outputs = out, .logs = logs};
	json_t *rec = jig_record_lost(&f, 9);
	assert_non_null(rec);
	bool cut;
	char *txt = jig_record_text(rec, JIG_RECORD_MAX_BYTES, &cut);
	assert_non_null(txt);
	assert_false(cut);
	assert_string_equal(txt, "{\n  \"error\": \"lost\",\n  \"flow\": \"saver\",\n  \"format\": \"jig-run-record/1\",\n"
				 "  \"inputs\": [],\n  \"logs\": [],\n  \"outputs\": [],\n  \"package_sha256\": \"bb\",\n"
				 "  \"plan_sha256\": \"aa\",\n  \"started_ms\": 1764900000123,\n  \"status\": \"interrupted\",\n"
				 "  \"termination\": {\n    \"cleanup_confirmed\": true,\n    \"core_dumped\": false,\n"
				 "    \"exit_status\": 0,\n    \"fenced\": true,\n    \"outcome\": \"coordinator_lost\",\n"
				 "    \"signal\": 9\n  },\n  \"timeout_ms\": 30000\n}");
	free(txt);
	json_decref(rec);
	json_decref(in);
	json_decref(out);
	json_decref(logs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(good_packet), cmocka_unit_test(refused_records),
					   cmocka_unit_test(printed_inert), cmocka_unit_test(record_at_and_over_cap),
					   cmocka_unit_test(record_over_reader_cap), cmocka_unit_test(record_lost),
					   cmocka_unit_test(printed_checkpoint), cmocka_unit_test(printed_tree), cmocka_unit_test(units_edges), cmocka_unit_test(printed_deep)};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
