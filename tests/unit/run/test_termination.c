/* A scope's end as the host reports it (issue 31): the launcher's report
 * that the payload started tells "never started" from "killed while
 * running" in the record's termination, in jig.command's result and
 * evidence, and in what jig inspect prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "effects/command.h"
#include "packet/record.h"
#include "sandbox/door.h"

/* bwrap SIGKILLed: no report of the payload's end; started or not. */
static struct jig_scope_result bwrap_killed(uint32_t started)
{
	struct jig_scope_result r = {.struct_size = sizeof(r), .outcome = JIG_SCOPE_FAILED, .exit_status = -1, .held_fd = -1,
				     .cleanup_confirmed = 1, .payload_started = started};
	snprintf(r.error, sizeof(r.error), "%s",
		 started == JIG_SCOPE_START_RAN
			 ? "the scope was killed while its payload ran (bwrap killed by signal 9); the payload's end was not reported"
			 : "the scope ended before its payload started (bwrap killed by signal 9)");
	return r;
}

static void started_or_not(void **state)
{
	(void)state;
	struct jig_scope_result ran = bwrap_killed(JIG_SCOPE_START_RAN), never = bwrap_killed(JIG_SCOPE_START_NEVER),
				old = bwrap_killed(JIG_SCOPE_START_UNKNOWN);
	assert_int_equal(jig_scope_payload_started(&ran), 1);
	assert_int_equal(jig_scope_payload_started(&never), 0);
	assert_int_equal(jig_scope_payload_started(&old), -1);
	assert_true(jig_scope_killed_while_running(&ran));
	assert_false(jig_scope_killed_while_running(&never));
	assert_false(jig_scope_killed_while_running(&old)); /* a module before ABI 1.4: not claimed */
	/* The host's own stops, and an end the launcher reported, are not this. */
	struct jig_scope_result r = ran;
	r.aborted = 1;
	assert_false(jig_scope_killed_while_running(&r));
	r = ran, r.interrupted_by = 15;
	assert_false(jig_scope_killed_while_running(&r));
	r = ran, r.outcome = JIG_SCOPE_SIGNALED, r.signal = 9, r.launcher_reported = 1;
	assert_false(jig_scope_killed_while_running(&r));
	r = ran, r.outcome = JIG_SCOPE_TIMEOUT;
	assert_false(jig_scope_killed_while_running(&r));
	json_t *t = jig_scope_payload_started_json(&ran), *f = jig_scope_payload_started_json(&never),
	       *n = jig_scope_payload_started_json(&old);
	assert_true(json_is_true(t) && json_is_false(f) && json_is_null(n));
	json_decref(t), json_decref(f), json_decref(n);
}

static json_t *record_of(const struct jig_scope_result *res)
{
	struct jig_record_facts facts = {.status = "failed", .why = res->error, .flow = "f", .plan_sha256 = "p", .package_sha256 = "k",
					 .timeout_ms = 1000, .started_ms = 1, .inputs = json_array(), .outputs = json_array(),
					 .logs = json_array()};
	json_t *rec = jig_record_new(&facts, res);
	json_decref(facts.inputs), json_decref(facts.outputs), json_decref(facts.logs);
	assert_non_null(rec);
	return rec;
}

static char *printed(json_t *rec)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	jig_record_print(m, "pkt", rec);
	fclose(m);
	return buf;
}

static void record_termination(void **state)
{
	(void)state;
	struct jig_scope_result ran = bwrap_killed(JIG_SCOPE_START_RAN), never = bwrap_killed(JIG_SCOPE_START_NEVER);
	json_t *a = record_of(&ran), *b = record_of(&never);
	json_t *ta = json_object_get(a, "termination"), *tb = json_object_get(b, "termination");
	assert_true(json_is_true(json_object_get(ta, "payload_started")));
	assert_true(json_is_false(json_object_get(tb, "payload_started")));
	assert_string_equal(json_string_value(json_object_get(ta, "outcome")), "failed");
	char *pa = printed(a), *pb = printed(b);
	assert_non_null(strstr(pa, "killed while its payload ran"));
	assert_null(strstr(pa, "never started"));
	assert_non_null(strstr(pb, "termination failed (the payload never started)"));
	free(pa), free(pb);
	json_decref(a), json_decref(b);
}

static void command_killed(void **state)
{
	(void)state;
	struct jig_scope_result ran = bwrap_killed(JIG_SCOPE_START_RAN);
	unsigned char out[] = "half", err[] = "";
	struct jig_command_stream s[2] = {{.fd = -1, .kept = out, .n_kept = 4, .total = 4}, {.fd = -1, .kept = err, .n_kept = 0, .total = 0}};
	json_t *ev = json_object();
	jig_command_measure(ev, &ran, s, true);
	json_t *reply = jig_command_reply(ev, &ran, s);
	assert_non_null(reply);
	assert_string_equal(json_string_value(json_object_get(reply, "outcome")), "killed");
	assert_true(json_is_true(json_object_get(reply, "ok")));
	assert_true(json_is_null(json_object_get(reply, "exit_code")) && json_is_null(json_object_get(reply, "signal")));
	assert_string_equal(json_string_value(json_object_get(reply, "stdout_base64")), "aGFsZg==");
	assert_string_equal(json_string_value(json_object_get(ev, "outcome")), "killed");
	assert_true(json_is_true(json_object_get(ev, "payload_started")));
	assert_null(json_object_get(ev, "exit_code"));
	json_decref(reply);
	json_decref(ev);
	/* Never started: not a result (the effect rejects with the message). */
	struct jig_scope_result never = bwrap_killed(JIG_SCOPE_START_NEVER);
	ev = json_object();
	jig_command_measure(ev, &never, s, true);
	assert_true(json_is_false(json_object_get(ev, "payload_started")));
	json_decref(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(started_or_not), cmocka_unit_test(record_termination),
					   cmocka_unit_test(command_killed)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
