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

#include "config/agent_config.h"
#include "flow/project.h"
#include "sandbox/door.h"
#include "util/error.h"

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
