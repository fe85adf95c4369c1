/* jig-evidence: `jig session --evidence` (docs/session-evidence.md), its
 * own program (decision 340), so the trusted `jig` binary carries none of
 * the evidence machinery. jig becomes this program (fexecve of
 * <prefix>/libexec/jig-evidence) with the session's arguments; it prepares
 * the session exactly as jig does (everything that refuses a session
 * refuses its evidence run), prints the plan, runs the suite and prints its
 * own output, like a command of host/cli/. */
#include <stdio.h>
#include <string.h>

#include "evidence/evidence.h"
#include "session/session.h"
#include "util/json.h"
#include "util/note.h"

static int fail(int json, const struct jig_error *e)
{
	if (json) {
		json_t *doc = json_pack("{s:s,s:i,s:s}", "schema", JIG_ERROR_SCHEMA, "exit", e->code, "error", e->msg);
		jig_json_print(stdout, doc);
		json_decref(doc);
	}
	fprintf(stderr, "jig: %s\n", e->msg);
	return e->code;
}

int main(int argc, char **argv)
{
	struct jig_session_args a;
	struct jig_error e = {0};
	jig_note_to(stderr); /* the rooms' notes (util/note.h): the end scan's findings, a sweep's lines */
	if (jig_session_parse_args(argc - 1, argv + 1, &a, &e) < 0)
		return fail(a.json, &e);
	if (!a.evidence || a.dry_run) {
		jig_err(&e, JIG_E_USAGE, "%s is run by `jig session --evidence`", JIG_EVIDENCE_PROGRAM);
		return fail(a.json, &e);
	}
	struct jig_session *s = NULL;
	if (jig_session_prepare(&a.rq, &s, &e) < 0)
		return fail(a.json, &e);
	jig_session_plan_print(s, stderr);
	int r = jig_session_evidence(s, a.evidence_out, &e);
	jig_session_free(s);
	return r < 0 ? fail(a.json, &e) : 0;
}
