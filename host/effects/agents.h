/* The Agent effect (issue 15, docs/agents.md): one turn of an operator's
 * native ACP client in a provider scope of its own.
 *
 * The operator configures providers in ${XDG_CONFIG_HOME:-~/.config}/jig/
 * agents.json (the operator's, mode 0600, not a link): the client's
 * command, the read-only trees it needs, its non-secret environment, the
 * version it must report, and where its credential comes from. A Flow's
 * route names a provider id and a model; the Plan pins the provider's
 * identity (client, command, the digest of every file the command names,
 * version, environment, the credential's variable name, model) and the
 * provider scope. Credentials are never in the Plan, the project, the
 * Flow, a record or a log: the coordinator reads them per turn and hands
 * them to plugins/acp's worker on its private stdin. */
#ifndef JIG_EFFECTS_AGENTS_H
#define JIG_EFFECTS_AGENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "flow/project.h"
#include "sandbox/door.h"
#include "util/error.h"

#define JIG_AGENTS_CONFIG_FORMAT "jig-agents/1"
#define JIG_AGENT_MAX_TREES 8
#define JIG_AGENT_MAX_ARGS 16
#define JIG_AGENT_PI_MAX_ARGS 4
/* The worker's deadline: the route's, plus time to start and stop. */
#define JIG_AGENT_WORKER_GRACE_MS 10000

struct jig_agent_provider {
	char *id;
	char *client;  /* "acp": a generic ACP client; "claude-code", "codex", "pi": with jig's profile */
	json_t *command; /* [absolute path, args...] */
	json_t *trees;	 /* absolute host paths, bound read-only at their own paths */
	json_t *env;	 /* non-secret client environment {NAME: value} */
	char *version;	 /* the version the client must report (agentInfo) */
	char *model_env; /* the variable that carries the route's model, or NULL */
	char *credential_env;	/* the variable the credential is projected into, or NULL */
	char *credential;	/* only with the secret (jig_agent_provider_get(..., true, ...)) */
	json_t *profile; /* jig's profile for the client {env, args, session_meta?, auth_method?, select_model, pi_args?}, or NULL */
	json_t *pi_command; /* client "pi": Pi's command [absolute paths], started by jig's launcher; else NULL */
	char *pi_models;    /* client "pi": the path of Pi's models.json; else NULL */
};

/* Reads the operator's provider id. An unsafe (owner, mode, link) or
 * malformed file, a missing file or an unknown id refuses (-JIG_E_USAGE).
 * With secret, also reads the credential (value or file). */
int jig_agent_provider_get(const char *id, bool secret, struct jig_agent_provider *p, struct jig_error *e);
/* Wipes the credential and frees. */
void jig_agent_provider_free(struct jig_agent_provider *p);

/* The provider identity the Plan pins for a route: every non-secret fact
 * of the provider plus the digest of each file its command names, and the
 * model. Hashes the files now. */
int jig_agent_identity(const struct jig_agent_provider *p, const char *model, json_t **out, struct jig_error *e);
/* The variables the client gets from the provider (its env, its profile's,
 * model_env, the credential's) may not replace the provider scope's own
 * (scope_env, the composed policy's): the Plan prints those as the
 * client's. */
int jig_agent_env_fits(const struct jig_agent_provider *p, json_t *scope_env, struct jig_error *e);
/* Where a current identity differs from the reviewed one: one line naming
 * the first difference, or NULL when equal. */
const char *jig_agent_identity_diff(json_t *reviewed, json_t *now, char *buf, size_t cap);

struct jig_plan;
struct jig_http_effect_env;
struct jig_agent_effect_env {
	const struct jig_http_effect_env *http; /* API-backed routes send through it */
	struct jig_sandbox *sandbox;
	const struct jig_plan *plan; /* the routes' identities and composed scopes */
	int init_fd;		     /* the trusted launcher */
	int abort_fd;		     /* readable when the Run ends: the turn is cancelled */
	int companion_pid;	     /* see struct jig_scope */
	int statefd;		     /* <project>/.jig: the retained-session store */
};

/* Runs the Run/0 message {"op":"agent","route","instructions"?,"skills"?,
 * "input"?,"session"?} for Flow f ("session": a reference an earlier turn
 * of a retain_sessions route returned, consumed here). Always sets *reply and *evidence (never the
 * credential). *interrupted is a stop signal the worker's supervisor took. */
/* The ACP worker's parsed result (jig_worker_result_parse) to the Flow's
 * *reply and the evidence ev: an answer holding credential (if known) is
 * withheld; *reply is always set. Fuzzed on its own (fuzz/). */
void jig_agent_deliver(json_t *result, const char *credential, json_t *ev, json_t **reply, size_t prompt_bytes);

void jig_agent_effect(const struct jig_agent_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
		      json_t **evidence, int *interrupted);

/* An API-backed route's turn (effects/agent_api.c): the request as data,
 * through the route's http grant. */
void jig_agent_api_turn(const struct jig_agent_effect_env *env, const struct jig_flow *f, const struct jig_agent_grant *g,
			json_t *op, size_t prompt_bytes, json_t *ev, json_t **reply, int *interrupted);

#endif
