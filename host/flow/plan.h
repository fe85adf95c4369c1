/* The Plan (jig-plan/1): what the operator reviews and admits. Canonical
 * JSON with a SHA-256 identity over the captured package digests, each
 * Flow's composed scope (policy digest and permission plan) and each HTTP
 * route's worker scope, the runtime, the capability catalog and the launch
 * identity of the installed snapshot. It never holds a secret; its host
 * paths are the installation's and the system's that the scopes bind. */
#ifndef JIG_FLOW_PLAN_H
#define JIG_FLOW_PLAN_H

#include <jansson.h>
#include <stdio.h>

#include "flow/project.h"
#include "policy/catalog.h"
#include "snapshot/snapshot.h"
#include "snapshot/verify.h"

#define JIG_PLAN_FORMAT "jig-plan/1"

/* Files of the snapshot a Flow run uses (launch identity). */
#define JIG_RUNTIME_BUN "libexec/bun"
#define JIG_RUNTIME_BOOT "libexec/runtime/boot.js"
#define JIG_SCOPE_INIT_FILE "libexec/jig-scope-init"
#define JIG_SANDBOX_MODULE_FILE "modules/" JIG_SANDBOX_MODULE ".so" /* JIG_SANDBOX_MODULE: the build's */
#define JIG_HTTP_MODULE_FILE "modules/http.so" /* with JIG_HTTP_WORKER_FILE, if a Flow has grants */
#define JIG_ACP_MODULE_FILE "modules/acp.so"   /* with JIG_ACP_WORKER_FILE, if a Flow has Agent routes */


/* One composed scope of the Plan: a Flow's (route NULL) or the worker of
 * one of its HTTP routes. */
struct jig_plan_scope {
	const char *flow, *route; /* point into the project */
	struct jig_scope_template t;
};

struct jig_plan {
	json_t *doc;
	char *canonical;
	char sha256[JIG_SHA256_HEX];
	/* The scopes whose policy digests and permission plans the Plan holds:
	 * what the launch consumes. */
	struct jig_plan_scope *scopes;
	size_t n_scopes;
};

/* The snapshot files Flows use (the sandbox module, the launcher, Bun, the
 * runtime support, the capability catalog, and the http module and worker
 * where installed): what every review, Run and inspection verifies. */
#define JIG_PLAN_MAX_INSTALLED 11
size_t jig_plan_installed_files(const struct jig_snapshot *s, const char *out[JIG_PLAN_MAX_INSTALLED]);
/* Verifies those files by v's mode, each once; with launcher_fd, the
 * launcher is also opened (verified) and returned there. */
int jig_plan_verify_installation(const struct jig_snapshot *s, struct jig_verifier *v, int *launcher_fd,
				 struct jig_error *e);

/* Builds the Plan of a captured project against the installed snapshot. */
int jig_plan_build(const struct jig_project *p, const struct jig_snapshot *s, struct jig_plan *out,
		   struct jig_error *e);
void jig_plan_free(struct jig_plan *pl);
/* The composed scope of Flow flow (route NULL) or of its route's worker. */
const struct jig_scope_template *jig_plan_scope(const struct jig_plan *pl, const char *flow, const char *route);
/* Composes one Flow's scope, or one HTTP route's worker scope, from the
 * catalog: the same function for the Plan and for the launch. */
int jig_plan_compose_flow(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_flow *f,
			  struct jig_scope_template *t, struct jig_error *e);
int jig_plan_compose_http(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_http_grant *g,
			  struct jig_scope_template *t, struct jig_error *e);
int jig_plan_compose_command(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_command_grant *g,
			     struct jig_scope_template *t, struct jig_error *e);
struct jig_agent_grant;
struct jig_agent_provider;
int jig_plan_compose_agent(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_agent_grant *g,
			   const struct jig_agent_provider *p, struct jig_scope_template *t, struct jig_error *e);
/* The Plan's entry for Flow flow's Agent route (route, identity, caps,
 * provider_scope), or NULL. */
/* The Plan's entry of flow, or NULL (borrowed). */
json_t *jig_plan_flow(const struct jig_plan *pl, const char *flow);
json_t *jig_plan_agent(const struct jig_plan *pl, const char *flow, const char *route);
/* The whole Plan, every scope's permission plan in full (jig review --full). */
void jig_plan_print(const struct jig_plan *pl, const char *project, FILE *out);
/* The Plan for review: what the scopes of a kind share printed once, each
 * scope then showing only what it has besides. With was (the admitted
 * Plan's document), its changes (flow/plan_diff.h) and its identity
 * admitted: the changes first, then every Flow, route, binding and scope
 * that is not exactly the admitted one in full, the rest one line each.
 * Presentation only: the Plan is unchanged. -1: out of memory. */
int jig_plan_print_review(const struct jig_plan *pl, const char *project, json_t *was, json_t *changes, const char *admitted,
			  FILE *out);

/* Admission: <project>/.jig/admitted/<sha>.json plus .jig/admission.json
 * naming it, MACed under the operator's secret for this project directory
 * and uid (state/state.h, decision 190). */
int jig_plan_admit(const struct jig_project *p, const struct jig_plan *pl, struct jig_error *e);
/* The admitted Plan identity: 0; -JIG_E_USAGE if none; -JIG_E_NOT_ADMITTED
 * if the admission there is not this operator's for this directory. */
int jig_plan_admitted(const struct jig_project *p, char out[JIG_SHA256_HEX], struct jig_error *e);

#endif
