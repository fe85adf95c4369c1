/* jig inspect's text of a record (record.h): the Run, its files, its own
 * effects and logs, and the tree of child Flows drawn as a tree with each
 * child's effects, outputs and logs under it (issue 35). Exact values
 * first, human units beside them ("12345678 bytes (11.8 MiB)"). Every
 * string from the record is shown inert: it is the Flow's as much as
 * jig's, and a packet may have been edited by anyone since. */
#include "packet/record.h"

#include <stdio.h>
#include <string.h>

#include "packet/why.h"
#include "util/limits.h"
#include "util/text.h"
#include "util/units.h"

#define CPU_PERIOD_US 100000.0 /* cpu.max's period: a quota per 100 ms */

static void put_field(FILE *out, const char *before, json_t *obj, const char *key, const char *after)
{
	fputs(before, out);
	jig_text_put(out, json_string_value(json_object_get(obj, key)));
	fputs(after, out);
}

static long long int_field(json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

/* " (human)" for a byte count; nothing below 1 KiB, where it adds nothing. */
static void bytes_human(FILE *out, long long n)
{
	char b[32];
	if (n >= 1024)
		fprintf(out, " (%s)", jig_units_bytes(b, sizeof(b), (uint64_t)n));
}

static void ms_human(FILE *out, long long ms)
{
	char b[32];
	if (ms >= 1000)
		fprintf(out, " (%s)", jig_units_ms(b, sizeof(b), (uint64_t)ms));
}

/* One effect's line: a checkpoint save by number and outcome, the others
 * by kind, route and outcome. */
static void print_effect(FILE *out, const char *pfx, json_t *o)
{
	const char *kind = json_string_value(json_object_get(o, "effect"));
	fputs(pfx, out);
	if (kind && strcmp(kind, "checkpoint") == 0) {
		fputs("checkpoint", out);
		if (json_integer_value(json_object_get(o, "save")) > 0)
			fprintf(out, " save %lld", int_field(o, "save"));
		put_field(out, " ", o, "outcome", "");
		if (json_is_integer(json_object_get(o, "bytes")))
			fprintf(out, ", %lld bytes", int_field(o, "bytes"));
		if (json_string_length(json_object_get(o, "error")))
			put_field(out, ": ", o, "error", "");
		fputc('\n', out);
		return;
	}
	bool agent = kind && strcmp(kind, "agent") == 0, command = kind && strcmp(kind, "command") == 0;
	put_field(out, agent ? "agent " : command ? "command " : "http ", o, "route", " ");
	put_field(out, "", o, "outcome", "");
	if (command && json_is_integer(json_object_get(o, "exit_code")))
		fprintf(out, " exit %lld", int_field(o, "exit_code"));
	if (command && json_is_integer(json_object_get(o, "signal")))
		fprintf(out, " signal %lld", int_field(o, "signal"));
	if (command && json_is_integer(json_object_get(o, "stdout_bytes")))
		fprintf(out, ", %lld stdout and %lld stderr bytes, cleanup %s", int_field(o, "stdout_bytes"),
			int_field(o, "stderr_bytes"), json_is_true(json_object_get(o, "cleanup_confirmed")) ? "confirmed" : "NOT confirmed");
	if (agent && json_is_string(json_object_get(o, "model"))) {
		put_field(out, " (", o, json_object_get(o, "provider") ? "provider" : "api", ", ");
		put_field(out, "model ", o, "model", ")");
	}
	if (agent && json_is_integer(json_object_get(o, "answer_bytes")))
		fprintf(out, " %lld answer bytes", int_field(o, "answer_bytes"));
	if (json_is_integer(json_object_get(o, "status")))
		fprintf(out, " status %lld", int_field(o, "status"));
	if (json_string_length(json_object_get(o, "error")))
		put_field(out, ": ", o, "error", "");
	fputc('\n', out);
}

/* The termination facts of a scope t, human units beside the exact ones. */
static void print_termination(FILE *out, json_t *t)
{
	put_field(out, "termination ", t, "outcome", "");
	if (json_is_false(json_object_get(t, "payload_started")))
		fputs(" (the payload never started)", out);
	fprintf(out, ", exit %lld, signal %lld%s, wall %lld ms", int_field(t, "exit_status"), int_field(t, "signal"),
		json_is_true(json_object_get(t, "core_dumped")) ? " (core dumped)" : "", int_field(t, "wall_ms"));
	ms_human(out, int_field(t, "wall_ms"));
	if (json_is_integer(json_object_get(t, "cpu_usec"))) {
		char b[32];
		fprintf(out, ", CPU %lld us (%s)", int_field(t, "cpu_usec"), jig_units_usec(b, sizeof(b), (uint64_t)int_field(t, "cpu_usec")));
	}
	fprintf(out, ", peak memory %lld bytes", int_field(t, "memory_peak_bytes"));
	bytes_human(out, int_field(t, "memory_peak_bytes"));
}

/* A scope's limits and what of them it used: memory peak against
 * memory_bytes, average CPU against the quota, its deadline wall (the
 * Run's is its timeout_ms, not the policy's ceiling). */
static void print_limits(FILE *out, const char *pfx, json_t *lim, json_t *t, long long wall)
{
	if (!json_is_object(lim))
		return;
	long long mem = int_field(lim, "memory_bytes"), quota = int_field(lim, "cpu_quota_us");
	fprintf(out, "%slimits memory %lld bytes", pfx, mem);
	bytes_human(out, mem);
	if (mem > 0 && json_is_integer(json_object_get(t, "memory_peak_bytes")))
		fprintf(out, ", peak %.1f%% of it", 100.0 * (double)int_field(t, "memory_peak_bytes") / (double)mem);
	fprintf(out, "; %lld tasks; CPU %lld us per 100 ms (%.2f CPU)", int_field(lim, "tasks"), quota, (double)quota / CPU_PERIOD_US);
	long long used = int_field(t, "cpu_usec"), ran = int_field(t, "wall_ms");
	if (ran > 0 && json_is_integer(json_object_get(t, "cpu_usec")))
		fprintf(out, ", used %.2f CPU on average", (double)used / 1000.0 / (double)ran);
	if (wall > 0) {
		fprintf(out, "; deadline %lld ms", wall);
		ms_human(out, wall);
	}
	fputc('\n', out);
}

/* When a scope started: the date, and the offset from the Run's start. */
static void print_started(FILE *out, const char *pfx, long long at, long long run_at)
{
	char d[48];
	fprintf(out, "%sstarted %s (%lld ms since the epoch)", pfx, jig_units_date(d, sizeof(d), at), at);
	if (run_at > 0 && at >= run_at)
		fprintf(out, ", %s into the Run", jig_units_ms(d, sizeof(d), (uint64_t)(at - run_at)));
}

static void print_logs(FILE *out, const char *pfx, json_t *obj)
{
	json_t *dropped = json_object_get(obj, "logs_dropped"), *o;
	size_t i;
	if (dropped)
		fprintf(out, "%slogs: %lld more lines (%lld bytes) not kept: over %lld log bytes a Run keeps or %d lines\n", pfx,
			int_field(dropped, "lines"), int_field(dropped, "bytes"), int_field(dropped, "kept_bytes_max"), JIG_RUN0_MAX_LOGS);
	char more[256];
	snprintf(more, sizeof(more), "%s    ", pfx);
	json_array_foreach(json_object_get(obj, "logs"), i, o) { /* a logged stack trace as lines */
		fprintf(out, "%slog ", pfx);
		jig_text_put_lines(out, more, json_string_value(o));
		fputc('\n', out);
	}
}

/* Levels drawn: a Run has at most JIG_CHILD_LEVELS; an edited packet may
 * nest deeper, and is cut here. */
#define TREE_MAX_DEPTH 8

static void print_tree(FILE *out, json_t *children, const char *pfx, long long run_at, int depth);

/* A child's lines below its head, each after pfx. */
static void print_child_body(FILE *out, json_t *n, const char *pfx, long long run_at, int depth)
{
	json_t *t = json_object_get(n, "termination"), *rs = json_object_get(n, "reservation"), *in = json_object_get(n, "inputs"), *v;
	size_t k;
	if (json_is_integer(json_object_get(n, "started_ms"))) {
		print_started(out, pfx, int_field(n, "started_ms"), run_at);
		fputc('\n', out);
	}
	if (rs)
		fprintf(out, "%sreserved %lld MiB, %lld tasks, %.1f CPU; %s\n", pfx, int_field(rs, "memory_bytes") >> 20,
			int_field(rs, "tasks"), (double)int_field(rs, "cpu_quota_us") / CPU_PERIOD_US,
			json_is_true(json_object_get(n, "reservation_released")) ? "released after confirmed cleanup" : "HELD: cleanup not confirmed");
	json_array_foreach(in, k, v) {
		fputs(k ? ", " : pfx, out);
		fputs(k ? "" : "given ", out);
		put_field(out, "", v, "input", json_object_get(v, "resource") ? " <- resource tree " : " <- ");
		put_field(out, "", v, json_object_get(v, "resource") ? "resource" : "from", k + 1 == json_array_size(in) ? "\n" : "");
	}
	if (t) {
		fputs(pfx, out);
		print_termination(out, t);
		if (json_string_length(json_object_get(n, "scope_policy_sha256")))
			put_field(out, "; scope ", n, "scope_policy_sha256", "");
		fputc('\n', out);
	}
	print_limits(out, pfx, json_object_get(n, "limits"), t, int_field(json_object_get(n, "limits"), "wall_ms"));
	json_array_foreach(json_object_get(n, "outputs"), k, v) {
		fputs(pfx, out);
		put_field(out, "output ", v, "path", "");
		fprintf(out, "  %lld bytes", int_field(v, "size"));
		bytes_human(out, int_field(v, "size"));
		put_field(out, "  sha256 ", v, "sha256", "\n");
	}
	json_array_foreach(json_object_get(n, "effects"), k, v)
		print_effect(out, pfx, v);
	print_logs(out, pfx, n);
	print_tree(out, json_object_get(n, "children"), pfx, run_at, depth + 1);
}

/* The children as a tree: "|-- " before each but the last, "`-- " before
 * the last; their lines below under "|   " or "    ". */
static void print_tree(FILE *out, json_t *children, const char *pfx, long long run_at, int depth)
{
	size_t i, n = json_array_size(children);
	json_t *c;
	if (n && depth >= TREE_MAX_DEPTH) {
		fprintf(out, "%s(%zu more child Flows below: not drawn past %d levels)\n", pfx, n, TREE_MAX_DEPTH);
		return;
	}
	json_array_foreach(children, i, c) {
		bool last = i + 1 == n;
		char sub[256];
		snprintf(sub, sizeof(sub), "%s%s", pfx, last ? "    " : "|   ");
		fprintf(out, "%s%schild ", pfx, last ? "`-- " : "|-- ");
		put_field(out, "", c, "binding", " -> flow ");
		put_field(out, "", c, "flow", ": ");
		put_field(out, "", c, "status", "");
		if (json_string_length(json_object_get(c, "why")))
			put_field(out, ": ", c, "why", "");
		fputc('\n', out);
		print_child_body(out, c, sub, run_at, depth);
	}
}

/* How many effects the tree's children made, and how many child Flows
 * there are in all. */
static void count_tree(json_t *children, size_t *effects, size_t *nodes, int depth)
{
	size_t i;
	json_t *c;
	json_array_foreach(children, i, c) {
		*effects += json_array_size(json_object_get(c, "effects"));
		++*nodes;
		if (depth + 1 < TREE_MAX_DEPTH)
			count_tree(json_object_get(c, "children"), effects, nodes, depth + 1);
	}
}

static void print_head(FILE *out, const char *packet, json_t *rec)
{
	json_t *t = json_object_get(rec, "termination");
	char head[1024];
	jig_why_headline(rec, packet, head, sizeof(head)); /* jig run's and jig why's first line too */
	fputs("packet ", out);
	jig_text_put(out, packet);
	fputs(": ", out);
	jig_text_put(out, head);
	/* A Run that did not succeed: its status and whole error (a stack
	 * trace as lines) below the headline. */
	const char *status = json_string_value(json_object_get(rec, "status"));
	if (!status || strcmp(status, "succeeded") != 0 || json_string_length(json_object_get(rec, "error"))) {
		put_field(out, "\n  status ", rec, "status", "");
		if (json_string_length(json_object_get(rec, "error"))) {
			fputs(": ", out);
			jig_text_put_lines(out, "    ", json_string_value(json_object_get(rec, "error")));
		}
	}
	put_field(out, "\n  plan ", rec, "plan_sha256", "\n");
	put_field(out, "  package ", rec, "package_sha256", "\n");
	if (int_field(rec, "started_ms") > 0) {
		print_started(out, "  ", int_field(rec, "started_ms"), 0);
		if (int_field(rec, "timeout_ms") > 0) {
			fprintf(out, "; deadline %lld ms", int_field(rec, "timeout_ms"));
			ms_human(out, int_field(rec, "timeout_ms"));
		}
		fputc('\n', out);
	}
	fputs("  ", out);
	print_termination(out, t);
	fprintf(out, ", cleanup %s\n", json_is_true(json_object_get(t, "cleanup_confirmed")) ? "confirmed" : "NOT confirmed");
	print_limits(out, "  ", json_object_get(json_object_get(json_object_get(rec, "scope"), "policy"), "limits"), t,
		     int_field(rec, "timeout_ms"));
	/* The command's own cleanup (the display's retirement), apart from
	 * the Run's: a Run that succeeded may still have left this unconfirmed. */
	json_t *cc = json_object_get(rec, "command_cleanup");
	const char *k;
	json_t *v;
	json_object_foreach(cc, k, v) {
		if (!json_is_string(v) || strcmp(k, "why") == 0)
			continue;
		fputs("  command cleanup ", out);
		jig_text_put(out, k);
		put_field(out, " ", cc, k, "");
		if (json_string_length(json_object_get(cc, "why")))
			put_field(out, ": ", cc, "why", "");
		fputc('\n', out);
	}
}

void jig_record_print(FILE *out, const char *packet, json_t *rec)
{
	print_head(out, packet, rec);
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(rec, "outputs"), i, o) {
		put_field(out, "  file ", o, "path", "");
		fprintf(out, "  %lld bytes", int_field(o, "size"));
		bytes_human(out, int_field(o, "size"));
		put_field(out, "  sha256 ", o, "sha256", "  verified\n");
	}
	json_t *kids = json_object_get(rec, "children");
	size_t own = json_array_size(json_object_get(rec, "effects")), theirs = 0, nodes = 0;
	count_tree(kids, &theirs, &nodes, 0);
	if (theirs) /* the root's own effects are not all the Run's */
		fprintf(out, "  effects: %zu of its own, %zu made by child Flows (under each child below)\n", own, theirs);
	json_array_foreach(json_object_get(rec, "effects"), i, o)
		print_effect(out, "  ", o);
	if (nodes)
		fprintf(out, "  child Flows: %zu called by %s, %zu in all\n", json_array_size(kids), "the root", nodes);
	print_tree(out, kids, "  ", int_field(rec, "started_ms"), 0);
	print_logs(out, "  ", rec);
}
