/* jig run FLOW: parse, hand the Run to the outer command (run/outer.h)
 * whose coordinator runs the spine (run/flow_run.h), print. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../flow/timeout.h"
#include "../run/flow_run.h"
#include "../run/outer.h"
#include "../packet/why.h"
#include "../util/text.h"
#include "commands.h"

#define USAGE "usage: jig run FLOW --output DIR [--input NAME=PATH]... [--timeout N(ms|s|m|h)] [--expiry N(ms|s|m|h)] [--project DIR] [--json] [--verification cached|strict|fast] [--display web]"

struct invocation {
	struct jig_run_request req;
	int json;
	uint64_t explicit_expiry_ms; /* --expiry, 0 if not given */
	int expiry_arg;		     /* argv index of its value, -1 if not given */
};

static void free_inputs(struct jig_run_request *req)
{
	for (size_t k = 0; k < req->n_inputs; k++)
		free((char *)req->inputs[k].name);
}

static int parse(int argc, char **argv, struct invocation *inv, struct jig_error *e)
{
	struct jig_run_request *req = &inv->req;
	req->project = ".";
	req->timeout_ms = JIG_RUN_TIMEOUT_DEFAULT_MS;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0)
			inv->json = 1;
		else if (strcmp(a, "--output") == 0 && i + 1 < argc)
			req->output = argv[++i];
		else if (strcmp(a, "--project") == 0 && i + 1 < argc)
			req->project = argv[++i];
		else if (strcmp(a, "--verification") == 0 && i + 1 < argc)
			req->verification = argv[++i];
		else if (strcmp(a, "--display") == 0 && i + 1 < argc) {
			if (strcmp(argv[++i], "web") != 0)
				return jig_err(e, JIG_E_USAGE, "--display \"%s\": the one display is \"web\"", argv[i]);
			req->display = true;
			req->display_to = stdout; /* the link (host/cli prints: decision 323) */
		}
		else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
			if (jig_parse_timeout(argv[++i], &req->timeout_ms, e) < 0)
				return -JIG_E_USAGE;
		} else if (strcmp(a, "--expiry") == 0 && i + 1 < argc) {
			if (jig_parse_expiry(argv[++i], &inv->explicit_expiry_ms, e) < 0)
				return -JIG_E_USAGE;
			inv->expiry_arg = i;
		} else if (strcmp(a, "--input") == 0 && i + 1 < argc) {
			char *spec = argv[++i], *eq = strchr(spec, '=');
			if (!eq || eq == spec || !eq[1] || req->n_inputs >= JIG_MAX_INPUTS)
				return jig_err(e, JIG_E_USAGE, "--input \"%s\": expected NAME=PATH (at most %d)", spec, JIG_MAX_INPUTS);
			char *name = strndup(spec, (size_t)(eq - spec));
			if (!name)
				return jig_err(e, JIG_E_INTERNAL, "out of memory");
			req->inputs[req->n_inputs++] = (struct jig_run_input){name, eq + 1};
			for (size_t k = 0; k + 1 < req->n_inputs; k++)
				if (strcmp(req->inputs[k].name, name) == 0)
					return jig_err(e, JIG_E_USAGE, "--input %s given twice", name);
		} else if (a[0] != '-' && !req->flow)
			req->flow = a;
		else
			return jig_err(e, JIG_E_USAGE, "unknown argument \"%s\"; %s", a, USAGE);
	}
	if (!req->flow || !req->output)
		return jig_err(e, JIG_E_USAGE, "%s", USAGE);
	if (req->display && inv->json)
		return jig_err(e, JIG_E_USAGE, "--display web shows the Run in a browser, --json prints it: choose one");
	req->expiry_ms = jig_run_expiry_ms(req->timeout_ms, inv->explicit_expiry_ms, req->display);
	return 0;
}

/* The coordinator (a child of the outer command): the Run, then what it
 * printed. Its exit status is the command's. */
static int coordinator(void *arg, const char *run_dir)
{
	struct invocation *inv = arg;
	inv->req.run_dir = run_dir;
	inv->req.outer_pid = (int)getppid(); /* the outer command (PR_SET_PDEATHSIG ties us to it) */
	struct jig_run_outcome out;
	struct jig_error e = {0};
	int rc = jig_run_flow(&inv->req, &out, &e);
	jig_progress_clear();
	if (rc < 0) {
		jig_cli_fail(inv->json, &e);
		return e.code;
	}
	if (out.needs_transient_scope)
		return JIG_RUN_NEEDS_TRANSIENT_SCOPE;
	if (inv->json)
		jig_json_print(stdout, out.record);
	else {
		/* The headline (jig inspect's and jig why's first line too),
		 * then the Flow's own words as lines when the headline does not
		 * hold them all: shown inert. */
		const char *why = json_string_value(json_object_get(out.record, "error"));
		char head[1024];
		jig_why_headline(out.record, inv->req.output, head, sizeof(head));
		jig_why_put_run_line(stderr, head, inv->req.output);
		jig_outer_reported(); /* the outer command must not print it again */
		if (why && why[0] && !strstr(head, why)) {
			fputs("  error: ", stderr);
			jig_text_put_lines(stderr, "    ", why);
			fputc('\n', stderr);
		}
	}
	/* The display's retirement failed: the Run's facts stand, the
	 * command's own cleanup did not finish (docs/display.md). */
	json_t *cc = json_object_get(out.record, "command_cleanup");
	if (cc && !inv->json) {
		fputs("jig: command cleanup failed: display: ", stderr);
		jig_text_put(stderr, json_string_value(json_object_get(cc, "why")));
		fputc('\n', stderr);
	}
	json_decref(out.record);
	return out.succeeded && !cc ? 0 : 1;
}

/* Into the transient scope with what is left of the expiry (it is the
 * command's, not one process's): --expiry Nms replaced or added. */
static void reexec(const struct invocation *inv, int argc, char **argv, long long expiry_at)
{
	char left[32], **v = calloc((size_t)argc + 3, sizeof(*v));
	if (!v)
		return;
	long long ms = expiry_at - jig_outer_now_ms();
	snprintf(left, sizeof(left), "%lldms", ms > 0 ? ms : 1);
	int n = 0;
	for (int i = 0; i < argc; i++)
		v[n++] = inv->req.expiry_ms && i == inv->expiry_arg ? left : argv[i];
	if (inv->req.expiry_ms && inv->expiry_arg < 0) {
		v[n++] = "--expiry";
		v[n++] = left;
	}
	jig_cli_reexec_in_transient_scope("run", n, v);
	free(v);
}

int jig_cmd_run(int argc, char **argv, int in_transient_scope)
{
	long long started = jig_outer_now_ms(); /* the expiry counts from here */
	struct invocation inv = {.expiry_arg = -1};
	struct jig_error e = {0};
	int code = parse(argc, argv, &inv, &e);
	if (code < 0) {
		for (int i = 0; i < argc; i++)
			if (strcmp(argv[i], "--json") == 0)
				inv.json = 1;
		jig_cli_fail(inv.json, &e);
		free_inputs(&inv.req);
		return e.code;
	}
	jig_cli_sweep(); /* what abandoned Runs left (docs/reliability.md) */
	if (!inv.json)
		jig_progress_start(STDERR_FILENO); /* on a terminal only (util/progress.h) */
	char why[128] = "";
	if (!in_transient_scope && !(inv.req.may_need_transient_scope = jig_cli_systemd_usable(why, sizeof(why))))
		inv.req.no_transient_scope_why = why;
	struct jig_outer_bounds b = {.expiry_at_ms = inv.req.expiry_ms ? started + (long long)inv.req.expiry_ms : -1};
	code = jig_run_outer(inv.req.output, &b, coordinator, &inv, &e);
	free_inputs(&inv.req);
	char head[1024]; /* a coordinator killed after it published: its headline first */
	if (code < 0 && !inv.json && !b.reported && jig_why_packet_headline(inv.req.output, head, sizeof(head)) == 0)
		jig_why_put_run_line(stderr, head, inv.req.output);
	if (code < 0) {
		jig_cli_fail(inv.json, &e);
		return e.code;
	}
	if (b.expired && !inv.json) { /* it settled within the grace: its record says cancelled */
		jig_progress_clear();
		fprintf(stderr, "jig: the command's %llu ms expiry passed (", (unsigned long long)inv.req.expiry_ms);
		if (inv.explicit_expiry_ms)
			fputs("--expiry", stderr);
		else
			fprintf(stderr, "the default: the Run's deadline plus %llu s", JIG_EXPIRY_DEFAULT_MARGIN_MS / 1000);
		fputs("): the Run was cancelled\n", stderr);
	}
	if (code == JIG_RUN_NEEDS_TRANSIENT_SCOPE && !in_transient_scope) {
		/* Outer and (new) coordinator move into a systemd scope with
		 * Delegate=yes; everything is checked again there. */
		reexec(&inv, argc, argv, b.expiry_at_ms);
		jig_err(&e, JIG_E_HOST, "%s failed: %s; no delegated cgroup, so nothing was run", JIG_SYSTEMD_RUN, strerror(errno));
		jig_cli_fail(inv.json, &e);
		return e.code;
	}
	return code;
}
