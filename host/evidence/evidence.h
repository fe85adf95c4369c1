/* Negative evidence for a session (issue 34; docs/session-evidence.md).
 *
 * The suite is derived from the session's own plan and the trusted map,
 * never from repository files: what the mapping grants must be reachable
 * and everything near it must not be. jig-session-probe (inscope/) runs the
 * checks inside the session's scope; the host parses its bounded output,
 * keeps the raw results (0600) and writes a redacted summary
 * (jig-session-evidence/1) that is schema-checked and scanned for canary
 * secrets and credential names before it is written. */
#ifndef JIG_EVIDENCE_EVIDENCE_H
#define JIG_EVIDENCE_EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define JIG_EVIDENCE_FORMAT "jig-session-evidence/1"
#define JIG_EVIDENCE_SCHEMA "libexec/session-evidence.schema.json"
#define JIG_EVIDENCE_PROBE "libexec/jig-session-probe"
/* The variable an operator sets to a canary value of their own. */
#define JIG_EVIDENCE_CANARY_VAR "JIG_EVIDENCE_CANARY"

enum jig_evidence_outcome { JIG_EV_ALLOW, JIG_EV_DENY, JIG_EV_ERROR, JIG_EV_MISSING };

struct jig_evidence_check {
	char id[65];  /* [a-z0-9._-]{1,64}: what the summary names */
	char kind[8]; /* read, write, tmpdir, env, tcp, connect, create, rename, nest (the probe's); host (jig's own, after the probe) */
	bool expect_allow;
	char *arg;    /* a path, a variable name or an address: raw evidence only */
	bool vacuous; /* the target does not exist on the host: the denial proves little */
	int actual;   /* enum jig_evidence_outcome, JIG_EV_MISSING until the probe answers */
	char why[16]; /* the probe's errno name */
};

struct jig_evidence_suite {
	struct jig_evidence_check *c;
	size_t n, cap;
};

/* What the suite is derived from: the session's plan and the map (the
 * caller fills it from them, and creates the decoys it names). */
struct jig_evidence_inputs {
	const char *worktree; /* the mapped worktree, as the plan grants it */
	bool worktree_rw;
	const char *const *siblings; /* other repositories of the map and other worktrees: never granted */
	size_t n_siblings;
	const char *tmpdir;        /* the session's private TMPDIR */
	const char *decoy_tmpdir;  /* another session's TMPDIR (a decoy jig created) */
	const char *const *markers; /* decoy files in /tmp and the runtime parent */
	size_t n_markers;
	const char *const *private_dirs; /* ~/.ssh, ~/.config/gh, jig's config dir, the runtime parent's jig/sessions */
	size_t n_private_dirs;
	const unsigned *loopback; /* granted loopback ports (127.0.0.1) */
	size_t n_loopback;
	const unsigned *decoy_ports; /* loopback ports listened on by the host, never granted */
	size_t n_decoy_ports;
	const char *proxy; /* "127.0.0.1:PORT" or NULL */
	const char *const *connect; /* granted HOST:PORT through the proxy */
	size_t n_connect;
	char *const *caller_env; /* the caller's environment: its credential-like names must be absent */
	/* The Git directory (decision 213): NULL git_common, no Git checks. */
	const char *git_common;	 /* the trusted common directory */
	const char *git_dotgit;	 /* the worktree's .git entry */
	const char *const *git_modules; /* <common>/modules/<name> (submodules' Git directories) */
	size_t n_git_modules;
	const char *const *git_worktrees; /* <common>/worktrees/<id> (linked worktrees' own) */
	size_t n_git_worktrees;
	const char *git_nest; /* rw: a new directory in the worktree where the probe plants a repository */
};
/* The host's check after the probe: the planted repository was found and
 * quarantined by the end of the session (git.h). */
#define JIG_EVIDENCE_NESTED_KEPT "git.nested.kept"

/* Credential-like: one of the raw names the issue lists, or a name that
 * contains API_KEY, APIKEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL,
 * PRIVATE_KEY, ACCESS_KEY, AUTH_SOCK, or ends in _KEY (any case), or one
 * the scope policy refuses (jig_env_name_is_credential). */
bool jig_evidence_credential_name(const char *name, size_t len);

/* The suite for these inputs (suite zeroed first). */
int jig_evidence_suite_build(struct jig_evidence_suite *s, const struct jig_evidence_inputs *in, struct jig_error *e);
void jig_evidence_suite_free(struct jig_evidence_suite *s);
/* The probe's arguments (KIND:EXPECT:ID:ARG each), malloc'd and
 * NULL-terminated after prog; free with jig_evidence_argv_free. */
char **jig_evidence_argv(const struct jig_evidence_suite *s, const char *prog);
void jig_evidence_argv_free(char **argv);
/* The suite as raw evidence (suite.json): ids, kinds, expectations, args. */
json_t *jig_evidence_suite_json(const struct jig_evidence_suite *s);
/* Fills each check's actual from the probe's output (JSON lines): a line
 * for an id the suite did not issue, a repeated id or a malformed line is
 * an error; a check with no line stays JIG_EV_MISSING (never a pass). */
int jig_evidence_parse(struct jig_evidence_suite *s, const char *out, size_t len, struct jig_error *e);
/* Passed: every check answered as expected. */
bool jig_evidence_check_passed(const struct jig_evidence_check *c);
size_t jig_evidence_failed(const struct jig_evidence_suite *s);

/* The redacted summary. */
struct jig_evidence_meta {
	const char *run;        /* run id */
	const char *repository; /* the map's repository id */
	bool worktree_rw;
	const char *policy_sha256;       /* the session's policy (the agent's), 64 hex */
	const char *probe_policy_sha256; /* the same with the probe's bind: what ran */
	const char *snapshot_sha256;     /* the snapshot's manifest */
	const char *started, *finished;              /* YYYY-MM-DDTHH:MM:SSZ */
	const char *const *raw_names;                /* raw evidence files and their hashes */
	const char *const *raw_sha256;
	const unsigned long *raw_bytes;
	size_t n_raw;
	json_t *git; /* borrowed, may be NULL: the broker's git scope digest and hosts (decision 294) */
};
json_t *jig_evidence_summary(const struct jig_evidence_suite *s, const struct jig_evidence_meta *m);
/* The canaries to hunt: every credential-like variable's value in env and
 * JIG_EVIDENCE_CANARY's (values shorter than JIG_EVIDENCE_CANARY_MIN are
 * not canaries: decision 149). NULL-terminated, pointing into env. */
const char **jig_evidence_canaries(char *const *env);
/* text carries no canary and no credential-like name (one line naming
 * what survived, never the canary itself). */
int jig_evidence_redaction_check(const char *text, const char *const *canaries, struct jig_error *e);
/* Schema-checked, redaction-checked, canonical bytes (malloc'd). */
int jig_evidence_summary_bytes(json_t *summary, json_t *schema, const char *const *canaries, char **out,
			       struct jig_error *e);

struct jig_session;
/* jig session --evidence: runs the suite for s (prepared), writes the raw
 * results and the summary (and to out, when not NULL), prints one line per
 * failed check and a last line on stdout. 0 when every check passed;
 * -JIG_E_INTERNAL (exit 1) when any failed; another -code when the run
 * itself could not be made or its summary would leak. */
int jig_session_evidence(struct jig_session *s, const char *out, struct jig_error *e);

/* A run id: UTC time and 64 random bits, "YYYYMMDDTHHMMSSZ-<16 hex>". */
int jig_evidence_run_id(char out[40], struct jig_error *e);

#endif
