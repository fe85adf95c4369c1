/* jig init [DIR] [--flow NAME] [--json]: a new project (jig.json, one Flow,
 * the Flow API's types and the schemas) in an empty or absent directory, or
 * with --flow one more Flow in the project there (flow/scaffold.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../flow/scaffold.h"
#include "commands.h"

static void print_text(const struct jig_init *in)
{
	char dir[512];
	jig_text_inert(dir, sizeof(dir), in->dir, strlen(in->dir));
	if (in->added)
		printf("added Flow %s to the project in %s:\n", in->flow, dir);
	else
		printf("created a jig project in %s:\n", dir);
	size_t i;
	json_t *v;
	json_array_foreach(in->written, i, v)
		printf("  %s\n", json_string_value(v));
	printf("next:\n");
	if (strcmp(in->dir, ".") != 0)
		printf("  cd %s\n", dir);
	printf("  jig review\n");
	printf("  jig run %s%s%s%s%s --output %s-out\n", in->flow, in->input[0] ? " --input " : "", in->input,
	       in->input[0] ? "=" : "", in->input[0] ? in->sample : "", in->flow);
	printf("  jig inspect %s-out\n", in->flow);
}

int jig_cmd_init(int argc, char **argv)
{
	struct jig_init in = {.dir = ".", .flow = JIG_INIT_DEFAULT_FLOW};
	int json = 0;
	bool have_dir = false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--flow") == 0 && i + 1 < argc && !in.add) {
			in.flow = argv[++i];
			in.add = true;
		} else if (argv[i][0] != '-' && argv[i][0] && !have_dir) {
			in.dir = argv[i];
			have_dir = true;
		} else
			return jig_cli_usage(argc, argv, "init: unknown argument \"%s\"; usage: jig init [DIR] [--flow NAME] [--json]",
					     argv[i]);
	}
	struct jig_snapshot s;
	int rc = jig_cli_open_snapshot(&s, json);
	if (rc)
		return rc;
	struct jig_error e = {0};
	int r = jig_project_init(&s, &in, &e);
	jig_snapshot_close(&s);
	if (r) {
		json_decref(in.written);
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (json) {
		json_t *doc = json_pack("{s:s,s:s,s:s,s:b,s:O}", "format", JIG_INIT_SCHEMA, "project", in.dir, "flow", in.flow, "added",
					in.added, "written", in.written);
		jig_cli_print_json(doc);
		json_decref(doc);
	} else
		print_text(&in);
	json_decref(in.written);
	return 0;
}
