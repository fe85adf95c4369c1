/* The Plan: compose every scope from the catalog and build the document
 * (printing: flow/plan_print.c; admission: flow/admission.c). */
#include "flow/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jig/acp.h>
#include <jig/http.h>
#include <jig/module.h>
#include <jig/trace.h>

#include "config/agent_config.h"
#include "policy/grant_url.h"
#include "flow/recipe.h"
#include "flow/timeout.h"
#include "flow/binding.h"
#include "flow/plan_binding.h"
#include "policy/catalog.h"
#include "policy/scope_policy.h"
#include "snapshot/identity.h"
#include "snapshot/loader.h"
#include "util/cleanup.h"
#include "flow/prepared.h"
#include "util/limits.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

static const struct jig_manifest_file *snapshot_file(const struct jig_snapshot *s, const char *path)
{
	return jig_manifest_find_file(&s->m, path);
}

static json_t *strv(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

size_t jig_plan_installed_files(const struct jig_snapshot *s, const char *out[JIG_PLAN_MAX_INSTALLED])
{
	static const char *const all[] = {JIG_SANDBOX_MODULE_FILE, JIG_SCOPE_INIT_FILE, JIG_RUNTIME_BUN,
					  JIG_RUNTIME_BOOT, JIG_CATALOG_FILE, JIG_HTTP_MODULE_FILE, JIG_HTTP_WORKER_FILE,
					  JIG_ACP_MODULE_FILE, JIG_ACP_WORKER_FILE, JIG_ACP_PI_LAUNCHER_FILE, JIG_RUNTIME_MARKDOWN};
	size_t n = 0;
	for (size_t i = 0; i < JIG_PLAN_MAX_INSTALLED; i++)
		if (i < 5 || snapshot_file(s, all[i]))
			out[n++] = all[i];
	return n;
}

/* Every grant URL must be one the host allows (policy/grant_url.h), as
 * plugins/http reads it: the host never parses URLs itself. */
static int check_grant_urls(const struct jig_project *p, const struct jig_snapshot *s, struct jig_error *e)
{
	struct jig_module_handle h;
	int r = jig_module_load(s, "http", JIG_KIND_HTTP, &h, e);
	if (r)
		return r;
	const struct jig_http_ops *ops = h.desc->ops;
	if (h.desc->ops_size < offsetof(struct jig_http_ops, url_parse) + sizeof(ops->url_parse) || !ops->url_parse)
		r = jig_err(e, JIG_E_INTEGRITY, "module http cannot read URLs (built against an older SDK)");
	for (size_t i = 0; !r && i < p->n_flows; i++)
		for (size_t k = 0; !r && k < p->flows[i].n_http; k++) {
			const struct jig_http_grant *g = &p->flows[i].http[k];
			char why[300] = "";
			struct jig_http_url u = {.struct_size = sizeof(u)};
			if (ops->url_parse(h.state, g->url, &u, why, sizeof(why)) != JIG_MOD_OK ||
			    jig_grant_url_allowed(g->url, &u, why, sizeof(why)) < 0)
				r = jig_err(e, JIG_E_USAGE, "%s/flow.json: http route \"%s\": URL %.200s %s", p->flows[i].dir,
					    g->route, g->url, why);
		}
	jig_module_unload(&h);
	return r;
}

/* The acp module speaks the protocol version jig's worker contract names. */
static int check_acp_module(const struct jig_snapshot *s, struct jig_error *e)
{
	struct jig_module_handle h;
	int r = jig_module_load(s, "acp", JIG_KIND_ACP, &h, e);
	if (r)
		return r;
	const struct jig_acp_ops *ops = h.desc->ops;
	if (h.desc->ops_size < sizeof(uint32_t) * 2 || ops->protocol_version != JIG_ACP_PROTOCOL_VERSION)
		r = jig_err(e, JIG_E_INTEGRITY, "module acp speaks another ACP version than %d; reinstall jig", JIG_ACP_PROTOCOL_VERSION);
	jig_module_unload(&h);
	return r;
}

static json_t *http_grant(const struct jig_http_grant *g)
{
	return json_pack("{s:s,s:s,s:s,s:O?,s:I,s:I,s:I,s:s}", "route", g->route, "method", g->method, "url", g->url,
			 "body_schema", g->body_schema, "max_request_bytes", (json_int_t)g->max_request_bytes,
			 "max_response_bytes", (json_int_t)g->max_response_bytes, "timeout_ms", (json_int_t)g->timeout_ms,
			 "bearer", "only if the operator binds one to this route and URL (never in the Plan)");
}

int jig_plan_compose_flow(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_flow *f,
			  struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	jig_scope_name(name, sizeof(name), "flow-", f->name, JIG_SCOPE_NAME_KEEP_PLAN);
	/* A Markdown recipe runs with the bundled interpreter (the catalog's
	 * markdown-flow kind: the same envelope, another argv); a Flow in a
	 * binding relation has the table's envelope (flow-bound). Review
	 * refuses a recipe in a binding relation. */
	struct jig_scope_facts facts = {.kind = f->recipe ? "markdown-flow" : f->bound ? "flow-bound" : "flow", .name = name,
					.snapshot_dir = s->dirpath, .entry = f->entry,
					.home = jig_caller_home()};
	return jig_catalog_compose(c, &facts, t, e);
}

int jig_plan_compose_http(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_http_grant *g,
			  struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	jig_scope_name(name, sizeof(name), "http-", g->route, JIG_SCOPE_NAME_KEEP_PLAN);
	/* The worker's deadline is the grant's, plus time to start and stop. */
	struct jig_scope_facts facts = {.kind = "http-worker", .name = name, .snapshot_dir = s->dirpath,
					.wall_ms = g->timeout_ms + JIG_HTTP_WORKER_GRACE_MS, .home = jig_caller_home()};
	return jig_catalog_compose(c, &facts, t, e);
}

int jig_plan_compose_agent(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_agent_grant *g,
			   const struct jig_agent_provider *p, struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	jig_scope_name(name, sizeof(name), "agent-", g->route, JIG_SCOPE_NAME_KEEP_PLAN);
	const char *trees[JIG_AGENT_MAX_TREES];
	size_t n = 0;
	json_t *v;
	json_array_foreach(p->trees, n, v)
		trees[n] = json_string_value(v);
	/* With the operator's egress: a private network namespace whose only
	 * way out is jig's CONNECT relay to exactly those HOST:PORT. */
	const char *egress[JIG_POLICY_MAX_CONNECT];
	size_t ne = 0;
	json_array_foreach(p->egress, ne, v)
		egress[ne] = json_string_value(v);
	struct jig_scope_facts facts = {.kind = p->egress ? "agent-provider-egress" : "agent-provider", .name = name,
					.snapshot_dir = s->dirpath, .wall_ms = g->timeout_ms + JIG_AGENT_WORKER_GRACE_MS,
					.home = jig_caller_home(), .client_trees = trees, .n_client_trees = json_array_size(p->trees),
					.egress = egress, .n_egress = json_array_size(p->egress)};
	return jig_catalog_compose(c, &facts, t, e);
}

int jig_plan_compose_command(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_command_grant *g,
			     struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	jig_scope_name(name, sizeof(name), "command-", g->route, JIG_SCOPE_NAME_KEEP_PLAN);
	static const char *const kinds[2][2] = {{"command", "command-input"}, {"command-capture", "command-input-capture"}};
	struct jig_scope_facts facts = {.kind = kinds[g->capture][g->input != NULL], .name = name,
					.snapshot_dir = s->dirpath, .wall_ms = g->timeout_ms, .home = jig_caller_home(),
					.input = g->input};
	return jig_catalog_compose(c, &facts, t, e);
}

static json_t *scope_json(const struct jig_scope_template *t)
{
	json_t *argv = json_array();
	for (size_t i = 0; t->argv[i]; i++)
		json_array_append_new(argv, json_string(t->argv[i]));
	return json_pack("{s:s,s:o,s:o}", "policy_sha256", t->policy.sha256, "permission_plan",
			 jig_scope_plan_json(&t->policy), "argv", argv);
}

/* One Agent route: the operator's provider (it must be configured: an
 * unknown id is refused at review), its identity (the client files hashed
 * now) and its scope, into the Plan. */
static int compose_agent(const struct jig_catalog *cat, const struct jig_snapshot *s, const struct jig_flow *f,
			 const struct jig_agent_grant *g, struct jig_plan *pl, json_t *agents, struct jig_error *e)
{
	if (g->api) { /* API-backed: the request goes through the Flow's own http route */
		json_array_append_new(agents, json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s}", "route", g->route, "api", g->api,
							"http", g->http, "model", g->model, "max_prompt_bytes",
							(json_int_t)g->max_prompt_bytes, "max_answer_bytes",
							(json_int_t)g->max_answer_bytes, "timeout_ms", (json_int_t)g->timeout_ms,
							"credential", "the http route's bearer, only if you bind one in http.json (never in the Plan)"));
		return 0;
	}
	struct jig_agent_provider p;
	json_t *id = NULL;
	int r = jig_agent_provider_get(g->provider, false, &p, e);
	if (r)
		return r;
	struct jig_plan_scope *ps = &pl->scopes[pl->n_scopes];
	ps->flow = f->name;
	ps->route = g->route;
	if (g->retain_sessions && !json_object_get(p.profile, "history")) {
		r = jig_err(e, JIG_E_USAGE,
			    "flow %s: agent route %s: retain_sessions needs a client whose session history jig knows (codex); provider %s is %s",
			    f->name, g->route, g->provider, p.client);
		jig_agent_provider_free(&p);
		return r;
	}
	/* Pi gets the model as its own argument after --model. */
	if (p.pi_command && g->model[0] == '-') {
		r = jig_err(e, JIG_E_USAGE, "flow %s: agent route %s: model \"%s\" starts with '-'; Pi would read it as an option",
			    f->name, g->route, g->model);
		jig_agent_provider_free(&p);
		return r;
	}
	if (!(r = jig_agent_identity(&p, g->model, &id, e)) && !(r = jig_plan_compose_agent(cat, s, g, &p, &ps->t, e)) &&
	    (r = jig_agent_env_fits(&p, json_object_get(ps->t.policy.doc, "env"), e)))
		jig_scope_template_free(&ps->t);
	if (!r) {
		pl->n_scopes++;
		json_array_append_new(agents,
				      json_pack("{s:s,s:o,s:I,s:I,s:I,s:s,s:o}", "route", g->route, "identity", id,
						"max_prompt_bytes", (json_int_t)g->max_prompt_bytes, "max_answer_bytes",
						(json_int_t)g->max_answer_bytes, "timeout_ms", (json_int_t)g->timeout_ms,
						"credential", p.credential_env ? "projected into the client's environment from your agents.json (never in the Plan)" : "none",
						"provider_scope", scope_json(&ps->t)));
		if (g->retain_sessions)
			json_object_set_new(json_array_get(agents, json_array_size(agents) - 1), "retain_sessions", json_true());
		id = NULL;
	}
	json_decref(id);
	jig_agent_provider_free(&p);
	return r;
}

json_t *jig_plan_flow(const struct jig_plan *pl, const char *flow)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(pl->doc, "flows"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "name")), flow) == 0)
			return f;
	return NULL;
}

json_t *jig_plan_agent(const struct jig_plan *pl, const char *flow, const char *route)
{
	size_t i, k;
	json_t *f, *a;
	json_array_foreach(json_object_get(pl->doc, "flows"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "name")), flow) == 0)
			json_array_foreach(json_object_get(f, "agents"), k, a)
				if (strcmp(json_string_value(json_object_get(a, "route")), route) == 0)
					return a;
	return NULL;
}

/* One HTTP route: its worker's scope into pl->scopes, its grant into http. */
static int compose_http(const struct jig_catalog *cat, const struct jig_snapshot *s, const struct jig_flow *f,
			const struct jig_http_grant *g, struct jig_plan *pl, json_t *http, struct jig_error *e)
{
	struct jig_plan_scope *ws = &pl->scopes[pl->n_scopes];
	ws->flow = f->name;
	ws->route = g->route;
	int r = jig_plan_compose_http(cat, s, g, &ws->t, e);
	if (r)
		return r;
	pl->n_scopes++;
	json_t *j = http_grant(g);
	json_object_set_new(j, "worker_scope", scope_json(&ws->t));
	json_array_append_new(http, j);
	return 0;
}

/* One Project Command route: its scope into pl->scopes, its grant with
 * the command's caps into commands. */
static int compose_command(const struct jig_catalog *cat, const struct jig_snapshot *s, const struct jig_flow *f,
			   const struct jig_command_grant *g, struct jig_plan *pl, json_t *commands, struct jig_error *e)
{
	struct jig_plan_scope *cs = &pl->scopes[pl->n_scopes];
	cs->flow = f->name;
	cs->route = g->route;
	int r = jig_plan_compose_command(cat, s, g, &cs->t, e);
	if (r)
		return r;
	pl->n_scopes++;
	json_t *j = json_pack("{s:s,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I},s:o}", "route", g->route, "timeout_ms",
			      (json_int_t)g->timeout_ms, "caps", "files", (json_int_t)JIG_COMMAND_MAX_FILES, "text_bytes",
			      (json_int_t)JIG_COMMAND_MAX_TEXT, "args", (json_int_t)JIG_COMMAND_MAX_ARGS, "stdin_bytes",
			      (json_int_t)JIG_COMMAND_MAX_STDIN, "retained_bytes_per_pipe", (json_int_t)JIG_COMMAND_RETAIN,
			      "calls_per_run", (json_int_t)JIG_COMMAND_MAX_CALLS, "command_scope", scope_json(&cs->t));
	if (g->input)
		json_object_set_new(j, "input", json_string(g->input));
	if (g->capture) /* only then: Plans of routes without a capture keep their identity */
		json_object_set_new(j, "capture",
				    json_pack("{s:s,s:I,s:I}", "path", "/capture", "files", (json_int_t)JIG_COMMAND_CAPTURE_FILES,
					      "bytes", (json_int_t)JIG_COMMAND_CAPTURE_BYTES));
	json_array_append_new(commands, j);
	return 0;
}

/* A Flow's Run Checkpoint caps (issue 18). */
static json_t *checkpoint_json(void)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "max_bytes", (json_int_t)JIG_CHECKPOINT_MAX_BYTES, "max_files",
			 (json_int_t)JIG_CHECKPOINT_MAX_FILES, "max_text_bytes", (json_int_t)JIG_CHECKPOINT_MAX_TEXT,
			 "max_saves", (json_int_t)JIG_CHECKPOINT_MAX_SAVES, "in_flight", (json_int_t)1);
}

/* A Flow's npm dependencies as prepared at review (flow/prepared.h), or
 * NULL when it has none. */
static json_t *dependencies_json(const struct jig_project *p, const struct jig_flow *f)
{
	json_t *rec = jig_prepared_record(p, f);
	if (!rec)
		return NULL;
	json_t *d = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "tree", json_object_get(rec, "tree"), "files",
			      json_object_get(rec, "files"), "bytes", json_object_get(rec, "bytes"), "packages",
			      json_object_get(rec, "packages"), "source", json_object_get(rec, "source"),
			      "installer_policy_sha256", json_object_get(rec, "installer_policy_sha256"));
	if (d && json_is_true(json_object_get(rec, "resolved")))
		json_object_set_new(d, "resolved", json_true());
	/* Patches and platform-skipped packages only when there are any
	 * (Plans without them keep their identity). */
	static const char *const listed[] = {"patches", "platform_skipped"};
	for (size_t k = 0; d && k < 2; k++)
		if (json_array_size(json_object_get(rec, listed[k])))
			json_object_set(d, listed[k], json_object_get(rec, listed[k]));
	json_decref(rec);
	return d;
}

/* One Flow: its scope and every route's into pl->scopes, its part of the
 * Plan appended to flows. Optional parts appear only when present, so
 * Plans without them keep their identity. */
static int compose_flow(const struct jig_project *p, const struct jig_catalog *cat, const struct jig_snapshot *s,
			const struct jig_flow *f, struct jig_plan *pl, json_t *flows, struct jig_error *e)
{
	struct jig_plan_scope *fs = &pl->scopes[pl->n_scopes];
	fs->flow = f->name;
	int r = jig_plan_compose_flow(cat, s, f, &fs->t, e);
	if (r)
		return r;
	pl->n_scopes++;
	json_t *http = json_array(), *agents = json_array(), *commands = json_array();
	for (size_t k = 0; !r && k < f->n_http; k++)
		r = compose_http(cat, s, f, &f->http[k], pl, http, e);
	for (size_t k = 0; !r && k < f->n_agents; k++)
		r = compose_agent(cat, s, f, &f->agents[k], pl, agents, e);
	for (size_t k = 0; !r && k < f->n_commands; k++)
		r = compose_command(cat, s, f, &f->commands[k], pl, commands, e);
	json_t *fj = json_pack("{s:s,s:{s:s,s:I,s:I},s:s,s:o,s:o,s:o,s:o}", "name", f->name, "package", "sha256",
			       f->package_sha256, "files", (json_int_t)f->package_files, "bytes", (json_int_t)f->package_bytes,
			       "entry", f->entry, "inputs", strv(f->inputs, f->n_inputs), "outputs",
			       strv(f->outputs, f->n_outputs), "scope", scope_json(&fs->t), "http", http);
	if (json_array_size(agents))
		json_object_set(fj, "agents", agents);
	if (f->recipe) /* a Markdown Flow's */
		json_object_set(fj, "recipe", f->recipe);
	if (json_array_size(commands))
		json_object_set(fj, "commands", commands);
	if (f->checkpoint)
		json_object_set_new(fj, "checkpoint", checkpoint_json());
	json_t *deps = dependencies_json(p, f);
	if (deps)
		json_object_set_new(fj, "dependencies", deps);
	json_decref(agents);
	json_decref(commands);
	json_array_append_new(flows, fj);
	return r;
}

/* Composes every scope of the project (each Flow's and each route's) into
 * pl->scopes, and returns the Flows' part of the Plan. */
static int compose_all(const struct jig_project *p, const struct jig_snapshot *s, struct jig_plan *pl,
		       json_t *flows, struct jig_error *e)
{
	struct jig_catalog cat;
	int r = jig_catalog_load(s, &cat, e);
	size_t n = 0;
	for (size_t i = 0; i < p->n_flows; i++)
		n += 1 + p->flows[i].n_http + p->flows[i].n_agents + p->flows[i].n_commands;
	if (!r && !(pl->scopes = calloc(n ? n : 1, sizeof(*pl->scopes))))
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0; !r && i < p->n_flows; i++)
		r = compose_flow(p, &cat, s, &p->flows[i], pl, flows, e);
	jig_catalog_free(&cat);
	return r;
}

int jig_plan_build(const struct jig_project *p, const struct jig_snapshot *s, struct jig_plan *out,
		   struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	/* The launch identity: everything of the snapshot a Run uses, the
	 * capability catalog included (a changed fragment is a new review). */
	/* The effects' modules and workers are part of it when a Flow has
	 * such routes (Plans without them keep their identity). */
	const char *used[JIG_PLAN_MAX_INSTALLED] = {JIG_SANDBOX_MODULE_FILE, JIG_SCOPE_INIT_FILE, JIG_RUNTIME_BUN,
						    JIG_RUNTIME_BOOT, JIG_CATALOG_FILE};
	size_t n_used = 5;
	bool http = false, agents = false, recipes = false;
	for (size_t i = 0; i < p->n_flows; i++) {
		http |= p->flows[i].n_http > 0;
		recipes |= p->flows[i].recipe != NULL;
		for (size_t k = 0; k < p->flows[i].n_agents; k++)
			agents |= p->flows[i].agents[k].provider != NULL; /* a native client: plugins/acp */
	}
	if (http)
		used[n_used++] = JIG_HTTP_MODULE_FILE, used[n_used++] = JIG_HTTP_WORKER_FILE;
	if (agents)
		used[n_used++] = JIG_ACP_MODULE_FILE, used[n_used++] = JIG_ACP_WORKER_FILE, used[n_used++] = JIG_ACP_PI_LAUNCHER_FILE;
	if (recipes)
		used[n_used++] = JIG_RUNTIME_MARKDOWN;
	for (size_t i = 0; i < n_used; i++)
		if (!snapshot_file(s, used[i]))
			return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; it cannot run these Flows (reinstall jig)", s->m.id, used[i]);
	char ident[JIG_SHA256_HEX];
	int r = jig_launch_identity(s, used, n_used, ident, e);
	if (r || (http && (r = check_grant_urls(p, s, e))) || (agents && (r = check_acp_module(s, e))))
		return r;
	char bun[JIG_SHA256_HEX];
	jig_hex(snapshot_file(s, JIG_RUNTIME_BUN)->sha256, JIG_SHA256_LEN, bun);
	json_t *flows = json_array();
	r = compose_all(p, s, out, flows, e);
	if (r) {
		json_decref(flows);
		jig_plan_free(out);
		return r;
	}
	json_t *budget = NULL; /* Bindings: the fixed root budget (flow/binding.h) */
	if ((r = jig_binding_plan(p, out, flows, &budget, e))) {
		json_decref(flows);
		jig_plan_free(out);
		return r;
	}
	char msha[JIG_SHA256_HEX];
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, msha);
	char csha[JIG_SHA256_HEX];
	jig_hex(snapshot_file(s, JIG_CATALOG_FILE)->sha256, JIG_SHA256_LEN, csha);
	char dflt[24], most[24];
	snprintf(dflt, sizeof(dflt), "%llus", JIG_RUN_TIMEOUT_DEFAULT_MS / 1000);
	snprintf(most, sizeof(most), "%lluh", JIG_RUN_TIMEOUT_MAX_MS / 3600000);
	out->doc = json_pack("{s:s,s:o,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s}}", "format", JIG_PLAN_FORMAT,
			     "flows", flows, "runtime", "bun_sha256", bun, "support", JIG_RUNTIME_BOOT, "snapshot",
			     "id", s->m.id, "manifest_sha256", msha, "launch_identity", ident, "catalog_sha256", csha, "deadline",
			     "default", dflt, "maximum", most, "set_by", "jig run --timeout (invocation policy)");
	if (out->doc && budget)
		json_object_set(out->doc, "root_budget", budget);
	json_decref(budget);
	if (!out->doc || !(out->canonical = jig_json_canonical(out->doc))) {
		jig_plan_free(out);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	jig_sha256_hex(out->canonical, strlen(out->canonical), out->sha256);
	return 0;
}

void jig_plan_free(struct jig_plan *pl)
{
	json_decref(pl->doc);
	free(pl->canonical);
	for (size_t i = 0; i < pl->n_scopes; i++)
		jig_scope_template_free(&pl->scopes[i].t);
	free(pl->scopes);
	memset(pl, 0, sizeof(*pl));
}

const struct jig_scope_template *jig_plan_scope(const struct jig_plan *pl, const char *flow, const char *route)
{
	for (size_t i = 0; i < pl->n_scopes; i++)
		if (strcmp(pl->scopes[i].flow, flow) == 0 &&
		    (route ? pl->scopes[i].route && strcmp(pl->scopes[i].route, route) == 0 : !pl->scopes[i].route))
			return &pl->scopes[i].t;
	return NULL;
}
