/* jig session: an interactive, least-privilege agent session in the
 * repository of the working directory (docs/session.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../run/scope_run.h"
#include "../session/session.h"
#include "../snapshot/snapshot.h"
#include "commands.h"

extern char **environ;

static int fail(int json, struct jig_error *e)
{
	jig_cli_fail(json, e);
	return e->code;
}

/* The evidence run is its own program, <prefix>/libexec/jig-evidence
 * (host/evidence/, decision 340): this process becomes it, with the same
 * arguments; it prepares the session itself and prints its own output. */
static int evidence(int argc, char **argv, int json)
{
	struct jig_error e = {0};
	int fd = jig_program_open(JIG_EVIDENCE_PROGRAM, &e);
	if (fd < 0)
		return fail(json, &e);
	char **v = calloc((size_t)argc + 2, sizeof(*v));
	if (!v) {
		close(fd);
		jig_err(&e, JIG_E_INTERNAL, "session --evidence: out of memory");
		return fail(json, &e);
	}
	v[0] = JIG_EVIDENCE_PROGRAM;
	memcpy(v + 1, argv, (size_t)argc * sizeof(*v));
	fflush(NULL);
	fexecve(fd, v, environ);
	jig_err(&e, JIG_E_HOST, "session --evidence: cannot run %s: %s", JIG_EVIDENCE_PROGRAM, strerror(errno));
	close(fd);
	free(v);
	return fail(json, &e);
}

int jig_cmd_session(int argc, char **argv, int in_transient_scope)
{
	struct jig_session_args a;
	struct jig_error e = {0};
	if (jig_session_parse_args(argc, argv, &a, &e) < 0)
		return jig_cli_usage(argc, argv, "%s", e.msg);
	if (a.evidence && !a.dry_run) /* docs/session-evidence.md */
		return evidence(argc, argv, a.json);
	struct jig_session *s = NULL;
	if (jig_session_prepare(&a.rq, &s, &e) < 0)
		return fail(a.json, &e);
	/* The plan before anything starts, from the object that launches. */
	if (a.json) {
		/* On stdout only for a dry run: otherwise stdout is the agent's terminal. */
		json_t *doc = jig_session_plan_json(s);
		jig_json_print(a.dry_run ? stdout : stderr, doc);
		json_decref(doc);
	} else
		jig_session_plan_print(s, a.dry_run ? stdout : stderr);
	if (a.dry_run && !a.rq.high_risk) {
		if (!a.json)
			printf("  (dry run: nothing was started)\n");
		jig_session_free(s);
		return 0;
	}
	struct jig_scope_result res;
	int r = jig_session_launch(s, NULL, NULL, 0, -1, &res, &e);
	jig_session_free(s);
	/* SIGINT, SIGTERM or SIGHUP to jig: the scope fenced, 128+n and one
	 * line (decision 218). */
	if (res.interrupted_by > 0 && res.interrupted_by < 65) {
		const char *n = sigabbrev_np(res.interrupted_by);
		fprintf(stderr, "jig: session stopped by SIG%s (signal %d); the agent was stopped and its scope fenced%s%s\n",
			n ? n : "?", (int)res.interrupted_by, r < 0 ? ": " : "", r < 0 ? e.msg : "");
		return 128 + res.interrupted_by;
	}
	char why[128];
	if (r < 0 && res.needs_delegation && !in_transient_scope && jig_cli_systemd_usable(why, sizeof(why)))
		/* A delegated subtree from systemd, as jig scope run does; the
		 * new process checks everything again. */
		jig_cli_reexec_in_transient_scope("session", argc, argv);
	if (r < 0)
		return fail(a.json, &e);
	return jig_scope_exit_status(&res);
}
