/* jig session: one interactive, least-privilege agent session composed from
 * the catalog's `session` kind and the operator's trusted repository map
 * (docs/session.md). prepare does every check that can refuse before a
 * launch (the map, the repository, the provider, composition);
 * the plan is printed from the same object that launches. */
#ifndef JIG_SESSION_SESSION_H
#define JIG_SESSION_SESSION_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include <jig/sandbox.h>

#include "util/error.h"

/* High-risk flags: each appears in the plan and, until built, refuses. */
#define JIG_SESSION_HR_DOCKER 0x01u
#define JIG_SESSION_HR_BROWSER 0x02u
#define JIG_SESSION_HR_VOICE 0x04u
#define JIG_SESSION_HR_RELEASE 0x08u
#define JIG_SESSION_HR_PRODUCTION 0x10u
#define JIG_SESSION_HR_MAINTENANCE 0x20u
#define JIG_SESSION_HR_ALL 0x3fu

struct jig_session_request {
	const char *cwd;      /* where jig session runs (resolved to its repository) */
	const char *provider; /* NULL: the repository's default */
	unsigned high_risk;   /* JIG_SESSION_HR_* bits */
	char *const *agent_args; /* NULL-terminated, after "--"; NULL: none */
};

struct jig_session; /* opaque */

/* The map, the repository, the provider, composition: every
 * refusal before launch. 0 and *out, or -code with e (one line). */
int jig_session_prepare(const struct jig_session_request *rq, struct jig_session **out, struct jig_error *e);

/* The plan (--json and text), from the object that launches. */
json_t *jig_session_plan_json(const struct jig_session *s);
void jig_session_plan_print(const struct jig_session *s, FILE *out);

/* The canonical policy's digest (hex) and bytes: what the plan pins. */
const char *jig_session_policy_sha256(const struct jig_session *s);
const char *jig_session_policy_canonical(const struct jig_session *s);

/* Launches: argv NULL = the agent; otherwise this program instead (E's
 * probe), with extra read-only binds added to the plan and the digest
 * before launch. stdio_fd -1: the pty relay; otherwise the descriptor given
 * as 0/1/2. */
int jig_session_launch(struct jig_session *s, const char *const *argv, const struct jig_scope_bind *extra,
		       size_t n_extra, int stdio_fd, struct jig_scope_result *res, struct jig_error *e);

void jig_session_free(struct jig_session *s);

/* The program `jig session --evidence` becomes: <prefix>/libexec/jig-evidence
 * (host/evidence/, docs/session-evidence.md; decision 340). */
#define JIG_EVIDENCE_PROGRAM "jig-evidence"

/* The argument parser of `jig session`, pure (tests/unit/session): fills rq
 * (agent_args point into argv), dry_run and json; -JIG_E_USAGE with one line. */
struct jig_session_args {
	struct jig_session_request rq;
	int dry_run;
	int json;
	int evidence; /* --evidence (engineer E) */
	const char *evidence_out; /* --out FILE: where --evidence also writes its summary */
};
int jig_session_parse_args(int argc, char **argv, struct jig_session_args *a, struct jig_error *e);
/* The selector arg is (the reviewed set of docs/session.md, then extra,
 * a client's own), or NULL. */
const char *jig_session_selector(const char *arg, const char *const *extra, size_t n_extra);
/* "docker" for JIG_SESSION_HR_DOCKER, ... */
const char *jig_session_high_risk_name(unsigned bit);

#endif
