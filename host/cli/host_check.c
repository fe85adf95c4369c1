/* jig host check: load the platform's sandbox module, ask it what this host
 * can enforce, and decide. The module reports facts; the decision (every
 * mechanism is required, and jig runs rootless) is made here. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jig/sandbox.h>

#include "../snapshot/loader.h"
#include "commands.h"

static const char *sandbox_module_name(void)
{
#if defined(__linux__)
	return "sandbox-linux";
#else
	return "sandbox-darwin";
#endif
}

int jig_cmd_host_check(int json)
{
	struct jig_snapshot s;
	int r = jig_cli_open_snapshot(&s, json);
	if (r)
		return r;
	struct jig_module_handle h;
	struct jig_error e = {0};
	if (jig_module_load(&s, sandbox_module_name(), JIG_KIND_SANDBOX, &h, &e) < 0) {
		jig_cli_fail(json, &e);
		jig_snapshot_close(&s);
		return e.code;
	}
	const struct jig_sandbox_ops *ops = h.desc->ops;
	struct jig_probe_result res;
	memset(&res, 0, sizeof(res));
	res.struct_size = sizeof(res);
	if (!ops->probe || ops->probe(h.state, &res) != JIG_MOD_OK || res.count > JIG_PROBE_MAX_ITEMS) {
		jig_err(&e, JIG_E_INTERNAL, "module %s: probe failed", sandbox_module_name());
		jig_cli_fail(json, &e);
		jig_module_unload(&h);
		jig_snapshot_close(&s);
		return e.code;
	}

	/* Host policy: jig is a rootless tool, so root is not a supported caller. */
	struct jig_probe_item rootless = {.name = "rootless"};
	rootless.status = geteuid() != 0 ? JIG_PROBE_AVAILABLE : JIG_PROBE_MISSING;
	snprintf(rootless.reason, sizeof(rootless.reason), "%s",
		 geteuid() != 0 ? "running as an unprivileged user"
				: "running as root; jig runs Flows as an unprivileged user, run it as one");

	int supported = rootless.status == JIG_PROBE_AVAILABLE;
	for (uint32_t i = 0; i < res.count; i++) {
		struct jig_probe_item *it = &res.items[i];
		it->name[sizeof(it->name) - 1] = it->path[sizeof(it->path) - 1] = '\0';
		it->version[sizeof(it->version) - 1] = it->reason[sizeof(it->reason) - 1] = '\0';
		supported &= it->status == JIG_PROBE_AVAILABLE;
	}

	char sha[JIG_SHA256_HEX];
	jig_hex(h.sha256, JIG_SHA256_LEN, sha);
	if (json) {
		json_t *mech = json_array();
		for (uint32_t i = 0; i <= res.count; i++) {
			const struct jig_probe_item *it = i == 0 ? &rootless : &res.items[i - 1];
			json_array_append_new(mech, json_pack("{s:s,s:b,s:s,s:s,s:s}", "name", it->name,
							      "available", it->status == JIG_PROBE_AVAILABLE,
							      "path", it->path, "version", it->version,
							      "reason", it->reason));
		}
		json_t *doc = json_pack("{s:s,s:b,s:s,s:{s:s,s:s},s:o,s:o}", "schema", "jig-host-check/1",
					"supported", supported, "platform", jig_host_platform(),
					"module", "name", sandbox_module_name(), "sha256", sha,
					"snapshot", jig_cli_snapshot_json(&s), "mechanisms", mech);
		jig_cli_print_json(doc);
		json_decref(doc);
	} else {
		printf("host %s, sandbox module %s (sha256 %s)\n", jig_host_platform(),
		       sandbox_module_name(), sha);
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
		printf(supported ? "this host can run Flows\n"
				 : "this host cannot enforce jig's containment: jig refuses to run Flows here\n");
	}
	jig_module_unload(&h);
	jig_snapshot_close(&s);
	return supported ? 0 : JIG_E_HOST;
}
