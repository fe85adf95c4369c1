/* jig host check: load the platform's sandbox module, ask it what this host
 * can enforce, and decide. The module reports facts; the decision (every
 * mechanism is required, and jig runs rootless) is made here. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jig/sandbox.h>

#include "../sandbox/door.h"
#include "commands.h"

int jig_cmd_host_check(int json)
{
	struct jig_snapshot s;
	int r = jig_cli_open_snapshot(&s, json);
	if (r)
		return r;
	struct jig_sandbox sb;
	struct jig_error e = {0};
	if (jig_sandbox_open(&sb, &s, &e) < 0) {
		jig_cli_fail(json, &e);
		jig_snapshot_close(&s);
		return e.code;
	}
	struct jig_probe_result res;
	if (jig_sandbox_probe(&sb, &res, &e) < 0) {
		jig_cli_fail(json, &e);
		jig_sandbox_close(&sb);
		jig_snapshot_close(&s);
		return e.code;
	}

	/* Host policy: jig is a rootless tool, so root is not a supported caller. */
	struct jig_probe_item rootless = {.name = "rootless"};
	rootless.status = geteuid() != 0 ? JIG_PROBE_AVAILABLE : JIG_PROBE_MISSING;
	snprintf(rootless.reason, sizeof(rootless.reason), "%s",
		 geteuid() != 0 ? "running as an unprivileged user"
				: "running as root; jig runs Flows as an unprivileged user, run it as one");

	/* Host policy: without a delegated cgroup, jig asks the systemd user
	 * manager for a transient scope with Delegate=yes (jig run, jig scope
	 * run); where there is one, delegation is not a problem. */
	char nosystemd[128] = "";
	bool systemd = jig_cli_systemd_usable(nosystemd, sizeof(nosystemd));
	bool via_systemd = false;
	uint32_t np = 0;
	for (uint32_t i = 0; i < res.problem_count; i++) {
		struct jig_host_problem *p = &res.problems[i];
		if (strcmp(p->id, "no-delegation") == 0 && systemd) {
			via_systemd = true;
			continue;
		}
		if (strcmp(p->id, "no-delegation") == 0) {
			size_t n = strlen(p->what);
			snprintf(p->what + n, sizeof(p->what) - n, ", and %s", nosystemd);
		}
		res.problems[np++] = *p;
	}
	res.problem_count = np;

	int supported = rootless.status == JIG_PROBE_AVAILABLE && np == 0;
	for (uint32_t i = 0; i < res.count; i++) {
		struct jig_probe_item *it = &res.items[i];
		it->name[sizeof(it->name) - 1] = it->path[sizeof(it->path) - 1] = '\0';
		it->version[sizeof(it->version) - 1] = it->reason[sizeof(it->reason) - 1] = '\0';
		if (via_systemd && strncmp(it->name, "cgroup2.", 8) == 0 && it->status != JIG_PROBE_AVAILABLE) {
			it->status = JIG_PROBE_AVAILABLE;
			snprintf(it->reason, sizeof(it->reason),
				 "not delegated here; jig asks the systemd user manager for a transient scope with Delegate=yes");
		}
		supported &= it->status == JIG_PROBE_AVAILABLE;
	}

	char sha[JIG_SHA256_HEX];
	jig_hex(sb.h.sha256, JIG_SHA256_LEN, sha);
	if (json) {
		json_t *mech = json_array();
		for (uint32_t i = 0; i <= res.count; i++) {
			const struct jig_probe_item *it = i == 0 ? &rootless : &res.items[i - 1];
			json_array_append_new(mech, json_pack("{s:s,s:b,s:s,s:s,s:s}", "name", it->name,
							      "available", it->status == JIG_PROBE_AVAILABLE,
							      "path", it->path, "version", it->version,
							      "reason", it->reason));
		}
		json_t *probs = json_array();
		for (uint32_t i = 0; i < res.problem_count; i++)
			json_array_append_new(probs, json_pack("{s:s,s:s,s:s}", "id", res.problems[i].id, "what",
							       res.problems[i].what, "remedy", res.problems[i].remedy));
		json_t *doc = json_pack("{s:s,s:b,s:s,s:{s:s,s:s},s:o,s:o,s:o}", "schema", JIG_HOST_CHECK_SCHEMA,
					"supported", supported, "platform", jig_host_platform(),
					"module", "name", JIG_SANDBOX_MODULE, "sha256", sha,
					"snapshot", jig_cli_snapshot_json(&s), "mechanisms", mech, "problems", probs);
		jig_cli_print_json(doc);
		json_decref(doc);
	} else {
		printf("host %s, sandbox module %s (sha256 %s)\n", jig_host_platform(),
		       JIG_SANDBOX_MODULE, sha);
		for (uint32_t i = 0; i <= res.count; i++) {
			const struct jig_probe_item *it = i == 0 ? &rootless : &res.items[i - 1];
			/* The module's reason and version text, shown inert. */
			printf("  %-9s %-18s ", it->status == JIG_PROBE_AVAILABLE ? "ok" : "MISSING", it->name);
			jig_text_put(stdout, it->reason);
			if (it->version[0]) {
				fputs(" [", stdout);
				jig_text_put(stdout, it->version);
				fputc(']', stdout);
			}
			fputc('\n', stdout);
		}
		for (uint32_t i = 0; i < res.problem_count; i++) {
			const struct jig_host_problem *p = &res.problems[i];
			printf("%s", i == 0 ? "problems:\n" : "");
			fputs("  ", stdout);
			jig_text_put(stdout, p->id);
			fputs(": ", stdout);
			jig_text_put(stdout, p->what);
			fputs("\n    to fix: ", stdout);
			jig_text_put(stdout, p->remedy);
			fputc('\n', stdout);
		}
		printf(supported ? "this host can run Flows\n"
				 : "this host cannot enforce jig's containment: jig refuses to run Flows here\n");
	}
	jig_sandbox_close(&sb);
	jig_snapshot_close(&s);
	return supported ? 0 : JIG_E_HOST;
}
