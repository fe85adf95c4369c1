/* The HTTP Request effect: grant checks, binding, the worker's scope. */
#include "effects/http.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jig/http.h>
#include <jig/module.h>

#include "effects/bindings.h"
#include "util/schema0.h"
#include "effects/worker.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define WORKER_OUTPUT_MAX (8u << 20)
#define OPERATOR_CA_MAX (256u << 10)
#define SYSTEM_CA "/etc/ssl/certs/ca-certificates.crt"

/* No response for the Flow: the outcome and reason in the evidence, the
 * reason in the reply. */
static void decline(json_t **reply, json_t *ev, const char *outcome, const char *msg)
{
	jig_effect_decline(reply, ev, "http", outcome, msg);
}

#define refuse(reply, ev, ...) jig_effect_refuse(reply, ev, "http", __VA_ARGS__)

/* The operator's CA file: a regular file of at most 256 KiB of text. */
static int read_ca(const char *path, char **out, struct jig_error *e)
{
	jig_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "the operator's ca_file %s: %s", path, strerror(errno));
	size_t len;
	int r = jig_read_fd(fd, OPERATOR_CA_MAX, "the operator's ca_file", out, &len, NULL, e);
	if (!r && strlen(*out) != len)
		r = jig_err(e, JIG_E_USAGE, "the operator's ca_file %s: not PEM text", path);
	return r;
}

/* The worker's result to the Flow (a response, or a refusal or failure)
 * and to the evidence: what the worker measured; never the credential (the
 * worker never echoes it; a response that contains it is withheld). */
void jig_http_deliver(json_t *result, json_t *ev, json_t **reply)
{
	static const char *const counts[] = {"status", "request_bytes", "response_bytes", "header_bytes", "connect_ms",
					     "total_ms", NULL};
	for (size_t i = 0; counts[i]; i++)
		if (json_is_integer(json_object_get(result, counts[i])))
			json_object_set(ev, counts[i], json_object_get(result, counts[i]));
	const char *outcome = json_string_value(json_object_get(result, "outcome"));
	if (strcmp(outcome, "response") == 0) {
		json_object_set_new(ev, "outcome", json_string(outcome));
		if (json_is_true(json_object_get(result, "redirect_not_followed")))
			json_object_set_new(ev, "redirect_not_followed", json_true());
		*reply = json_pack("{s:s,s:b,s:O,s:O,s:O,s:O,s:O,s:b}", "op", "http", "ok", 1, "status",
				   json_object_get(result, "status"), "headers", json_object_get(result, "headers"),
				   "body_base64", json_object_get(result, "body_base64"), "connect_ms",
				   json_object_get(result, "connect_ms"), "total_ms", json_object_get(result, "total_ms"),
				   "redirect_not_followed", json_is_true(json_object_get(result, "redirect_not_followed")));
	} else {
		const char *err = json_string_value(json_object_get(result, "error"));
		decline(reply, ev, outcome, err ? err : outcome);
	}
	if (!*reply)
		*reply = json_pack("{s:s,s:b,s:s}", "op", "http", "ok", 0, "error", "the worker's result is malformed");
}

/* The route an API-backed Agent route sends through, or NULL. */
static const struct jig_agent_grant *served_agent(const struct jig_flow *f, const char *route)
{
	for (size_t i = 0; i < f->n_agents; i++)
		if (f->agents[i].http && strcmp(f->agents[i].http, route) == 0)
			return &f->agents[i];
	return NULL;
}

static void http_effect(const struct jig_http_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
			json_t **evidence, int *interrupted, bool for_agent);

static void decref_p(json_t **j)
{
	json_decref(*j);
}

void jig_http_effect(const struct jig_http_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
		     json_t **evidence, int *interrupted)
{
	http_effect(env, f, op, reply, evidence, interrupted, false);
}

void jig_http_effect_for_agent(const struct jig_http_effect_env *env, const struct jig_flow *f, json_t *op,
			       json_t **reply, json_t **evidence, int *interrupted)
{
	http_effect(env, f, op, reply, evidence, interrupted, true);
}

static void http_effect(const struct jig_http_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
			json_t **evidence, int *interrupted, bool for_agent)
{
	*interrupted = 0;
	json_t *ev = *evidence = json_object();
	const char *route = json_string_value(json_object_get(op, "route"));
	json_t *jm = json_object_get(op, "method"), *ju = json_object_get(op, "url"), *body = json_object_get(op, "body");
	json_object_set_new(ev, "route", json_string(route ? route : ""));
	static const char *const keys[] = {"op", "route", "method", "url", "body", NULL};
	const char *bad = jig_effect_unknown_key(op, keys);
	if (bad)
		return refuse(reply, ev, "jig.http: unknown field \"%.40s\"", bad);
	const struct jig_http_grant *g = route ? jig_flow_http_grant(f, route) : NULL;
	if (!g)
		return refuse(reply, ev, "flow %s has no reviewed http route \"%.64s\"; its http routes: %s", f->name, route ? route : "",
			      jig_flow_routes(f, "http", (char[300]){0}, 300));
	/* A route that serves an API-backed Agent carries only that Agent's
	 * reviewed requests (its model, prompt cap and turn count). */
	const struct jig_agent_grant *ag = served_agent(f, g->route);
	if (ag && !for_agent)
		return refuse(reply, ev, "http route %s serves agent route %s; use jig.agent(\"%s\")", g->route, ag->route, ag->route);
	json_object_set_new(ev, "method", json_string(g->method));
	const struct jig_scope_template *t = jig_plan_scope(env->plan, f->name, g->route);
	if (t)
		json_object_set_new(ev, "scope_policy_sha256", json_string(t->policy.sha256));
	json_object_set_new(ev, "url", json_string(g->url));
	/* The Flow may restate the method and URL; they must be the grant's,
	 * byte for byte (the worker checks again, with libcurl's parser). */
	if ((jm && (!json_is_string(jm) || strcmp(json_string_value(jm), g->method) != 0)) ||
	    (ju && (!json_is_string(ju) || strcmp(json_string_value(ju), g->url) != 0)))
		return refuse(reply, ev, "route %s grants exactly %s %s; the request differs; not sent", g->route, g->method,
			      g->url);
	/* The body is the JSON text the Flow produced (its JSON.stringify),
	 * sent as those very bytes: parsed only to be validated, never
	 * re-encoded (a double's 17 digits would turn 132.45 into
	 * 132.44999999999999; decision 260). Duplicate keys are refused: the
	 * schema and the service must read one meaning. */
	const char *text = NULL;
	__attribute__((cleanup(decref_p))) json_t *parsed = NULL;
	if (body) {
		if (strcmp(g->method, "GET") == 0 || strcmp(g->method, "HEAD") == 0)
			return refuse(reply, ev, "route %s is a %s: it takes no body; not sent", g->route, g->method);
		if (!json_is_string(body))
			return refuse(reply, ev, "route %s: the body must be its JSON text; not sent", g->route);
		text = json_string_value(body);
		if (json_string_length(body) > g->max_request_bytes)
			return refuse(reply, ev, "route %s: the body is %zu bytes, over its %llu; not sent", g->route,
				      json_string_length(body), (unsigned long long)g->max_request_bytes);
		json_error_t je;
		parsed = json_loadb(text, json_string_length(body), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
		if (!parsed)
			return refuse(reply, ev, "route %s: the body is not one JSON value (%.120s); not sent", g->route, je.text);
		if (g->body_schema) {
			struct jig_error se = {0};
			if (jig_schema0_validate(g->body_schema, parsed, &se) < 0)
				return refuse(reply, ev, "route %s: %s; not sent", g->route, se.msg);
		}
	}
	struct jig_http_binding b;
	struct jig_error be = {0};
	if (jig_http_binding_get(f->name, g->route, g->url, &b, &be) < 0)
		return refuse(reply, ev, "%s", be.msg);
	/* The operator's own Schema/0, on top of the reviewed one. */
	if (b.body_schema) {
		struct jig_error se = {0};
		int bad = !body ? jig_err(&se, JIG_E_USAGE, "the operator's schema requires a body")
				: jig_schema0_validate(b.body_schema, parsed, &se);
		if (bad) {
			jig_http_binding_free(&b);
			return refuse(reply, ev, "route %s: the operator's Schema/0: %s; not sent", g->route, se.msg);
		}
	}
	json_t *in = json_pack("{s:s,s:{s:s,s:s,s:I,s:I,s:I,s:I},s:s,s:s}", "format", JIG_HTTP_REQUEST_FORMAT, "grant",
			       "method", g->method, "url", g->url,
			       "max_request_bytes", (json_int_t)g->max_request_bytes, "max_response_bytes",
			       (json_int_t)g->max_response_bytes, "timeout_ms", (json_int_t)g->timeout_ms,
			       "connect_timeout_ms", (json_int_t)(g->timeout_ms < 10000 ? g->timeout_ms : 10000), "method",
			       g->method, "url", g->url);
	if (text)
		json_object_set(in, "body", body);
	if (b.bearer)
		json_object_set_new(in, "bearer", json_string(b.bearer));
	/* The operator's extra CA travels with the request (no bind: the
	 * worker's scope is the catalog's, the same for every request). */
	if (b.ca_file) {
		jig_autofree char *pem = NULL;
		struct jig_error ce = {0};
		if (read_ca(b.ca_file, &pem, &ce) < 0) {
			json_decref(in);
			jig_http_binding_free(&b);
			return refuse(reply, ev, "%s", ce.msg);
		}
		json_object_set_new(in, "ca_files", json_pack("[s]", SYSTEM_CA));
		json_object_set_new(in, "ca_pem", json_string(pem));
	}
	char *input = json_dumps(in, JSON_COMPACT);
	json_decref(in);
	json_t *result = NULL;
	struct jig_scope_result res = {0};
	char why[700] = "";
	struct jig_worker_call call = {.sandbox = env->sandbox, .t = jig_plan_scope(env->plan, env->flow, g->route),
				       .init_fd = env->init_fd, .abort_fd = env->abort_fd, .companion_pid = env->companion_pid,
				       .input = input, .result_format = JIG_HTTP_RESULT_FORMAT, .result_max = WORKER_OUTPUT_MAX};
	int rr = input ? jig_worker_run(&call, &result, &res, why, sizeof(why)) : -1;
	if (input) {
		explicit_bzero(input, strlen(input)); /* it held the bearer */
		free(input);
	}
	jig_http_binding_free(&b);
	*interrupted = res.interrupted_by;
	if (rr < 0)
		return decline(reply, ev, "failed", why[0] ? why : "out of memory");
	jig_http_deliver(result, ev, reply);
	json_decref(result);
}
