/* jig-acp-worker: one Agent turn with a native client over the Agent Client
 * Protocol v1. The protocol (formats, fields, what is enforced) is the
 * SDK's: <jig/acp.h>.
 *
 * The host runs it as the first process of the provider's scope with the
 * request on stdin. It starts the client as its child with exactly the
 * request's argv, environment and working directory (the credential
 * reaches the client only that way; the worker's own environment never
 * holds it), speaks ACP to it as a client that offers nothing (no fs,
 * terminal or MCP), and writes one result on stdout.
 *
 * The turn: initialize, session/new, session/prompt, each awaited in one
 * poll loop under the deadline; then the exit sequence (stdin closed,
 * SIGTERM, SIGKILL to the client's group, exit_grace_ms apart) while what
 * the client still sends is counted and dropped. The exit status is 0
 * whenever a result was written.
 *
 * This file holds the protocol's steps; the transport to the client's
 * stdio (its queue, framing and poll) is transport.c. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jig/acp.h>
#include <jig/buf.h>

#include "client.h"
#include "history.h"
#include "message.h"
#include "request.h"
#include "turn.h"

#define SHOWN_MAX 200 /* characters of a client's string in the result */

static const char *const outcome_names[] = {"", "answer", "refused", "failed", "timeout", "withheld"};

static const char *const step_methods[] = {"initialize", "authenticate", "session/new", "session/load", "session/set_model",
					   "session/prompt", "nothing"};

int64_t jig_acp_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void jig_acp_end(struct turn *t, enum outcome o, const char *fmt, ...)
{
	if (t->outcome)
		return;
	t->outcome = o;
	t->ended_at = jig_acp_now_ms();
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
}

static bool has_secret(const struct turn *t, const char *s, size_t n)
{
	for (size_t i = 0; t->rq && i < t->rq->nsecrets; i++)
		if (memmem(s, n, t->rq->secrets[i], strlen(t->rq->secrets[i])))
			return true;
	return false;
}

/* A client's string as the result shows it: printable ASCII, at most
 * SHOWN_MAX characters, and never a credential. dst has SHOWN_MAX + 8. */
static void shown(const struct turn *t, char *dst, const char *s, size_t n)
{
	if (!s) {
		strcpy(dst, "(none)");
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n && i < SHOWN_MAX; i++)
		dst[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (n > SHOWN_MAX)
		memcpy(dst + k, "...", 3), k += 3;
	dst[k] = '\0';
	if (has_secret(t, s, n) || has_secret(t, dst, k))
		strcpy(dst, "(withheld: a credential)");
}

/* --- to the client ---------------------------------------------------- */

static void request(struct turn *t, enum step step, json_t *params)
{
	t->sent_at[step] = jig_acp_now_ms();
	t->step = step;
	jig_acp_queue(t, params ? json_pack("{s:s,s:i,s:s,s:o}", "jsonrpc", "2.0", "id", (int)step, "method",
					    step_methods[step], "params", params)
				: NULL);
}

/* The answer to a request of the client's (result or error: taken). */
static void reply(struct turn *t, json_t *id, const char *kind, json_t *body)
{
	jig_acp_queue(t, body ? json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, kind, body) : NULL);
}

/* --- from the client -------------------------------------------------- */

/* Permission is always refused: a reject option if the client offers one,
 * else (or once the turn is being cancelled) the "cancelled" outcome. */
static json_t *refusal(const struct turn *t, json_t *params)
{
	size_t i;
	json_t *o;
	json_array_foreach(t->cancelled ? NULL : json_object_get(params, "options"), i, o) {
		const char *kind = json_string_value(json_object_get(o, "kind"));
		json_t *id = json_object_get(o, "optionId");
		if (kind && json_is_string(id) && (strcmp(kind, "reject_once") == 0 || strcmp(kind, "reject_always") == 0))
			return json_pack("{s:{s:s,s:O}}", "outcome", "outcome", "selected", "optionId", id);
	}
	return json_pack("{s:{s:s}}", "outcome", "outcome", "cancelled");
}

/* Every method the client calls is refused: the worker offers nothing. */
static void client_request(struct turn *t, const char *method, json_t *id, json_t *params)
{
	if (strcmp(method, "session/request_permission") == 0) {
		t->n.permissions_refused++;
		reply(t, id, "result", refusal(t, params));
	} else {
		t->n.requests_refused++;
		reply(t, id, "error", json_pack("{s:i,s:s}", "code", -32601, "message", "Method not found"));
	}
}

/* session/update: counted; the agent's text chunks of our session kept. */
static void update(struct turn *t, json_t *params)
{
	t->n.updates++;
	json_t *u = json_object_get(params, "update"), *content = json_object_get(u, "content");
	const char *kind = json_string_value(json_object_get(u, "sessionUpdate"));
	const char *sid = json_string_value(json_object_get(params, "sessionId"));
	const char *type = json_string_value(json_object_get(content, "type"));
	json_t *text = json_object_get(content, "text");
	/* A loaded session's replayed history comes before the prompt: not
	 * this turn's answer. */
	if (!t->sent_at[STEP_PROMPT] || !kind || strcmp(kind, "agent_message_chunk") != 0 || !t->session || !sid ||
	    strcmp(sid, t->session) != 0 ||
	    !type || strcmp(type, "text") != 0 || !json_is_string(text))
		return;
	size_t n = json_string_length(text);
	if (t->n.transcript_bytes + (json_int_t)n > t->rq->limits.max_transcript_bytes) {
		jig_acp_end(t, OUT_FAILED, "the agent's text is over %lld bytes", (long long)t->rq->limits.max_transcript_bytes);
		return;
	}
	if (jig_buf_add(&t->text, json_string_value(text), n) < 0) {
		jig_acp_end(t, OUT_FAILED, "out of memory");
		return;
	}
	t->n.transcript_bytes += (json_int_t)n;
}

static json_t *init_params(void)
{
	return json_pack("{s:i,s:{s:{s:b,s:b},s:b},s:{s:s,s:s}}", "protocolVersion", JIG_ACP_PROTOCOL_VERSION,
			 "clientCapabilities", "fs", "readTextFile", 0, "writeTextFile", 0, "terminal", 0, "clientInfo",
			 "name", "jig-acp-worker", "version", JIG_VERSION);
}

/* The client's identity must be the reviewed one (each field the request
 * names). 0, or -1 with the turn refused. */
static int identity(struct turn *t, json_t *info)
{
	static const char *const fields[] = {"name", "version"};
	const char *expected[] = {t->rq->expect_name, t->rq->expect_version};
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(info, fields[i]);
		const char *got = json_string_value(v);
		char a[SHOWN_MAX + 8], b[SHOWN_MAX + 8];
		if (!expected[i] || (got && strcmp(got, expected[i]) == 0))
			continue;
		shown(t, a, got, got ? json_string_length(v) : 0);
		shown(t, b, expected[i], strlen(expected[i]));
		jig_acp_end(t, OUT_REFUSED, "the client reports %s %s, reviewed %s; review again", fields[i], a, b);
		return -1;
	}
	return 0;
}

/* The client's agentInfo as the result shows it (evidence even when the
 * turn is refused). */
static void record_agent(struct turn *t, json_t *info)
{
	if (!json_is_object(info))
		return;
	t->agent = json_object();
	for (const char *const *f = (const char *const[]){"name", "version", NULL}; *f; f++) {
		json_t *s = json_object_get(info, *f);
		char x[SHOWN_MAX + 8];
		if (json_is_string(s)) {
			shown(t, x, json_string_value(s), json_string_length(s));
			json_object_set_new(t->agent, *f, json_string(x));
		}
	}
}

static void new_session(struct turn *t);

static void initialized(struct turn *t, json_t *res)
{
	json_t *v = json_object_get(res, "protocolVersion"), *info = json_object_get(res, "agentInfo");
	record_agent(t, info);
	if (!json_is_integer(v) || json_integer_value(v) != JIG_ACP_PROTOCOL_VERSION) {
		char got[32];
		if (json_is_integer(v))
			snprintf(got, sizeof(got), "%lld", (long long)json_integer_value(v));
		else
			snprintf(got, sizeof(got), "(none)");
		jig_acp_end(t, OUT_REFUSED, "the client speaks ACP protocol version %s; the worker speaks version %d", got,
		    JIG_ACP_PROTOCOL_VERSION);
		return;
	}
	if (identity(t, info) < 0)
		return;
	if (t->rq->restore_id && !json_is_true(json_object_get(json_object_get(res, "agentCapabilities"), "loadSession"))) {
		jig_acp_end(t, OUT_FAILED, "the client cannot load a retained session (no loadSession capability)");
		return;
	}
	if (t->rq->auth_method) /* the profile's method: the credential is in the client's environment */
		request(t, STEP_AUTH, json_pack("{s:s}", "methodId", t->rq->auth_method));
	else
		new_session(t);
}

/* session/new, or session/load of the restored session. */
static void new_session(struct turn *t)
{
	json_t *params = json_pack("{s:s,s:[]}", "cwd", t->rq->cwd, "mcpServers");
	if (params && t->rq->session_meta)
		json_object_set(params, "_meta", t->rq->session_meta);
	if (params && t->rq->restore_id) {
		if (!(t->session = strdup(t->rq->restore_id))) {
			json_decref(params);
			jig_acp_end(t, OUT_FAILED, "out of memory");
			return;
		}
		json_object_set_new(params, "sessionId", json_string(t->session));
	}
	request(t, t->rq->restore_id ? STEP_LOAD : STEP_SESSION, params);
}

static void session_ready(struct turn *t)
{
	if (t->rq->model) /* the reviewed model, where the host's profile selects it over ACP */
		request(t, STEP_MODEL, json_pack("{s:s,s:s}", "sessionId", t->session, "modelId", t->rq->model));
	else
		request(t, STEP_PROMPT, json_pack("{s:s,s:O}", "sessionId", t->session, "prompt", t->rq->prompt));
}

static void session_created(struct turn *t, json_t *res)
{
	json_t *sid = json_object_get(res, "sessionId");
	if (!json_is_string(sid) || json_string_length(sid) == 0) {
		jig_acp_end(t, OUT_FAILED, "the client's session/new result has no sessionId");
		return;
	}
	t->session = strdup(json_string_value(sid));
	if (!t->session) {
		jig_acp_end(t, OUT_FAILED, "out of memory");
		return;
	}
	session_ready(t);
}

static void prompted(struct turn *t, json_t *res)
{
	json_t *v = json_object_get(res, "stopReason");
	char x[SHOWN_MAX + 8];
	if (!json_is_string(v)) {
		jig_acp_end(t, OUT_FAILED, "the client's session/prompt result has no stopReason");
		return;
	}
	shown(t, x, json_string_value(v), json_string_length(v));
	t->stop_reason = strdup(x);
	if (!jig_acp_stop_reason_known(json_string_value(v), json_string_length(v)))
		jig_acp_end(t, OUT_FAILED,
		    "the client's session/prompt result has an unknown stopReason %s (ACP v1: end_turn, max_tokens, "
		    "max_turn_requests, refusal, cancelled)", x);
	else if (t->cancelled)
		jig_acp_end(t, OUT_TIMEOUT, "the deadline of %lld ms passed; the client honoured session/cancel (stopReason %s)",
		    (long long)t->rq->limits.deadline_ms, x);
	else
		jig_acp_end(t, OUT_ANSWER, "%s", "");
}

/* A response: only the one the turn waits for counts. */
static void response(struct turn *t, json_t *id, json_t *m)
{
	json_t *e = json_object_get(m, "error");
	if (t->step != STEP_DONE && json_is_null(id) && json_is_object(e)) {
		/* JSON-RPC: an error with a null id answers a request the other
		 * side could not read (ours: the current step's). */
		char x[SHOWN_MAX + 8];
		json_t *msg = json_object_get(e, "message");
		shown(t, x, json_string_value(msg), json_string_length(msg));
		jig_acp_end(t, OUT_FAILED, "the client could not read %s: error %lld: %s", step_methods[t->step],
		    (long long)json_integer_value(json_object_get(e, "code")), x);
		return;
	}
	if (t->step == STEP_DONE || !json_is_integer(id) || json_integer_value(id) != (json_int_t)t->step)
		return;
	enum step step = t->step;
	t->took[step] = jig_acp_now_ms() - t->sent_at[step];
	t->step = step == STEP_PROMPT ? STEP_DONE : step;
	json_t *err = json_object_get(m, "error"), *res = json_object_get(m, "result");
	if (err) {
		json_t *msg = json_object_get(err, "message");
		char x[SHOWN_MAX + 8];
		shown(t, x, json_string_value(msg), json_string_length(msg));
		jig_acp_end(t, OUT_FAILED, "the client answered %s with error %lld: %s", step_methods[step],
		    (long long)json_integer_value(json_object_get(err, "code")), x);
	} else if (!json_is_object(res)) {
		jig_acp_end(t, OUT_FAILED, "the client's %s response has no result object", step_methods[step]);
	} else if (step == STEP_INITIALIZE) {
		initialized(t, res);
	} else if (step == STEP_AUTH) {
		new_session(t);
	} else if (step == STEP_SESSION) {
		session_created(t, res);
	} else if (step == STEP_LOAD) {
		session_ready(t);
	} else if (step == STEP_MODEL) {
		request(t, STEP_PROMPT, json_pack("{s:s,s:O}", "sessionId", t->session, "prompt", t->rq->prompt));
	} else {
		prompted(t, res);
	}
}

static void message(struct turn *t, json_t *m)
{
	json_t *method = json_object_get(m, "method"), *id = json_object_get(m, "id");
	json_t *params = json_object_get(m, "params");
	if (json_is_string(method) && id)
		client_request(t, json_string_value(method), id, params);
	else if (json_is_string(method) && strcmp(json_string_value(method), "session/update") == 0)
		update(t, params);
	else if (!method && id)
		response(t, id, m);
	/* other notifications ($/cancel_request, ...) are ignored */
}

/* One complete line. After the turn it is only counted. A line that is
 * not a JSON-RPC 2.0 object is skipped and counted; one holding a
 * character jig does not pass on ends the turn (message.h). */
void jig_acp_line(struct turn *t, const char *p, size_t n)
{
	t->n.lines++;
	/* Lines that are not JSON count too: garbage costs as much as
	 * messages. */
	if (!t->outcome && t->n.lines > t->rq->limits.max_messages) {
		jig_acp_end(t, OUT_FAILED, "the client sent more than %lld messages", (long long)t->rq->limits.max_messages);
		return;
	}
	json_t *m;
	char why[160];
	enum jig_acp_line kind = jig_acp_line_read(p, n, &m, why, sizeof(why));
	if (kind != JIG_ACP_LINE_MESSAGE) {
		t->n.skipped_lines++;
		if (kind == JIG_ACP_LINE_NOT_TEXT)
			jig_acp_end(t, OUT_FAILED, "the client sent a message the worker cannot pass on (line %lld): %s",
			    (long long)t->n.lines, why);
	} else if (t->outcome) {
		t->n.messages++;
		const char *method = json_string_value(json_object_get(m, "method"));
		if (method && strcmp(method, "session/update") == 0 && !json_object_get(m, "id"))
			t->n.late_updates++;
	} else {
		t->n.messages++;
		message(t, m);
	}
	json_decref(m);
}

/* --- the turn --------------------------------------------------------- */

static void on_deadline(struct turn *t)
{
	long long ms = (long long)t->rq->limits.deadline_ms;
	if (t->step != STEP_PROMPT) {
		jig_acp_end(t, OUT_TIMEOUT, "the deadline of %lld ms passed while the client had not answered %s", ms,
		    step_methods[t->step]);
		return;
	}
	t->cancelled = true;
	t->cancel_at = jig_acp_now_ms() + t->rq->limits.cancel_grace_ms;
	jig_acp_queue(t, json_pack("{s:s,s:s,s:{s:s}}", "jsonrpc", "2.0", "method", "session/cancel", "params", "sessionId",
			   t->session));
}

static void converse(struct turn *t)
{
	while (!t->outcome) {
		int64_t now = jig_acp_now_ms();
		if (!t->cancelled && now >= t->deadline)
			on_deadline(t);
		else if (t->cancelled && now >= t->cancel_at)
			jig_acp_end(t, OUT_TIMEOUT, "the deadline of %lld ms passed; the client did not answer session/cancel within %lld ms",
			    (long long)t->rq->limits.deadline_ms, (long long)t->rq->limits.cancel_grace_ms);
		if (t->outcome)
			break;
		int64_t until = t->cancelled ? t->cancel_at : t->deadline;
		if (t->input_gone_at && t->input_gone_at < until)
			until = t->input_gone_at;
		jig_acp_pump(t, until);
		if (!t->outcome && t->input_gone_at && jig_acp_now_ms() >= t->input_gone_at && !jig_acp_client_exited(&t->c)) {
			jig_acp_end(t, OUT_FAILED, "the client closed its input before %s", step_methods[t->step]);
			break;
		}
		/* Gone: its output closed, or it exited and what it wrote is read
		 * (read it all now: it may have answered just before it exited). */
		if (t->outcome || !(t->eof || jig_acp_client_exited(&t->c)))
			continue;
		do
			jig_acp_drain(t);
		while (!t->outcome && !t->eof && !t->drained);
		if (t->outcome)
			continue;
		if (t->cancelled)
			jig_acp_end(t, OUT_TIMEOUT, "the deadline of %lld ms passed; the client ended without answering session/cancel",
			    (long long)t->rq->limits.deadline_ms);
		else
			t->ended_early = true, jig_acp_end(t, OUT_FAILED, "%s", "");
	}
}

static bool client_done(struct turn *t)
{
	return t->eof && jig_acp_client_exited(&t->c);
}

/* Waits up to exit_grace_ms for the client to be done, counting what it
 * sends meanwhile. */
static void linger(struct turn *t)
{
	int64_t until = jig_acp_now_ms() + t->rq->limits.exit_grace_ms;
	while (!client_done(t) && jig_acp_now_ms() < until)
		jig_acp_pump(t, until);
}

/* The exit sequence: stdin closed, then SIGTERM, then SIGKILL to the
 * client's group, exit_grace_ms apart; then reaped. */
static void stop(struct turn *t)
{
	jig_acp_client_close_input(&t->c);
	t->out.len = t->out_off = 0;
	linger(t);
	if (!client_done(t)) {
		t->c.forced = JIG_ACP_FORCED_TERM;
		jig_acp_client_signal(&t->c, SIGTERM);
		linger(t);
	}
	if (!client_done(t))
		t->c.forced = JIG_ACP_FORCED_KILL;
	jig_acp_client_reap(&t->c);
}

/* The error of a client that went before the prompt response, now that
 * its exit is known. */
static void explain_early_end(struct turn *t)
{
	const char *what = step_methods[t->step];
	char how[96];
	if (WIFSIGNALED(t->c.status) && t->c.forced != JIG_ACP_FORCED_NONE) {
		snprintf(t->error, sizeof(t->error), "the client closed its output before answering %s; the worker stopped it with %s",
			 what, t->c.forced == JIG_ACP_FORCED_TERM ? "SIGTERM" : "SIGKILL");
		return;
	}
	jig_acp_client_describe(&t->c, how, sizeof(how));
	snprintf(t->error, sizeof(t->error), "the client %s before answering %s", how, what);
}

/* After a clean turn and a clean exit (the client's group is gone): the
 * session's history, for the host to retain. */
static void collect(struct turn *t)
{
	char path[520], *bytes = NULL, how[96];
	size_t len;
	size_t cap = sizeof(t->history_error);
	if (t->outcome != OUT_ANSWER) {
		snprintf(t->history_error, cap, "the turn did not end with an answer; its history is not collected");
		return;
	}
	if (t->c.forced != JIG_ACP_FORCED_NONE || !WIFEXITED(t->c.status) || WEXITSTATUS(t->c.status) != 0) {
		jig_acp_client_describe(&t->c, how, sizeof(how));
		snprintf(t->history_error, cap, "the client %s%s; its history is not collected", how,
			 t->c.forced == JIG_ACP_FORCED_NONE ? "" : " after the worker stopped it");
		return;
	}
	if (jig_acp_history_collect(t->rq->home, t->rq->history_dir, t->session, t->rq->history_max, &bytes, &len, path,
				    t->history_error, cap) < 0)
		return;
	bool secret = has_secret(t, bytes, len);
	json_t *s = secret ? NULL : json_stringn(bytes, len);
	if (!s)
		snprintf(t->history_error, cap, secret ? "the session's history contains a credential of the request; not collected"
						       : "the session's history is not UTF-8 text; not collected");
	else if (!(t->history = json_pack("{s:s,s:s,s:o}", "session_id", t->session, "path", path, "rollout", s)))
		snprintf(t->history_error, cap, "the session's history cannot be kept (out of memory); not collected");
	explicit_bzero(bytes, len);
	free(bytes);
}

static void turn(struct turn *t, const struct jig_acp_request *rq)
{
	char why[512];
	t->rq = rq;
	for (int i = 0; i < STEP_DONE; i++)
		t->took[i] = -1;
	if (rq->restore_id && jig_acp_history_restore(rq->home, rq->history_dir, rq->restore_path,
						       json_string_value(rq->restore_rollout),
						       json_string_length(rq->restore_rollout), why, sizeof(why)) < 0) {
		jig_acp_end(t, OUT_FAILED, "%s", why);
		return;
	}
	if (jig_acp_client_start(&t->c, rq->argv, rq->envp, rq->cwd, why, sizeof(why)) < 0) {
		t->started = t->c.reaped;
		jig_acp_end(t, OUT_FAILED, "%s", why);
		return;
	}
	t->started = true;
	t->drained = true; /* nothing to read yet: an exit right away is noticed */
	t->deadline = jig_acp_now_ms() + rq->limits.deadline_ms;
	request(t, STEP_INITIALIZE, init_params());
	converse(t);
	stop(t);
	if (t->ended_early)
		explain_early_end(t);
	if (t->outcome == OUT_ANSWER && t->text.len && has_secret(t, t->text.p, t->text.len)) {
		t->outcome = OUT_WITHHELD;
		snprintf(t->error, sizeof(t->error), "the agent's answer contains a credential of the request; withheld");
	}
	if (rq->history_dir)
		collect(t);
}

/* --- the result ------------------------------------------------------- */

static json_t *timing(const struct turn *t)
{
	json_int_t ms[STEP_DONE];
	for (int i = 0; i < STEP_DONE; i++) /* unanswered: until the turn ended */
		ms[i] = t->took[i] >= 0 ? t->took[i] : t->sent_at[i] ? t->ended_at - t->sent_at[i] : 0;
	return json_pack("{s:I,s:I,s:I}", "initialize_ms", ms[STEP_INITIALIZE], "prompt_ms", ms[STEP_PROMPT], "total_ms",
			 (json_int_t)(jig_acp_now_ms() - t->t0));
}

static json_t *counts(const struct counts *n)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "lines", n->lines, "skipped_lines",
			 n->skipped_lines, "messages", n->messages, "updates", n->updates, "late_updates",
			 n->late_updates, "requests_refused", n->requests_refused, "permissions_refused",
			 n->permissions_refused, "transcript_bytes", n->transcript_bytes, "bytes_in", n->bytes_in,
			 "bytes_out", n->bytes_out);
}

static json_t *exit_info(const struct jig_acp_client *c)
{
	static const char *const forced[] = {"none", "term", "kill"};
	json_t *e = json_pack("{s:s}", "forced", forced[c->forced]);
	if (WIFSIGNALED(c->status)) {
		json_object_set_new(e, "how", json_string("signaled"));
		json_object_set_new(e, "signal", json_integer(WTERMSIG(c->status)));
	} else {
		json_object_set_new(e, "how", json_string("exited"));
		json_object_set_new(e, "status", json_integer(WEXITSTATUS(c->status)));
	}
	return e;
}

static json_t *result(const struct turn *t)
{
	json_t *r = json_pack("{s:s,s:s,s:o,s:o}", "format", JIG_ACP_RESULT_FORMAT, "outcome", outcome_names[t->outcome],
			      "counts", counts(&t->n), "timing", timing(t));
	if (!r)
		return NULL;
	if (t->outcome != OUT_ANSWER)
		json_object_set_new(r, "error", json_string(t->error));
	else
		json_object_set_new(r, "text", json_stringn(t->text.p ? t->text.p : "", t->text.len));
	if (t->stop_reason)
		json_object_set_new(r, "stop_reason", json_string(t->stop_reason));
	if (t->agent)
		json_object_set(r, "agent", t->agent);
	if (t->started)
		json_object_set_new(r, "exit", exit_info(&t->c));
	if (t->history)
		json_object_set(r, "history", t->history);
	else if (t->history_error[0])
		json_object_set_new(r, "history_error", json_string(t->history_error));
	return r;
}

static int emit(json_t *r)
{
	char *s = r ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	if (!s)
		return 1;
	size_t n = strlen(s), off = 0;
	s[n++] = '\n'; /* replaces the NUL: written by length */
	while (off < n) {
		ssize_t w = write(STDOUT_FILENO, s + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(s);
	return off == n ? 0 : 1;
}

/* Descriptors 0-2 exist, so a pipe never takes their numbers (the client's
 * dup2 onto them would clobber it). */
static void std_fds(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
			_exit(1);
}

int main(void)
{
	/* First: the request brings the credential; no process of the same
	 * uid (the client) may read this one's memory. */
	int dumpable = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	struct turn t = {.t0 = jig_acp_now_ms()};
	struct jig_acp_request rq = {0};
	char why[512];
	if (dumpable < 0) {
		jig_acp_end(&t, OUT_FAILED, "the worker cannot make itself non-dumpable: %s", strerror(errno));
	} else {
		std_fds();
		signal(SIGPIPE, SIG_IGN); /* a client that closed its stdin is an EPIPE, not a death */
		if (jig_acp_request_read(&rq, STDIN_FILENO, why, sizeof(why)) < 0)
			jig_acp_end(&t, OUT_REFUSED, "%s", why);
		clearenv(); /* nothing the worker starts inherits its own environment */
		if (!t.outcome)
			turn(&t, &rq);
	}
	json_t *r = result(&t);
	int rc = emit(r);
	json_decref(r);
	free(t.out.p);
	free(t.line.p);
	if (t.text.p)
		explicit_bzero(t.text.p, t.text.len);
	free(t.text.p);
	free(t.session);
	free(t.stop_reason);
	json_decref(t.agent);
	json_decref(t.history);
	jig_acp_request_free(&rq);
	return rc;
}
