/* The Plan: build, print, admit. */
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
#include "flow/binding.h"
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

/* The scope names: [a-z0-9-], at most 32 characters. */
static void scope_name(char *out, size_t cap, const char *prefix, const char *name)
{
	snprintf(out, cap, "%s%.24s", prefix, name);
	for (char *c = out; *c; c++)
		if (*c == '_')
			*c = '-';
}

int jig_plan_compose_flow(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_flow *f,
			  struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	scope_name(name, sizeof(name), "flow-", f->name);
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
	scope_name(name, sizeof(name), "http-", g->route);
	/* The worker's deadline is the grant's, plus time to start and stop. */
	struct jig_scope_facts facts = {.kind = "http-worker", .name = name, .snapshot_dir = s->dirpath,
					.wall_ms = g->timeout_ms + JIG_HTTP_WORKER_GRACE_MS, .home = jig_caller_home()};
	return jig_catalog_compose(c, &facts, t, e);
}

int jig_plan_compose_agent(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_agent_grant *g,
			   const struct jig_agent_provider *p, struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	scope_name(name, sizeof(name), "agent-", g->route);
	const char *trees[JIG_AGENT_MAX_TREES];
	size_t n = 0;
	json_t *v;
	json_array_foreach(p->trees, n, v)
		trees[n] = json_string_value(v);
	struct jig_scope_facts facts = {.kind = "agent-provider", .name = name, .snapshot_dir = s->dirpath,
					.wall_ms = g->timeout_ms + JIG_AGENT_WORKER_GRACE_MS, .home = jig_caller_home(),
					.client_trees = trees, .n_client_trees = json_array_size(p->trees)};
	return jig_catalog_compose(c, &facts, t, e);
}

int jig_plan_compose_command(const struct jig_catalog *c, const struct jig_snapshot *s, const struct jig_command_grant *g,
			     struct jig_scope_template *t, struct jig_error *e)
{
	char name[40];
	scope_name(name, sizeof(name), "command-", g->route);
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

/* Composes every scope of the project (each Flow's, each HTTP route's
 * worker) into pl->scopes, and returns the Flows' part of the Plan. */
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
	for (size_t i = 0; !r && i < p->n_flows; i++) {
		const struct jig_flow *f = &p->flows[i];
		struct jig_plan_scope *fs = &pl->scopes[pl->n_scopes];
		fs->flow = f->name;
		if ((r = jig_plan_compose_flow(&cat, s, f, &fs->t, e)))
			break;
		pl->n_scopes++;
		json_t *http = json_array();
		for (size_t k = 0; !r && k < f->n_http; k++) {
			struct jig_plan_scope *ws = &pl->scopes[pl->n_scopes];
			ws->flow = f->name;
			ws->route = f->http[k].route;
			if (!(r = jig_plan_compose_http(&cat, s, &f->http[k], &ws->t, e))) {
				pl->n_scopes++;
				json_t *g = http_grant(&f->http[k]);
				json_object_set_new(g, "worker_scope", scope_json(&ws->t));
				json_array_append_new(http, g);
			}
		}
		json_t *agents = json_array();
		for (size_t k = 0; !r && k < f->n_agents; k++)
			r = compose_agent(&cat, s, f, &f->agents[k], pl, agents, e);
		json_t *fj = json_pack("{s:s,s:{s:s,s:I,s:I},s:s,s:o,s:o,s:o,s:o}", "name", f->name, "package", "sha256",
				       f->package_sha256, "files", (json_int_t)f->package_files, "bytes",
				       (json_int_t)f->package_bytes, "entry", f->entry, "inputs", strv(f->inputs, f->n_inputs),
				       "outputs", strv(f->outputs, f->n_outputs), "scope", scope_json(&fs->t), "http", http);
		/* "agents" only when there are routes: Plans of Flows without
		 * them keep their identity. */
		if (json_array_size(agents))
			json_object_set(fj, "agents", agents);
		if (f->recipe) /* "recipe" only for a Markdown Flow */
			json_object_set(fj, "recipe", f->recipe);
		json_decref(agents);
		/* "commands" likewise only when there are routes. */
		json_t *commands = json_array();
		for (size_t k = 0; !r && k < f->n_commands; k++) {
			const struct jig_command_grant *g = &f->commands[k];
			struct jig_plan_scope *cs = &pl->scopes[pl->n_scopes];
			cs->flow = f->name;
			cs->route = g->route;
			if ((r = jig_plan_compose_command(&cat, s, g, &cs->t, e)))
				break;
			pl->n_scopes++;
			json_array_append_new(commands,
					      json_pack("{s:s,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I},s:o}", "route", g->route, "timeout_ms", (json_int_t)g->timeout_ms, "caps", "files",
							(json_int_t)JIG_COMMAND_MAX_FILES, "text_bytes", (json_int_t)JIG_COMMAND_MAX_TEXT,
							"args", (json_int_t)JIG_COMMAND_MAX_ARGS, "stdin_bytes",
							(json_int_t)JIG_COMMAND_MAX_STDIN, "retained_bytes_per_pipe",
							(json_int_t)JIG_COMMAND_RETAIN, "calls_per_run", (json_int_t)JIG_COMMAND_MAX_CALLS,
							"command_scope", scope_json(&cs->t)));
			if (g->input)
				json_object_set_new(json_array_get(commands, json_array_size(commands) - 1), "input",
						    json_string(g->input));
			if (g->capture) /* only then: Plans of routes without a capture keep their identity */
				json_object_set_new(json_array_get(commands, json_array_size(commands) - 1), "capture",
						    json_pack("{s:s,s:I,s:I}", "path", "/capture", "files",
							      (json_int_t)JIG_COMMAND_CAPTURE_FILES, "bytes",
							      (json_int_t)JIG_COMMAND_CAPTURE_BYTES));
		}
		if (json_array_size(commands))
			json_object_set(fj, "commands", commands);
		json_decref(commands);
		/* "checkpoint" only for a Flow that declares it (issue 18). */
		if (f->checkpoint)
			json_object_set_new(fj, "checkpoint", json_pack("{s:I,s:I,s:I,s:I,s:I}", "max_bytes", (json_int_t)JIG_CHECKPOINT_MAX_BYTES,
									 "max_files", (json_int_t)JIG_CHECKPOINT_MAX_FILES, "max_text_bytes",
									 (json_int_t)JIG_CHECKPOINT_MAX_TEXT, "max_saves", (json_int_t)JIG_CHECKPOINT_MAX_SAVES,
									 "in_flight", (json_int_t)1));
		/* "dependencies" only for a Flow whose npm dependencies were
		 * prepared at review (prepare/prepare.h). */
		json_t *rec = jig_prepared_record(p, f);
		if (rec)
			json_object_set_new(fj, "dependencies",
					    json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "tree", json_object_get(rec, "tree"), "files",
						      json_object_get(rec, "files"), "bytes", json_object_get(rec, "bytes"), "packages",
						      json_object_get(rec, "packages"), "source", json_object_get(rec, "source"),
						      "installer_policy_sha256", json_object_get(rec, "installer_policy_sha256")));
		if (rec && json_is_true(json_object_get(rec, "resolved")))
			json_object_set_new(json_object_get(fj, "dependencies"), "resolved", json_true());
		/* Patches and platform-skipped packages only when there are any
		 * (Plans without them keep their identity). */
		static const char *const listed[] = {"patches", "platform_skipped"};
		for (size_t k = 0; rec && k < 2; k++)
			if (json_array_size(json_object_get(rec, listed[k])))
				json_object_set(json_object_get(fj, "dependencies"), listed[k], json_object_get(rec, listed[k]));
		json_decref(rec);
		json_array_append_new(flows, fj);
	}
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
	if ((r = compose_all(p, s, out, flows, e))) {
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
	out->doc = json_pack("{s:s,s:o,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s}}", "format", JIG_PLAN_FORMAT,
			     "flows", flows, "runtime", "bun_sha256", bun, "support", JIG_RUNTIME_BOOT, "snapshot",
			     "id", s->m.id, "manifest_sha256", msha, "launch_identity", ident, "catalog_sha256", csha, "deadline",
			     "default", "30s", "maximum", "24h", "set_by", "jig run --timeout (invocation policy)");
	if (out->doc && budget)
		json_object_set(out->doc, "root_budget", budget);
	json_decref(budget);
	if (!out->doc || !(out->canonical = jig_json_canonical(out->doc))) {
		jig_plan_free(out);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256(out->canonical, strlen(out->canonical), d);
	jig_hex(d, JIG_SHA256_LEN, out->sha256);
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

static void print_strings(FILE *out, json_t *list)
{
	size_t k;
	json_t *v;
	json_array_foreach(list, k, v)
		fprintf(out, " %s", json_string_value(v));
	if (!json_array_size(list))
		fprintf(out, " (none)");
}

/* An Agent route: the provider identity the turn must match, its caps,
 * and the provider scope the client runs in. */
static void print_agent(FILE *out, const struct jig_plan *pl, const char *flow, json_t *a)
{
	const char *route = json_string_value(json_object_get(a, "route"));
	json_t *id = json_object_get(a, "identity");
	if (json_object_get(a, "api")) {
		fprintf(out, "    agent %s: API-backed (%s), model %s, prompt <= %lld bytes, answer <= %lld bytes;\n"
			     "      the request is prepared as data and sent through http route %s above, by its worker\n",
			route, json_string_value(json_object_get(a, "api")), json_string_value(json_object_get(a, "model")),
			json_integer_value(json_object_get(a, "max_prompt_bytes")),
			json_integer_value(json_object_get(a, "max_answer_bytes")), json_string_value(json_object_get(a, "http")));
		return;
	}
	fprintf(out, "    agent %s: provider %s (client %s, version %s), model %s\n      command:", route,
		json_string_value(json_object_get(id, "provider")), json_string_value(json_object_get(id, "client")),
		json_string_value(json_object_get(id, "version")), json_string_value(json_object_get(id, "model")));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(id, "command"), i, v) {
		fputc(' ', out);
		jig_text_put(out, json_string_value(v));
	}
	fputc('\n', out);
	if (json_is_array(json_object_get(id, "pi_command"))) {
		fprintf(out, "      Pi command:");
		json_array_foreach(json_object_get(id, "pi_command"), i, v) {
			fputc(' ', out);
			jig_text_put(out, json_string_value(v));
		}
		fprintf(out, "\n      Pi models.json: ");
		jig_text_put(out, json_string_value(json_object_get(id, "pi_models")));
		fputc('\n', out);
	}
	json_array_foreach(json_object_get(id, "files"), i, v) {
		fprintf(out, "      file sha256 %s ", json_string_value(json_object_get(v, "sha256")));
		jig_text_put(out, json_string_value(json_object_get(v, "path")));
		fputc('\n', out);
	}
	const char *k;
	json_object_foreach(json_object_get(id, "env"), k, v) {
		fprintf(out, "      client environment %s=", k);
		jig_text_put(out, json_string_value(v));
		fputc('\n', out);
	}
	json_t *prof = json_object_get(id, "profile");
	if (json_object_size(prof)) {
		fprintf(out, "      jig's %s profile:", json_string_value(json_object_get(id, "client")));
		if (json_object_get(prof, "session_meta")) {
			char *m = json_dumps(json_object_get(prof, "session_meta"), JSON_COMPACT | JSON_SORT_KEYS);
			fprintf(out, " session/new _meta ");
			jig_text_put(out, m);
			free(m);
		}
		if (json_array_size(json_object_get(prof, "args"))) {
			fprintf(out, " arguments");
			json_array_foreach(json_object_get(prof, "args"), i, v) {
				fputc(' ', out);
				jig_text_put(out, json_string_value(v));
			}
			fprintf(out, " (@model: the model)");
		}
		if (json_array_size(json_object_get(prof, "pi_args"))) {
			fprintf(out, " Pi started by jig's launcher with its command and");
			json_array_foreach(json_object_get(prof, "pi_args"), i, v) {
				fputc(' ', out);
				jig_text_put(out, json_string_value(v));
			}
			fprintf(out, " (@model: the model), its agent directory in the private HOME with models.json linked in");
		}
		if (json_object_get(prof, "auth_method"))
			fprintf(out, "; authenticate with %s", json_string_value(json_object_get(prof, "auth_method")));
		fprintf(out, "%s\n", json_is_true(json_object_get(prof, "select_model")) ? "; the model selected with session/set_model" : "");
		json_object_foreach(json_object_get(prof, "env"), k, v)
			fprintf(out, "      client environment %s=%s (the profile's)\n", k, json_string_value(v));
	}
	if (json_is_string(json_object_get(id, "model_env")))
		fprintf(out, "      client environment %s=<the model>\n", json_string_value(json_object_get(id, "model_env")));
	if (json_is_string(json_object_get(id, "credential_env")))
		fprintf(out, "      client environment %s=<your credential, read from agents.json per turn; never shown or recorded>\n",
			json_string_value(json_object_get(id, "credential_env")));
	fprintf(out, "      prompt <= %lld bytes, answer <= %lld bytes, deadline %lld ms; no filesystem, terminal or MCP offered,\n"
		     "      every permission request refused; the client runs in this scope of its own (its policy sha256 %s):\n",
		json_integer_value(json_object_get(a, "max_prompt_bytes")), json_integer_value(json_object_get(a, "max_answer_bytes")),
		json_integer_value(json_object_get(a, "timeout_ms")),
		json_string_value(json_object_get(json_object_get(a, "provider_scope"), "policy_sha256")));
	if (json_is_true(json_object_get(a, "retain_sessions")))
		fprintf(out, "      retained sessions: after a clean turn the client's session history (%s) is kept in the\n"
			     "      project's .jig/sessions (<= %d for this route, %d in all, of <= %d MiB, 24 h), restored once by the\n"
			     "      reference the turn returns, for this route only; sensitive local data, not encrypted\n",
			json_string_value(json_object_get(json_object_get(id, "profile"), "history")), JIG_SESSIONS_SCOPE_MAX,
			JIG_SESSIONS_MAX, JIG_SESSION_MAX_BYTES >> 20);
	jig_scope_plan_print(&jig_plan_scope(pl, flow, route)->policy, "      ", out);
}

/* A Project Command route: what the Flow may supply per call, what the
 * candidate sees, and its scope. */
static void print_command(FILE *out, const struct jig_plan *pl, const char *flow, json_t *c)
{
	const char *route = json_string_value(json_object_get(c, "route"));
	const char *input = json_string_value(json_object_get(c, "input"));
	json_t *caps = json_object_get(c, "caps");
	fprintf(out, "    command %s: program text the Flow supplies per call (<= %lld bytes in <= %lld files, never kept),\n"
		     "      <= %lld arguments, <= %lld bytes of stdin, at most %lld calls per Run, deadline %lld ms; run with the\n"
		     "      installed Bun, read-only at /command; ",
		route, json_integer_value(json_object_get(caps, "text_bytes")), json_integer_value(json_object_get(caps, "files")),
		json_integer_value(json_object_get(caps, "args")), json_integer_value(json_object_get(caps, "stdin_bytes")),
		json_integer_value(json_object_get(caps, "calls_per_run")), json_integer_value(json_object_get(c, "timeout_ms")));
	if (input)
		fprintf(out, "attachment %s read-only at /input/%s;\n", input, input);
	else
		fprintf(out, "no attachment;\n");
	json_t *cap = json_object_get(c, "capture");
	if (cap)
		fprintf(out, "      its files under /capture (a held tmpfs) read by jig after the scope is fenced, <= %lld bytes in <= %lld\n"
			     "      files, returned to the Flow as data (never run or imported); a link or special file refuses them;\n",
			json_integer_value(json_object_get(cap, "bytes")), json_integer_value(json_object_get(cap, "files")));
	fprintf(out, "      stdout and stderr read by jig outside the scope, the first %lld bytes of each kept, the rest counted;\n"
		     "      no Flow package, credentials or network; its output and exit do not prove what it ran.\n"
		     "      It runs in this scope of its own (its policy sha256 %s):\n",
		json_integer_value(json_object_get(caps, "retained_bytes_per_pipe")),
		json_string_value(json_object_get(json_object_get(c, "command_scope"), "policy_sha256")));
	jig_scope_plan_print(&jig_plan_scope(pl, flow, route)->policy, "      ", out);
}

void jig_plan_print(const struct jig_plan *pl, const char *project, FILE *out)
{
	fprintf(out, "Plan %s\n  project ", pl->sha256);
	/* The operator's path, shown inert. Every other string of a Plan is
	 * of a checked character set (names, normalised paths, URLs in
	 * libcurl's normal form with no control or non-ASCII byte). */
	jig_text_put(out, project);
	fputc('\n', out);
	json_t *snap = json_object_get(pl->doc, "snapshot");
	fprintf(out, "  snapshot %s, launch identity %s\n", json_string_value(json_object_get(snap, "id")),
		json_string_value(json_object_get(snap, "launch_identity")));
	fprintf(out, "  runtime Bun sha256 %s\n",
		json_string_value(json_object_get(json_object_get(pl->doc, "runtime"), "bun_sha256")));
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(pl->doc, "flows"), i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		json_t *pk = json_object_get(f, "package");
		fprintf(out, "  flow %s\n    package sha256 %s (%lld files, %lld bytes), entry %s\n", name,
			json_string_value(json_object_get(pk, "sha256")), json_integer_value(json_object_get(pk, "files")),
			json_integer_value(json_object_get(pk, "bytes")), json_string_value(json_object_get(f, "entry")));
		fprintf(out, "    attachments (read-only at /input):");
		print_strings(out, json_object_get(f, "inputs"));
		fprintf(out, "\n    may publish from /output:");
		print_strings(out, json_object_get(f, "outputs"));
		fprintf(out, "\n    deadline 30 s unless --timeout (at most 24 h)\n");
		json_t *rc = json_object_get(f, "recipe");
		if (rc) {
			fprintf(out, "    Markdown recipe %s, run by jig's bundled interpreter (%s), which calls only Agent route %s;\n"
				     "      it reads only the package's captured files and writes only the outputs above; resources:",
				json_string_value(json_object_get(f, "entry")), json_string_value(json_object_get(rc, "interpreter")),
				json_string_value(json_object_get(rc, "agent_route")));
			print_strings(out, json_object_get(rc, "resources"));
			fputc('\n', out);
			if (json_object_get(rc, "allowed_tools")) {
				fprintf(out, "      allowed-tools (the recipe's text, shown; it grants nothing): ");
				jig_text_put(out, json_string_value(json_object_get(rc, "allowed_tools")));
				fputc('\n', out);
			}
		}
		/* The permission plan printed from the very policy the launch
		 * consumes. */
		jig_scope_plan_print(&jig_plan_scope(pl, name, NULL)->policy, "    ", out);
		size_t k;
		json_t *v;
		json_array_foreach(json_object_get(f, "http"), k, v) {
			const char *route = json_string_value(json_object_get(v, "route"));
			fprintf(out, "    http %s: %s %s\n      request body <= %lld bytes%s, response <= %lld bytes, deadline %lld ms;\n",
				route, json_string_value(json_object_get(v, "method")), json_string_value(json_object_get(v, "url")),
				json_integer_value(json_object_get(v, "max_request_bytes")),
				json_object_get(v, "body_schema") ? " matching its Schema/0" : "",
				json_integer_value(json_object_get(v, "max_response_bytes")),
				json_integer_value(json_object_get(v, "timeout_ms")));
			fprintf(out, "      no redirects, proxies or other headers; a bearer only if you bind one to this route and URL;\n"
				     "      sent by a worker in this scope of its own:\n");
			jig_scope_plan_print(&jig_plan_scope(pl, name, route)->policy, "      ", out);
		}
		json_array_foreach(json_object_get(f, "agents"), k, v)
			print_agent(out, pl, name, v);
		json_array_foreach(json_object_get(f, "commands"), k, v)
			print_command(out, pl, name, v);
		jig_binding_print(out, f);
		if ((v = json_object_get(f, "checkpoint")))
			fprintf(out, "    checkpoint: up to %lld saves (one at a time) of <= %lld bytes of JSON with <= %lld text files\n"
				     "      (<= %lld bytes together), kept by jig outside the scope; a Run that does not complete\n"
				     "      publishes the last accepted one (record: interrupted)\n",
				json_integer_value(json_object_get(v, "max_saves")), json_integer_value(json_object_get(v, "max_bytes")),
				json_integer_value(json_object_get(v, "max_files")), json_integer_value(json_object_get(v, "max_text_bytes")));
		json_t *dep = json_object_get(f, "dependencies");
		if (dep)
			fprintf(out, "    npm dependencies: prepared installation sha256 %s (%lld packages, %lld files, %lld bytes),\n"
				     "      read-only at /flow/node_modules; installed at review from the lock's registry tarballs, each\n"
				     "      inspected by jig first, by the pinned Bun with no package script run, in the installer scope\n"
				     "      (its policy sha256 %s, network during that review only); sources sha256 %s\n",
				json_string_value(json_object_get(dep, "tree")), json_integer_value(json_object_get(dep, "packages")),
				json_integer_value(json_object_get(dep, "files")), json_integer_value(json_object_get(dep, "bytes")),
				json_string_value(json_object_get(dep, "installer_policy_sha256")),
				json_string_value(json_object_get(dep, "source")));
		if (dep && json_is_true(json_object_get(dep, "resolved")))
			fprintf(out, "      the package has no bun.lock: its lock was resolved at review (--allow-resolution-network)\n");
		json_array_foreach(dep ? json_object_get(dep, "patches") : NULL, k, v) {
			fprintf(out, "      patch for ");
			jig_text_put(out, json_string_value(json_object_get(v, "package")));
			fprintf(out, ": ");
			jig_text_put(out, json_string_value(json_object_get(v, "path")));
			fprintf(out, " (sha256 %s), applied by the pinned Bun\n", json_string_value(json_object_get(v, "sha256")));
		}
		json_array_foreach(dep ? json_object_get(dep, "platform_skipped") : NULL, k, v) {
			const char *why = json_string_value(json_object_get(v, "for"));
			fprintf(out, "      skipped for this platform, neither fetched nor installed: ");
			jig_text_put(out, json_string_value(json_object_get(v, "package")));
			if (strcmp(why, "dependents") == 0)
				fprintf(out, " (needed only by skipped packages)\n");
			else
				fprintf(out, " (its %s is not this host's)\n", why);
		}
	}
}

int jig_plan_admit(const struct jig_project *p, const struct jig_plan *pl, struct jig_error *e)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "admitted/%s.json", pl->sha256);
	struct stat st;
	int r = 0;
	if (fstatat(p->statefd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = jig_write_file_at(p->statefd, rel, pl->canonical, strlen(pl->canonical), 0600, e);
	if (r)
		return r;
	/* The current admission, replaced atomically. */
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".admission-%d.tmp", (int)getpid());
	unlinkat(p->statefd, tmp, 0);
	json_t *a = json_pack("{s:s,s:s}", "format", "jig-admission/1", "plan_sha256", pl->sha256);
	char *txt = a ? jig_json_canonical(a) : NULL;
	json_decref(a);
	if (!txt)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	r = jig_write_file_at(p->statefd, tmp, txt, strlen(txt), 0600, e);
	free(txt);
	if (!r && renameat(p->statefd, tmp, p->statefd, "admission.json") < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s/.jig/admission.json: %s", p->root, strerror(errno));
	return r;
}

int jig_plan_admitted(const struct jig_project *p, char out[JIG_SHA256_HEX], struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored;
	if (jig_read_file_at(p->statefd, "admission.json", 4096, "admission", &buf, &len, &st, &ignored) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: no admitted Plan; run 'jig review' first", p->root);
	json_t *a = NULL;
	const char *sha;
	int r = jig_json_parse_object(buf, len, "admission", &a, e);
	if (!r && (r = jig_json_get_string(a, "plan_sha256", "admission", &sha, e)) == 0) {
		if (strlen(sha) != JIG_SHA256_HEX - 1)
			r = jig_err(e, JIG_E_INTEGRITY, "%s/.jig/admission.json: malformed; review again", p->root);
		else
			memcpy(out, sha, JIG_SHA256_HEX);
	}
	json_decref(a);
	return r;
}

int jig_plan_verify_installation(const struct jig_snapshot *s, struct jig_verifier *v, int *launcher_fd,
				 struct jig_error *e)
{
	const char *files[JIG_PLAN_MAX_INSTALLED];
	size_t n = jig_plan_installed_files(s, files);
	int r = 0;
	for (size_t i = 0; !r && i < n; i++) {
		if (launcher_fd && strcmp(files[i], JIG_SCOPE_INIT_FILE) == 0) {
			*launcher_fd = jig_verifier_open(v, s, files[i], e);
			r = *launcher_fd < 0 ? *launcher_fd : 0;
		} else
			r = jig_verifier_check(v, s, &files[i], 1, e);
	}
	JIG_TRACE_POINT("installation: verified");
	return r;
}
