/* Project and Flow metadata, bounded capture, the Package/0 store. */
#include "flow/project.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flow/binding.h"
#include "util/schema0.h"
#include "flow/recipe.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

#define META_MAX_BYTES (64 * 1024)
#define MAX_DEPTH 32

/* The JSON helpers speak of integrity; bad project input is usage. */
static int usage(int r, struct jig_error *e)
{
	if (r && e && e->code == JIG_E_INTEGRITY) {
		e->code = JIG_E_USAGE;
		return -JIG_E_USAGE;
	}
	return r;
}

int jig_valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return 0;
	return 1;
}

/* Reads a small regular file beneath dirfd (no symlinks anywhere). */
static int read_meta(int dirfd, const char *rel, const char *what, char **out, size_t *len,
		     struct jig_error *e)
{
	struct stat st;
	return jig_read_file_at(dirfd, rel, META_MAX_BYTES, what, out, len, &st, e);
}

static int strings(json_t *arr, const char *what, bool paths, char ***out, size_t *n,
		   struct jig_error *e)
{
	if (!json_is_array(arr) || json_array_size(arr) > JIG_MAX_DECLARED)
		return jig_err(e, JIG_E_USAGE, "%s: must be an array of at most %d strings", what, JIG_MAX_DECLARED);
	*n = json_array_size(arr);
	*out = calloc(*n + 1, sizeof(char *));
	if (!*out)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < *n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		if (!s || (paths ? !jig_path_is_normal_relative(s) : !jig_valid_name(s)))
			return jig_err(e, JIG_E_USAGE, "%s[%zu]: %s", what, i,
				       paths ? "must be a normalised relative path" : "must be a name of [a-z0-9_-]");
		for (size_t j = 0; j < i; j++)
			if (strcmp((*out)[j], s) == 0)
				return jig_err(e, JIG_E_USAGE, "%s: \"%s\" is listed twice", what, s);
		if (!((*out)[i] = strdup(s)))
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	return 0;
}

/* "http": {ROUTE: {"method", "url", "body_schema"?, "max_request_bytes"?,
 * "max_response_bytes"?, "timeout_ms"?}}; the URL rule itself is
 * plugins/http's, applied when the Plan is built. */
static int parse_http(json_t *obj, const char *what, struct jig_flow *f, struct jig_error *e)
{
	if (!obj)
		return 0;
	if (!json_is_object(obj) || json_object_size(obj) > JIG_HTTP_MAX_ROUTES)
		return jig_err(e, JIG_E_USAGE, "%s: http: must be an object of at most %d routes", what, JIG_HTTP_MAX_ROUTES);
	f->http = calloc(json_object_size(obj) + 1, sizeof(*f->http));
	if (!f->http)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	static const char *const keys[] = {"method", "url", "body_schema", "max_request_bytes", "max_response_bytes",
					   "timeout_ms", NULL};
	static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", NULL};
	const char *route;
	json_t *g;
	json_object_foreach(obj, route, g) {
		struct jig_http_grant *h = &f->http[f->n_http++];
		char w[300];
		snprintf(w, sizeof(w), "%s: http route \"%.64s\"", what, route);
		const char *method, *url;
		int r;
		if (!jig_valid_name(route))
			return jig_err(e, JIG_E_USAGE, "%s: http: route name \"%.64s\" must be of [a-z0-9_-]", what, route);
		if (!json_is_object(g))
			return jig_err(e, JIG_E_USAGE, "%s: must be an object", w);
		if ((r = jig_json_only_keys(g, keys, w, e)) || (r = jig_json_get_string(g, "method", w, &method, e)) ||
		    (r = jig_json_get_string(g, "url", w, &url, e)))
			return usage(r, e);
		bool known = false;
		for (size_t i = 0; methods[i]; i++)
			known |= strcmp(method, methods[i]) == 0;
		if (!known)
			return jig_err(e, JIG_E_USAGE, "%s: method \"%.16s\" is not one of GET POST PUT PATCH DELETE HEAD", w, method);
		h->max_request_bytes = 16 << 10;
		h->max_response_bytes = 1 << 20;
		h->timeout_ms = 10000;
		if ((json_object_get(g, "max_request_bytes") &&
		     (r = jig_json_get_uint(g, "max_request_bytes", w, 0, JIG_HTTP_REQUEST_MAX, &h->max_request_bytes, e))) ||
		    (json_object_get(g, "max_response_bytes") &&
		     (r = jig_json_get_uint(g, "max_response_bytes", w, 1, JIG_HTTP_RESPONSE_MAX, &h->max_response_bytes, e))) ||
		    (json_object_get(g, "timeout_ms") &&
		     (r = jig_json_get_uint(g, "timeout_ms", w, 100, JIG_HTTP_TIMEOUT_MAX, &h->timeout_ms, e))))
			return usage(r, e);
		json_t *schema = json_object_get(g, "body_schema");
		if (schema) {
			struct jig_error se = {0};
			if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
				return jig_err(e, JIG_E_USAGE, "%s: a %s request has no body, so no body_schema", w, method);
			if (jig_schema0_check(schema, &se) < 0)
				return jig_err(e, JIG_E_USAGE, "%s: body_schema: %s", w, se.msg);
			h->body_schema = json_incref(schema);
		}
		if (!(h->route = strdup(route)) || !(h->method = strdup(method)) || !(h->url = strdup(url)))
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	return 0;
}

/* A route's backend: a native client ("provider", the operator's), or an
 * API ("api" and "http": a POST http route of the same Flow that the
 * request, prepared as data, is sent through; its deadline applies). */
static int agent_backend(json_t *g, const char *w, const struct jig_flow *f, struct jig_agent_grant *a, struct jig_error *e)
{
	json_t *prov = json_object_get(g, "provider"), *api = json_object_get(g, "api"), *http = json_object_get(g, "http");
	if (prov) {
		if (api || http || !json_is_string(prov) || !jig_valid_name(json_string_value(prov)))
			return jig_err(e, JIG_E_USAGE, "%s: \"provider\" (a name of [a-z0-9_-]) names a native client; \"api\" and \"http\" an API-backed one, not both", w);
		return (a->provider = strdup(json_string_value(prov))) ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	const char *kind = json_string_value(api), *route = json_string_value(http);
	if (!kind || !route)
		return jig_err(e, JIG_E_USAGE, "%s: needs \"provider\" (a native client) or \"api\" and \"http\" (an API-backed Agent)", w);
	if (strcmp(kind, "openai-chat") != 0 && strcmp(kind, "anthropic-messages") != 0)
		return jig_err(e, JIG_E_USAGE, "%s: api \"%.32s\" is not openai-chat or anthropic-messages", w, kind);
	const struct jig_http_grant *h = jig_flow_http_grant(f, route);
	if (!h || strcmp(h->method, "POST") != 0)
		return jig_err(e, JIG_E_USAGE, "%s: http \"%.64s\" must be a POST route of this Flow's \"http\"", w, route);
	if (json_object_get(g, "timeout_ms"))
		return jig_err(e, JIG_E_USAGE, "%s: an API-backed route has its http route's deadline, not timeout_ms", w);
	a->timeout_ms = h->timeout_ms;
	return (a->api = strdup(kind)) && (a->http = strdup(route)) ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

#define MODEL_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:/@-"

/* "agents": {ROUTE: {"provider", "model", "max_prompt_bytes"?,
 * "max_answer_bytes"?, "timeout_ms"?, "retain_sessions"?}}. A route name is a Flow's, shared
 * with its HTTP routes (one scope per route in the Plan). The provider
 * must exist in the operator's configuration; that is checked when the
 * Plan is built. */
static int parse_agents(json_t *obj, const char *what, struct jig_flow *f, struct jig_error *e)
{
	if (!obj)
		return 0;
	if (!json_is_object(obj) || json_object_size(obj) > JIG_AGENT_MAX_ROUTES)
		return jig_err(e, JIG_E_USAGE, "%s: agents: must be an object of at most %d routes", what, JIG_AGENT_MAX_ROUTES);
	if (!(f->agents = calloc(json_object_size(obj) + 1, sizeof(*f->agents))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	static const char *const keys[] = {"provider", "api", "http", "model", "max_prompt_bytes", "max_answer_bytes",
					   "timeout_ms", "retain_sessions", NULL};
	const char *route;
	json_t *g;
	json_object_foreach(obj, route, g) {
		struct jig_agent_grant *a = &f->agents[f->n_agents++];
		char w[300];
		snprintf(w, sizeof(w), "%s: agent route \"%.64s\"", what, route);
		const char *model;
		int r;
		if (!jig_valid_name(route))
			return jig_err(e, JIG_E_USAGE, "%s: agents: route name \"%.64s\" must be of [a-z0-9_-]", what, route);
		if (jig_flow_http_grant(f, route))
			return jig_err(e, JIG_E_USAGE, "%s: is also an http route; a route name means one grant", w);
		if (!json_is_object(g))
			return jig_err(e, JIG_E_USAGE, "%s: must be an object", w);
		a->max_prompt_bytes = 16 << 10;
		a->max_answer_bytes = 64 << 10;
		a->timeout_ms = 120000;
		if ((r = jig_json_only_keys(g, keys, w, e)) || (r = jig_json_get_string(g, "model", w, &model, e)))
			return usage(r, e);
		if ((r = agent_backend(g, w, f, a, e)))
			return usage(r, e);
		if (!model[0] || strlen(model) > 128 || strspn(model, MODEL_CHARS) != strlen(model))
			return jig_err(e, JIG_E_USAGE, "%s: model must be 1-128 characters of [A-Za-z0-9._:/@-] (jig supplies no default)", w);
		if ((json_object_get(g, "max_prompt_bytes") &&
		     (r = jig_json_get_uint(g, "max_prompt_bytes", w, 1, JIG_AGENT_PROMPT_MAX, &a->max_prompt_bytes, e))) ||
		    (json_object_get(g, "max_answer_bytes") &&
		     (r = jig_json_get_uint(g, "max_answer_bytes", w, 1, JIG_AGENT_ANSWER_MAX, &a->max_answer_bytes, e))) ||
		    (json_object_get(g, "timeout_ms") &&
		     (r = jig_json_get_uint(g, "timeout_ms", w, 1000, JIG_AGENT_TIMEOUT_MAX, &a->timeout_ms, e))))
			return usage(r, e);
		json_t *keep = json_object_get(g, "retain_sessions");
		if (keep && (!json_is_boolean(keep) || (json_is_true(keep) && a->api)))
			return jig_err(e, JIG_E_USAGE, "%s: retain_sessions is true or false, and only for a native client (\"provider\")", w);
		a->retain_sessions = json_is_true(keep);
		if (!(a->route = strdup(route)) || !(a->model = strdup(model)))
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	return 0;
}

/* "checkpoint": true (issue 18): Run Checkpoint needs a writable output
 * mapping, so declared outputs. */
static int parse_checkpoint(json_t *v, const char *what, struct jig_flow *f, struct jig_error *e)
{
	if (v && !json_is_boolean(v))
		return jig_err(e, JIG_E_USAGE, "%s: checkpoint must be true or false", what);
	f->checkpoint = json_is_true(v);
	if (f->checkpoint && f->n_outputs == 0)
		return jig_err(e, JIG_E_USAGE, "%s: checkpoint needs declared outputs (a writable output mapping)", what);
	return 0;
}

/* "commands": {ROUTE: {"input"?, "timeout_ms", "capture"?}}, like "http" and
 * "agents". A route name is the Flow's, shared with its HTTP and Agent
 * routes (one scope per route in the Plan); "input" must be one of the
 * Flow's declared inputs. */
static int parse_commands(json_t *obj, const char *what, struct jig_flow *f, struct jig_error *e)
{
	if (!obj)
		return 0;
	if (!json_is_object(obj) || json_object_size(obj) > JIG_COMMAND_MAX_ROUTES)
		return jig_err(e, JIG_E_USAGE, "%s: commands: must be an object of at most %d routes", what, JIG_COMMAND_MAX_ROUTES);
	if (!(f->commands = calloc(json_object_size(obj) + 1, sizeof(*f->commands))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	static const char *const keys[] = {"input", "timeout_ms", "capture", NULL};
	const char *route;
	json_t *g;
	json_object_foreach(obj, route, g) {
		char w[300];
		int r;
		if (!jig_valid_name(route))
			return jig_err(e, JIG_E_USAGE, "%s: commands: route name \"%.64s\" must be of [a-z0-9_-]", what, route);
		snprintf(w, sizeof(w), "%s: command route \"%s\"", what, route);
		if (jig_flow_http_grant(f, route) || jig_flow_agent_grant(f, route))
			return jig_err(e, JIG_E_USAGE, "%s: is named twice (routes of http, agents and commands share names); a route name means one grant", w);
		struct jig_command_grant *c = &f->commands[f->n_commands++];
		if (!json_is_object(g))
			return jig_err(e, JIG_E_USAGE, "%s: must be an object {\"input\"?, \"timeout_ms\"}", w);
		if ((r = jig_json_only_keys(g, keys, w, e)))
			return usage(r, e);
		if (!json_object_get(g, "timeout_ms"))
			return jig_err(e, JIG_E_USAGE, "%s: needs \"timeout_ms\" (%d-%d), its deadline", w, JIG_COMMAND_TIMEOUT_MIN, JIG_COMMAND_TIMEOUT_MAX);
		if ((r = jig_json_get_uint(g, "timeout_ms", w, JIG_COMMAND_TIMEOUT_MIN, JIG_COMMAND_TIMEOUT_MAX, &c->timeout_ms, e)))
			return usage(r, e);
		json_t *cap = json_object_get(g, "capture");
		if (cap && !json_is_boolean(cap))
			return jig_err(e, JIG_E_USAGE, "%s: capture must be true or false", w);
		c->capture = json_is_true(cap);
		json_t *in = json_object_get(g, "input");
		if (in) {
			const char *name = json_string_value(in);
			bool declared = false;
			for (size_t k = 0; name && k < f->n_inputs; k++)
				declared |= strcmp(f->inputs[k], name) == 0;
			if (!declared)
				return jig_err(e, JIG_E_USAGE, "%s: input must name one of this Flow's declared \"inputs\"", w);
			if (!(c->input = strdup(name)))
				return jig_err(e, JIG_E_INTERNAL, "out of memory");
		}
		if (!(c->route = strdup(route)))
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	return 0;
}

const struct jig_command_grant *jig_flow_command_grant(const struct jig_flow *f, const char *route)
{
	for (size_t i = 0; i < f->n_commands; i++)
		if (f->commands[i].route && strcmp(f->commands[i].route, route) == 0)
			return &f->commands[i];
	return NULL;
}

const struct jig_agent_grant *jig_flow_agent_grant(const struct jig_flow *f, const char *route)
{
	for (size_t i = 0; i < f->n_agents; i++)
		if (strcmp(f->agents[i].route, route) == 0)
			return &f->agents[i];
	return NULL;
}

const struct jig_http_grant *jig_flow_http_grant(const struct jig_flow *f, const char *route)
{
	for (size_t i = 0; i < f->n_http; i++)
		if (strcmp(f->http[i].route, route) == 0)
			return &f->http[i];
	return NULL;
}

static int parse_flow(int rootfd, const char *name, const char *dir, struct jig_flow *f,
		      struct jig_error *e)
{
	char what[200];
	snprintf(what, sizeof(what), "%s/%s", dir, JIG_FLOW_FILE);
	jig_autoclose int pfd = jig_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY);
	if (pfd < 0)
		return jig_err(e, JIG_E_USAGE, "flow %s: package directory %s: %s", name, dir,
			       errno == ELOOP || errno == ENOTDIR ? "is not a directory, or is or passes through a symbolic link" : strerror(errno));
	jig_autofree char *buf = NULL;
	size_t len;
	int r = read_meta(pfd, JIG_FLOW_FILE, what, &buf, &len, e);
	if (r)
		return usage(r, e);
	json_t *doc = NULL;
	if ((r = usage(jig_json_parse_object(buf, len, what, &doc, e), e)))
		return r;
	static const char *const keys[] = {"format", "name", "entry", "inputs", "outputs", "http", "agents", "commands", "bindings",
					   "checkpoint", NULL};
	const char *format, *fname, *entry;
	if ((r = jig_json_only_keys(doc, keys, what, e)) || (r = jig_json_get_string(doc, "format", what, &format, e)) ||
	    (r = jig_json_get_string(doc, "name", what, &fname, e)) ||
	    (r = jig_json_get_string(doc, "entry", what, &entry, e)))
		goto out;
	if (strcmp(format, "jig-flow/1") != 0) {
		r = jig_err(e, JIG_E_USAGE, "%s: format \"%s\" is not jig-flow/1", what, format);
		goto out;
	}
	if (strcmp(fname, name) != 0) {
		r = jig_err(e, JIG_E_USAGE, "%s: name \"%s\" differs from the project's name for it, \"%s\"", what, fname, name);
		goto out;
	}
	if (!jig_path_is_normal_relative(entry)) {
		r = jig_err(e, JIG_E_USAGE, "%s: entry \"%s\" must be a normalised path inside the package", what, entry);
		goto out;
	}
	char w2[220];
	snprintf(w2, sizeof(w2), "%s: inputs", what);
	if ((r = strings(json_object_get(doc, "inputs"), w2, false, &f->inputs, &f->n_inputs, e)))
		goto out;
	snprintf(w2, sizeof(w2), "%s: outputs", what);
	if ((r = strings(json_object_get(doc, "outputs"), w2, true, &f->outputs, &f->n_outputs, e)))
		goto out;
	if ((r = parse_http(json_object_get(doc, "http"), what, f, e)) ||
	    (r = parse_agents(json_object_get(doc, "agents"), what, f, e)) ||
	    (r = parse_commands(json_object_get(doc, "commands"), what, f, e)) ||
	    (r = jig_binding_parse(json_object_get(doc, "bindings"), what, f, e)) ||
	    (r = parse_checkpoint(json_object_get(doc, "checkpoint"), what, f, e)))
		goto out;
	f->name = strdup(name);
	f->dir = strdup(dir);
	f->entry = strdup(entry);
	if (!f->name || !f->dir || !f->entry)
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	else
		r = jig_recipe_check(pfd, f, what, e); /* a Markdown recipe; the reserved route */
out:
	json_decref(doc);
	return usage(r, e);
}

/* <project>/.jig: created 0700 if missing; must be the caller's, 0700, a
 * real directory. */
static int open_state(int rootfd, const char *root, struct jig_error *e)
{
	if (mkdirat(rootfd, JIG_STATE_DIR, 0700) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_USAGE, "%s/%s: cannot create: %s", root, JIG_STATE_DIR, strerror(errno));
	int fd = openat(rootfd, JIG_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int saved = errno;
		if (fd >= 0)
			close(fd);
		return jig_err(e, JIG_E_USAGE, "%s/%s: %s", root, JIG_STATE_DIR,
			       saved == ELOOP || saved == ENOTDIR ? "is not a directory (a symbolic link?)" : strerror(saved));
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return jig_err(e, JIG_E_USAGE, "%s/%s: must be owned by uid %u with mode 0700 (it holds admissions); fix or remove it",
			       root, JIG_STATE_DIR, (unsigned)geteuid());
	}
	static const char *const sub[] = {"store", "store/blobs", "store/packages", "admitted", NULL};
	for (const char *const *s = sub; *s; s++)
		if (mkdirat(fd, *s, 0700) < 0 && errno != EEXIST) {
			close(fd);
			return jig_err(e, JIG_E_USAGE, "%s/%s/%s: cannot create: %s", root, JIG_STATE_DIR, *s, strerror(errno));
		}
	return fd;
}

int jig_project_open(const char *path, struct jig_project *p, struct jig_error *e)
{
	memset(p, 0, sizeof(*p));
	p->rootfd = p->statefd = -1;
	p->store_cap = JIG_STORE_MAX_BYTES;
	p->root = strdup(path);
	p->rootfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!p->root || p->rootfd < 0) {
		int r = jig_err(e, JIG_E_USAGE, "project %s: %s", path, strerror(errno));
		jig_project_close(p);
		return r;
	}
	char what[300];
	snprintf(what, sizeof(what), "%s/%s", path, JIG_PROJECT_FILE);
	jig_autofree char *buf = NULL;
	size_t len;
	json_t *doc = NULL;
	int r = usage(read_meta(p->rootfd, JIG_PROJECT_FILE, what, &buf, &len, e), e);
	if (!r)
		r = usage(jig_json_parse_object(buf, len, what, &doc, e), e);
	static const char *const keys[] = {"format", "flows", NULL};
	const char *format;
	if (!r && !(r = usage(jig_json_only_keys(doc, keys, what, e), e)) &&
	    !(r = usage(jig_json_get_string(doc, "format", what, &format, e), e)) && strcmp(format, "jig-project/1") != 0)
		r = jig_err(e, JIG_E_USAGE, "%s: format \"%s\" is not jig-project/1", what, format);
	json_t *flows = r ? NULL : json_object_get(doc, "flows");
	if (!r && (!json_is_object(flows) || json_object_size(flows) == 0 || json_object_size(flows) > JIG_MAX_FLOWS))
		r = jig_err(e, JIG_E_USAGE, "%s: \"flows\" must map 1 to %d Flow names to package directories", what, JIG_MAX_FLOWS);
	if (!r && !(p->flows = calloc(json_object_size(flows), sizeof(*p->flows))))
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	const char *name;
	json_t *dir;
	if (!r)
		json_object_foreach(flows, name, dir) {
			const char *d = json_string_value(dir);
			if (!jig_valid_name(name))
				r = jig_err(e, JIG_E_USAGE, "%s: Flow name \"%s\" must be [a-z0-9][a-z0-9_-]*", what, name);
			else if (!d || !jig_path_is_normal_relative(d) || strcmp(d, JIG_STATE_DIR) == 0 ||
				 strncmp(d, JIG_STATE_DIR "/", sizeof(JIG_STATE_DIR)) == 0)
				r = jig_err(e, JIG_E_USAGE, "%s: Flow %s: the package must be a normalised directory path inside the project, not .jig", what, name);
			else
				r = parse_flow(p->rootfd, name, d, &p->flows[p->n_flows++], e);
			if (r)
				break;
		}
	json_decref(doc);
	if (!r)
		r = jig_binding_link(p, e);
	if (!r) {
		p->statefd = open_state(p->rootfd, path, e);
		if (p->statefd < 0)
			r = p->statefd;
	}
	if (r)
		jig_project_close(p);
	return r;
}

static void free_strv(char **v, size_t n)
{
	if (v)
		for (size_t i = 0; i < n; i++)
			free(v[i]);
	free(v);
}

void jig_project_close(struct jig_project *p)
{
	for (size_t i = 0; p->flows && i < p->n_flows; i++) {
		struct jig_flow *f = &p->flows[i];
		free(f->name);
		free(f->dir);
		free(f->entry);
		json_decref(f->recipe);
		free_strv(f->inputs, f->n_inputs);
		free_strv(f->outputs, f->n_outputs);
		for (size_t k = 0; k < f->n_http; k++) {
			free(f->http[k].route);
			free(f->http[k].method);
			free(f->http[k].url);
			json_decref(f->http[k].body_schema);
		}
		free(f->http);
		for (size_t k = 0; k < f->n_agents; k++) {
			free(f->agents[k].route);
			free(f->agents[k].provider);
			free(f->agents[k].api);
			free(f->agents[k].http);
			free(f->agents[k].model);
		}
		free(f->agents);
		for (size_t k = 0; k < f->n_commands; k++) {
			free(f->commands[k].route);
			free(f->commands[k].input);
		}
		free(f->commands);
		jig_binding_free(f);
	}
	free(p->flows);
	free(p->root);
	if (p->rootfd >= 0)
		close(p->rootfd);
	if (p->statefd >= 0)
		close(p->statefd);
	memset(p, 0, sizeof(*p));
	p->rootfd = p->statefd = -1;
}

const struct jig_flow *jig_project_flow(const struct jig_project *p, const char *name)
{
	for (size_t i = 0; i < p->n_flows; i++)
		if (strcmp(p->flows[i].name, name) == 0)
			return &p->flows[i];
	return NULL;
}

/* --- capture ---------------------------------------------------------------- */

struct walk {
	const char *flow;
	bool skip_node_modules;
	dev_t dev;
	json_t *files;
	uint64_t bytes;
	struct jig_error *e;
};

/* Streams fd into the store as blobs/<hex> unless it is already there.
 * *new_bytes counts what had to be written. */
static int hash_fd(int fd, unsigned char out[JIG_SHA256_LEN])
{
	return jig_sha256_fd(fd, NULL, out);
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
	if (depth > MAX_DEPTH)
		return jig_err(w->e, JIG_E_USAGE, "flow %s: %s: nested deeper than %d directories", w->flow, prefix, MAX_DEPTH);
	int dup_fd = dup(dfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return jig_err(w->e, JIG_E_INTERNAL, "flow %s: %s: %s", w->flow, prefix, strerror(errno));
	}
	rewinddir(d); /* the dup shares the offset: a second walk of dfd starts over */
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		/* A package's own node_modules is never captured: its
		 * dependencies are prepared by jig (docs/dependencies.md). */
		if (depth == 0 && w->skip_node_modules && strcmp(n, "node_modules") == 0)
			continue;
		char rel[1024];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", n);
		struct stat st;
		if (!jig_path_is_normal_relative(rel))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: file names must be [A-Za-z0-9._+@-]", w->flow, rel);
		else if (strcmp(n, JIG_STATE_DIR) == 0)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: the protected .jig state is never part of a package", w->flow, rel);
		else if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: %s", w->flow, rel, strerror(errno));
		else if (st.st_dev != w->dev)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: is another mount; packages are captured from one file system", w->flow, rel);
		else if (S_ISLNK(st.st_mode))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: is a symbolic link; packages contain regular files and directories only", w->flow, rel);
		else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? jig_err(w->e, JIG_E_USAGE, "flow %s: %s: %s", w->flow, rel, strerror(errno))
				    : walk_dir(w, sub, rel, depth + 1);
			if (sub >= 0)
				close(sub);
		} else if (!S_ISREG(st.st_mode))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: is a special file (fifo, socket or device); refused", w->flow, rel);
		else if (st.st_nlink != 1)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: has %lu hard links; packages contain singly linked files only", w->flow, rel,
				    (unsigned long)st.st_nlink);
		else if (json_array_size(w->files) >= JIG_PACKAGE_MAX_FILES)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: more than %d files", w->flow, JIG_PACKAGE_MAX_FILES);
		else if ((w->bytes += (uint64_t)st.st_size) > JIG_ARTIFACT_MAX_BYTES)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: the package is larger than 64 MiB (the Package/0 artifact cap)", w->flow);
		else {
			jig_autoclose int fd = openat(dfd, n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			struct stat st2;
			unsigned char h[JIG_SHA256_LEN];
			char hex[JIG_SHA256_HEX];
			if (fd < 0 || fstat(fd, &st2) < 0 || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode))
				r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: changed while it was captured", w->flow, rel);
			else if (hash_fd(fd, h) < 0)
				r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: read: %s", w->flow, rel, strerror(errno));
			else {
				jig_hex(h, JIG_SHA256_LEN, hex);
				json_array_append_new(w->files, json_pack("{s:s,s:I,s:s,s:b}", "path", rel, "size",
									  (json_int_t)st2.st_size, "sha256", hex,
									  "exec", (st2.st_mode & 0111) != 0));
			}
		}
	}
	closedir(d);
	return r;
}

static int cmp_path(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	return strcmp(json_string_value(json_object_get(*x, "path")), json_string_value(json_object_get(*y, "path")));
}

/* Bytes held by one store directory. */
static uint64_t dir_bytes(int statefd, const char *sub)
{
	int fd = openat(statefd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	uint64_t total = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] != '.' && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	return total;
}

static bool present(int statefd, const char *rel)
{
	struct stat st;
	return fstatat(statefd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Copies rel (beneath srcfd) to the store as blobs/<hex>, checking the hash
 * of the bytes written; atomic (temporary name, then rename). */
static int store_blob(int statefd, int srcfd, const char *rel, const char *hex, struct jig_error *e)
{
	char dst[128], tmp[160];
	snprintf(dst, sizeof(dst), "store/blobs/%s", hex);
	snprintf(tmp, sizeof(tmp), "store/blobs/.tmp-%d-%s", (int)getpid(), hex);
	jig_autoclose int in = jig_open_beneath(srcfd, rel, O_RDONLY | O_NONBLOCK);
	jig_autoclose int out = openat(statefd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (in < 0 || out < 0)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: %s", rel, strerror(errno));
	struct jig_sha256_ctx *c = jig_sha256_begin();
	char buf[65536];
	int r = c ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (;;) {
		if (r)
			break;
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: read: %s", rel, strerror(errno));
		if (n <= 0)
			break;
		jig_sha256_update(c, buf, (size_t)n);
		if (write(out, buf, (size_t)n) != n)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: write: %s", rel, strerror(errno));
	}
	unsigned char h[JIG_SHA256_LEN];
	char got[JIG_SHA256_HEX];
	if (c) {
		jig_sha256_end(c, h);
		jig_hex(h, JIG_SHA256_LEN, got);
		if (!r && strcmp(got, hex) != 0)
			r = jig_err(e, JIG_E_USAGE, "%s: changed while it was captured; review again", rel);
	}
	if (!r && (fsync(out) < 0 || renameat(statefd, tmp, statefd, dst) < 0))
		r = jig_err(e, JIG_E_INTERNAL, "store: %s: %s", dst, strerror(errno));
	if (r)
		unlinkat(statefd, tmp, 0);
	return r;
}

/* One tree into the store as a jig-package/1 manifest and its blobs:
 * what names it in messages; entry, if set, must be one of its files.
 * *used is the store's size, updated. */
static int capture_tree(struct jig_project *p, int pfd, const char *what, const char *entry, const char *dir, bool store,
			uint64_t *used,
			char sha[JIG_SHA256_HEX], uint64_t *bytes, size_t *files, struct jig_error *e)
{
	struct stat st;
	if (fstat(pfd, &st) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", what, strerror(errno));
	struct walk w = {.flow = what, .dev = st.st_dev, .files = json_array(), .e = e, .skip_node_modules = entry != NULL};
	int r = walk_dir(&w, pfd, "", 0);
	if (r) {
		json_decref(w.files);
		return r;
	}
	/* Canonical package manifest: files sorted by path. */
	size_t n = json_array_size(w.files);
	json_t **v = calloc(n + 1, sizeof(*v)), *sorted = json_array();
	for (size_t k = 0; v && k < n; k++)
		v[k] = json_array_get(w.files, k);
	if (v)
		qsort(v, n, sizeof(*v), cmp_path);
	bool has_entry = !entry;
	for (size_t k = 0; v && k < n; k++) {
		json_array_append(sorted, v[k]);
		has_entry |= entry && strcmp(json_string_value(json_object_get(v[k], "path")), entry) == 0;
	}
	free(v);
	json_decref(w.files);
	json_t *man = json_pack("{s:s,s:o}", "format", "jig-package/1", "files", sorted);
	jig_autofree char *canon = man ? jig_json_canonical(man) : NULL;
	if (!canon) {
		json_decref(man);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	if (!has_entry) {
		json_decref(man);
		return jig_err(e, JIG_E_USAGE, "flow %s: entry %s is not a file of the package %s", what, entry, dir);
	}
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256(canon, strlen(canon), d);
	jig_hex(d, JIG_SHA256_LEN, sha);
	*bytes = w.bytes;
	*files = n;
	/* What this artifact needs that the store does not hold yet. */
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", sha);
	uint64_t need = present(p->statefd, mrel) ? 0 : strlen(canon);
	for (size_t k = 0; k < n; k++) {
		json_t *fe = json_array_get(sorted, k);
		char brel[128];
		snprintf(brel, sizeof(brel), "store/blobs/%s", json_string_value(json_object_get(fe, "sha256")));
		if (!present(p->statefd, brel))
			need += (uint64_t)json_integer_value(json_object_get(fe, "size"));
	}
	if (!store) {
		json_decref(man);
		return 0;
	}
	if (need && *used + need > p->store_cap) {
		json_decref(man);
		return jig_err(e, JIG_E_USAGE,
			       "%s: the Package/0 store is full (%llu of %llu bytes; this artifact needs %llu more); exact retained artifacts stay usable; reclaiming space means removing %s/%s, which also discards admissions and Run history",
			       what, (unsigned long long)*used, (unsigned long long)p->store_cap, (unsigned long long)need, p->root,
			       JIG_STATE_DIR);
	}
	for (size_t k = 0; r == 0 && k < n; k++) {
		json_t *fe = json_array_get(sorted, k);
		const char *hex = json_string_value(json_object_get(fe, "sha256"));
		char brel[128];
		snprintf(brel, sizeof(brel), "store/blobs/%s", hex);
		if (!present(p->statefd, brel))
			r = store_blob(p->statefd, pfd, json_string_value(json_object_get(fe, "path")), hex, e);
	}
	if (r == 0 && !present(p->statefd, mrel))
		r = jig_write_file_at(p->statefd, mrel, canon, strlen(canon), 0600, e);
	*used += need;
	json_decref(man);
	return r;
}

static uint64_t store_used(const struct jig_project *p)
{
	return dir_bytes(p->statefd, "store/blobs") + dir_bytes(p->statefd, "store/packages");
}

int jig_project_capture(struct jig_project *p, bool store, struct jig_error *e)
{
	uint64_t used = store_used(p); /* what the store holds now */
	for (size_t i = 0; i < p->n_flows; i++) {
		struct jig_flow *f = &p->flows[i];
		jig_autoclose int pfd = jig_open_beneath(p->rootfd, f->dir, O_RDONLY | O_DIRECTORY);
		if (pfd < 0)
			return jig_err(e, JIG_E_USAGE, "flow %s: %s: %s", f->name, f->dir, strerror(errno));
		int r = capture_tree(p, pfd, f->name, f->entry, f->dir, store, &used, f->package_sha256, &f->package_bytes,
				     &f->package_files, e);
		if (r)
			return r;
	}
	/* Binding resource trees (R-S04): also before any decision, so a
	 * declined review retains them too. */
	return jig_binding_capture(p, store, &used, e);
}

int jig_store_capture_tree(struct jig_project *p, int dirfd, const char *what, bool store, uint64_t *used,
			   char sha[JIG_SHA256_HEX], uint64_t *bytes, size_t *files, struct jig_error *e)
{
	return capture_tree(p, dirfd, what, NULL, NULL, store, used, sha, bytes, files, e);
}

int jig_store_capture(struct jig_project *p, int dirfd, const char *what, char sha[JIG_SHA256_HEX], uint64_t *bytes,
		      size_t *files, struct jig_error *e)
{
	uint64_t used = store_used(p);
	return capture_tree(p, dirfd, what, NULL, NULL, true, &used, sha, bytes, files, e);
}

int jig_store_materialise(const struct jig_project *p, const char *package_sha256, int dirfd,
			  struct jig_error *e)
{
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", package_sha256);
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	int r = jig_read_file_at(p->statefd, mrel, 4 << 20, "package manifest", &buf, &len, &st, e);
	if (r)
		return r;
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(buf, len, d);
	jig_hex(d, JIG_SHA256_LEN, hex);
	if (strcmp(hex, package_sha256) != 0)
		return jig_err(e, JIG_E_INTEGRITY, "store: package %s was altered; remove %s/.jig and review again", package_sha256, p->root);
	json_t *man = NULL;
	if ((r = jig_json_parse_object(buf, len, "package manifest", &man, e)))
		return r;
	json_t *files = json_object_get(man, "files");
	for (size_t i = 0; r == 0 && i < json_array_size(files); i++) {
		json_t *fe = json_array_get(files, i);
		const char *path = json_string_value(json_object_get(fe, "path"));
		const char *sha = json_string_value(json_object_get(fe, "sha256"));
		int exec = json_is_true(json_object_get(fe, "exec"));
		if (!path || !sha || !jig_path_is_normal_relative(path)) {
			r = jig_err(e, JIG_E_INTEGRITY, "store: package %s: bad entry", package_sha256);
			break;
		}
		/* Parent directories. */
		char tmp[1024];
		snprintf(tmp, sizeof(tmp), "%s", path);
		for (char *s = strchr(tmp, '/'); s; s = strchr(s + 1, '/')) {
			*s = '\0';
			if (mkdirat(dirfd, tmp, 0755) < 0 && errno != EEXIST)
				r = jig_err(e, JIG_E_INTERNAL, "materialise %s: %s", tmp, strerror(errno));
			*s = '/';
		}
		char brel[128];
		snprintf(brel, sizeof(brel), "store/blobs/%s", sha);
		jig_autoclose int in = openat(p->statefd, brel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		jig_autoclose int out = r ? -1 : jig_open_beneath(dirfd, path, O_WRONLY | O_CREAT | O_EXCL);
		if (!r && (in < 0 || out < 0))
			r = jig_err(e, JIG_E_INTEGRITY, "store: %s (%s): %s", path, sha, strerror(errno));
		struct jig_sha256_ctx *c = r ? NULL : jig_sha256_begin();
		char chunk[65536];
		ssize_t n;
		while (c && (n = read(in, chunk, sizeof(chunk))) > 0) {
			jig_sha256_update(c, chunk, (size_t)n);
			if (write(out, chunk, (size_t)n) != n) {
				r = jig_err(e, JIG_E_INTERNAL, "materialise %s: %s", path, strerror(errno));
				break;
			}
		}
		if (c) {
			unsigned char h[JIG_SHA256_LEN];
			char got[JIG_SHA256_HEX];
			jig_sha256_end(c, h);
			jig_hex(h, JIG_SHA256_LEN, got);
			if (!r && strcmp(got, sha) != 0)
				r = jig_err(e, JIG_E_INTEGRITY, "store: blob %s was altered; remove %s/.jig and review again", sha, p->root);
			if (!r)
				fchmod(out, exec ? 0555 : 0444);
		}
	}
	json_decref(man);
	return r;
}
