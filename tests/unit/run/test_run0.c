/* Run/0 line handling as a unit (issue 13): known operations, bounds, and
 * every violation ending the Run with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "run/limits.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(normal_run), cmocka_unit_test(flow_error_kept), cmocka_unit_test(violations),
		cmocka_unit_test(bounds),     cmocka_unit_test(logs_capped_and_http_answered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
