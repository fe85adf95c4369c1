/* jig.json and flow.json parsing as a unit (issue 13): the strict formats,
 * each refusal one line naming the file and field. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(valid_flows), cmocka_unit_test(refused_flows)};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
