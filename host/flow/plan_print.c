/* The Plan, printed for the operator's review (text inert). */
#include "flow/plan.h"

#include <stdbool.h>
#include <stdio.h>

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
#include "flow/plan_diff.h"
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

static void print_strings(FILE *out, json_t *list)
{
	size_t k;
	json_t *v;
	json_array_foreach(list, k, v)
		fprintf(out, " %s", json_string_value(v));
	if (!json_array_size(list))
		fprintf(out, " (none)");
}

/* Which kinds of scope share a printed common part. */
enum kind { K_FLOW, K_HTTP, K_AGENT, K_COMMAND, K_N };
static const char *const kind_name[K_N] = {"Flow", "HTTP worker", "Agent provider", "Project Command"};

struct printing {
	const struct jig_plan *pl;
	FILE *out;
	/* Each kind's common part, or NULL: its scopes are printed in full
	 * (--full, or the Plan has one scope of that kind). */
	struct jig_scope_common *common[K_N];
	bool used[K_N]; /* a scope was printed besides it */
};

static void print_scope(struct printing *pr, enum kind k, const char *flow, const char *route, const char *in)
{
	const struct jig_scope_policy *p = &jig_plan_scope(pr->pl, flow, route)->policy;
	if (!pr->common[k])
		return jig_scope_plan_print(p, in, pr->out);
	pr->used[k] = true;
	jig_scope_plan_print_besides(p, pr->common[k], kind_name[k], in, pr->out);
}

/* An Agent route: the provider identity the turn must match, its caps,
 * and the provider scope the client runs in. */
static void print_agent(struct printing *pr, const char *flow, json_t *a)
{
	FILE *out = pr->out;
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
			     "      project's .jig/sessions (<= %d for this route, %d in all, of <= %d MiB, %d h), restored once by the\n"
			     "      reference the turn returns, for this route only; sensitive local data, not encrypted\n",
			json_string_value(json_object_get(json_object_get(id, "profile"), "history")), JIG_SESSIONS_SCOPE_MAX,
			JIG_SESSIONS_MAX, JIG_SESSION_MAX_BYTES >> 20, JIG_SESSION_TTL_S / 3600);
	print_scope(pr, K_AGENT, flow, route, "      ");
}

/* A Project Command route: what the Flow may supply per call, what the
 * candidate sees, and its scope. */
static void print_command(struct printing *pr, const char *flow, json_t *c)
{
	FILE *out = pr->out;
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
	print_scope(pr, K_COMMAND, flow, route, "      ");
}

static void print_http(struct printing *pr, const char *name, json_t *v)
{
	FILE *out = pr->out;
	const char *route = json_string_value(json_object_get(v, "route"));
	const char *method = json_string_value(json_object_get(v, "method"));
	fprintf(out, "    http %s: %s %s\n      ", route, method, json_string_value(json_object_get(v, "url")));
	/* A GET or HEAD takes no body (jig refuses one): none is printed. */
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		fprintf(out, "no request body, ");
	else
		fprintf(out, "request body <= %lld bytes%s, ", json_integer_value(json_object_get(v, "max_request_bytes")),
			json_object_get(v, "body_schema") ? " matching its Schema/0" : "");
	fprintf(out, "response <= %lld bytes, deadline %lld ms;\n", json_integer_value(json_object_get(v, "max_response_bytes")),
		json_integer_value(json_object_get(v, "timeout_ms")));
	fprintf(out, "      no redirects, proxies or other headers; a bearer only if you bind one to this route and URL;\n"
		     "      sent by a worker in this scope of its own:\n");
	print_scope(pr, K_HTTP, name, route, "      ");
}

static void print_dependencies(FILE *out, json_t *dep)
{
	size_t k;
	json_t *v;
	long long np = json_integer_value(json_object_get(dep, "packages"));
	fprintf(out, "    npm dependencies: prepared installation sha256 %s (%lld package%s, %lld files, %lld bytes),\n"
		     "      read-only at /flow/node_modules; installed at review from the lock's registry tarballs, each\n"
		     "      inspected by jig first, by the pinned Bun with no package script run, in the installer scope\n"
		     "      (its policy sha256 %s, network during that review only); sources sha256 %s\n",
		json_string_value(json_object_get(dep, "tree")), np, np == 1 ? "" : "s",
		json_integer_value(json_object_get(dep, "files")), json_integer_value(json_object_get(dep, "bytes")),
		json_string_value(json_object_get(dep, "installer_policy_sha256")), json_string_value(json_object_get(dep, "source")));
	if (json_is_true(json_object_get(dep, "resolved")))
		fprintf(out, "      the package has no bun.lock: its lock was resolved at review (--allow-resolution-network)\n");
	json_array_foreach(json_object_get(dep, "patches"), k, v) {
		fprintf(out, "      patch for ");
		jig_text_put(out, json_string_value(json_object_get(v, "package")));
		fprintf(out, ": ");
		jig_text_put(out, json_string_value(json_object_get(v, "path")));
		fprintf(out, " (sha256 %s), applied by the pinned Bun\n", json_string_value(json_object_get(v, "sha256")));
	}
	json_array_foreach(json_object_get(dep, "platform_skipped"), k, v) {
		const char *why = json_string_value(json_object_get(v, "for"));
		fprintf(out, "      skipped for this platform, neither fetched nor installed: ");
		jig_text_put(out, json_string_value(json_object_get(v, "package")));
		if (strcmp(why ? why : "", "dependents") == 0)
			fprintf(out, " (needed only by skipped packages)\n");
		else
			fprintf(out, " (its %s is not this host's)\n", why ? why : "?");
	}
}

/* A Flow's part of the Plan keyed by route (or name): the admitted Flow's
 * item of the same name, or NULL. */
static json_t *admitted_item(json_t *was, const char *list, const char *key, json_t *v)
{
	const char *name = json_string_value(json_object_get(v, key));
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(was, list), i, w)
		if (name && strcmp(json_string_value(json_object_get(w, key)) ?: "", name) == 0)
			return w;
	return NULL;
}

/* An item that is exactly the admitted Plan's: one line, never its
 * grants again (they were shown when it was admitted). */
static bool as_admitted(json_t *was, json_t *w, json_t *v)
{
	return was && w && json_equal(w, v);
}

/* The keys of a Flow's part that the printing below shows. Anything else
 * (a part a later jig adds to the Plan) is shown as its JSON, so nothing
 * of the Plan can be admitted without being on screen. */
static const char *const shown_keys[] = {"name", "package", "entry", "inputs", "outputs", "scope", "http", "agents", "recipe",
					 "commands", "checkpoint", "dependencies", "bindings", "root_reservation", NULL};

/* What of a changed Flow is exactly as admitted, said in one line. */
struct kept {
	char text[256];
	size_t routes, bindings;
};
static void kept(struct kept *k, const char *part)
{
	size_t l = strlen(k->text);
	snprintf(k->text + l, sizeof(k->text) - l, "%s%s", l ? ", " : "", part);
}

/* One Flow. was: the admitted Plan's part of this Flow, or NULL (a new
 * Flow, or the whole Plan): with was, only what is not exactly the
 * admitted part is printed (in full), the rest named in one line. */
static void print_flow(struct printing *pr, json_t *f, json_t *was, const char *label)
{
	FILE *out = pr->out;
	struct kept k = {.text = ""};
	const char *name = json_string_value(json_object_get(f, "name"));
	json_t *pk = json_object_get(f, "package");
	fprintf(out, "  flow %s%s\n", name, label);
	if (as_admitted(was, json_object_get(was, "package"), pk) && as_admitted(was, json_object_get(was, "entry"), json_object_get(f, "entry")))
		kept(&k, "its package");
	else
		fprintf(out, "    package sha256 %s (%lld files, %lld bytes), entry %s\n", json_string_value(json_object_get(pk, "sha256")),
			json_integer_value(json_object_get(pk, "files")), json_integer_value(json_object_get(pk, "bytes")),
			json_string_value(json_object_get(f, "entry")));
	if (as_admitted(was, json_object_get(was, "inputs"), json_object_get(f, "inputs")))
		kept(&k, "attachments");
	else {
		fprintf(out, "    attachments (read-only at /input):");
		print_strings(out, json_object_get(f, "inputs"));
		fputc('\n', out);
	}
	if (as_admitted(was, json_object_get(was, "outputs"), json_object_get(f, "outputs")))
		kept(&k, "outputs");
	else {
		fprintf(out, "    may publish from /output:");
		print_strings(out, json_object_get(f, "outputs"));
		fputc('\n', out);
	}
	if (!was) /* jig's own, the same for every Flow */
		fprintf(out, "    deadline %llu s unless --timeout (at most %llu h)\n", JIG_RUN_TIMEOUT_DEFAULT_MS / 1000,
			JIG_RUN_TIMEOUT_MAX_MS / 3600000);
	json_t *rc = json_object_get(f, "recipe");
	if (rc && as_admitted(was, json_object_get(was, "recipe"), rc))
		kept(&k, "recipe");
	else if (rc) {
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
	if (as_admitted(was, json_object_get(was, "scope"), json_object_get(f, "scope")))
		kept(&k, "scope");
	else {
		print_scope(pr, K_FLOW, name, NULL, "    ");
		/* A Flow in a binding relation has the budget table's envelope
		 * wherever it runs, alone too: said, not left to the numbers. */
		if (json_object_get(f, "root_reservation"))
			fprintf(out, "    in a binding relation (it calls, or is called by, another Flow): its limits above are the\n"
				     "      binding envelope's (%.1f CPUs), also when it runs alone\n",
				jig_plan_scope(pr->pl, name, NULL)->policy.limits.cpu_quota_us / 100000.0);
	}
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(f, "http"), i, v) {
		if (as_admitted(was, admitted_item(was, "http", "route", v), v))
			k.routes++;
		else
			print_http(pr, name, v);
	}
	json_array_foreach(json_object_get(f, "agents"), i, v) {
		if (as_admitted(was, admitted_item(was, "agents", "route", v), v))
			k.routes++;
		else
			print_agent(pr, name, v);
	}
	json_array_foreach(json_object_get(f, "commands"), i, v) {
		if (as_admitted(was, admitted_item(was, "commands", "route", v), v))
			k.routes++;
		else
			print_command(pr, name, v);
	}
	k.bindings = jig_binding_print(out, f, was);
	if ((v = json_object_get(f, "checkpoint")) && as_admitted(was, json_object_get(was, "checkpoint"), v))
		kept(&k, "checkpoint");
	else if (v)
		fprintf(out, "    checkpoint: up to %lld saves (one at a time) of <= %lld bytes of JSON with <= %lld text files\n"
			     "      (<= %lld bytes together), kept by jig outside the scope; a Run that does not complete\n"
			     "      publishes the last accepted one (record: interrupted)\n",
			json_integer_value(json_object_get(v, "max_saves")), json_integer_value(json_object_get(v, "max_bytes")),
			json_integer_value(json_object_get(v, "max_files")), json_integer_value(json_object_get(v, "max_text_bytes")));
	json_t *dep = json_object_get(f, "dependencies");
	if (dep && as_admitted(was, json_object_get(was, "dependencies"), dep))
		kept(&k, "npm dependencies");
	else if (dep)
		print_dependencies(out, dep);
	const char *key;
	json_object_foreach(f, key, v) {
		bool shown = false;
		for (const char *const *s = shown_keys; *s && !shown; s++)
			shown = strcmp(*s, key) == 0;
		if (shown || as_admitted(was, json_object_get(was, key), v))
			continue;
		jig_autofree char *txt = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		fprintf(out, "    %s: ", key);
		jig_text_put(out, txt);
		fputc('\n', out);
	}
	char part[64];
	if (k.routes) {
		snprintf(part, sizeof(part), "%zu route%s", k.routes, k.routes == 1 ? "" : "s");
		kept(&k, part);
	}
	if (k.bindings) {
		snprintf(part, sizeof(part), "%zu binding%s", k.bindings, k.bindings == 1 ? "" : "s");
		kept(&k, part);
	}
	if (was && k.text[0])
		fprintf(out, "    as admitted (not shown again): %s\n", k.text);
}

static json_t *flow_named(json_t *doc, const char *name)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "flows"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "name")) ?: "", name ? name : "") == 0)
			return f;
	return NULL;
}

/* Each kind's common part, over the Plan's scopes of that kind (two or
 * more; one is printed in full). */
static void commons(struct printing *pr)
{
	const struct jig_plan *pl = pr->pl;
	const struct jig_scope_policy **ps = calloc(pl->n_scopes ? pl->n_scopes : 1, sizeof(*ps));
	for (int k = 0; ps && k < K_N; k++) {
		size_t n = 0, i, j;
		json_t *f, *v;
		json_array_foreach(json_object_get(pl->doc, "flows"), i, f) {
			const char *name = json_string_value(json_object_get(f, "name"));
			static const char *const lists[K_N] = {NULL, "http", "agents", "commands"};
			if (k == K_FLOW) {
				ps[n++] = &jig_plan_scope(pl, name, NULL)->policy;
				continue;
			}
			json_array_foreach(json_object_get(f, lists[k]), j, v)
				if (!json_object_get(v, "api") && n < pl->n_scopes) /* an API-backed Agent route has no scope */
					ps[n++] = &jig_plan_scope(pl, name, json_string_value(json_object_get(v, "route")))->policy;
		}
		if (n >= 2)
			pr->common[k] = jig_scope_common_of(ps, n);
	}
	free(ps);
}

static void print_head(const struct jig_plan *pl, const char *project, FILE *out)
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
}

void jig_plan_print(const struct jig_plan *pl, const char *project, FILE *out)
{
	struct printing pr = {.pl = pl, .out = out};
	print_head(pl, project, out);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(pl->doc, "flows"), i, f)
		print_flow(&pr, f, NULL, "");
}

int jig_plan_print_review(const struct jig_plan *pl, const char *project, json_t *was, json_t *changes, const char *admitted,
			  FILE *out)
{
	struct printing pr = {.pl = pl};
	char *body = NULL;
	size_t len = 0, same = 0;
	if (!(pr.out = open_memstream(&body, &len)))
		return -1;
	commons(&pr);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(pl->doc, "flows"), i, f) {
		json_t *w = was ? flow_named(was, json_string_value(json_object_get(f, "name"))) : NULL;
		if (w && json_equal(w, f))
			same++;
		else
			print_flow(&pr, f, w, !was ? "" : w ? " (changed: what is not as admitted is shown in full)" : " (new: not in the admitted Plan)");
	}
	if (same) /* their grants were on screen when they were admitted */
		fprintf(pr.out, "  %s%zu Flow%s as admitted, not shown again (jig review --full prints the whole Plan)\n",
			same < json_array_size(json_object_get(pl->doc, "flows")) ? "the other " : "", same, same == 1 ? "" : "s");
	fclose(pr.out);
	if (!was)
		print_head(pl, project, out);
	else { /* the snapshot and runtime when they changed (the changes say how) */
		fprintf(out, "Plan %s\n  project ", pl->sha256);
		jig_text_put(out, project);
		fputc('\n', out);
		json_t *snap = json_object_get(pl->doc, "snapshot"), *rt = json_object_get(pl->doc, "runtime");
		if (!json_equal(snap, json_object_get(was, "snapshot")))
			fprintf(out, "  snapshot %s, launch identity %s\n", json_string_value(json_object_get(snap, "id")),
				json_string_value(json_object_get(snap, "launch_identity")));
		if (!json_equal(rt, json_object_get(was, "runtime")))
			fprintf(out, "  runtime Bun sha256 %s\n", json_string_value(json_object_get(rt, "bun_sha256")));
		fprintf(out, "  changes since the admitted Plan %.12s (%zu):\n", admitted, json_array_size(changes));
		jig_plan_diff_print(changes, out);
	}
	for (int k = 0; k < K_N; k++) {
		if (pr.used[k]) {
			fprintf(out, "  every %s scope of this Plan has these (each %s scope below shows only what it has besides):\n",
				kind_name[k], kind_name[k]);
			jig_scope_common_print(pr.common[k], "  ", out);
		}
		jig_scope_common_free(pr.common[k]);
	}
	fwrite(body, 1, len, out);
	free(body);
	return 0;
}
