/* jig.json and flow.json parsing as a unit (issue 13): the strict formats,
 * each refusal one line naming the file and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "flow/project.h"

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

static void project(const char *flow_json)
{
	char cmd[160];
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(dir, sizeof(dir), "/tmp/jig-project-test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	char p[128];
	snprintf(p, sizeof(p), "%s/f", dir);
	mkdir(p, 0700);
	put("jig.json", "{\"format\":\"jig-project/1\",\"flows\":{\"f\":\"f\"}}");
	put("f/main.ts", "export default () => {}\n");
	put("f/flow.json", flow_json);
}

static void ok(const char *flow_json)
{
	project(flow_json);
	struct jig_project p;
	struct jig_error e = {0};
	if (jig_project_open(dir, &p, &e) < 0)
		fail_msg("refused: %s", e.msg);
	jig_project_close(&p);
}

static void refused(const char *flow_json, const char *needle)
{
	project(flow_json);
	struct jig_project p;
	struct jig_error e = {0};
	assert_true(jig_project_open(dir, &p, &e) < 0);
	assert_int_equal(e.code, JIG_E_USAGE);
	if (!strstr(e.msg, needle))
		fail_msg("\"%s\" does not say \"%s\"", e.msg, needle);
}

#define FLOW(rest) "{\"format\":\"jig-flow/1\",\"name\":\"f\",\"entry\":\"main.ts\"" rest "}"

static void valid_flows(void **state)
{
	(void)state;
	ok(FLOW(",\"inputs\":[],\"outputs\":[]"));
	ok(FLOW(",\"inputs\":[\"data\",\"notes_2\"],\"outputs\":[\"report.md\",\"out/x\"]"));
	ok(FLOW(",\"inputs\":[],\"outputs\":[],\"http\":{\"r\":{\"method\":\"GET\",\"url\":\"https://example.org/x\"}}"));
}

static void refused_flows(void **state)
{
	(void)state;
	refused(FLOW(",\"inputs\":[],\"outputs\":[],\"grants\":{}"), "grants");
	refused("{\"format\":\"jig-flow/2\",\"name\":\"f\",\"entry\":\"main.ts\",\"inputs\":[],\"outputs\":[]}", "format");
	refused(FLOW(",\"inputs\":[\"../x\"],\"outputs\":[]"), "inputs[0]");
	refused(FLOW(",\"inputs\":[\"a\",\"a\"],\"outputs\":[]"), "listed twice");
	refused(FLOW(",\"inputs\":[],\"outputs\":[\"/etc/passwd\"]"), "outputs[0]");
	refused(FLOW(",\"inputs\":[],\"outputs\":[\"a\\u001b[2J\"]"), "outputs[0]");
	refused("{\"format\":\"jig-flow/1\",\"name\":\"f\",\"entry\":\"../main.ts\",\"inputs\":[],\"outputs\":[]}", "entry");
	refused("{\"format\":\"jig-flow/1\",\"name\":\"g\",\"entry\":\"main.ts\",\"inputs\":[],\"outputs\":[]}", "name");
	refused("{\"format\":\"jig-flow/1\",\"format\":\"jig-flow/1\",\"name\":\"f\",\"entry\":\"main.ts\",\"inputs\":[],\"outputs\":[]}", "flow.json");
	refused("not json", "flow.json");
	refused(FLOW(",\"inputs\":[],\"outputs\":[],\"http\":{\"Bad Route\":{\"method\":\"GET\",\"url\":\"https://example.org/\"}}"), "Bad Route");
	refused(FLOW(",\"inputs\":[],\"outputs\":[],\"http\":{\"r\":{\"method\":\"GET\",\"url\":\"https://example.org/\",\"timeout_ms\":600000}}"), "timeout_ms");
}

static int teardown(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Issue 35: a Flow name the project lacks is refused naming the ones it
 * has (jig_project_no_flow, behind jig_cli_known_flows), cut with "..."
 * when they are many; a directory without jig.json is "not a jig project". */
static void no_such_flow(void **state)
{
	(void)state;
	struct jig_flow flows[JIG_MAX_FLOWS];
	char names[JIG_MAX_FLOWS][40];
	struct jig_project p = {.root = ".", .flows = flows, .n_flows = 3};
	memset(flows, 0, sizeof(flows));
	flows[0].name = "a", flows[1].name = "root", flows[2].name = "caller";
	struct jig_error e = {0};
	assert_int_equal(jig_project_no_flow(&p, "nosuch", &e), -JIG_E_USAGE);
	assert_int_equal(e.code, JIG_E_USAGE);
	assert_string_equal(e.msg, "project . has no Flow \"nosuch\"; its Flows: a, root, caller");
	for (size_t i = 0; i < JIG_MAX_FLOWS; i++) {
		snprintf(names[i], sizeof(names[i]), "a-rather-long-flow-name-number-%02zu", i);
		flows[i].name = names[i];
	}
	p.n_flows = JIG_MAX_FLOWS;
	jig_project_no_flow(&p, "x", &e);
	assert_non_null(strstr(e.msg, "its Flows: a-rather-long-flow-name-number-00, a-rather-long-flow-name-number-01, "));
	assert_string_equal(e.msg + strlen(e.msg) - 3, "...");

	project(FLOW(",\"inputs\":[],\"outputs\":[]"));
	char rel[128];
	snprintf(rel, sizeof(rel), "%s/jig.json", dir);
	unlink(rel);
	struct jig_project q;
	assert_true(jig_project_open(dir, &q, &e) < 0);
	char want[256];
	snprintf(want, sizeof(want), "%s: not a jig project (jig init %s creates one)", dir, dir);
	assert_string_equal(e.msg, want);
	assert_int_equal(e.code, JIG_E_USAGE);
}

/* Issue 46: a refusal in a captured tree names it once. The prepared
 * installation's label is "flow F: its prepared node_modules" (prepare.c);
 * it used to be put after the Flow's own "flow " prefix ("flow flow
 * uses: ..."). A Flow's own package says "flow F: PATH: ...". */
static void capture_refusal_names_once(void **state)
{
	(void)state;
	project(FLOW(",\"inputs\":[],\"outputs\":[]"));
	char p[256], q[256];
	snprintf(p, sizeof(p), "%s/nm/lib", dir);
	snprintf(q, sizeof(q), "%s/nm", dir);
	assert_int_equal(mkdir(q, 0700), 0);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/nm/lib/a b.js", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	struct jig_project pr;
	struct jig_error e = {0};
	if (jig_project_open(dir, &pr, &e) < 0)
		fail_msg("refused: %s", e.msg);
	int nm = open(q, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(nm >= 0);
	char sha[JIG_SHA256_HEX];
	uint64_t bytes = 0;
	size_t files = 0;
	assert_true(jig_store_capture(&pr, nm, "flow f: its prepared node_modules", sha, &bytes, &files, &e) < 0);
	assert_string_equal(e.msg, "flow f: its prepared node_modules: lib/a b.js: is a symbolic link; packages contain regular files and "
				   "directories only");
	close(nm);
	/* the Flow's own package: "flow f: PATH: ..." */
	snprintf(p, sizeof(p), "%s/f/link.ts", dir);
	assert_int_equal(symlink("main.ts", p), 0);
	memset(&e, 0, sizeof(e));
	assert_true(jig_project_capture(&pr, false, &e) < 0);
	assert_string_equal(e.msg, "flow f: link.ts: is a symbolic link; packages contain regular files and directories only");
	jig_project_close(&pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(valid_flows), cmocka_unit_test(refused_flows),
					   cmocka_unit_test(no_such_flow), cmocka_unit_test(capture_refusal_names_once)};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
