/* jig scope plan|run: run any program in a scope described by a policy
 * file. The host validates the policy and prints its permission plan; the
 * platform's sandbox module enforces it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jig/sandbox.h>
#include <jig/trace.h>

#include "../policy/scope_policy.h"
#include "../sandbox/door.h"
#include "../run/scope_run.h"
#include "../proc/terminal.h"
#include "../util/fileio.h"
#include "commands.h"




static json_t *result_json(const struct jig_scope_policy *p, const struct jig_scope_result *r)
{
	json_t *doc = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:b,s:b,s:b,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:s}",
			 "schema", JIG_SCOPE_RESULT_SCHEMA, "scope", p->name, "policy_sha256", p->sha256,
			 "outcome", jig_scope_outcome_name(r->outcome), "exit_status", r->exit_status, "signal",
			 r->signal, "core_dumped", r->core_dumped != 0, "fenced", r->fenced != 0,
			 "cleanup_confirmed", r->cleanup_confirmed != 0, "launcher_reported",
			 r->launcher_reported != 0, "oom_kills", (json_int_t)r->oom_kills,
			 "pids_max_hits", (json_int_t)r->pids_max_hits, "memory_peak_bytes",
			 (json_int_t)r->memory_peak_bytes, "cpu_usec", (json_int_t)r->cpu_usec,
			 "cpu_throttled_usec", (json_int_t)r->cpu_throttled_usec, "wall_ms",
			 (json_int_t)r->wall_ms, "cgroup", r->cgroup, "error", r->error);
	json_object_set_new(doc, "payload_started", jig_scope_payload_started_json(r));
	return doc;
}

#define USAGE "usage: jig scope plan POLICY [--json] | jig scope run [--terminal] POLICY [--dry-run] [--json] [--record FILE] -- PROGRAM [ARGS...]"

static int write_record(const char *path, json_t *doc)
{
	char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	FILE *f = txt ? fopen(path, "we") : NULL;
	int bad = !f || fputs(txt, f) < 0 || fputc('\n', f) < 0;
	if (f && fclose(f) != 0)
		bad = 1;
	free(txt);
	if (bad)
		fprintf(stderr, "jig: %s: cannot write the record: %s\n", path, strerror(errno));
	return bad ? JIG_E_INTERNAL : 0;
}

static int scope_run(const struct jig_scope_policy *p, char **prog, const char *record, int json, struct jig_terminal *term,
		     int in_transient_scope, int argc, char **argv)
{
	struct jig_scope_result r;
	struct jig_error e = {0};
	if ((term && jig_terminal_open(term, &e) < 0) || jig_scope_run(p, prog, term, &r, &e) < 0) {
		if (term)
			jig_terminal_stop(term);
		char why[128];
		if (r.needs_delegation && !in_transient_scope && jig_cli_systemd_usable(why, sizeof(why))) {
			/* Host policy: a delegated subtree from systemd is as good as
			 * one the caller already had; everything is re-validated by the
			 * new process. */
			jig_cli_reexec_in_transient_scope("scope", argc, argv);
			jig_err(&e, JIG_E_HOST, "scope %s refused: %s; and %s failed: %s", p->name, r.error, JIG_SYSTEMD_RUN,
				strerror(errno));
		} else if (r.needs_delegation && !in_transient_scope)
			jig_err(&e, JIG_E_HOST, "scope %s refused: %s; no transient scope either: %s", p->name, r.error, why);
		else if (in_transient_scope && e.code == JIG_E_HOST)
			jig_err(&e, JIG_E_HOST, "scope %s refused: %s (even inside the transient systemd scope)", p->name,
				r.error[0] ? r.error : "launch failed");
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (term)
		jig_terminal_stop(term);
	json_t *doc = result_json(p, &r);
	int code = record ? write_record(record, doc) : 0;
	if (json)
		jig_cli_print_json(doc);
	json_decref(doc);
	if (r.outcome != JIG_SCOPE_EXITED || !r.cleanup_confirmed) {
		char sig[160] = "";
		if (r.signal)
			jig_scope_signal_text(sig, sizeof(sig), ": the payload", r.signal, r.core_dumped, NULL);
		fprintf(stderr, "jig: scope %s: %s%s%s", p->name, jig_scope_outcome_name(r.outcome), sig, r.error[0] ? ": " : "");
		jig_text_put(stderr, r.error);
		fputc('\n', stderr);
	}
	return code ? code : jig_scope_exit_status(&r);
}

int jig_cmd_scope(int argc, char **argv, int in_transient_scope)
{
	if (argc < 2)
		return jig_cli_usage(argc, argv, USAGE);
	/* --terminal: jig's pty for the policy's "@terminal" descriptors. */
	bool run = strcmp(argv[0], "run") == 0, terminal = run && strcmp(argv[1], "--terminal") == 0;
	if (terminal && argc < 3)
		return jig_cli_usage(argc, argv, USAGE);
	const char *sub = argv[0], *policy_path = argv[terminal ? 2 : 1], *record = NULL;
	int json = 0, dry = 0, i = terminal ? 3 : 2;
	if (!run && strcmp(sub, "plan") != 0)
		return jig_cli_usage(argc, argv, USAGE);
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (run && strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (run && strcmp(argv[i], "--record") == 0 && i + 1 < argc)
			record = argv[++i];
		else
			return jig_cli_usage(argc, argv, "scope %s: unknown argument \"%s\"; %s", sub, argv[i], USAGE);
	}
	char **prog = i < argc ? argv + i + 1 : NULL;
	if (run && (!prog || !prog[0])) {
		return jig_cli_usage(argc, argv, "scope run: missing -- PROGRAM; %s", USAGE);
	}

	struct jig_scope_policy p;
	struct jig_error e = {0};
	const char *home = jig_caller_home();
	JIG_TRACE_POINT("cli: caller's home looked up");
	if (jig_scope_policy_load(policy_path, home, run && !terminal ? 0 : JIG_POLICY_SLOTS, &p, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (!run || dry) {
		if (json) {
			json_t *doc = jig_scope_plan_json(&p);
			if (run)
				json_object_set_new(doc, "argv", json_pack("[]"));
			for (size_t k = 0; run && prog[k]; k++)
				json_array_append_new(json_object_get(doc, "argv"), json_string(prog[k]));
			jig_cli_print_json(doc);
			json_decref(doc);
		} else {
			jig_scope_plan_print(&p, "", stdout);
			if (run) {
				printf("  program");
				for (size_t k = 0; prog[k]; k++) {
					fputc(' ', stdout);
					jig_text_put(stdout, prog[k]);
				}
				printf("\n  (dry run: nothing was started)\n");
			}
		}
		jig_scope_policy_free(&p);
		return 0;
	}

	jig_cli_sweep(); /* what abandoned Runs left (docs/reliability.md) */
	struct jig_terminal term;
	int code = scope_run(&p, prog, record, json, terminal ? &term : NULL, in_transient_scope, argc, argv);
	jig_scope_policy_free(&p);
	return code;
}
