/* jig gc [--dry-run] [--project DIR] [--json] (issue 35): reclaims the
 * project's Package/0 store, keeping what the current admission and the
 * retained Run records reference (flow/gc.h). */
#include <stdio.h>
#include <string.h>

#include "../flow/gc.h"
#include "commands.h"

#define USAGE "usage: jig gc [--dry-run] [--project DIR] [--json]"

static json_t *counts_json(const struct jig_gc_counts *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "packages", (json_int_t)c->packages, "blobs", (json_int_t)c->blobs,
			 "records", (json_int_t)c->records, "temporary", (json_int_t)c->temporary, "bytes", (json_int_t)c->bytes);
}

static void print_counts(const char *verb, const struct jig_gc_counts *c)
{
	size_t n = c->packages + c->blobs + c->records + c->temporary;
	printf("%s %zu files, %llu bytes (%.1f MiB): %zu package manifests, %zu blobs, %zu prepared records", verb, n,
	       (unsigned long long)c->bytes, (double)c->bytes / (1024.0 * 1024.0), c->packages, c->blobs, c->records);
	if (c->temporary)
		printf(", %zu temporary files", c->temporary);
	printf("\n");
}

int jig_cmd_gc(int argc, char **argv)
{
	struct jig_cli_args args = {.cmd = "gc", .usage = USAGE, .bare = "--dry-run"};
	if (jig_cli_parse(argc, argv, &args))
		return JIG_E_USAGE;
	const char *project = args.project;
	int json = args.json;
	bool dry = args.flag;
	struct jig_error e = {0};
	struct jig_gc_result res;
	if (jig_store_gc(project, dry, &res, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (json) {
		json_t *doc = json_pack("{s:s,s:b,s:o,s:I,s:o,s:o}", "schema", JIG_GC_SCHEMA, "dry_run", dry, "admitted_plan",
					res.plan_sha256[0] ? json_string(res.plan_sha256) : json_null(), "roots",
					(json_int_t)res.roots, "freed", counts_json(&res.freed), "kept", counts_json(&res.kept));
		jig_cli_print_json(doc);
		json_decref(doc);
		return 0;
	}
	print_counts(dry ? "would free" : "freed", &res.freed);
	print_counts("kept", &res.kept);
	if (res.plan_sha256[0])
		printf("  what the admitted Plan %s and %zu retained Run records reference\n", res.plan_sha256, res.roots - 1);
	else
		printf("  no Plan is admitted: kept only what %zu retained Run records reference\n", res.roots);
	return 0;
}
