/* jig why's table: one row per failure kind a record (or the project's
 * last-Run entry) can carry, matched in order; each says the cause with
 * the record's numbers and what change to the project or the command
 * would allow it, or that the contract forbids it. */
#include "packet/why.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>

#include "packet/record.h"
#include "util/cleanup.h"
#include "util/limits.h"
#include "util/text.h"

/* What a row looks at: the root record, a child node or an effect. */
enum subject_type { SUBJECT_RUN, SUBJECT_CHILD, SUBJECT_EFFECT, SUBJECT_REFUSAL };

struct subject {
	enum subject_type type;
	json_t *node; /* the record, a child node, an effect or the history entry */
	json_t *rec;  /* the root record (NULL for a refusal before any Run) */
	const char *flow, *status, *error;
	const char *packet; /* the packet that holds the record, or NULL: none was made */
	char where[160];
};

struct row {
	const char *kind;
	bool (*match)(const struct subject *s);
	/* cause and remedy, at most WHY_TEXT bytes each: said by say, or,
	 * when a row's words are fixed, its cause (a format of the subject's
	 * where and error, in that order) and its remedy as they are */
	void (*say)(const struct subject *s, char *cause, char *remedy);
	bool forbids; /* the contract forbids what would allow it: the remedy is a change to the Flow */
	const char *cause, *remedy;
};

#define WHY_TEXT 700

static const char *str(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static uint64_t num(json_t *o, const char *k)
{
	json_int_t v = json_integer_value(json_object_get(o, k));
	return v > 0 ? (uint64_t)v : 0;
}

static bool has(const struct subject *s, const char *needle)
{
	return strstr(s->error, needle) != NULL;
}

static json_t *term(const struct subject *s)
{
	return json_object_get(s->node, "termination");
}

/* The scope's limit key (0: the record does not hold it). */
static uint64_t limit(const struct subject *s, const char *k)
{
	if (s->type == SUBJECT_CHILD) /* a child node keeps its scope's limits */
		return num(json_object_get(s->node, "limits"), k);
	return s->type == SUBJECT_RUN ? num(json_object_get(json_object_get(json_object_get(s->rec, "scope"), "policy"), "limits"), k) : 0;
}

static bool is_run_or_child(const struct subject *s)
{
	return s->type == SUBJECT_RUN || s->type == SUBJECT_CHILD;
}

/* --- the rows' matches --------------------------------------------------- */

static bool m_memory(const struct subject *s) { return is_run_or_child(s) && num(term(s), "oom_kills") > 0; }
static bool m_tasks(const struct subject *s) { return is_run_or_child(s) && num(term(s), "pids_max_hits") > 0; }
static bool m_deadline(const struct subject *s)
{
	return is_run_or_child(s) && (strcmp(s->status, "timeout") == 0 || strcmp(str(term(s), "outcome"), "timeout") == 0);
}
static bool m_cancelled(const struct subject *s) { return is_run_or_child(s) && strcmp(s->status, "cancelled") == 0; }
static bool m_expiry(const struct subject *s) { return m_cancelled(s) && has(s, "expiry"); }
static bool m_output_cap(const struct subject *s)
{
	return (has(s, "output") && has(s, ": more than") && !has(s, "Run/0: ")) || has(s, "ENOSPC") || has(s, "No space left on device");
}
static bool m_output_undeclared(const struct subject *s) { return has(s, "is not a declared output of the Flow"); }
static bool m_output_other(const struct subject *s) { return has(s, "output refused") || has(s, "child output refused"); }
static bool m_run0_cap(const struct subject *s)
{
	return has(s, "Run/0: ") && (has(s, "Run/0: more than") || has(s, "effect evidence reached") || has(s, "JSON values") ||
				    has(s, "is longer than"));
}
static bool m_run0_protocol(const struct subject *s) { return has(s, "Run/0: "); }
static bool m_http_ungranted(const struct subject *s) { return s->type == SUBJECT_EFFECT && has(s, "has no reviewed http route"); }
static bool m_agent_ungranted(const struct subject *s)
{
	return s->type == SUBJECT_EFFECT && (has(s, "has no reviewed agent route") || has(s, "has no agent route"));
}
static bool m_command_ungranted(const struct subject *s)
{
	return s->type == SUBJECT_EFFECT && (has(s, "has no reviewed command route") || has(s, "has no command route"));
}
static bool m_effect_exceeds(const struct subject *s)
{
	return s->type == SUBJECT_EFFECT && strcmp(str(s->node, "outcome"), "refused") == 0 &&
	       (has(s, "grants exactly") || has(s, ", over its") || has(s, "takes no body") || has(s, "unknown field"));
}
static bool m_effect_refused(const struct subject *s)
{
	return s->type == SUBJECT_EFFECT && strcmp(str(s->node, "outcome"), "refused") == 0;
}
static bool m_effect_failed(const struct subject *s)
{
	const char *o = str(s->node, "outcome");
	return s->type == SUBJECT_EFFECT && (strcmp(o, "failed") == 0 || strcmp(o, "cancelled") == 0);
}
static bool m_snapshot(const struct subject *s)
{
	return s->type == SUBJECT_REFUSAL && strcmp(str(s->node, "change"), "snapshot") == 0;
}
static bool m_flow_changed(const struct subject *s)
{
	return s->type == SUBJECT_REFUSAL && json_object_get(s->node, "change") != NULL;
}
static bool m_not_admitted(const struct subject *s) { return has(s, "no admitted Plan"); }
static bool m_stale(const struct subject *s) { return has(s, "changed since review"); }
static bool m_binding(const struct subject *s)
{
	return (s->type == SUBJECT_CHILD && strcmp(s->status, "refused") == 0) || has(s, "binding ");
}
static bool m_host(const struct subject *s)
{
	return s->type == SUBJECT_REFUSAL && num(s->node, "exit_status") == 3;
}
static bool m_cleanup(const struct subject *s) { return has(s, "cleanup not confirmed"); }
static bool m_record_cut(const struct subject *s) { return has(s, "cut to fit"); }
static bool m_signal(const struct subject *s)
{
	return is_run_or_child(s) && num(term(s), "signal") > 0 && strcmp(s->status, "succeeded") != 0;
}
static bool m_flow_error(const struct subject *s) { return has(s, "the Flow failed:") || has(s, "the Flow did not complete"); }
static bool m_failed(const struct subject *s)
{
	return s->type != SUBJECT_EFFECT && s->error[0] && strcmp(s->status, "succeeded") != 0;
}

/* --- the rows' words ---------------------------------------------------- */

static void s_memory(const struct subject *s, char *cause, char *remedy)
{
	uint64_t lim = limit(s, "memory_bytes"), peak = num(term(s), "memory_peak_bytes");
	char l[64] = "its scope's memory limit";
	if (lim)
		snprintf(l, sizeof(l), "its scope's limit of %llu MiB", (unsigned long long)(lim >> 20));
	snprintf(cause, WHY_TEXT, "%s ran out of memory: the kernel killed it %llu time(s) at %s (peak %llu MiB)", s->where,
		 (unsigned long long)num(term(s), "oom_kills"), l, (unsigned long long)(peak >> 20));
	snprintf(remedy, WHY_TEXT,
		 "the limit is the capability catalog's (the installed snapshot's), not the project's: no flow.json or command flag raises it; "
		 "use less memory (stream or split the input) or do the work in child Flows, each with a scope of its own");
}

static void s_tasks(const struct subject *s, char *cause, char *remedy)
{
	uint64_t lim = limit(s, "tasks");
	char l[64] = "its scope's task limit";
	if (lim)
		snprintf(l, sizeof(l), "its scope's limit of %llu tasks", (unsigned long long)lim);
	snprintf(cause, WHY_TEXT, "%s tried to start more processes or threads than %s (%llu refused)", s->where, l,
		 (unsigned long long)num(term(s), "pids_max_hits"));
	snprintf(remedy, WHY_TEXT,
		 "the limit is the capability catalog's, not the project's: no flow.json or command flag raises it; start fewer "
		 "processes and threads (workers, spawned programs) at once");
}

static void s_deadline(const struct subject *s, char *cause, char *remedy)
{
	json_t *t = term(s);
	uint64_t ms = s->type == SUBJECT_RUN ? num(s->node, "timeout_ms") : num(s->node, "deadline_ms"), cpu = num(t, "cpu_usec"),
		 wall = num(t, "wall_ms"), quota = limit(s, "cpu_quota_us");
	char busy[200] = "";
	/* CPU bound: it used most of its CPU share over the time it had. */
	if (wall && cpu && quota && cpu * 100 >= wall * 1000 * quota / 100000 * 80)
		snprintf(busy, sizeof(busy), "; it used %llu ms of CPU in %llu ms, most of its %llu.%llu CPU share, so it was CPU-bound",
			 (unsigned long long)(cpu / 1000), (unsigned long long)wall, (unsigned long long)(quota / 100000),
			 (unsigned long long)(quota % 100000 / 10000));
	/* At its memory limit without a kill: the kernel kept reclaiming
	 * (and the Flow kept waiting on it) rather than ending it. */
	uint64_t mem = limit(s, "memory_bytes");
	char full[120] = "";
	if (mem && num(t, "memory_peak_bytes") >= mem)
		snprintf(full, sizeof(full), "; its memory reached its scope's limit of %llu MiB", (unsigned long long)(mem >> 20));
	snprintf(cause, WHY_TEXT, "%s passed its deadline of %llu ms and was fenced%s%s", s->where, (unsigned long long)ms, busy, full);
	if (s->type == SUBJECT_RUN)
		snprintf(remedy, WHY_TEXT,
			 "give the Run a longer deadline: jig run %s --timeout N (s, m or h; at most 24h); it counts from the Run's "
			 "acceptance, input capture included%s",
			 s->flow, busy[0] ? "; the CPU share is the catalog's and cannot be raised" : "");
	else
		snprintf(remedy, WHY_TEXT,
			 "a child's deadline is what is left of its caller's; give the Run a longer --timeout, or make the child's work smaller");
}

/* The Run's error says how: "cancelled by the operator (SIGINT) ..." or
 * "cancelled: the command's expiry ... passed ..." (run/flow_run.c). */
static void s_cancelled(const struct subject *s, char *cause, char *remedy)
{
	if (strncmp(s->error, "cancelled", 9) == 0)
		snprintf(cause, WHY_TEXT, "%s was %s", s->where, s->error);
	else
		snprintf(cause, WHY_TEXT, "%s was cancelled: %s", s->where, s->error[0] ? s->error : "by a signal");
	snprintf(remedy, WHY_TEXT, "nothing in the project refused it: a stop signal interrupted it; run it again");
}

static void s_expiry(const struct subject *s, char *cause, char *remedy)
{
	s_cancelled(s, cause, remedy);
	snprintf(remedy, WHY_TEXT, "nothing in the project refused it: the command's expiry ended it; run it again with a longer "
				   "one: jig run %s --expiry N (s, m or h)", s->flow);
}

static void s_output_cap(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s: its output passed a packet's caps (%s); no file was published", s->where, s->error);
	snprintf(remedy, WHY_TEXT, "a packet holds at most %llu MiB, %d files and %d entries: the contract's caps, no flag raises "
				   "them; write less (summarise, compress) or split the work over several Runs",
		 JIG_OUTPUT_MAX_BYTES >> 20, JIG_OUTPUT_MAX_FILES, JIG_OUTPUT_MAX_ENTRIES);
}

static void s_run0_cap(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s passed a cap on what a Run may ask of jig (%s) and was ended", s->where, s->error);
	snprintf(remedy, WHY_TEXT,
		 "the caps are the contract's (a Run: %d messages, %d HTTP requests, %d Agent turns, %d binding calls, %u KiB of "
		 "effect evidence; 1 MiB a message): no flag raises them; batch the requests, or split the work over child Flows or Runs",
		 JIG_RUN0_MAX_MESSAGES, JIG_HTTP_MAX_REQUESTS, JIG_AGENT_MAX_TURNS, JIG_CALL_MAX_CALLS, JIG_RECORD_EFFECTS_BYTES >> 10);
}

static void s_ungranted(const struct subject *s, char *cause, char *remedy, const char *key, const char *what)
{
	snprintf(cause, WHY_TEXT, "%s asked for the %s route \"%s\", which its flow.json does not grant: refused, nothing sent (%s)",
		 s->where, what, str(s->node, "route"), s->error);
	snprintf(remedy, WHY_TEXT, "if the Flow should have it, add the route to \"%s\" in its flow.json and review again "
				   "(jig review shows the grant before you admit it); otherwise the Flow must not ask",
		 key);
}
static void s_http_ungranted(const struct subject *s, char *c, char *r) { s_ungranted(s, c, r, "http", "HTTP"); }
static void s_agent_ungranted(const struct subject *s, char *c, char *r) { s_ungranted(s, c, r, "agents", "Agent"); }
static void s_command_ungranted(const struct subject *s, char *c, char *r) { s_ungranted(s, c, r, "commands", "Project Command"); }

static void s_effect_exceeds(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s: a %s request differed from its reviewed route %s: refused, nothing sent (%s)", s->where,
		 str(s->node, "effect")[0] ? str(s->node, "effect") : "http", str(s->node, "route"), s->error);
	snprintf(remedy, WHY_TEXT, "make the request fit the route (exact method and URL, body within max_request_bytes), or change "
				   "the route in flow.json and review again");
}

static void s_effect_refused(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s: a %s call was refused (%s)", s->where, str(s->node, "effect")[0] ? str(s->node, "effect") : "http",
		 s->error);
	snprintf(remedy, WHY_TEXT, "change the call to fit its reviewed grant in flow.json, or change the grant and review again");
}

static void s_effect_failed(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s: a %s call%s%s failed (%s)", s->where, str(s->node, "effect")[0] ? str(s->node, "effect") : "http",
		 str(s->node, "route")[0] ? " on route " : "", str(s->node, "route"), s->error);
	snprintf(remedy, WHY_TEXT, "not a refusal: the grant was used; check the service or provider it reached (and the operator's "
				   "configuration for it), then run again");
}

static void s_changed(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "the project changed since review: %s", str(s->node, "text"));
	snprintf(remedy, WHY_TEXT, "review the change and admit it (jig review shows exactly what changed), then run again");
}

static void s_snapshot(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "the installed snapshot changed since review: %s", str(s->node, "text"));
	snprintf(remedy, WHY_TEXT, "review the project against the new snapshot (jig review), then run again");
}

static void s_record_cut(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s: its record was over the %llu MiB a packet's record holds (%s)", s->where,
		 (unsigned long long)(JIG_RECORD_MAX_BYTES >> 20), s->error);
	snprintf(remedy, WHY_TEXT, "the cap is the contract's: log less, make fewer effect calls per Run");
}

/* "the logs (jig inspect P)", or where they are when no packet is named. */
static const char *logs_at(const struct subject *s, char *buf, size_t cap)
{
	if (s->packet)
		snprintf(buf, cap, "its logs: jig inspect %.300s", s->packet);
	else
		snprintf(buf, cap, "its logs are in its packet's record: jig inspect the --output directory of its jig run");
	return buf;
}

static void s_signal(const struct subject *s, char *cause, char *remedy)
{
	int sig = (int)num(term(s), "signal");
	const char *abbrev = sig < 65 ? sigabbrev_np(sig) : NULL;
	char logs[400];
	bool crashed = strcmp(str(term(s), "outcome"), "crashed") == 0;
	/* jig's own "the Flow was killed by …" is this line already: only what follows it */
	const char *also = s->error;
	if (strncmp(also, "the Flow was killed by ", 23) == 0)
		also = strstr(also, "); ") ? strstr(also, "); ") + 3 : "";
	snprintf(cause, WHY_TEXT, "%s %s %s%s (signal %d, %s)%s%s", s->where, crashed ? "crashed with" : "was killed by",
		 abbrev ? "SIG" : "an unnamed signal",
		 abbrev ? abbrev : "", sig, json_is_true(json_object_get(term(s), "core_dumped")) ? "core dumped" : "no core dumped",
		 also[0] ? ": " : "", also);
	snprintf(remedy, WHY_TEXT, "the Flow's process crashed or was killed inside its scope: fix the Flow (%s)", logs_at(s, logs, sizeof(logs)));
}

static void s_flow_error(const struct subject *s, char *cause, char *remedy)
{
	const char *own = strncmp(s->error, "the Flow failed: ", 17) == 0 ? s->error + 17 : s->error;
	snprintf(cause, WHY_TEXT, "%s failed in its own code: %s", s->where, own);
	char logs[400];
	snprintf(remedy, WHY_TEXT, "fix the Flow (%s)", logs_at(s, logs, sizeof(logs)));
}

static void s_failed(const struct subject *s, char *cause, char *remedy)
{
	snprintf(cause, WHY_TEXT, "%s %s: %s", s->where, s->status[0] ? s->status : "failed", s->error);
	if (s->packet)
		snprintf(remedy, WHY_TEXT, "see the message; jig inspect %.300s shows the whole record", s->packet);
	else
		snprintf(remedy, WHY_TEXT, "see the message: nothing ran to the end, so no packet holds more");
}

/* Matched in order; the first row that matches a subject explains it. */
static const struct row rows[] = {
	{"snapshot-changed", m_snapshot, s_snapshot, false, NULL, NULL},
	{"flow-changed", m_flow_changed, s_changed, false, NULL, NULL},
	{"memory", m_memory, s_memory, true, NULL, NULL},
	{"tasks", m_tasks, s_tasks, true, NULL, NULL},
	{"deadline", m_deadline, s_deadline, false, NULL, NULL},
	{"expiry", m_expiry, s_expiry, false, NULL, NULL},
	{"cancelled", m_cancelled, s_cancelled, false, NULL, NULL},
	{"output-cap", m_output_cap, s_output_cap, true, NULL, NULL},
	{"output-undeclared", m_output_undeclared, NULL, false,
	 "%s wrote a file its flow.json does not declare (%s); no file was published",
	 "add the path to \"outputs\" in the Flow's flow.json and review again (jig review), or stop writing it"},
	{"output-refused", m_output_other, NULL, true,
	 "%s: its output was refused (%s); no file was published",
	 "write only plain, singly linked regular files at declared paths: no links, special or sparse files, "
	 "no extended attributes (the contract refuses them)"},
	{"run0-cap", m_run0_cap, s_run0_cap, true, NULL, NULL},
	{"run0-protocol", m_run0_protocol, NULL, true,
	 "%s sent jig something it does not accept (%s) and was ended",
	 "talk to jig only through the jig API of the runtime (never descriptor 3 directly)"},
	{"http-ungranted", m_http_ungranted, s_http_ungranted, false, NULL, NULL},
	{"agent-ungranted", m_agent_ungranted, s_agent_ungranted, false, NULL, NULL},
	{"command-ungranted", m_command_ungranted, s_command_ungranted, false, NULL, NULL},
	{"effect-outside-grant", m_effect_exceeds, s_effect_exceeds, false, NULL, NULL},
	{"effect-refused", m_effect_refused, s_effect_refused, false, NULL, NULL},
	{"effect-failed", m_effect_failed, s_effect_failed, false, NULL, NULL},
	{"not-admitted", m_not_admitted, NULL, false,
	 "%s was not run: the project has no admitted Plan",
	 "review the project and admit its Plan: jig review (or jig review --yes)"},
	{"review-again", m_stale, NULL, false,
	 "%s was not run: %s",
	 "review the change and admit it (jig review), then run again"},
	{"binding-refused", m_binding, NULL, false,
	 "%s: a child call was refused (%s)",
	 "a call must fit its binding as reviewed (flow.json \"bindings\": its inputs, outputs and the root budget): "
	 "change the call, or the binding and review again"},
	{"host", m_host, NULL, false,
	 "%s was not run: this host cannot enforce the contract (%s)",
	 "jig host check says what is missing; jig never runs a Flow where it cannot contain it"},
	{"cleanup", m_cleanup, NULL, false,
	 "%s: the scope's cleanup was not confirmed (%s), so the Run counts as failed",
	 "a host problem, not the project's: jig host check, and see docs/reliability.md"},
	{"record-cut", m_record_cut, s_record_cut, true, NULL, NULL},
	{"signal", m_signal, s_signal, false, NULL, NULL},
	{"flow-error", m_flow_error, s_flow_error, false, NULL, NULL},
	{"failed", m_failed, s_failed, false, NULL, NULL},
};

/* The first row that matches s, appended to out; the row's kind, or NULL. */
static const char *explain_one(json_t *out, const struct subject *s)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!rows[i].match(s))
			continue;
		char cause[WHY_TEXT], remedy[WHY_TEXT];
		if (rows[i].say)
			rows[i].say(s, cause, remedy);
		else { /* the one builder of a row whose words are fixed */
			snprintf(cause, WHY_TEXT, rows[i].cause, s->where, s->error);
			snprintf(remedy, WHY_TEXT, "%s", rows[i].remedy);
		}
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:b}", "kind", rows[i].kind, "where", s->where, "cause", cause,
						     "remedy", remedy, "contract_forbids", rows[i].forbids));
		return rows[i].kind;
	}
	return NULL;
}

static void explain_effects(json_t *out, json_t *rec, json_t *node, const char *where, const char *flow, const char *packet)
{
	size_t i;
	json_t *ev;
	json_array_foreach(json_object_get(node, "effects"), i, ev) {
		struct subject s = {.type = SUBJECT_EFFECT, .node = ev, .rec = rec, .flow = flow, .status = str(ev, "outcome"),
				    .error = str(ev, "error")[0] ? str(ev, "error") : str(ev, "reason"), .packet = packet};
		snprintf(s.where, sizeof(s.where), "%s", where);
		explain_one(out, &s);
	}
}

/* A child node and its own children, depth-first (the record's tree is at
 * most 64 nodes). */
static void explain_children(json_t *out, json_t *rec, json_t *node, int depth, const char *packet)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(node, "children"), i, c) {
		struct subject s = {.type = SUBJECT_CHILD, .node = c, .rec = rec, .flow = str(c, "flow"), .status = str(c, "status"),
				    .error = str(c, "why"), .packet = packet};
		snprintf(s.where, sizeof(s.where), "child Flow %.64s (binding %.64s)", str(c, "flow"), str(c, "binding"));
		if (strcmp(s.status, "succeeded") != 0)
			explain_one(out, &s);
		explain_effects(out, rec, c, s.where, s.flow, packet);
		if (depth < 16)
			explain_children(out, rec, c, depth + 1, packet);
	}
}

json_t *jig_why_explain(json_t *doc, const char *packet)
{
	json_t *out = json_array();
	if (!out)
		return NULL;
	bool history = json_object_get(doc, "record") || json_object_get(doc, "refusal");
	json_t *rec = history ? json_object_get(doc, "record") : doc;
	json_t *refusal = history ? json_object_get(doc, "refusal") : NULL;
	const char *flow = str(rec ? rec : doc, "flow");
	if (refusal) { /* refused before (or after) the Run: the command's own error */
		size_t i;
		json_t *ch;
		bool snapshot = false;
		json_array_foreach(json_object_get(refusal, "changes"), i, ch)
			snapshot |= strcmp(str(ch, "change"), "snapshot") == 0;
		json_array_foreach(json_object_get(refusal, "changes"), i, ch) {
			/* a new snapshot changes every scope's bound paths: those follow from it */
			if (snapshot && (strncmp(str(ch, "subject"), "scope", 5) == 0 || strstr(str(ch, "subject"), " worker_scope") ||
					 strstr(str(ch, "subject"), " provider_scope") || strstr(str(ch, "subject"), " command_scope")))
				continue;
			struct subject s = {.type = SUBJECT_REFUSAL, .node = ch, .rec = rec, .flow = flow, .status = "refused", .error = "",
					    .packet = NULL};
			snprintf(s.where, sizeof(s.where), "flow %.64s", str(ch, "flow")[0] ? str(ch, "flow") : flow);
			explain_one(out, &s);
		}
		if (!json_array_size(json_object_get(refusal, "changes"))) {
			struct subject s = {.type = SUBJECT_REFUSAL, .node = refusal, .rec = rec, .flow = flow, .status = "refused",
					    .error = str(refusal, "error"), .packet = NULL};
			snprintf(s.where, sizeof(s.where), "flow %.64s", flow);
			explain_one(out, &s);
		}
	}
	if (rec) {
		struct subject s = {.type = SUBJECT_RUN, .node = rec, .rec = rec, .flow = flow, .status = str(rec, "status"),
				    .error = str(rec, "error"), .packet = packet};
		snprintf(s.where, sizeof(s.where), "flow %.64s", flow);
		json_t *own = json_array();
		const char *kind = strcmp(s.status, "succeeded") != 0 && own ? explain_one(own, &s) : NULL;
		/* The Flow's own error after what caused it (a refused effect,
		 * a failed child): the first row is the headline's. */
		bool follows = kind && (strcmp(kind, "flow-error") == 0 || strcmp(kind, "failed") == 0);
		if (!follows)
			json_array_extend(out, own);
		size_t before = json_array_size(out);
		explain_effects(out, rec, rec, s.where, flow, packet);
		explain_children(out, rec, rec, 0, packet);
		if (follows && json_array_size(out) > before) {
			json_t *x = json_array_get(own, 0);
			json_object_set_new(x, "remedy", json_string("the Flow's own error followed from what is explained above it: "
								     "address that first"));
		}
		if (follows)
			json_array_extend(out, own);
		json_decref(own);
	}
	return out;
}

/* The headline: a refusal's own line (jig run's, after "jig: "), or the
 * first explanation's first line (named after the Flow when it is a
 * child's), or the status when there is none. */
static void headline(char *buf, size_t cap, json_t *doc, json_t *ex)
{
	bool history = json_object_get(doc, "record") || json_object_get(doc, "refusal");
	json_t *rec = history ? json_object_get(doc, "record") : doc;
	const char *flow = str(rec ? rec : doc, "flow"), *status = str(rec, "status"), *refused = NULL;
	if (history && json_object_get(doc, "refusal"))
		status = "refused", refused = str(json_object_get(doc, "refusal"), "error");
	const char *cause = json_string_value(json_object_get(json_array_get(ex, 0), "cause"));
	char own[100];
	snprintf(own, sizeof(own), "flow %.64s ", flow);
	size_t n = strlen(own);
	if (refused && refused[0])
		snprintf(buf, cap, "%.*s", (int)jig_text_first_line(refused), refused);
	else if (!cause || strcmp(status, "succeeded") == 0)
		snprintf(buf, cap, "flow %s %s", flow, status);
	else if (strncmp(cause, own, n) == 0 || (strncmp(cause, own, n - 1) == 0 && cause[n - 1] == ':'))
		snprintf(buf, cap, "%.*s", (int)jig_text_first_line(cause), cause);
	else
		snprintf(buf, cap, "flow %s %s: %.*s", flow, status, (int)jig_text_first_line(cause), cause);
}

void jig_why_headline(json_t *rec, const char *packet, char *buf, size_t cap)
{
	json_t *ex = jig_why_explain(rec, packet);
	headline(buf, cap, rec, ex);
	json_decref(ex);
}

void jig_why_put_run_line(FILE *f, const char *head, const char *packet)
{
	fputs("jig: ", f);
	jig_text_put(f, head);
	fputs("; packet ", f);
	jig_text_put(f, packet);
	fputc('\n', f);
}

int jig_why_packet_headline(const char *packet, char *buf, size_t cap)
{
	jig_autoclose int pfd = open(packet, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	json_t *rec = NULL;
	struct jig_error e = {0};
	if (pfd < 0 || jig_record_load(pfd, packet, &rec, &e) < 0)
		return -1;
	jig_why_headline(rec, packet, buf, cap);
	json_decref(rec);
	return 0;
}

json_t *jig_why_doc(json_t *doc, const char *source, const char *packet)
{
	bool history = json_object_get(doc, "record") || json_object_get(doc, "refusal");
	json_t *rec = history ? json_object_get(doc, "record") : doc;
	const char *status = json_object_get(doc, "refusal") ? "refused" : str(rec, "status");
	if (history && rec && json_string_value(json_object_get(doc, "packet")))
		packet = json_string_value(json_object_get(doc, "packet"));
	json_t *ex = jig_why_explain(doc, packet);
	char head[WHY_TEXT + 200];
	headline(head, sizeof(head), doc, ex);
	json_t *out = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "format", JIG_WHY_FORMAT, "source", source, "flow",
				str(rec ? rec : doc, "flow"), "status", status, "headline", head, "explanations", ex ? ex : json_array());
	if (out && history && json_object_get(doc, "packet"))
		json_object_set(out, "packet", json_object_get(doc, "packet"));
	if (out && history && json_object_get(doc, "at_ms"))
		json_object_set(out, "at_ms", json_object_get(doc, "at_ms"));
	return out;
}

void jig_why_print(FILE *out, json_t *doc)
{
	json_t *ex = json_object_get(doc, "explanations"), *x;
	size_t i;
	/* The headline first: the words jig run and jig inspect print first. */
	jig_text_put(out, str(doc, "headline"));
	if (json_string_value(json_object_get(doc, "packet"))) {
		fputs("; packet ", out);
		jig_text_put(out, str(doc, "packet"));
	}
	fputc('\n', out);
	if (!json_array_size(ex))
		fputs("  nothing was refused and nothing failed\n", out);
	json_array_foreach(ex, i, x) {
		fputs("- ", out);
		jig_text_put(out, str(x, "kind"));
		fputs(": ", out);
		jig_text_put_lines(out, "    ", str(x, "cause"));
		fputs(json_is_true(json_object_get(x, "contract_forbids")) ? "\n  the contract forbids more: " : "\n  remedy: ", out);
		jig_text_put(out, str(x, "remedy"));
		fputc('\n', out);
	}
}
