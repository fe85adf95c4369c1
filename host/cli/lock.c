/* jig lock [FLOW] [--project DIR] [--json] [--verification M] (issue 35):
 * each named Flow's bun.lock (or every Flow's that declares npm
 * dependencies) written or refreshed by the pinned Bun in the installer
 * scope against the operator's registry; the Plan of that scope first. */
#include <stdio.h>
#include <string.h>

#include <jig/sandbox.h>

#include "../prepare/prepare.h"
#include "../sandbox/door.h"
#include "commands.h"

#define USAGE "usage: jig lock [FLOW] [--project DIR] [--json] [--verification cached|strict|fast]"

struct shown {
	int json;
	const struct jig_snapshot *s;
};

static int host_ready(const struct jig_snapshot *s, struct jig_error *e);

/* The lock's Plan, once this host can run it (a refusal before any Plan). */
static int show(const struct jig_lock_plan *pl, void *arg, struct jig_error *e)
{
	const struct shown *sh = arg;
	int r = host_ready(sh->s, e);
	if (r)
		return r;
	FILE *out = sh->json ? stderr : stdout;
	fprintf(out,
		"jig lock: flow %s: the pinned Bun resolves the dependencies of %s/package.json against the registry %s\n"
		"  (the operator's npm.json), with this host's network, no package script, nothing installed; the requests are\n"
		"  selected by the dependencies and the registry's metadata. It writes only %s/bun.lock.\n",
		pl->flow, pl->dir, pl->registry, pl->dir);
	if (pl->refresh)
		fprintf(out, "  the existing bun.lock passes review's checks: it is refreshed (its versions kept where they still hold)\n");
	else if (pl->replaced_why[0])
		fprintf(out, "  the existing bun.lock is resolved anew: %s\n", pl->replaced_why);
	fprintf(out, "  in the installer scope, its policy sha256 %s:\n", pl->policy->sha256);
	jig_scope_plan_print(pl->policy, "    ", out);
	fflush(out);
	return 0;
}

static int lock_one(struct jig_project *p, struct jig_flow *f, struct jig_prepare_phase *ph, int json, json_t *done,
		    struct jig_error *e)
{
	struct jig_lock_result res;
	struct shown sh = {json, ph->snapshot};
	int r = jig_prepare_lock(p, f, ph, show, &sh, &res, e);
	if (r)
		return r;
	if (!json)
		printf("%s %s/bun.lock: %zu package%s, %zu bytes%s\n", res.changed ? "wrote" : "unchanged", f->dir, res.packages,
		       res.packages == 1 ? "" : "s", res.bytes, res.refreshed && res.changed ? " (refreshed)" : "");
	json_array_append_new(done, json_pack("{s:s,s:s+,s:I,s:I,s:b,s:b,s:s}", "flow", f->name, "path", f->dir, "/bun.lock",
					      "packages", (json_int_t)res.packages, "bytes", (json_int_t)res.bytes, "changed",
					      res.changed, "refreshed", res.refreshed, "registry", ph->registry));
	return 0;
}

/* On a host that cannot contain the installer scope, jig lock refuses
 * before any Plan is printed (issue 46): the module's first problem, as
 * jig host check shows it (no delegation is none when systemd gives a
 * delegated scope). */
static int host_ready(const struct jig_snapshot *s, struct jig_error *e)
{
	struct jig_sandbox sb;
	struct jig_probe_result res;
	if (jig_sandbox_open(&sb, s, e) < 0)
		return -e->code;
	int r = jig_sandbox_probe(&sb, &res, e);
	jig_sandbox_close(&sb);
	if (r < 0)
		return r;
	char why[128];
	for (uint32_t i = 0; i < res.problem_count; i++) {
		const struct jig_host_problem *pr = &res.problems[i];
		if (strcmp(pr->id, "no-delegation") == 0 && jig_cli_systemd_usable(why, sizeof(why)))
			continue;
		return jig_err(e, JIG_E_HOST,
			       "this host cannot contain the installer scope jig lock runs the pinned Bun in (%s: %s); jig host check says what is missing; nothing was resolved or written",
			       pr->id, pr->what);
	}
	return 0;
}

/* Every Flow asked for: the one named, or each that declares npm
 * dependencies (one with a package.json and no dependencies is passed). */
static int lock_all(struct jig_project *p, const char *name, struct jig_prepare_phase *ph, int json, json_t *done,
		    struct jig_error *e)
{
	if (name) {
		const struct jig_flow *f = jig_project_flow(p, name);
		return f ? lock_one(p, (struct jig_flow *)f, ph, json, done, e) : jig_cli_known_flows(p, name, e);
	}
	int r = 0;
	for (size_t i = 0; !r && i < p->n_flows; i++) {
		struct jig_flow *f = &p->flows[i];
		if (f->recipe)
			continue;
		r = lock_one(p, f, ph, json, done, e);
		if (r && strstr(e->msg, "declares no dependencies") && e->code == JIG_E_USAGE)
			r = 0;
		else if (r && strstr(e->msg, "/package.json: no such file"))
			r = 0;
	}
	if (!r && json_array_size(done) == 0)
		r = jig_err(e, JIG_E_USAGE, "%s: no Flow declares npm dependencies (a package.json with dependencies); nothing to lock",
			    p->root);
	return r;
}

int jig_cmd_lock(int argc, char **argv)
{
	const char *name = NULL;
	struct jig_cli_args args = {.cmd = "lock", .usage = USAGE, .valued = "--verification", .positional = &name};
	if (jig_cli_parse(argc, argv, &args))
		return JIG_E_USAGE;
	const char *project = args.project, *verification = args.value;
	int json = args.json;
	struct jig_error e = {0};
	struct jig_verifier v;
	struct jig_project p;
	struct jig_snapshot s;
	if (jig_verifier_init(&v, verification, JIG_VERIFY_CACHED, &e) < 0 || jig_project_open(project, &p, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	int r = jig_cli_open_snapshot(&s, json);
	if (r) {
		jig_project_close(&p);
		return r;
	}
	json_t *done = json_array();
	struct jig_prepare_phase ph;
	if (!(r = jig_cli_verify_installation(&s, &v, &e))) {
		jig_cli_sweep(); /* it launches installer scopes: what abandoned Runs left first */
		if (!(r = jig_prepare_phase_begin(&ph, &s, &v, &e))) {
			r = lock_all(&p, name, &ph, json, done, &e);
			jig_prepare_phase_end(&ph);
		}
	}
	if (r)
		jig_cli_fail(json, &e);
	else if (json) {
		json_t *doc = json_pack("{s:s,s:O}", "schema", JIG_LOCK_SCHEMA, "locked", done);
		jig_cli_print_json(doc);
		json_decref(doc);
	}
	json_decref(done);
	jig_verifier_finish(&v);
	jig_snapshot_close(&s);
	jig_project_close(&p);
	return r ? e.code : 0;
}
