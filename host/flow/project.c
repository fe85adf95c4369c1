/* Project and Flow metadata: jig.json and each flow.json, strictly parsed
 * (capture: flow/capture.c; the Package/0 store: flow/store.c). */
#include "flow/project.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flow/binding.h"
#include "util/schema0.h"
#include "flow/recipe.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

#define META_MAX_BYTES (64 * 1024)

/* Bad project input is usage (util/json.h). */
static int usage(int r, struct jig_error *e)
{
	return jig_json_usage(r, e);
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
		/* An API-backed route's prompt travels in its http route's request:
		 * a prompt cap over that request cap is refused at review (issue 35). */
		const struct jig_http_grant *h = a->http ? jig_flow_http_grant(f, a->http) : NULL;
		if (h && a->max_prompt_bytes > h->max_request_bytes)
			return jig_err(e, JIG_E_USAGE,
				       "%s: max_prompt_bytes %llu is larger than max_request_bytes %llu of its http route \"%s\", which carries the prompt; a prompt the Agent accepts could not be sent: lower max_prompt_bytes or raise max_request_bytes (at most %d)",
				       w, (unsigned long long)a->max_prompt_bytes, (unsigned long long)h->max_request_bytes, a->http,
				       JIG_HTTP_REQUEST_MAX);
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

const char *jig_flow_routes(const struct jig_flow *f, const char *kind, char *buf, size_t cap)
{
	size_t len = 0, n = 0;
	buf[0] = '\0';
	bool http = strcmp(kind, "http") == 0, agent = strcmp(kind, "agent") == 0;
	size_t count = http ? f->n_http : agent ? f->n_agents : f->n_commands;
	for (size_t i = 0; i < count && len < cap; i++, n++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
					http ? f->http[i].route : agent ? f->agents[i].route : f->commands[i].route);
	if (!n)
		snprintf(buf, cap, "none");
	return buf;
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
	if ((r = jig_json_only_keys_edited(doc, keys, what, e)) || (r = jig_json_get_string(doc, "format", what, &format, e)) ||
	    (r = jig_json_get_string(doc, "name", what, &fname, e)) ||
	    (r = jig_json_get_string(doc, "entry", what, &entry, e)))
		goto out;
	if (strcmp(format, JIG_FLOW_FORMAT) != 0) {
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

/* <project>/.jig through the state store (state/state.h): created 0700 if
 * missing; the caller's, 0700, a real directory. One that is not is
 * refused, never removed: for jig run, "not admitted by you" first. */
static int open_state(int rootfd, const char *root, bool run, struct jig_error *e)
{
	int fd = jig_state_project_dir(rootfd, root, true, e);
	if (fd == -JIG_E_NOT_ADMITTED && run)
		return jig_err_prefix(e, JIG_E_NOT_ADMITTED, "%s: not admitted by you: run 'jig review' again; ", root);
	if (fd == -JIG_E_NOT_ADMITTED)
		return jig_err(e, JIG_E_USAGE, "%s", e->msg);
	if (fd < 0)
		return fd;
	/* Shared while the project is open; jig gc takes it exclusively
	 * (flow/gc.h, decision 166). A file system without flock: gc's own
	 * lock fails there too, so it frees nothing and this goes on. */
	int lr;
	while ((lr = flock(fd, LOCK_SH)) < 0 && errno == EINTR)
		;
	if (lr < 0 && errno != ENOLCK && errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS) {
		close(fd);
		return jig_err(e, JIG_E_INTERNAL, "%s/%s: cannot lock: %s", root, JIG_STATE_DIR, strerror(errno));
	}
	static const char *const sub[] = {"store", "store/blobs", "store/packages", "admitted", NULL};
	for (const char *const *s = sub; *s; s++)
		if (mkdirat(fd, *s, 0700) < 0 && errno != EEXIST) {
			close(fd);
			return jig_err(e, JIG_E_USAGE, "%s/%s/%s: cannot create: %s", root, JIG_STATE_DIR, *s, strerror(errno));
		}
	return fd;
}

static int project_open(const char *path, bool run, struct jig_project *p, struct jig_error *e)
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
	struct stat st;
	if (fstatat(p->rootfd, JIG_PROJECT_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
		int r = strcmp(path, ".") == 0 ? jig_err(e, JIG_E_USAGE, "not a jig project here (jig init creates one)")
					       : jig_err(e, JIG_E_USAGE, "%s: not a jig project (jig init %s creates one)", path, path);
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
	if (!r && !(r = usage(jig_json_only_keys_edited(doc, keys, what, e), e)) &&
	    !(r = usage(jig_json_get_string(doc, "format", what, &format, e), e)) && strcmp(format, JIG_PROJECT_FORMAT) != 0)
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
		p->statefd = open_state(p->rootfd, path, run, e);
		if (p->statefd < 0)
			r = p->statefd;
	}
	if (r)
		jig_project_close(p);
	return r;
}

int jig_project_open(const char *path, struct jig_project *p, struct jig_error *e)
{
	return project_open(path, false, p, e);
}

int jig_project_open_run(const char *path, struct jig_project *p, struct jig_error *e)
{
	return project_open(path, true, p, e);
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
		json_decref(f->package_manifest);
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

const char *jig_project_flow_names(const struct jig_project *p, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < p->n_flows && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", p->flows[i].name);
	if (len >= cap && cap >= 4)
		memcpy(buf + cap - 4, "...", 4);
	return buf;
}

int jig_project_no_flow(const struct jig_project *p, const char *name, struct jig_error *e)
{
	char known[512];
	return jig_err(e, JIG_E_USAGE, "project %s has no Flow \"%s\"; its Flows: %s", p->root, name,
		       jig_project_flow_names(p, known, sizeof(known)));
}
