/* API-backed Agents: the turn's request is prepared here as data (an
 * OpenAI-compatible chat completion or an Anthropic Messages request) and
 * sent through the Flow's own reviewed POST http route by the HTTP effect,
 * whose worker holds the operator's bearer and the network. The answer's
 * text is taken out of the service's JSON. */
#include "effects/agents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include "effects/http.h"
#include "effects/worker.h"
#include "util/cleanup.h"

/* max_tokens for the Messages API (required there): about four bytes a
 * token of the route's answer cap. */
static json_int_t max_tokens(const struct jig_agent_grant *g)
{
	uint64_t t = g->max_answer_bytes / 4;
	return (json_int_t)(t < 16 ? 16 : t > 32768 ? 32768 : t);
}

/* The caller's data: instructions and Skill texts as the system text, the
 * input as the user's message (the instructions are, when there is none). */
static json_t *request_body(const struct jig_agent_grant *g, json_t *op)
{
	json_t *ins = json_object_get(op, "instructions"), *in = json_object_get(op, "input");
	size_t cap = 1, i, at = 0;
	json_t *v;
	json_array_foreach(json_object_get(op, "skills"), i, v)
		cap += json_string_length(v) + 2;
	cap += json_string_length(ins) + 2;
	char *system = calloc(1, cap), *user = NULL;
	if (!system)
		return NULL;
	/* The parts in order, joined by a blank line (strings only: checked
	 * by the caller, and again here). */
	json_t *parts = json_array();
	if (json_is_string(ins))
		json_array_append(parts, ins);
	json_array_foreach(json_object_get(op, "skills"), i, v)
		if (json_is_string(v))
			json_array_append(parts, v);
	json_array_foreach(parts, i, v) {
		if (at)
			memcpy(system + at, "\n\n", 2), at += 2;
		memcpy(system + at, json_string_value(v), json_string_length(v));
		at += json_string_length(v);
	}
	json_decref(parts);
	if (in)
		user = strdup(json_string_value(in)); /* text: checked by the caller */
	else
		user = system, system = NULL;
	json_t *msgs = json_array(), *body = NULL;
	if (user && msgs) {
		bool openai = strcmp(g->api, "openai-chat") == 0;
		if (openai && system && system[0])
			json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system", "content", system));
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "user", "content", user));
		body = json_pack("{s:s,s:O}", "model", g->model, "messages", msgs);
		if (body && !openai) {
			json_object_set_new(body, "max_tokens", json_integer(max_tokens(g)));
			if (system && system[0])
				json_object_set_new(body, "system", json_string(system));
		}
	}
	json_decref(msgs);
	free(system);
	free(user);
	return body;
}

static json_t *decode_json(const char *b64)
{
	size_t len = strlen(b64), out_len = BASE64_DECODE_LENGTH(len);
	uint8_t *buf = malloc(out_len + 1);
	struct base64_decode_ctx ctx;
	base64_decode_init(&ctx);
	json_t *doc = NULL;
	if (buf && base64_decode_update(&ctx, &out_len, buf, len, b64) && base64_decode_final(&ctx)) {
		json_error_t je;
		doc = json_loadb((const char *)buf, out_len, JSON_REJECT_DUPLICATES, &je);
	}
	free(buf);
	return doc;
}

/* The answer's text (malloc'd) and stop reason, by the API's shape. */
static char *answer_text(const char *api, json_t *doc, const char **stop)
{
	if (strcmp(api, "openai-chat") == 0) {
		json_t *c0 = json_array_get(json_object_get(doc, "choices"), 0);
		const char *t = json_string_value(json_object_get(json_object_get(c0, "message"), "content"));
		*stop = json_string_value(json_object_get(c0, "finish_reason"));
		return t ? strdup(t) : NULL;
	}
	*stop = json_string_value(json_object_get(doc, "stop_reason"));
	json_t *content = json_object_get(doc, "content"), *b;
	size_t i, cap = 1, at = 0;
	json_array_foreach(content, i, b)
		cap += json_string_length(json_object_get(b, "text"));
	char *t = json_is_array(content) ? calloc(1, cap) : NULL;
	json_array_foreach(content, i, b) {
		const char *type = json_string_value(json_object_get(b, "type"));
		json_t *text = json_object_get(b, "text");
		if (t && type && strcmp(type, "text") == 0 && json_is_string(text)) {
			memcpy(t + at, json_string_value(text), json_string_length(text));
			at += json_string_length(text);
		}
	}
	if (t && memchr(t, '\0', at)) { /* text with a NUL is not text */
		free(t);
		return NULL;
	}
	return t;
}

void jig_agent_api_turn(const struct jig_agent_effect_env *env, const struct jig_flow *f, const struct jig_agent_grant *g,
			json_t *op, size_t prompt_bytes, json_t *ev, json_t **reply, int *interrupted)
{
	char why[300];
	json_object_set_new(ev, "api", json_string(g->api));
	json_object_set_new(ev, "http_route", json_string(g->http));
	/* jig's own request: strings and integers, exact when encoded. */
	json_t *body = request_body(g, op);
	jig_autofree char *request = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	json_t *hop = request ? json_pack("{s:s,s:s,s:s}", "op", "http", "route", g->http, "body", request) : NULL;
	if (!hop)
		return jig_effect_decline(reply, ev, "agent", "failed", "out of memory");
	json_t *hreply = NULL, *hev = NULL;
	jig_http_effect_for_agent(env->http, f, hop, &hreply, &hev, interrupted);
	json_decref(hop);
	json_object_set_new(ev, "http", hev);
	const char *outcome = "failed", *stop = NULL;
	char *text = NULL;
	json_t *doc = NULL;
	json_int_t status = json_integer_value(json_object_get(hreply, "status"));
	if (!json_is_true(json_object_get(hreply, "ok"))) {
		outcome = strcmp(json_string_value(json_object_get(hev, "outcome")) ?: "", "refused") == 0 ? "refused" : "failed";
		snprintf(why, sizeof(why), "%.280s", json_string_value(json_object_get(hreply, "error")) ?: "the request failed");
	} else if (status != 200)
		snprintf(why, sizeof(why), "the service answered status %lld", (long long)status);
	else if (!(doc = decode_json(json_string_value(json_object_get(hreply, "body_base64")) ?: "")) ||
		 !(text = answer_text(g->api, doc, &stop)))
		snprintf(why, sizeof(why), "the service's answer is not a %s response with text", g->api);
	else if (strlen(text) > g->max_answer_bytes)
		snprintf(why, sizeof(why), "the answer is %zu bytes, over its %llu", strlen(text), (unsigned long long)g->max_answer_bytes);
	else
		outcome = "answer";
	if (strcmp(outcome, "answer") == 0) {
		json_object_set_new(ev, "outcome", json_string(outcome));
		json_object_set_new(ev, "answer_bytes", json_integer((json_int_t)strlen(text)));
		*reply = json_pack("{s:s,s:b,s:s,s:s?,s:{s:I,s:I,s:O?},s:{s:O?}}", "op", "agent", "ok", 1, "text", text, "stop_reason",
				   stop, "usage", "prompt_bytes", (json_int_t)prompt_bytes, "answer_bytes", (json_int_t)strlen(text),
				   "tokens", json_object_get(doc, "usage"), "timing", "total_ms", json_object_get(hreply, "total_ms"));
	} else
		jig_effect_decline(reply, ev, "agent", outcome, why);
	free(text);
	json_decref(doc);
	json_decref(hreply);
}
