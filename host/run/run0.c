#include "run/run0.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/limits.h"
#include "packet/record.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/text.h"

/* A checkpoint's line may be longer than others (util/limits.h). */
static const char CHECKPOINT_PREFIX[] = "{\"op\":\"checkpoint\"";

static size_t line_cap(const struct jig_run0 *r, const char *line, size_t have)
{
	size_t n = have < sizeof(CHECKPOINT_PREFIX) - 1 ? have : sizeof(CHECKPOINT_PREFIX) - 1;
	bool ckpt = r->checkpoint && memcmp(line, CHECKPOINT_PREFIX, n) == 0;
	return ckpt ? JIG_CHECKPOINT_MAX_LINE : JIG_RUN0_MAX_LINE;
}

/* Ends the Run once: why (after prefix) is its error. */
static void end(struct jig_run0 *r, const char *prefix, const char *why)
{
	if (!r->violation) {
		r->violation = true;
		snprintf(r->error, sizeof(r->error), "%s%s", prefix, why);
		jig_poke(r->abort_wr);
	}
}

static void fail(struct jig_run0 *r, const char *why)
{
	end(r, "Run/0: ", why);
}

void jig_run0_violation(struct jig_run0 *r, const char *why)
{
	pthread_mutex_lock(&r->send_lock);
	fail(r, why);
	pthread_mutex_unlock(&r->send_lock);
}

void jig_run0_end(struct jig_run0 *r, const char *why)
{
	pthread_mutex_lock(&r->send_lock);
	end(r, "", why);
	pthread_mutex_unlock(&r->send_lock);
}

/* A reply to the Flow: one line. The Flow may be gone (never SIGPIPE). */
static void reply(struct jig_run0 *r, json_t *msg)
{
	pthread_mutex_lock(&r->send_lock);
	char *txt = json_dumps(msg, JSON_COMPACT);
	size_t len = txt ? strlen(txt) : 0, off = 0;
	if (txt)
		txt[len++] = '\n'; /* replaces the NUL */
	while (txt && off < len) {
		ssize_t n = send(r->fd, txt + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	pthread_mutex_unlock(&r->send_lock);
	free(txt);
}

void jig_run0_send(struct jig_run0 *r, json_t *msg)
{
	reply(r, msg);
}

size_t jig_run0_json_len(const char *s, size_t len)
{
	size_t n = 2;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		n += c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' ? 2 : c < 0x20 ? 6 : 1;
	}
	return n;
}

json_t *jig_run0_log_text(const char *text, size_t len, bool *cut)
{
	*cut = len > JIG_RUN0_LOG_MAX_TEXT;
	if (!*cut)
		return json_stringn(text, len);
	size_t k = jig_text_utf8_prefix(text, len, JIG_RUN0_LOG_MAX_TEXT);
	char buf[JIG_RUN0_LOG_MAX_TEXT + JIG_RUN0_LOG_CUT_MARK];
	memcpy(buf, text, k);
	int m = snprintf(buf + k, JIG_RUN0_LOG_CUT_MARK, " [jig cut %zu more bytes of this line]", len - k);
	return json_stringn(buf, k + (size_t)m);
}

/* A log line: cut, then kept while the Run's budget and the line count
 * allow, else dropped and counted. */
static void log_line(struct jig_run0 *r, json_t *text)
{
	bool cut;
	json_t *kept = jig_run0_log_text(json_string_value(text), json_string_length(text), &cut);
	size_t charge = kept ? jig_run0_json_len(json_string_value(kept), json_string_length(kept)) + 1 : 0;
	pthread_mutex_lock(&r->budget->lock);
	bool fits = kept && json_array_size(r->logs) < JIG_RUN0_MAX_LOGS && r->budget->log_bytes + charge <= JIG_RECORD_LOG_BYTES;
	if (fits)
		r->budget->log_bytes += charge;
	pthread_mutex_unlock(&r->budget->lock);
	pthread_mutex_lock(&r->data_lock);
	if (fits) {
		json_array_append_new(r->logs, kept);
		r->logs_cut += cut;
	} else {
		json_decref(kept);
		r->logs_dropped++;
		r->logs_dropped_bytes += json_string_length(text);
	}
	pthread_mutex_unlock(&r->data_lock);
}

/* Evidence over its cap: what it was, how large, and that it was cut. */
static json_t *evidence_stub(json_t *ev, size_t size)
{
	json_t *stub = jig_record_effect_stub(ev);
	char why[128];
	snprintf(why, sizeof(why), "the evidence was %zu bytes of JSON, over the %u kept; only these fields are", size,
		 JIG_RECORD_EFFECT_MAX_BYTES);
	json_object_set_new(stub, "evidence_cut", json_string(why));
	return stub;
}

/* The stream offset up to which the Flow has sent bytes now: read, and
 * still queued on the socket. A line that starts before it was sent
 * before a reply sent now. */
static unsigned long long sent_by_now(const struct jig_run0 *r)
{
	int queued = 0;
	if (ioctl(r->fd, FIONREAD, &queued) < 0 || queued < 0)
		queued = 0;
	return r->received + (unsigned long long)queued;
}

/* One effect, one at a time (the reader waits for it): its evidence in
 * the record, its reply to the Flow. The largest evidence is reserved
 * before the effect runs (no room: the Run ends, nothing is done), the
 * rest given back after. A checkpoint's reply (save) marks how far the
 * Flow had sent when it was answered (one save in flight, R-O01). */
static void effect(struct jig_run0 *r, json_t *m, jig_run0_effect_fn fn, size_t *count, size_t max, const char *what, bool save)
{
	char why[96];
	if (++*count > max) {
		snprintf(why, sizeof(why), "more than %zu %s", max, what);
		return fail(r, why);
	}
	pthread_mutex_lock(&r->budget->lock);
	bool room = r->budget->evidence_bytes + JIG_RECORD_EFFECT_MAX_BYTES <= JIG_RECORD_EFFECTS_BYTES;
	if (room)
		r->budget->evidence_bytes += JIG_RECORD_EFFECT_MAX_BYTES;
	pthread_mutex_unlock(&r->budget->lock);
	if (!room) {
		snprintf(why, sizeof(why), "the Run's effect evidence reached its %u KiB; no more effects", JIG_RECORD_EFFECTS_BYTES >> 10);
		return fail(r, why);
	}
	json_t *out = NULL, *ev = NULL;
	int sig = 0;
	fn(r->ctx, m, &out, &ev, &sig);
	/* The Flow always gets its one reply line, the record its entry. */
	if (!out)
		out = json_pack("{s:s,s:b,s:s}", "op", json_string_value(json_object_get(m, "op")), "ok", 0, "error",
				"jig could not encode the reply");
	if (!ev)
		ev = json_pack("{s:s}", "outcome", "failed");
	size_t size = ev ? json_dumpb(ev, NULL, 0, JSON_COMPACT) : 0;
	bool stubbed = size > JIG_RECORD_EFFECT_MAX_BYTES;
	if (stubbed) {
		json_t *stub = evidence_stub(ev, size);
		json_decref(ev);
		ev = stub;
		size = ev ? json_dumpb(ev, NULL, 0, JSON_COMPACT) : 0;
	}
	pthread_mutex_lock(&r->budget->lock);
	r->budget->evidence_bytes -= JIG_RECORD_EFFECT_MAX_BYTES - (size < JIG_RECORD_EFFECT_MAX_BYTES ? size : JIG_RECORD_EFFECT_MAX_BYTES);
	pthread_mutex_unlock(&r->budget->lock);
	pthread_mutex_lock(&r->data_lock);
	if (ev)
		json_array_append_new(r->effects, ev);
	r->evidence_cut += stubbed;
	pthread_mutex_unlock(&r->data_lock);
	if (sig) {
		r->interrupted_by = sig;
		jig_poke(r->abort_wr);
	}
	if (save) /* measured before the reply: never counts a save sent after it */
		r->save_window = sent_by_now(r);
	reply(r, out);
	json_decref(out);
}

/* A checkpoint save sent while another was in flight (its line began
 * before the previous save's reply was sent): refused, whatever it holds.
 * Only a Flow that bypasses the SDK can send one (runtime/boot.js waits
 * for each reply). */
static void save_in_flight(void *ctx, json_t *op, json_t **out, json_t **ev, int *sig)
{
	(void)ctx, (void)op, (void)sig;
	static const char why[] =
		"a second save was sent while one was in flight; jig takes one checkpoint save at a time (send the next after its reply)";
	*out = json_pack("{s:s,s:b,s:s}", "op", "checkpoint", "ok", 0, "error", why);
	*ev = json_pack("{s:s,s:s,s:s}", "effect", "checkpoint", "outcome", "refused", "error", why);
}

static bool text_op(json_t *m)
{
	return json_object_size(m) == 2 && json_is_string(json_object_get(m, "text"));
}

/* Structural tokens of a JSON text outside its strings ({ [ , :): an
 * upper bound on the values its parse allocates. */
static size_t tokens(const char *s, size_t len)
{
	size_t n = 0;
	bool str = false, esc = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				str = false;
		} else if (c == '"')
			str = true;
		else
			n += c == '{' || c == '[' || c == ',' || c == ':';
	}
	return n;
}

/* {"op":"log","text"} | {"op":"done"} | {"op":"error","text"} | {"op":"http",...} | {"op":"agent",...} |
 * {"op":"command",...} */
static void message(struct jig_run0 *r, const char *line, size_t len)
{
	char why[64];
	if (++r->messages > JIG_RUN0_MAX_MESSAGES) {
		snprintf(why, sizeof(why), "more than %d messages", JIG_RUN0_MAX_MESSAGES);
		return fail(r, why);
	}
	if (tokens(line, len) > JIG_RUN0_MAX_TOKENS) { /* before any parse (util/limits.h) */
		snprintf(why, sizeof(why), "a message has more than %d JSON values", JIG_RUN0_MAX_TOKENS);
		return fail(r, why);
	}
	json_error_t je;
	JIG_FAULT_POINT("run0");
	json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	const char *op = json_is_object(m) ? json_string_value(json_object_get(m, "op")) : NULL;
	if (!op)
		fail(r, "a message is not a JSON object with an \"op\"");
	else if (strcmp(op, "log") == 0 && text_op(m))
		log_line(r, json_object_get(m, "text"));
	else if (strcmp(op, "http") == 0 && r->http)
		effect(r, m, r->http, &r->http_requests, JIG_HTTP_MAX_REQUESTS, "HTTP requests", false);
	else if (strcmp(op, "agent") == 0 && r->agent)
		effect(r, m, r->agent, &r->agent_turns, JIG_AGENT_MAX_TURNS, "Agent turns", false);
	else if (strcmp(op, "command") == 0 && r->command)
		effect(r, m, r->command, &r->commands, JIG_COMMAND_MAX_CALLS, "Project Commands", false);
	else if (strcmp(op, "checkpoint") == 0 && r->checkpoint && len <= JIG_CHECKPOINT_MAX_LINE)
		effect(r, m, r->line_at < r->save_window ? save_in_flight : r->checkpoint, &r->checkpoints, JIG_RUN0_MAX_MESSAGES,
		       "checkpoints", true); /* it refuses saves over its cap */
	else if ((strcmp(op, "call") == 0 || strcmp(op, "imported") == 0) && r->call) {
		if (strcmp(op, "call") == 0 && ++r->calls > JIG_CALL_MAX_CALLS) {
			snprintf(why, sizeof(why), "more than %d binding calls", JIG_CALL_MAX_CALLS);
			fail(r, why);
		} else
			r->call(r->call_ctx, r, m);
	} else if (strcmp(op, "done") == 0 && json_object_size(m) == 1)
		r->done = true;
	else if (strcmp(op, "error") == 0 && text_op(m)) {
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "the Flow failed: %s", json_string_value(json_object_get(m, "text")));
	} else
		fail(r, "unknown or malformed operation");
	json_decref(m);
}

static void *reader(void *arg)
{
	struct jig_run0 *r = arg;
	size_t cap = r->checkpoint ? JIG_CHECKPOINT_MAX_LINE : JIG_RUN0_MAX_LINE;
	char *buf = malloc(cap + 1), why[64];
	size_t have = 0;
	while (buf) {
		ssize_t n = read(r->fd, buf + have, cap + 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		r->received += (unsigned long long)n;
		char *start = buf, *nl;
		while (!r->violation && (nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
			if ((size_t)(nl - start) > line_cap(r, start, (size_t)(nl - start)))
				break; /* refused below */
			r->line_at = r->received - have + (unsigned long long)(start - buf);
			message(r, start, (size_t)(nl - start));
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (have > line_cap(r, buf, have)) {
			snprintf(why, sizeof(why), "a message is longer than %zu KiB", line_cap(r, buf, have) / 1024);
			fail(r, why);
		}
		if (r->violation)
			break; /* the Run is ending; its bytes are not read */
	}
	free(buf);
	return NULL;
}

int jig_run0_start(struct jig_run0 *r, int fd, int abort_wr, jig_run0_effect_fn http, jig_run0_effect_fn agent,
		   jig_run0_effect_fn command, jig_run0_effect_fn checkpoint, void *ctx)
{
	return jig_run0_start_calls(r, fd, abort_wr, http, agent, command, checkpoint, ctx, NULL, NULL, NULL);
}

int jig_run0_start_calls(struct jig_run0 *r, int fd, int abort_wr, jig_run0_effect_fn http, jig_run0_effect_fn agent,
			 jig_run0_effect_fn command, jig_run0_effect_fn checkpoint, void *ctx,
			 void (*call)(void *, struct jig_run0 *, json_t *), void *call_ctx, struct jig_run0_budget *shared)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->send_lock, NULL);
	pthread_mutex_init(&r->data_lock, NULL);
	pthread_mutex_init(&r->own_budget.lock, NULL);
	r->budget = shared ? shared : &r->own_budget;
	r->call = call;
	r->call_ctx = call_ctx;
	r->fd = fd;
	r->abort_wr = abort_wr;
	r->http = http;
	r->agent = agent;
	r->command = command;
	r->checkpoint = checkpoint;
	r->ctx = ctx;
	r->logs = json_array();
	r->effects = json_array();
	if (!r->logs || !r->effects || pthread_create(&r->thread, NULL, reader, r) != 0) {
		jig_run0_free(r);
		return -1;
	}
	return 0;
}

void jig_run0_join(struct jig_run0 *r)
{
	pthread_join(r->thread, NULL);
}

bool jig_run0_take_node(struct jig_run0 *r)
{
	pthread_mutex_lock(&r->budget->lock);
	bool ok = r->budget->nodes < JIG_CALL_MAX_NODES;
	r->budget->nodes += ok;
	pthread_mutex_unlock(&r->budget->lock);
	return ok;
}

void jig_run0_note_cuts(const struct jig_run0 *r, json_t *obj)
{
	if (r->logs_dropped)
		json_object_set_new(obj, "logs_dropped", json_pack("{s:I,s:I,s:I}", "lines", (json_int_t)r->logs_dropped, "bytes",
								   (json_int_t)r->logs_dropped_bytes, "kept_bytes_max",
								   (json_int_t)JIG_RECORD_LOG_BYTES));
	if (r->logs_cut)
		json_object_set_new(obj, "logs_cut", json_integer((json_int_t)r->logs_cut));
	if (r->evidence_cut)
		json_object_set_new(obj, "evidence_cut", json_integer((json_int_t)r->evidence_cut));
}

void jig_run0_free(struct jig_run0 *r)
{
	json_decref(r->logs);
	json_decref(r->effects);
	r->logs = r->effects = NULL;
}
