#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>

#include "../flow/plan.h"
#include "../flow/project.h"
#include "../publish/run_lease.h"
#include "../publish/sweep.h"
#include "../snapshot/trust.h"
#include "commands.h"

const char *jig_cli_key_summary(void)
{
	for (size_t i = 0; i < jig_trust_anchor_count; i++)
		if (jig_trust_anchors[i].development)
			return "trusts a DEVELOPMENT key: local build, not a distributor's";
	return "trusts distributor keys only";
}

int jig_cli_known_flows(const struct jig_project *p, const char *flow, struct jig_error *e)
{
	return jig_project_no_flow(p, flow, e);
}

void jig_cli_fail(int json, const struct jig_error *e)
{
	jig_progress_clear();
	if (json) {
		json_t *doc = json_pack("{s:s,s:i,s:s}", "schema", JIG_ERROR_SCHEMA, "exit", e->code,
					"error", e->msg);
		jig_cli_print_json(doc);
		json_decref(doc);
	}
	fprintf(stderr, "jig: %s\n", e->msg);
}

int jig_cli_parse(int argc, char **argv, struct jig_cli_args *a)
{
	a->project = ".";
	for (int i = 0; i < argc; i++) {
		const char *x = argv[i];
		if (strcmp(x, "--json") == 0)
			a->json = 1;
		else if (strcmp(x, "--project") == 0 && i + 1 < argc)
			a->project = argv[++i];
		else if (a->valued && strcmp(x, a->valued) == 0 && i + 1 < argc)
			a->value = argv[++i];
		else if (a->bare && strcmp(x, a->bare) == 0)
			a->flag = 1;
		else if (a->positional && x[0] != '-' && !*a->positional)
			*a->positional = x;
		else
			return jig_cli_usage(argc, argv, "%s: unknown argument \"%s\"; %s", a->cmd, x, a->usage);
	}
	return 0;
}

int jig_cli_usage(int argc, char **argv, const char *fmt, ...)
{
	struct jig_error e = {0};
	char msg[sizeof(e.msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jig_err(&e, JIG_E_USAGE, "%s", msg);
	int json = 0;
	for (int i = 0; i < argc; i++)
		json |= strcmp(argv[i], "--json") == 0;
	jig_cli_fail(json, &e);
	return JIG_E_USAGE;
}

int jig_cli_open_snapshot(struct jig_snapshot *s, int json)
{
	char libdir[PATH_MAX];
	struct jig_error e = {0};
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) < 0 ||
	    jig_snapshot_open_installed(s, libdir, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	return 0;
}

void jig_cli_verification_note(const struct jig_verifier *v)
{
	if (v->note[0] && !v->note_quiet)
		fprintf(stderr, "jig: note: %s; hashed afresh\n", v->note);
}

int jig_cli_verify_installation(const struct jig_snapshot *s, struct jig_verifier *v, struct jig_error *e)
{
	int r = jig_plan_verify_installation(s, v, NULL, e);
	jig_cli_verification_note(v);
	return r;
}

json_t *jig_cli_snapshot_json(const struct jig_snapshot *s)
{
	char sha[JIG_SHA256_HEX];
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, sha);
	return json_pack("{s:s,s:I,s:s,s:s,s:s,s:b,s:s}", "id", s->m.id, "sequence",
			 (json_int_t)s->m.sequence, "platform", s->m.platform, "manifest_sha256", sha,
			 "key_id", s->keyid, "development_key", s->anchor->development, "path",
			 s->dirpath);
}

void jig_cli_print_json(json_t *doc)
{
	jig_json_print(stdout, doc);
}


/* The systemd user manager can give jig a transient scope with Delegate=yes:
 * systemd-run --user --scope moves its own process into the new scope and
 * execs the command. Usable only if systemd-run is root's and the user's
 * bus socket (/run/user/UID/bus, found from the uid, not the environment)
 * is there. */
bool jig_cli_systemd_usable(char *why, size_t cap)
{
	struct stat st;
	if (stat(JIG_SYSTEMD_RUN, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, cap, "no root-owned %s", JIG_SYSTEMD_RUN);
		return false;
	}
	char bus[64];
	snprintf(bus, sizeof(bus), "/run/user/%u/bus", (unsigned)getuid());
	if (stat(bus, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != getuid()) {
		snprintf(why, cap, "no systemd user manager (%s is not the user's socket)", bus);
		return false;
	}
	return true;
}

/* Replaces this process: systemd-run ... -- <this jig> --in-transient-scope
 * CMD ARGS. Returns only if the exec failed. */
void jig_cli_reexec_in_transient_scope(const char *cmd, int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	char **v = calloc((size_t)argc + 16, sizeof(*v));
	if (!v)
		return;
	char unit[64];
	snprintf(unit, sizeof(unit), "jig-%d.scope", (int)getpid());
	size_t k = 0;
	v[k++] = JIG_SYSTEMD_RUN;
	v[k++] = "--user";
	v[k++] = "--scope";
	v[k++] = "--quiet";
	v[k++] = "--collect";
	v[k++] = "--unit";
	v[k++] = unit;
	v[k++] = "--property=Delegate=yes";
	v[k++] = "--";
	v[k++] = self;
	v[k++] = "--in-transient-scope";
	v[k++] = (char *)cmd;
	for (int i = 0; i < argc; i++)
		v[k++] = argv[i];
	fflush(NULL);
	execv(JIG_SYSTEMD_RUN, v);
	free(v);
}

static void sweep_say(void *ctx, const char *line)
{
	(void)ctx;
	jig_progress_clear();
	fputs("jig: ", stderr);
	jig_text_put(stderr, line);
	fputc('\n', stderr);
}

void jig_cli_sweep(void)
{
	struct jig_sweep sw = {.base = JIG_RUN_BASE, .say = sweep_say};
	jig_sweep(&sw);
}
