/* jig list [FLOW] [--json] [--project DIR]: the project's Flows, their inputs, outputs and effects, and
 * whether the current admission covers each (packages' digests, .jig's admitted Plan); runs nothing. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../flow/binding.h"
#include "../flow/plan.h"
#include "../flow/plan_diff.h"
#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "commands.h"

#define USAGE "usage: jig list [FLOW] [--json] [--project DIR]"

/* The admitted Plan (NULL: none) and the installed snapshot's manifest digest, or why it cannot be opened. */
struct admitted {
	char sha[JIG_SHA256_HEX], manifest[JIG_SHA256_HEX], snapshot_why[300];
	char refused[sizeof(((struct jig_error *)0)->msg)]; /* an admission there that is not this operator's */
	json_t *plan;
};

static void read_admitted(const struct jig_project *p, struct admitted *a)
{
	struct jig_error ignored = {0};
	int r = jig_plan_admitted(p, a->sha, &ignored);
	if (r == 0)
		a->plan = jig_plan_admitted_doc(p, a->sha); /* only bytes that hash to its name */
	else if (r == -JIG_E_NOT_ADMITTED)
		snprintf(a->refused, sizeof(a->refused), "%s", ignored.msg);
	char libdir[4096];
	struct jig_snapshot s;
	struct jig_error e = {0};
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) < 0 || jig_snapshot_open_installed(&s, libdir, &e) < 0) {
		snprintf(a->snapshot_why, sizeof(a->snapshot_why), "the installed snapshot cannot be opened: %.200s", e.msg);
		return;
	}
	jig_hex(s.manifest_sha256, JIG_SHA256_LEN, a->manifest);
	jig_snapshot_close(&s);
}

/* "admitted", "changed" (with why) or "not-reviewed". */
static const char *coverage(const struct admitted *a, const struct jig_flow *f, const char **why)
{
	json_t *was = NULL, *g;
	size_t i;
	*why = NULL;
	json_array_foreach(a->plan ? json_object_get(a->plan, "flows") : NULL, i, g)
		if (strcmp(json_string_value(json_object_get(g, "name")) ?: "", f->name) == 0)
			was = g;
	if (!was)
		return "not-reviewed";
	const char *then = json_string_value(json_object_get(json_object_get(was, "package"), "sha256"));
	const char *snap = json_string_value(json_object_get(json_object_get(a->plan, "snapshot"), "manifest_sha256"));
	if (!then || strcmp(then, f->package_sha256) != 0)
		*why = "its package changed";
	else if (a->snapshot_why[0])
		*why = a->snapshot_why;
	else if (!snap || strcmp(snap, a->manifest) != 0)
		*why = "the installed snapshot changed";
	return *why ? "changed" : "admitted";
}

static json_t *strv(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *flow_json(const struct admitted *a, const struct jig_flow *f)
{
	json_t *http = json_array(), *agents = json_array(), *commands = json_array(), *children = json_array();
	for (size_t i = 0; i < f->n_http; i++)
		json_array_append_new(http, json_pack("{s:s,s:s,s:s}", "route", f->http[i].route, "method", f->http[i].method, "url",
						      f->http[i].url));
	for (size_t i = 0; i < f->n_agents; i++) {
		const struct jig_agent_grant *g = &f->agents[i];
		json_array_append_new(agents, json_pack("{s:s,s:s*,s:s*,s:s*,s:s}", "route", g->route, "provider", g->provider,
							"api", g->api, "http", g->http, "model", g->model));
	}
	for (size_t i = 0; i < f->n_commands; i++)
		json_array_append_new(commands, json_pack("{s:s,s:s*}", "route", f->commands[i].route, "input", f->commands[i].input));
	for (size_t i = 0; i < f->n_bindings; i++)
		json_array_append_new(children, json_pack("{s:s,s:s}", "binding", f->bindings[i].name, "flow", f->bindings[i].flow));
	const char *why, *cov = coverage(a, f, &why);
	return json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:{s:o,s:o,s:o,s:o},s:s,s:s?}", "name", f->name, "package", f->dir, "kind",
			 f->recipe ? "markdown" : "code", "package_sha256", f->package_sha256, "inputs", strv(f->inputs, f->n_inputs),
			 "outputs", strv(f->outputs, f->n_outputs), "effects", "http", http, "agents", agents, "commands", commands,
			 "children", children, "admission", cov, "why", why);
}

static void put_list(const char *label, json_t *v)
{
	size_t i;
	json_t *s;
	printf("  %-9s", label);
	if (!json_array_size(v))
		fputs("none", stdout);
	json_array_foreach(v, i, s) {
		fputs(i ? ", " : "", stdout);
		jig_text_put(stdout, json_string_value(s));
	}
	fputc('\n', stdout);
}

/* One effect line: its kind, then its fields' values (inert), the agents' and commands' named. */
static void put_effect(const char *kind, json_t *x, bool *first)
{
	const char *k;
	json_t *v;
	printf(*first ? "  effects  %s" : "           %s", kind);
	*first = false;
	json_object_foreach(x, k, v) {
		if (strcmp(k, "flow") == 0)
			fputs(" -> flow", stdout);
		fputc(' ', stdout);
		if (!strstr(" route binding method url flow ", k) || strlen(k) < 3)
			printf("%s=", k);
		jig_text_put(stdout, json_string_value(v));
	}
	fputc('\n', stdout);
}

static void print_text(json_t *doc)
{
	static const char *const cov_text[][2] = {{"admitted", "admitted"}, {"changed", "changed since review"}, {"not-reviewed", "not reviewed"}};
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "flows"), i, f) {
		const char *cov = json_string_value(json_object_get(f, "admission")), *why = json_string_value(json_object_get(f, "why"));
		for (size_t k = 0; k < 3; k++)
			if (strcmp(cov, cov_text[k][0]) == 0)
				cov = cov_text[k][1];
		printf("%s%s (%s): %s%s%s%s\n", i ? "\n" : "", json_string_value(json_object_get(f, "name")),
		       json_string_value(json_object_get(f, "kind")), cov, why ? " (" : "", why ? why : "", why ? ")" : "");
		fputs("  package  ", stdout);
		jig_text_put(stdout, json_string_value(json_object_get(f, "package")));
		fputc('\n', stdout);
		put_list("inputs", json_object_get(f, "inputs"));
		put_list("outputs", json_object_get(f, "outputs"));
		static const char *const kinds[][2] = {{"http", "http"}, {"agents", "agent"}, {"commands", "command"}, {"children", "child"}};
		bool first = true;
		for (size_t k = 0; k < 4; k++) {
			size_t n;
			json_t *x;
			json_array_foreach(json_object_get(json_object_get(f, "effects"), kinds[k][0]), n, x)
				put_effect(kinds[k][1], x, &first);
		}
		if (first)
			puts("  effects  none");
	}
	const char *refused = json_string_value(json_object_get(doc, "admission_refused"));
	if (refused) {
		fputs("\n", stdout);
		jig_text_put(stdout, refused);
		fputc('\n', stdout);
	} else if (!json_string_value(json_object_get(doc, "admitted_plan")))
		puts("\nno admitted Plan: jig review admits one");
}

int jig_cmd_list(int argc, char **argv)
{
	const char *only = NULL;
	struct jig_cli_args args = {.cmd = "list", .usage = USAGE, .positional = &only};
	if (jig_cli_parse(argc, argv, &args))
		return JIG_E_USAGE;
	const char *project = args.project;
	int json = args.json;
	struct jig_error e = {0};
	struct jig_project p;
	if (jig_project_open(project, &p, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	struct admitted a = {.plan = NULL};
	int r = only && !jig_project_flow(&p, only) ? jig_cli_known_flows(&p, only, &e) : jig_project_capture(&p, false, &e);
	json_t *doc = NULL;
	if (!r) {
		read_admitted(&p, &a);
		json_t *flows = json_array();
		for (size_t i = 0; i < p.n_flows; i++)
			if (!only || strcmp(only, p.flows[i].name) == 0)
				json_array_append_new(flows, flow_json(&a, &p.flows[i]));
		doc = json_pack("{s:s,s:s,s:s?,s:o}", "schema", JIG_LIST_SCHEMA, "project", project, "admitted_plan", a.plan ? a.sha : NULL,
				"flows", flows);
		if (doc && a.refused[0])
			json_object_set_new(doc, "admission_refused", json_string(a.refused));
		if (json)
			jig_cli_print_json(doc);
		else
			print_text(doc);
	} else jig_cli_fail(json, &e);
	json_decref(doc);
	json_decref(a.plan);
	jig_project_close(&p);
	return r ? e.code : 0;
}
