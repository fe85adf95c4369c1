/* The HTTP Request effect (issue 6): the coordinator's half. A Flow asks
 * over Run/0 for one of its reviewed routes; the coordinator checks the
 * request against the grant (method and URL exactly, the body's size and
 * Schema/0), looks up the operator's binding, and runs plugins/http's worker
 * in its own scope (the host network, the worker, its libraries, the trust
 * store and nothing else), the request and bearer on a private stdin. */
#ifndef JIG_EFFECTS_HTTP_H
#define JIG_EFFECTS_HTTP_H

#include <jansson.h>

#include "sandbox/door.h"

#include "flow/plan.h"
#include "flow/project.h"
#include "util/limits.h"

struct jig_http_effect_env {
	struct jig_sandbox *sandbox;
	const struct jig_plan *plan; /* its composed worker scopes */
	int init_fd;		     /* the trusted launcher */
	const char *flow;
	int abort_fd;	   /* readable when the Run ends: the request is cancelled */
	int companion_pid; /* see struct jig_scope */
};

/* Runs the Run/0 message op ({"op":"http","route",...}) for Flow f. Always
 * sets *reply (for the Flow) and *evidence (for the record; never the
 * credential). *interrupted is the stop signal the worker's supervisor took,
 * or 0. */
void jig_http_effect(const struct jig_http_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
		     json_t **evidence, int *interrupted);

/* The worker's parsed result (jig_worker_result_parse) to the Flow's
 * *reply and the evidence ev; *reply is always set. Fuzzed (fuzz/). */
void jig_http_deliver(json_t *result, json_t *ev, json_t **reply);

/* The same for an API-backed Agent's turn (effects/agent_api.c): the only
 * way to use an http route that an Agent route names. */
void jig_http_effect_for_agent(const struct jig_http_effect_env *env, const struct jig_flow *f, json_t *op,
			       json_t **reply, json_t **evidence, int *interrupted);

#endif
