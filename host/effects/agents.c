/* The Agent effect: a Flow's turn checked against its reviewed route and
 * provider identity, run by plugins/acp's worker in the provider scope. */
#include "effects/agents.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jig/acp.h>

#include "effects/agent_sessions.h"
#include "effects/worker.h"
#include "flow/plan.h"
#include "util/cleanup.h"
#include "util/crypto.h"

/* Every answer byte may be a control byte jansson writes as \u00XX. */
#define WORKER_OUTPUT_MAX (6u * JIG_AGENT_ANSWER_MAX + (64u << 10))
#define MAX_SKILLS 8
/* The worker's bounds on what the client sends, besides the answer cap. */
#define CLIENT_LINE_MAX (1u << 20)
#define CLIENT_MESSAGES_MAX 20000
#define CANCEL_GRACE_MS 2000
#define EXIT_GRACE_MS 1000

static void decline(json_t **reply, json_t *ev, const char *outcome, const char *msg)
{
	jig_effect_decline(reply, ev, "agent", outcome, msg);
}

#define refuse(reply, ev, ...) jig_effect_refuse(reply, ev, "agent", __VA_ARGS__)

static json_t *text_block(const char *label, const char *text)
{
	size_t n = strlen(label) + strlen(text) + 2;
	char *s = malloc(n);
	if (!s)
		return NULL;
	snprintf(s, n, "%s\n%s", label, text);
	json_t *b = json_pack("{s:s,s:s}", "type", "text", "text", s);
	free(s);
	return b;
}

/* The prompt: the caller's instructions, selected Skill texts and input,
 * each one text block, in that order. Explicit caller data, nothing more.
 * Returns NULL with why set when the op is malformed or over the cap. */
static json_t *prompt_of(json_t *op, const struct jig_agent_grant *g, size_t *bytes, char *why, size_t cap)
{
	json_t *ins = json_object_get(op, "instructions"), *skills = json_object_get(op, "skills"), *in = json_object_get(op, "input");
	/* A JSON input arrives as the text the Flow's JSON.stringify made and
	 * goes into the prompt as those bytes, never re-encoded (decision 260). */
	if ((ins && !json_is_string(ins)) || (in && !json_is_string(in)) ||
	    (skills && (!json_is_array(skills) || json_array_size(skills) > MAX_SKILLS))) {
		snprintf(why, cap, "jig.agent: instructions and input must be text and skills an array of at most %d texts",
			 MAX_SKILLS);
		return NULL;
	}
	json_t *prompt = json_array();
	*bytes = 0;
	if (ins) {
		json_array_append_new(prompt, text_block("Instructions:", json_string_value(ins)));
		*bytes += json_string_length(ins);
	}
	size_t i;
	json_t *v;
	json_array_foreach(skills, i, v) {
		if (!json_is_string(v)) {
			snprintf(why, cap, "jig.agent: skills[%zu] must be text", i);
			json_decref(prompt);
			return NULL;
		}
		json_array_append_new(prompt, text_block("Skill:", json_string_value(v)));
		*bytes += json_string_length(v);
	}
	if (in) {
		json_array_append_new(prompt, text_block("Input:", json_string_value(in)));
		*bytes += json_string_length(in);
	}
	if (!json_array_size(prompt) || *bytes > g->max_prompt_bytes) {
		snprintf(why, cap, json_array_size(prompt) ? "route %s: the prompt is %zu bytes, over its %llu; not sent"
							   : "route %s: an empty prompt; give instructions or input",
			 g->route, *bytes, (unsigned long long)g->max_prompt_bytes);
		json_decref(prompt);
		return NULL;
	}
	return prompt;
}

static json_t *with_model(const char *arg, const char *model);

/* The pi profile's launcher (plugins/acp/pi_launcher.c) starts Pi as
 * JIG_PI_ARGV says: the reviewed pi_command, then the profile's pi_args. */
static int pi_launch_env(json_t *env, const struct jig_agent_provider *p, const char *model)
{
	json_t *argv = json_deep_copy(p->pi_command), *a;
	size_t i;
	json_array_foreach(json_object_get(p->profile, "pi_args"), i, a)
		json_array_append_new(argv, with_model(json_string_value(a), model));
	char *txt = argv ? json_dumps(argv, JSON_COMPACT) : NULL;
	json_decref(argv);
	int r = txt && !json_object_set_new(env, "JIG_PI_ARGV", json_string(txt)) &&
			!json_object_set_new(env, "JIG_PI_MODELS", json_string(p->pi_models)) ? 0 : -1;
	free(txt);
	return r;
}

/* The client's whole environment: the provider scope's (the Plan prints
 * it), the operator's reviewed variables, the model and the credential. */
static json_t *client_env(const struct jig_scope_template *t, const struct jig_agent_provider *p, const char *model)
{
	json_t *env = json_deep_copy(json_object_get(t->policy.doc, "env"));
	if (!env)
		return NULL;
	json_object_update(env, json_object_get(p->profile, "env"));
	json_object_update(env, p->env);
	if (p->model_env)
		json_object_set_new(env, p->model_env, json_string(model));
	if (p->credential_env && p->credential)
		json_object_set_new(env, p->credential_env, json_string(p->credential));
	if (p->pi_command && pi_launch_env(env, p, model) < 0) {
		json_decref(env);
		return NULL;
	}
	return env;
}

/* A profile argument with "@model" replaced by the route's model (of
 * [A-Za-z0-9._:/@-]: nothing that could end a quoted value). */
static json_t *with_model(const char *arg, const char *model)
{
	const char *at = strstr(arg, "@model");
	if (!at)
		return json_string(arg);
	size_t n = strlen(arg) - 6 + strlen(model) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	snprintf(s, n, "%.*s%s%s", (int)(at - arg), arg, model, at + 6);
	json_t *v = json_string(s);
	free(s);
	return v;
}

static char *request_text(const struct jig_scope_template *t, const struct jig_agent_provider *p,
			  const struct jig_agent_grant *g, json_t *prompt, json_t *restore)
{
	json_t *env = client_env(t, p, g->model);
	const char *cwd = json_string_value(json_object_get(t->policy.doc, "cwd"));
	json_t *argv = json_deep_copy(p->command);
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(p->profile, "args"), i, a)
		json_array_append_new(argv, with_model(json_string_value(a), g->model));
	json_t *in = json_pack("{s:s,s:o,s:o,s:[],s:s,s:{s:s},s:O,s:{s:I,s:I,s:I,s:I,s:I,s:I}}", "format",
			       JIG_ACP_REQUEST_FORMAT, "argv", argv, "env", env, "secrets", "cwd", cwd ? cwd : "/",
			       "expect", "version", p->version, "prompt", prompt, "limits", "deadline_ms",
			       (json_int_t)g->timeout_ms, "cancel_grace_ms", (json_int_t)CANCEL_GRACE_MS, "exit_grace_ms",
			       (json_int_t)EXIT_GRACE_MS, "max_line_bytes", (json_int_t)CLIENT_LINE_MAX, "max_messages",
			       (json_int_t)CLIENT_MESSAGES_MAX, "max_transcript_bytes", (json_int_t)g->max_answer_bytes);
	if (!in)
		return NULL;
	if (p->credential)
		json_array_append_new(json_object_get(in, "secrets"), json_string(p->credential));
	if (json_object_get(p->profile, "session_meta"))
		json_object_set(in, "session_meta", json_object_get(p->profile, "session_meta"));
	if (json_object_get(p->profile, "auth_method"))
		json_object_set(in, "auth_method", json_object_get(p->profile, "auth_method"));
	if (json_is_true(json_object_get(p->profile, "select_model")))
		json_object_set_new(in, "model", json_string(g->model));
	if (g->retain_sessions) /* the profile's qualified history layout */
		json_object_set_new(in, "history", json_pack("{s:O,s:I}", "dir", json_object_get(p->profile, "history"),
							     "max_bytes", (json_int_t)JIG_SESSION_MAX_BYTES));
	if (restore)
		json_object_set(in, "restore", restore);
	char *txt = json_dumps(in, JSON_COMPACT);
	json_decref(in); /* jansson's copies of the credential are freed, not wiped */
	return txt;
}

/* The worker's result: the answer to the Flow, the measurements to the
 * evidence (never the text: the record keeps counts, not the transcript). */
void jig_agent_deliver(json_t *result, const char *credential, json_t *ev, json_t **reply, size_t prompt_bytes)
{
	/* The worker withholds an answer holding the credential; checked
	 * again here, where the credential is known for certain. */
	const char *answer = json_string_value(json_object_get(result, "text"));
	if (answer && credential && strstr(answer, credential)) {
		json_object_del(result, "text");
		json_object_set_new(result, "outcome", json_string("withheld"));
		json_object_set_new(result, "error", json_string("the answer contains the provider's credential; withheld"));
	}
	static const char *const copied[] = {"stop_reason", "agent", "counts", "timing", "exit", NULL};
	for (size_t i = 0; copied[i]; i++)
		if (json_object_get(result, copied[i]))
			json_object_set(ev, copied[i], json_object_get(result, copied[i]));
	const char *outcome = json_string_value(json_object_get(result, "outcome"));
	json_t *text = json_object_get(result, "text");
	if (strcmp(outcome, "answer") == 0 && json_is_string(text)) {
		json_object_set_new(ev, "outcome", json_string("answer"));
		json_object_set_new(ev, "answer_bytes", json_integer((json_int_t)json_string_length(text)));
		*reply = json_pack("{s:s,s:b,s:O,s:O?,s:{s:I,s:I},s:O?}", "op", "agent", "ok", 1, "text", text, "stop_reason",
				   json_object_get(result, "stop_reason"), "usage", "prompt_bytes", (json_int_t)prompt_bytes,
				   "answer_bytes", (json_int_t)json_string_length(text), "timing", json_object_get(result, "timing"));
	} else {
		const char *err = json_string_value(json_object_get(result, "error"));
		decline(reply, ev, strcmp(outcome, "answer") == 0 ? "failed" : outcome, err ? err : outcome);
	}
	if (!*reply)
		*reply = json_pack("{s:s,s:b,s:s}", "op", "agent", "ok", 0, "error", "the worker's result is malformed");
}

/* The reviewed identity's digest: a retained session belongs to it. */
static void identity_digest(json_t *identity, char hex[JIG_SHA256_HEX])
{
	char *s = json_dumps(identity, JSON_COMPACT | JSON_SORT_KEYS);
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256(s ? s : "", s ? strlen(s) : 0, d);
	jig_hex(d, sizeof(d), hex);
	free(s);
}

/* After an answer of a retain_sessions route: the history the worker
 * collected, stored, and its new reference in the reply; or why not. */
static void retain(const struct jig_agent_effect_env *env, const struct jig_session_scope *sc,
		   const struct jig_agent_provider *p, json_t *result, json_t *ev, json_t *reply)
{
	json_t *h = json_object_get(result, "history"), *s = json_object_get(ev, "session");
	const char *rollout = json_string_value(json_object_get(h, "rollout"));
	const char *werr = json_string_value(json_object_get(result, "history_error"));
	char ref[JIG_SESSION_REF_HEX + 1], why[sizeof(((struct jig_error *)0)->msg) + 8];
	struct jig_error e = {0};
	if (!rollout)
		snprintf(why, sizeof(why), "%s", werr ? werr : "the worker collected no history");
	else if (p->credential && p->credential[0] && memmem(rollout, json_string_length(json_object_get(h, "rollout")),
							      p->credential, strlen(p->credential)))
		snprintf(why, sizeof(why), "the session's history contains the provider's credential; not retained");
	else if (jig_session_put(env->statefd, sc, h, ref, &e) < 0)
		snprintf(why, sizeof(why), "%s", e.msg);
	else
		why[0] = '\0';
	json_object_set_new(s, "retained", json_boolean(!why[0]));
	if (rollout)
		json_object_set_new(s, "history_bytes", json_integer((json_int_t)json_string_length(json_object_get(h, "rollout"))));
	if (why[0]) {
		json_object_set_new(s, "why", json_string(why));
		json_object_set_new(reply, "session_error", json_string(why));
	} else {
		json_object_set_new(reply, "session", json_string(ref));
	}
}

void jig_agent_effect(const struct jig_agent_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
		      json_t **evidence, int *interrupted)
{
	*interrupted = 0;
	json_t *ev = *evidence = json_pack("{s:s}", "effect", "agent");
	const char *route = json_string_value(json_object_get(op, "route")), *bad;
	json_object_set_new(ev, "route", json_string(route ? route : ""));
	static const char *const keys[] = {"op", "route", "instructions", "skills", "input", "session", NULL};
	if ((bad = jig_effect_unknown_key(op, keys)))
		return refuse(reply, ev, "jig.agent: unknown field \"%.40s\"", bad);
	const struct jig_agent_grant *g = route ? jig_flow_agent_grant(f, route) : NULL;
	json_t *planned = g ? jig_plan_agent(env->plan, f->name, g->route) : NULL;
	const struct jig_scope_template *t = g ? jig_plan_scope(env->plan, f->name, g->route) : NULL;
	if (!g || !planned || (!t && !g->api))
		return refuse(reply, ev, "flow %s has no reviewed agent route \"%.64s\"; its agent routes: %s", f->name, route ? route : "",
			      jig_flow_routes(f, "agent", (char[300]){0}, 300));
	char why[700];
	size_t prompt_bytes;
	json_t *prompt = prompt_of(op, g, &prompt_bytes, why, sizeof(why));
	if (!prompt)
		return refuse(reply, ev, "%s", why);
	json_object_set_new(ev, "prompt_bytes", json_integer((json_int_t)prompt_bytes));
	json_object_set_new(ev, "model", json_string(g->model));
	if (g->api) {
		json_decref(prompt);
		return jig_agent_api_turn(env, f, g, op, prompt_bytes, ev, reply, interrupted);
	}
	json_t *reviewed = json_object_get(planned, "identity");
	static const char *const shown[] = {"provider", "client", "version", "model", NULL};
	for (size_t i = 0; shown[i]; i++)
		json_object_set(ev, shown[i], json_object_get(reviewed, shown[i]));
	json_object_set_new(ev, "scope_policy_sha256", json_string(t->policy.sha256));
	struct jig_agent_provider p;
	struct jig_error pe = {0};
	json_t *now = NULL;
	if (jig_agent_provider_get(g->provider, true, &p, &pe) < 0 || jig_agent_identity(&p, g->model, &now, &pe) < 0) {
		json_decref(prompt);
		jig_agent_provider_free(&p);
		return refuse(reply, ev, "%s", pe.msg);
	}
	/* The provider must be the reviewed one, byte for byte. */
	const char *diff = jig_agent_identity_diff(reviewed, now, why, sizeof(why));
	json_decref(now);
	if (diff) {
		char msg[700];
		snprintf(msg, sizeof(msg), "route %s: provider %s changed since review: %s; not started; review again",
			 g->route, g->provider, diff);
		json_decref(prompt);
		jig_agent_provider_free(&p);
		return refuse(reply, ev, "%s", msg);
	}
	/* A retained session: this route's, for this Flow and the reviewed
	 * provider; taken (consumed) before the client starts. */
	char idsha[JIG_SHA256_HEX];
	identity_digest(reviewed, idsha);
	struct jig_session_scope sc = {.flow = f->name, .route = g->route, .identity_sha256 = idsha};
	json_t *sref = json_object_get(op, "session"), *restore = NULL;
	if (sref && (!g->retain_sessions || !json_is_string(sref))) {
		json_decref(prompt);
		jig_agent_provider_free(&p);
		return refuse(reply, ev, g->retain_sessions ? "jig.agent: session must be the reference a turn returned"
							    : "route %s does not retain sessions (retain_sessions in flow.json); session refused",
			      g->route);
	}
	if (sref && jig_session_take(env->statefd, &sc, json_string_value(sref), &restore, &pe) < 0) {
		json_decref(prompt);
		jig_agent_provider_free(&p);
		return refuse(reply, ev, "%s", pe.msg);
	}
	if (g->retain_sessions)
		json_object_set_new(ev, "session", json_pack("{s:b}", "restored", restore != NULL));
	char *input = request_text(t, &p, g, prompt, restore);
	json_decref(prompt);
	json_decref(restore);
	json_t *result = NULL;
	struct jig_scope_result res = {0};
	/* A collected history comes back as one JSON string: at most twice its
	 * bytes (the worker sends no control byte but tab and newline). */
	size_t history_max = g->retain_sessions ? 2 * (size_t)JIG_SESSION_MAX_BYTES + (64u << 10) : 0;
	struct jig_worker_call call = {.sandbox = env->sandbox, .t = t, .init_fd = env->init_fd, .abort_fd = env->abort_fd,
				       .companion_pid = env->companion_pid, .input = input,
				       .result_format = JIG_ACP_RESULT_FORMAT, .result_max = WORKER_OUTPUT_MAX + history_max};
	why[0] = '\0';
	int rr = input ? jig_worker_run(&call, &result, &res, why, sizeof(why)) : -1;
	if (input) {
		explicit_bzero(input, strlen(input)); /* it held the credential */
		free(input);
	}
	*interrupted = res.interrupted_by;
	if (rr < 0) {
		jig_agent_provider_free(&p);
		return decline(reply, ev, "failed", why[0] ? why : "out of memory");
	}
	jig_agent_deliver(result, p.credential, ev, reply, prompt_bytes);
	if (g->retain_sessions && json_is_true(json_object_get(*reply, "ok")))
		retain(env, &sc, &p, result, ev, *reply);
	jig_agent_provider_free(&p);
	json_decref(result);
}
