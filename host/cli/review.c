/* jig review: capture the project into its Package/0 store, build the Plan
 * against the installed snapshot, print it, and record admission after an
 * explicit yes. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "../flow/plan.h"
#include "../flow/plan_diff.h"
#include "../prepare/prepare.h"
#include "../util/fileio.h"
#include "commands.h"

/* The preparation's warning before resolution (prepare/prepare.h). */
static void warn(const char *text)
{
	jig_progress_clear();
	fprintf(stderr, "jig: warning: %s\n", text);
}

/* What capture found, as a line that stays. */
static void captured(const struct jig_project *p)
{
	size_t files = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < p->n_flows; i++)
		files += p->flows[i].package_files, bytes += p->flows[i].package_bytes;
	char b[32];
	jig_progress_bytes(b, sizeof(b), bytes);
	jig_progress_line("captured %zu Flows: %zu files, %s", p->n_flows, files, b);
}

/* A yes typed on the terminal; *asked says whether there was one to ask. */
static bool ask_yes(bool *asked)
{
	if (!(*asked = isatty(STDIN_FILENO)))
		return false;
	fprintf(stderr, "Admit this Plan? Type yes to admit: ");
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return false;
	line[strcspn(line, "\n")] = '\0';
	return strcmp(line, "yes") == 0;
}

/* The admitted Plan, when it is not this one: its document and the
 * changes since it (flow/plan_diff.h), or NULL (none admitted, or its
 * document is gone: then the Plan is shown as at a first review).
 * *already: this very Plan is admitted, its stored text intact (else shown and admitted again). */
static json_t *changes(const struct jig_project *p, const struct jig_plan *pl, char admitted[JIG_SHA256_HEX], json_t **was,
		       bool *already)
{
	struct jig_error ignored;
	*was = NULL;
	bool have = jig_plan_admitted(p, admitted, &ignored) == 0;
	json_t *doc = have && strcmp(admitted, pl->sha256) == 0 ? jig_plan_admitted_doc(p, admitted) : NULL;
	if ((*already = doc != NULL) || !have) {
		json_decref(doc);
		admitted[have ? JIG_SHA256_HEX - 1 : 0] = '\0';
		return NULL;
	}
	json_t *c = (*was = jig_plan_admitted_doc(p, admitted)) ? jig_plan_diff(p, *was, pl->doc, true) : NULL;
	if (!c) {
		json_decref(*was);
		*was = NULL;
	}
	return c;
}

/* A first review shows the Plan, what scopes share printed once; a
 * re-review what changed, and every new or changed part in full (issue
 * 44); --full the whole Plan, every scope in full. */
static void print_plan(const struct jig_plan *pl, const char *project, json_t *was, json_t *diff, const char *admitted, bool full)
{
	if (!full) {
		if (jig_plan_print_review(pl, project, was, diff, admitted, stdout) < 0)
			jig_plan_print(pl, project, stdout); /* out of memory: the long form, never nothing */
		fflush(stdout);
		return;
	}
	jig_plan_print(pl, project, stdout);
	if (diff) {
		printf("\nPlan %s\n  project ", pl->sha256);
		jig_text_put(stdout, project);
		printf("\n  changes since the admitted Plan %.12s (%zu):\n", admitted, json_array_size(diff));
		jig_plan_diff_print(diff, stdout);
	}
	fflush(stdout);
}

int jig_cmd_review(int argc, char **argv)
{
	const char *project = ".", *verification = NULL;
	int json = 0, yes = 0;
	bool resolution = false, full = false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--verification") == 0 && i + 1 < argc)
			verification = argv[++i];
		else if (strcmp(argv[i], "--yes") == 0)
			yes = 1;
		else if (strcmp(argv[i], "--allow-resolution-network") == 0)
			resolution = true;
		else if (strcmp(argv[i], "--full") == 0)
			full = true;
		else if (argv[i][0] != '-' && strcmp(project, ".") == 0 && i == argc - 1)
			project = argv[i];
		else {
			return jig_cli_usage(argc, argv, "unknown argument \"%s\"; usage: jig review [--yes] [--json] [--full] [--verification cached|strict|fast] [--allow-resolution-network] [PROJECT]", argv[i]);
		}
	}
	struct jig_error e = {0};
	struct jig_verifier v;
	if (!json)
		jig_progress_start(STDERR_FILENO); /* on a terminal only (util/progress.h) */
	if (jig_verifier_init(&v, verification, JIG_VERIFY_CACHED, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	struct jig_project p;
	if (jig_project_open(project, &p, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	struct jig_snapshot s;
	jig_progress_status("capturing %zu Flows", p.n_flows);
	int r = jig_project_capture(&p, true, &e);
	if (r) {
		jig_cli_fail(json, &e);
		jig_project_close(&p);
		return e.code;
	}
	if ((r = jig_cli_open_snapshot(&s, json)) != 0) {
		jig_project_close(&p);
		return r;
	}
	struct jig_plan pl;
	struct jig_prepare_phase ph;
	captured(&p);
	jig_progress_status("verifying the installed snapshot");
	r = jig_cli_verify_installation(&s, &v, &e);
	if (!r)
		jig_cli_sweep(); /* it launches preparation scopes: what abandoned Runs left first */
	if (!r && !(r = jig_prepare_phase_begin(&ph, &s, &v, &e))) {
		ph.allow_resolution = resolution;
		ph.warn = warn;
		r = jig_prepare_project(&p, &ph, &e);
		jig_prepare_phase_end(&ph);
	}
	if (!r)
		jig_progress_status("building the Plan");
	if (r < 0 || jig_plan_build(&p, &s, &pl, &e) < 0) {
		jig_cli_fail(json, &e);
		jig_verifier_finish(&v);
		jig_snapshot_close(&s);
		jig_project_close(&p);
		return e.code;
	}
	jig_progress_clear();
	char admitted[JIG_SHA256_HEX] = "";
	json_t *was;
	bool already;
	json_t *diff = changes(&p, &pl, admitted, &was, &already);
	if (json) {
		json_t *doc = json_pack("{s:s,s:s,s:O,s:b,s:o,s:O?}", "schema", JIG_REVIEW_SCHEMA, "plan_sha256", pl.sha256, "plan",
					pl.doc, "admitted", yes || already, "verification", jig_verifier_json(&v), "changes", diff);
		if (doc && diff)
			json_object_set_new(doc, "admitted_plan_sha256", json_string(admitted));
		jig_cli_print_json(doc);
		json_decref(doc);
	} else if (!already || full)
		print_plan(&pl, project, was, diff, admitted, full);
	json_decref(diff);
	json_decref(was);
	int code = 0;
	bool asked = false;
	if (already) { /* nothing to ask or to write (issue 44) */
		if (!json)
			printf("Plan %s is already admitted; nothing changed\n", pl.sha256);
	} else if (yes || (!json && ask_yes(&asked))) {
		if (jig_plan_admit(&p, &pl, &e) < 0) {
			jig_cli_fail(json, &e);
			code = e.code;
		} else if (!json)
			printf("admitted Plan %s\n", pl.sha256);
	} else if (!json) { /* its own exit status, so a script can tell (--json: "admitted": false, decision 160) */
		printf(asked ? "not admitted (answer yes, or pass --yes)\n"
			     : "not admitted: no terminal to ask and no --yes (pass --yes to admit this Plan)\n");
		code = JIG_E_NOT_ADMITTED;
	}
	jig_plan_free(&pl);
	jig_verifier_finish(&v);
	jig_snapshot_close(&s);
	jig_project_close(&p);
	return code;
}
