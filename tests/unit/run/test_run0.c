/* Run/0 line handling as a unit (issue 13): known operations, bounds, and
 * every violation ending the Run with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "run/call.h"
#include "util/limits.h"
#include "run/run0.h"

struct session {
	struct jig_run0 r;
	int flow; /* the Flow's end */
	int ab[2];
};

static void http_stub(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	(void)ctx;
	*interrupted = 0;
	*evidence = json_pack("{s:O}", "route", json_object_get(op, "route"));
	*reply = json_pack("{s:s,s:b}", "op", "http", "ok", 1);
}

static void start(struct session *s, bool http)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(s->ab), 0);
	s->flow = sv[1];
	assert_int_equal(jig_run0_start(&s->r, sv[0], s->ab[1], http ? http_stub : NULL, NULL, NULL, NULL, NULL), 0);
}

static void send_all(struct session *s, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(s->flow, data, len);
		if (n <= 0)
			return; /* the reader stopped (a violation) */
		data += n;
		len -= (size_t)n;
	}
}

static void finish(struct session *s)
{
	shutdown(s->flow, SHUT_WR);
	jig_run0_join(&s->r);
	close(s->flow);
	close(s->r.fd);
}

static bool aborted(struct session *s)
{
	char c;
	close(s->ab[1]);
	bool poked = read(s->ab[0], &c, 1) == 1;
	close(s->ab[0]);
	return poked;
}

static void normal_run(void **state)
{
	(void)state;
	struct session s;
	start(&s, false);
	const char *lines = "{\"op\":\"log\",\"text\":\"one\"}\n{\"op\":\"log\",\"text\":\"two\"}\n{\"op\":\"done\"}\n";
	send_all(&s, lines, strlen(lines));
	finish(&s);
	assert_true(s.r.done);
	assert_false(s.r.violation);
	assert_int_equal(json_array_size(s.r.logs), 2);
	assert_string_equal(json_string_value(json_array_get(s.r.logs, 1)), "two");
	assert_false(aborted(&s));
	jig_run0_free(&s.r);
}

static void flow_error_kept(void **state)
{
	(void)state;
	struct session s;
	start(&s, false);
	const char *lines = "{\"op\":\"error\",\"text\":\"boom\\u001b[2J\"}\n";
	send_all(&s, lines, strlen(lines));
	finish(&s);
	assert_false(s.r.violation);
	assert_string_equal(s.r.error, "the Flow failed: boom\x1b[2J"); /* exact; shown inert later */
	jig_run0_free(&s.r);
}

static void violation(const char *data, size_t len, bool http, const char *reason)
{
	struct session s;
	start(&s, http);
	send_all(&s, data, len);
	finish(&s);
	assert_true(s.r.violation);
	if (!strstr(s.r.error, reason))
		fail_msg("\"%s\" does not say \"%s\"", s.r.error, reason);
	assert_true(aborted(&s));
	jig_run0_free(&s.r);
}
#define VIOLATION(lit, http, reason) violation(lit, sizeof(lit) - 1, http, reason)

static void violations(void **state)
{
	(void)state;
	VIOLATION("{not json\n", false, "not a JSON object");
	VIOLATION("[1,2]\n", false, "not a JSON object");
	VIOLATION("{\"op\":\"becomeRoot\"}\n", false, "unknown or malformed operation");
	VIOLATION("{\"op\":\"log\",\"text\":1}\n", false, "unknown or malformed operation");
	VIOLATION("{\"op\":\"log\",\"text\":\"a\",\"x\":1}\n", false, "unknown or malformed operation");
	VIOLATION("{\"op\":\"done\",\"op\":\"done\"}\n", false, "not a JSON object");
	/* http without a grant is unknown; with one, it is answered. */
	VIOLATION("{\"op\":\"http\",\"route\":\"r\"}\n", false, "unknown or malformed operation");
	/* An effect the Flow was not granted is no operation (decision 334). */
	VIOLATION("{\"op\":\"checkpoint\",\"files\":{}}\n", false, "unknown or malformed operation");
	VIOLATION("{\"op\":\"agent\",\"route\":\"r\"}\n", false, "unknown or malformed operation");
	VIOLATION("{\"op\":\"command\",\"route\":\"r\"}\n", false, "unknown or malformed operation");
}

/* R-H04, R-O01 (decision 334): a Flow's Run/0 takes 64 HTTP requests; the
 * 65th ends the Run with one line naming the bound. */
static void http_requests_capped(void **state)
{
	(void)state;
	for (int extra = 0; extra <= 1; extra++) {
		struct session s;
		start(&s, true);
		const char *one = "{\"op\":\"http\",\"route\":\"r\"}\n";
		char buf[512];
		for (int i = 0; i < JIG_HTTP_MAX_REQUESTS + extra; i++) {
			send_all(&s, one, strlen(one));
			if (i < JIG_HTTP_MAX_REQUESTS) { /* its reply, so none waits unread */
				struct pollfd pf = {s.flow, POLLIN, 0};
				assert_int_equal(poll(&pf, 1, 5000), 1);
				assert_true(read(s.flow, buf, sizeof(buf)) > 0);
			}
		}
		finish(&s);
		assert_int_equal(s.r.violation, extra == 1);
		assert_int_equal(json_array_size(s.r.effects), JIG_HTTP_MAX_REQUESTS);
		if (extra && !strstr(s.r.error, "more than 64 HTTP requests"))
			fail_msg("\"%s\" does not name the bound", s.r.error);
		aborted(&s);
		jig_run0_free(&s.r);
	}
}

static void bounds(void **state)
{
	(void)state;
	size_t big = JIG_RUN0_MAX_LINE + 10;
	char *line = malloc(big);
	memset(line, 'a', big);
	violation(line, big, false, "longer than 1024 KiB");
	free(line);
	size_t n = JIG_RUN0_MAX_MESSAGES + 1, one = strlen("{\"op\":\"log\",\"text\":\"x\"}\n");
	char *many = malloc(n * one + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(many + i * one, "{\"op\":\"log\",\"text\":\"x\"}\n", one);
	violation(many, n * one, false, "more than 1024 messages");
	free(many);
}

static void logs_capped_and_http_answered(void **state)
{
	(void)state;
	struct session s;
	start(&s, true);
	for (int i = 0; i < JIG_RUN0_MAX_LOGS + 10; i++)
		send_all(&s, "{\"op\":\"log\",\"text\":\"x\"}\n", 24);
	send_all(&s, "{\"op\":\"http\",\"route\":\"r\"}\n", 27);
	char buf[128] = "";
	ssize_t got = read(s.flow, buf, sizeof(buf) - 1);
	assert_true(got > 0);
	assert_non_null(strstr(buf, "\"ok\":true"));
	assert_true(buf[got - 1] == '\n');
	finish(&s);
	assert_int_equal(json_array_size(s.r.logs), JIG_RUN0_MAX_LOGS);
	assert_int_equal(json_array_size(s.r.effects), 1);
	assert_false(s.r.violation);
	jig_run0_free(&s.r);
}

/* --- issue 31: every channel capped on the trusted side ------------------ */

/* A log message whose text is n bytes of c (JSON-safe). */
static char *log_msg(size_t n, char c, size_t *len)
{
	char *m = malloc(n + 32);
	assert_non_null(m);
	memcpy(m, "{\"op\":\"log\",\"text\":\"", 20);
	memset(m + 20, c, n);
	memcpy(m + 20 + n, "\"}\n", 3);
	*len = n + 23;
	return m;
}

static void send_log(struct session *s, size_t n, char c)
{
	size_t len;
	char *m = log_msg(n, c, &len);
	send_all(s, m, len);
	free(m);
}

static const char *log_at(struct session *s, size_t i)
{
	return json_string_value(json_array_get(s->r.logs, i));
}

/* 4 KiB a line: at the cut kept whole, one over cut and marked, a
 * character across the cut not split, a 1 MiB line kept as 4 KiB. */
static void log_line_cut(void **state)
{
	(void)state;
	struct session s;
	start(&s, false);
	send_log(&s, JIG_RUN0_LOG_MAX_TEXT, 'a');
	send_log(&s, JIG_RUN0_LOG_MAX_TEXT + 1, 'b');
	/* 4095 bytes, then a two-byte character at 4095..4096, then more */
	char m[64 + JIG_RUN0_LOG_MAX_TEXT];
	int k = snprintf(m, sizeof(m), "{\"op\":\"log\",\"text\":\"");
	memset(m + k, 'c', JIG_RUN0_LOG_MAX_TEXT - 1);
	k += JIG_RUN0_LOG_MAX_TEXT - 1;
	k += snprintf(m + k, sizeof(m) - (size_t)k, "\xc3\xa9zz\"}\n");
	send_all(&s, m, (size_t)k);
	send_log(&s, JIG_RUN0_MAX_LINE - 64, 'd');
	finish(&s);
	assert_false(s.r.violation);
	assert_int_equal(json_array_size(s.r.logs), 4);
	assert_int_equal(strlen(log_at(&s, 0)), JIG_RUN0_LOG_MAX_TEXT);
	assert_null(strstr(log_at(&s, 0), "jig cut"));
	assert_int_equal(strspn(log_at(&s, 1), "b"), JIG_RUN0_LOG_MAX_TEXT);
	assert_string_equal(log_at(&s, 1) + JIG_RUN0_LOG_MAX_TEXT, " [jig cut 1 more bytes of this line]");
	assert_int_equal(strspn(log_at(&s, 2), "c"), JIG_RUN0_LOG_MAX_TEXT - 1);
	assert_string_equal(log_at(&s, 2) + JIG_RUN0_LOG_MAX_TEXT - 1, " [jig cut 4 more bytes of this line]");
	assert_true(strlen(log_at(&s, 3)) <= JIG_RUN0_LOG_MAX_TEXT + JIG_RUN0_LOG_CUT_MARK);
	assert_int_equal(s.r.logs_cut, 3);
	assert_int_equal(s.r.logs_dropped, 0);
	jig_run0_free(&s.r);
}

/* The Run's log bytes: exactly at the budget everything is kept; one
 * more line is dropped and counted, with its bytes, in the record. */
static void log_budget(void **state)
{
	(void)state;
	struct session s;
	start(&s, false);
	/* each line costs its text, two quotes and a comma: 4096 */
	size_t n = 4093, lines = JIG_RECORD_LOG_BYTES / (n + 3);
	assert_int_equal(lines * (n + 3), JIG_RECORD_LOG_BYTES);
	for (size_t i = 0; i < lines; i++)
		send_log(&s, n, 'a');
	send_all(&s, "{\"op\":\"log\",\"text\":\"x\"}\n", 24);
	for (int i = 0; i < 20; i++) /* 1 MiB lines straight to the socket */
		send_log(&s, JIG_RUN0_MAX_LINE - 64, 'z');
	send_all(&s, "{\"op\":\"done\"}\n", 14);
	finish(&s);
	assert_false(s.r.violation);
	assert_true(s.r.done);
	assert_int_equal(json_array_size(s.r.logs), lines);
	assert_int_equal(s.r.budget->log_bytes, JIG_RECORD_LOG_BYTES);
	assert_int_equal(s.r.logs_dropped, 21);
	assert_int_equal(s.r.logs_dropped_bytes, 1 + 20 * (JIG_RUN0_MAX_LINE - 64));
	json_t *rec = json_object();
	jig_run0_note_cuts(&s.r, rec);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "logs_dropped"), "lines")), 21);
	assert_null(json_object_get(rec, "logs_cut")); /* the cut lines were dropped */
	json_decref(rec);
	char *txt = json_dumps(s.r.logs, JSON_COMPACT);
	assert_true(strlen(txt) <= JIG_RECORD_LOG_BYTES + 2); /* and the brackets */
	free(txt);
	jig_run0_free(&s.r);
}

/* An effect whose evidence is n compact bytes: {"route":"aaa…"}. */
static size_t evidence_len;
static void sized_stub(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	(void)ctx;
	*interrupted = 0;
	char *r = malloc(evidence_len);
	memset(r, 'r', evidence_len - 12);
	r[evidence_len - 12] = '\0';
	*evidence = json_pack("{s:s}", "route", r);
	free(r);
	*reply = json_pack("{s:O,s:b}", "op", json_object_get(op, "op"), "ok", 1);
}

static void start_ckpt(struct session *s)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(s->ab), 0);
	s->flow = sv[1];
	assert_int_equal(jig_run0_start(&s->r, sv[0], s->ab[1], sized_stub, NULL, NULL, sized_stub, NULL), 0);
}

/* One request, its one reply. */
static void ask(struct session *s, const char *msg)
{
	send_all(s, msg, strlen(msg));
	char buf[256];
	struct pollfd pf = {s->flow, POLLIN, 0};
	if (poll(&pf, 1, 5000) != 1 || read(s->flow, buf, sizeof(buf)) <= 0)
		fail_msg("no reply: %s", s->r.error);
}

/* n reply lines from the coordinator, concatenated into buf. */
static void replies(struct session *s, int n, char *buf, size_t cap)
{
	size_t have = 0;
	buf[0] = '\0';
	for (int got = 0; got < n;) {
		struct pollfd pf = {s->flow, POLLIN, 0};
		ssize_t k = poll(&pf, 1, 5000) == 1 ? read(s->flow, buf + have, cap - 1 - have) : -1;
		if (k <= 0)
			fail_msg("%d of %d replies: %s", got, n, s->r.error);
		for (ssize_t i = 0; i < k; i++)
			got += buf[have + (size_t)i] == '\n';
		have += (size_t)k;
		buf[have] = '\0';
	}
}

static bool refused_in_flight(json_t *ev)
{
	const char *outcome = json_string_value(json_object_get(ev, "outcome")), *why = json_string_value(json_object_get(ev, "error"));
	return outcome && why && strcmp(outcome, "refused") == 0 && strstr(why, "while one was in flight") != NULL;
}

/* A slow save: the Flow's next line arrives while it is being taken. */
static void slow_save(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	usleep(200 * 1000);
	sized_stub(ctx, op, reply, evidence, interrupted);
}

/* R-O01 (#213): one checkpoint save in flight, kept by the host. Saves
 * sent together (one write, bypassing the SDK): the first is taken, the
 * others refused with a reason, and the Run goes on; a save sent after
 * the reply was read is taken. A save sent in a write of its own while
 * the previous one is being taken (queued on the socket) is refused too;
 * a log line in between is not a save. */
static void checkpoint_one_in_flight(void **state)
{
	(void)state;
	struct session s;
	start_ckpt(&s);
	evidence_len = 64;
	char buf[4096];
	const char *three = "{\"op\":\"checkpoint\",\"state\":1}\n{\"op\":\"checkpoint\",\"state\":2}\n{\"op\":\"checkpoint\",\"state\":3}\n";
	send_all(&s, three, strlen(three));
	replies(&s, 3, buf, sizeof(buf));
	assert_non_null(strstr(buf, "{\"op\":\"checkpoint\",\"ok\":true}\n{\"op\":\"checkpoint\",\"ok\":false,\"error\":\"a second save was sent while one was in flight"));
	ask(&s, "{\"op\":\"checkpoint\",\"state\":4}\n");
	assert_false(s.r.violation);
	assert_int_equal(json_array_size(s.r.effects), 4);
	assert_false(refused_in_flight(json_array_get(s.r.effects, 0)));
	assert_true(refused_in_flight(json_array_get(s.r.effects, 1)));
	assert_true(refused_in_flight(json_array_get(s.r.effects, 2)));
	assert_false(refused_in_flight(json_array_get(s.r.effects, 3)));
	finish(&s);
	assert_false(aborted(&s));
	jig_run0_free(&s.r);

	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(s.ab), 0);
	s.flow = sv[1];
	assert_int_equal(jig_run0_start(&s.r, sv[0], s.ab[1], NULL, NULL, NULL, slow_save, NULL), 0);
	send_all(&s, "{\"op\":\"checkpoint\"}\n", 20);
	usleep(50 * 1000); /* the first is being taken */
	send_all(&s, "{\"op\":\"log\",\"text\":\"x\"}\n{\"op\":\"checkpoint\"}\n", 44);
	replies(&s, 2, buf, sizeof(buf));
	ask(&s, "{\"op\":\"checkpoint\"}\n");
	finish(&s);
	assert_false(s.r.violation);
	assert_int_equal(json_array_size(s.r.logs), 1);
	assert_int_equal(json_array_size(s.r.effects), 3);
	assert_false(refused_in_flight(json_array_get(s.r.effects, 0)));
	assert_true(refused_in_flight(json_array_get(s.r.effects, 1)));
	assert_false(refused_in_flight(json_array_get(s.r.effects, 2)));
	assert_false(aborted(&s));
	jig_run0_free(&s.r);
}

/* One effect's evidence: at the cap kept, one over replaced by a stub
 * that says so. */
static void evidence_cap(void **state)
{
	(void)state;
	struct session s;
	start_ckpt(&s);
	evidence_len = JIG_RECORD_EFFECT_MAX_BYTES;
	ask(&s, "{\"op\":\"http\",\"route\":\"r\"}\n");
	evidence_len = JIG_RECORD_EFFECT_MAX_BYTES + 1;
	ask(&s, "{\"op\":\"http\",\"route\":\"r\"}\n");
	finish(&s);
	assert_false(s.r.violation);
	assert_int_equal(json_array_size(s.r.effects), 2);
	char *kept = json_dumps(json_array_get(s.r.effects, 0), JSON_COMPACT);
	assert_int_equal(strlen(kept), JIG_RECORD_EFFECT_MAX_BYTES);
	free(kept);
	json_t *stub = json_array_get(s.r.effects, 1);
	assert_non_null(strstr(json_string_value(json_object_get(stub, "evidence_cut")), "8193 bytes"));
	assert_int_equal(json_string_length(json_object_get(stub, "route")), 64);
	assert_int_equal(s.r.evidence_cut, 1);
	assert_false(aborted(&s));
	jig_run0_free(&s.r);
}

/* All effects' evidence: with every effect at the cap, exactly the budget
 * runs; the next is refused before it runs and ends the Run. */
static void evidence_budget(void **state)
{
	(void)state;
	struct session s;
	start_ckpt(&s);
	evidence_len = JIG_RECORD_EFFECT_MAX_BYTES;
	size_t fit = JIG_RECORD_EFFECTS_BYTES / JIG_RECORD_EFFECT_MAX_BYTES;
	for (size_t i = 0; i < fit; i++) {
		ask(&s, "{\"op\":\"checkpoint\"}\n");
	}
	send_all(&s, "{\"op\":\"checkpoint\"}\n", 20);
	finish(&s);
	assert_true(s.r.violation);
	assert_non_null(strstr(s.r.error, "effect evidence reached its 1024 KiB"));
	assert_int_equal(json_array_size(s.r.effects), fit);
	assert_int_equal(s.r.budget->evidence_bytes, JIG_RECORD_EFFECTS_BYTES);
	assert_true(aborted(&s));
	jig_run0_free(&s.r);
}

/* A line's JSON values are counted before it is parsed: at the cap the
 * checkpoint is taken, one over the Run ends. */
static void token_cap(void **state)
{
	(void)state;
	for (int over = 0; over < 2; over++) {
		struct session s;
		start_ckpt(&s);
		evidence_len = 64;
		/* {"op":"checkpoint","state":[0,...]}: 5 tokens and one comma a further 0 */
		size_t k = JIG_RUN0_MAX_TOKENS - 4 + (size_t)over, len = 0;
		char *m = malloc(64 + 2 * k);
		len += (size_t)sprintf(m, "{\"op\":\"checkpoint\",\"state\":[0");
		for (size_t i = 1; i < k; i++)
			m[len++] = ',', m[len++] = '0';
		memcpy(m + len, "]}\n", 3);
		len += 3;
		send_all(&s, m, len);
		free(m);
		finish(&s);
		assert_int_equal(s.r.violation, over);
		assert_int_equal(aborted(&s), over);
		assert_int_equal(json_array_size(s.r.effects), !over);
		if (over) {
			char want[64];
			snprintf(want, sizeof(want), "more than %d JSON values", JIG_RUN0_MAX_TOKENS);
			assert_non_null(strstr(s.r.error, want));
		}
		jig_run0_free(&s.r);
	}
}

/* One record tree: a child's Run/0 charges the root's budget; child nodes
 * are capped. */
static void shared_budget(void **state)
{
	(void)state;
	struct session root, child;
	start(&root, false);
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(child.ab), 0);
	child.flow = sv[1];
	assert_int_equal(jig_run0_start_calls(&child.r, sv[0], child.ab[1], NULL, NULL, NULL, NULL, NULL, NULL, NULL, root.r.budget), 0);
	for (size_t i = 0; i < JIG_RECORD_LOG_BYTES / 4096; i++)
		send_log(&root, 4093, 'a');
	finish(&root);
	send_log(&child, 10, 'c');
	finish(&child);
	assert_int_equal(json_array_size(child.r.logs), 0);
	assert_int_equal(child.r.logs_dropped, 1);
	for (int i = 0; i < JIG_CALL_MAX_NODES; i++)
		assert_true(jig_run0_take_node(i % 2 ? &root.r : &child.r));
	assert_false(jig_run0_take_node(&child.r));
	assert_false(jig_run0_take_node(&root.r));
	assert_false(aborted(&root));
	assert_false(aborted(&child));
	jig_run0_free(&child.r);
	jig_run0_free(&root.r);
}

/* A malformed call or "imported" ends the Run with one "Run/0: " prefix,
 * never two (issue 32: records said "Run/0: Run/0: ..."). R-L03's reasons
 * are one line each. */
static void call_violation_prefix(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"{\"op\":\"call\",\"binding\":\"b\"}\n", "Run/0: a call needs an \"id\" (an integer)"},
		{"{\"op\":\"imported\",\"id\":1,\"x\":1}\n", "Run/0: malformed \"imported\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct session s;
		struct jig_call_caller caller = {0}; /* a violation is refused before the caller is read */
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		assert_int_equal(pipe(s.ab), 0);
		s.flow = sv[1];
		assert_int_equal(jig_run0_start_calls(&s.r, sv[0], s.ab[1], NULL, NULL, NULL, NULL, NULL, jig_call_op, &caller, NULL), 0);
		send_all(&s, cases[i][0], strlen(cases[i][0]));
		finish(&s);
		assert_true(s.r.violation);
		assert_string_equal(s.r.error, cases[i][1]);
		assert_true(aborted(&s));
		jig_run0_free(&s.r);
	}
}

/* R-L02: a Flow's Run/0 takes 16 binding calls; the 17th ends the Run
 * (issue 47's mutant run0.calls_off_by_one). */
static void count_call(void *ctx, struct jig_run0 *r0, json_t *op)
{
	(void)r0, (void)op;
	(*(int *)ctx)++;
}

static void sixteen_calls(void **state)
{
	(void)state;
	for (int extra = 0; extra <= 1; extra++) {
		struct session s;
		int calls = 0, sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		assert_int_equal(pipe(s.ab), 0);
		s.flow = sv[1];
		assert_int_equal(jig_run0_start_calls(&s.r, sv[0], s.ab[1], NULL, NULL, NULL, NULL, NULL, count_call, &calls, NULL), 0);
		for (int i = 0; i < 16 + extra; i++) {
			char line[64];
			snprintf(line, sizeof(line), "{\"op\":\"call\",\"id\":%d}\n", i);
			send_all(&s, line, strlen(line));
		}
		finish(&s);
		assert_int_equal(calls, 16);
		assert_int_equal(s.r.violation, extra == 1);
		if (extra)
			assert_non_null(strstr(s.r.error, "more than 16 binding calls"));
		aborted(&s);
		jig_run0_free(&s.r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(normal_run),	cmocka_unit_test(flow_error_kept), cmocka_unit_test(violations),
		cmocka_unit_test(bounds),	cmocka_unit_test(logs_capped_and_http_answered),
		cmocka_unit_test(log_line_cut), cmocka_unit_test(log_budget),	   cmocka_unit_test(evidence_cap),
		cmocka_unit_test(evidence_budget), cmocka_unit_test(shared_budget), cmocka_unit_test(token_cap),
		cmocka_unit_test(call_violation_prefix), cmocka_unit_test(checkpoint_one_in_flight), cmocka_unit_test(sixteen_calls), cmocka_unit_test(http_requests_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
