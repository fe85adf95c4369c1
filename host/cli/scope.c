/* jig scope plan|run: run any program in a scope described by a policy
 * file. The host validates the policy and prints its permission plan; the
 * platform's sandbox module enforces it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jig/sandbox.h>

#include "../policy/scope_policy.h"
#include "../sandbox/door.h"
#include "../util/fileio.h"
#include "../util/relay.h"
#include "commands.h"

#define INIT_FILE "libexec/jig-scope-init"
_Static_assert(JIG_POLICY_MAX_FDS <= JIG_SCOPE_MAX_FDS, "a policy's descriptors fit a scope");



static json_t *result_json(const struct jig_scope_policy *p, const struct jig_scope_result *r)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:b,s:b,s:b,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:s}",
			 "schema", "jig-scope-result/1", "scope", p->name, "policy_sha256", p->sha256,
			 "outcome", jig_scope_outcome_name(r->outcome), "exit_status", r->exit_status, "signal",
			 r->signal, "core_dumped", r->core_dumped != 0, "fenced", r->fenced != 0,
			 "cleanup_confirmed", r->cleanup_confirmed != 0, "launcher_reported",
			 r->launcher_reported != 0, "oom_kills", (json_int_t)r->oom_kills,
			 "pids_max_hits", (json_int_t)r->pids_max_hits, "memory_peak_bytes",
			 (json_int_t)r->memory_peak_bytes, "cpu_usec", (json_int_t)r->cpu_usec,
			 "cpu_throttled_usec", (json_int_t)r->cpu_throttled_usec, "wall_ms",
			 (json_int_t)r->wall_ms, "cgroup", r->cgroup, "error", r->error);
}

static int usage(void)
{
	fprintf(stderr, "usage: jig scope plan POLICY [--json]\n"
			"       jig scope run POLICY [--dry-run] [--json] [--record FILE] -- PROGRAM [ARGS...]\n");
	return JIG_E_USAGE;
}

int jig_cmd_scope(int argc, char **argv, int in_transient_scope)
{
	if (argc < 2)
		return usage();
	const char *sub = argv[0], *policy_path = argv[1], *record = NULL;
	int json = 0, dry = 0, i = 2;
	bool run = strcmp(sub, "run") == 0;
	if (!run && strcmp(sub, "plan") != 0)
		return usage();
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (run && strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (run && strcmp(argv[i], "--record") == 0 && i + 1 < argc)
			record = argv[++i];
		else {
			fprintf(stderr, "jig scope %s: unknown argument \"%s\"\n", sub, argv[i]);
			return usage();
		}
	}
	char **prog = i < argc ? argv + i + 1 : NULL;
	if (run && (!prog || !prog[0])) {
		fprintf(stderr, "jig scope run: missing -- PROGRAM\n");
		return usage();
	}

	struct jig_scope_policy p;
	struct jig_error e = {0};
	if (jig_scope_policy_load(policy_path, jig_caller_home(), run ? 0 : JIG_POLICY_SLOTS, &p, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (!run || dry) {
		if (json) {
			json_t *doc = jig_scope_plan_json(&p);
			if (run)
				json_object_set_new(doc, "argv", json_pack("[]"));
			for (size_t k = 0; run && prog[k]; k++)
				json_array_append_new(json_object_get(doc, "argv"), json_string(prog[k]));
			jig_cli_print_json(doc);
			json_decref(doc);
		} else {
			jig_scope_plan_print(&p, "", stdout);
			if (run) {
				printf("  program");
				for (size_t k = 0; prog[k]; k++) {
					fputc(' ', stdout);
					jig_text_put(stdout, prog[k]);
				}
				printf("\n  (dry run: nothing was started)\n");
			}
		}
		jig_scope_policy_free(&p);
		return 0;
	}

	int code = 0, init_fd = -1;
	struct jig_relay *relay = NULL;
	struct jig_snapshot s;
	bool have_snapshot = false;
	struct jig_sandbox sb;
	bool have_module = false;
	if (geteuid() == 0) {
		jig_err(&e, JIG_E_HOST, "refusing to run a scope as root; jig is a rootless tool, run it as an unprivileged user");
		goto fail;
	}
	if (jig_scope_policy_check_host(&p, &e) < 0)
		goto fail;
	char libdir[PATH_MAX];
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) < 0 ||
	    jig_snapshot_open_installed(&s, libdir, &e) < 0)
		goto fail;
	have_snapshot = true;
	if (jig_sandbox_open(&sb, &s, &e) < 0)
		goto fail;
	have_module = true;
	/* The launcher must be the snapshot's own, byte for byte; the
	 * descriptor that was hashed is the one bwrap binds. */
	init_fd = jig_snapshot_open_listed(&s, INIT_FILE, true, &e);
	if (init_fd < 0)
		goto fail;
	/* Standard streams reach the scope as pipes, never as the caller's
	 * terminal or files. */
	struct jig_scope_fd fds[JIG_SCOPE_MAX_FDS];
	memcpy(fds, p.fds, p.n_fds * sizeof(*fds));
	if (jig_relay_start(&relay, fds, p.n_fds, &e) < 0)
		goto fail;
	struct jig_scope sc;
	struct jig_scope_launch launch = {.init_fd = init_fd, .argv = (const char *const *)prog, .abort_fd = -1, .fds = fds};
	if (jig_scope_describe(&p, &launch, &sc, &e) < 0)
		goto fail;
	struct jig_scope_result r;
	int lr = jig_sandbox_launch(&sb, &sc, &r);
	jig_relay_finish(relay);
	relay = NULL;
	r.error[sizeof(r.error) - 1] = r.cgroup[sizeof(r.cgroup) - 1] = '\0';
	if (lr != JIG_MOD_OK && r.needs_delegation && !in_transient_scope) {
		char why[128];
		if (jig_cli_systemd_usable(why, sizeof(why))) {
			/* Host policy: a delegated subtree from systemd is as good as
			 * one the caller already had; everything is re-validated by the
			 * new process. */
			close(init_fd);
			init_fd = -1;
			jig_cli_reexec_in_transient_scope("scope", argc, argv);
			jig_err(&e, JIG_E_HOST, "scope %s refused: %s; and %s failed: %s", p.name, r.error,
				JIG_SYSTEMD_RUN, strerror(errno));
			goto fail;
		}
		jig_err(&e, JIG_E_HOST, "scope %s refused: %s; no transient scope either: %s", p.name, r.error, why);
		goto fail;
	}
	if (lr != JIG_MOD_OK) {
		jig_err(&e, JIG_E_HOST, "scope %s refused: %s%s", p.name, r.error[0] ? r.error : "launch failed",
			in_transient_scope ? " (even inside the transient systemd scope)" : "");
		goto fail;
	}
	json_t *doc = result_json(&p, &r);
	if (record) {
		char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		FILE *f = txt ? fopen(record, "we") : NULL;
		if (!f || fputs(txt, f) < 0 || fputc('\n', f) < 0) {
			fprintf(stderr, "jig: %s: cannot write the record: %s\n", record, strerror(errno));
			code = JIG_E_INTERNAL;
		}
		if (f && fclose(f) != 0)
			code = JIG_E_INTERNAL;
		free(txt);
	}
	if (json)
		jig_cli_print_json(doc);
	json_decref(doc);
	if (r.outcome != JIG_SCOPE_EXITED || !r.cleanup_confirmed) {
		char sig[160] = "";
		if (r.signal)
			jig_scope_signal_text(sig, sizeof(sig), ": the payload", r.signal, r.core_dumped, NULL);
		fprintf(stderr, "jig: scope %s: %s%s%s", p.name, jig_scope_outcome_name(r.outcome), sig, r.error[0] ? ": " : "");
		jig_text_put(stderr, r.error);
		fputc('\n', stderr);
	}
	if (code == 0) {
		switch (r.outcome) {
		case JIG_SCOPE_EXITED:
			code = r.exit_status;
			break;
		case JIG_SCOPE_SIGNALED:
		case JIG_SCOPE_CRASHED:
			code = 128 + r.signal;
			break;
		case JIG_SCOPE_TIMEOUT:
			code = 124;
			break;
		case JIG_SCOPE_OOM:
			code = 125;
			break;
		default:
			code = JIG_E_INTERNAL;
		}
		if (!r.cleanup_confirmed)
			code = JIG_E_INTERNAL;
	}
	close(init_fd);
	jig_sandbox_close(&sb);
	jig_snapshot_close(&s);
	jig_scope_policy_free(&p);
	return code;
fail:
	jig_relay_finish(relay);
	if (init_fd >= 0)
		close(init_fd);
	jig_cli_fail(json, &e);
	if (have_module)
		jig_sandbox_close(&sb);
	if (have_snapshot)
		jig_snapshot_close(&s);
	jig_scope_policy_free(&p);
	return e.code;
}
