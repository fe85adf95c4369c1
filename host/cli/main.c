/* jig: the outer command. Parses the command line and dispatches; each
 * command lives in its own file. */
#include <stdbool.h>
#include <stdio.h>

#include <jig/trace.h>
#include <string.h>

#include <jig/module.h>

#include "commands.h"
#include "../util/note.h"

static const char usage[] =
	"usage: jig <command> [options]\n"
	"\n"
	"commands:\n"
	"  help                     this text\n"
	"  modules list [--json]    modules of the installed snapshot (from its signed manifest)\n"
	"  modules verify [--json] [--verification strict|cached|fast]\n"
	"                           verify every file and load every module of the snapshot\n"
	"  host check [--json]      what this host can enforce; exit 0 only if jig can run Flows here\n"
	"  init [DIR] [--flow NAME] [--json]\n"
	"                           a new project (jig.json, a Flow, jig.d.ts, schemas) in an empty or new\n"
	"                           DIR (default .); --flow NAME adds a Flow to the project in DIR\n"
	"  review [--yes] [--json] [--full] [--verification cached|strict|fast] [--allow-resolution-network]\n"
	"      [PROJECT]\n"
	"                           capture the project, print its Plan (again: what changed, every new\n"
	"                           grant in full), admit it after yes (exit 5 if not; 0 if already admitted)\n"
	"      --allow-resolution-network\n"
	"                           a Flow without bun.lock may resolve its dependencies from the\n"
	"                           operator's registry (npm.json), for this review only\n"
	"  list [FLOW] [--json] [--project DIR]\n"
	"                           the project's Flows: inputs, outputs, effects, and whether the\n"
	"                           admitted Plan covers each (admitted, changed, not reviewed)\n"
	"  run FLOW --output DIR [--input NAME=PATH]... [--timeout N(ms|s|m|h)] [--expiry N(ms|s|m|h)]\n"
	"      [--project DIR] [--json] [--verification cached|strict|fast] [--display web]\n"
	"                           run an admitted Flow and publish its packet at DIR\n"
	"      --timeout            the Run's deadline from its acceptance, input capture included\n"
	"                           (default 30s, at most 24h)\n"
	"      --expiry             the command's absolute expiry from its start (at most 24h; default\n"
	"                           the deadline plus 2m, none with --display web): at it the Run is\n"
	"                           cancelled (SIGTERM) and within 250 ms ended (SIGKILL); a stop signal\n"
	"                           allows 60 s (never past the expiry); later signals extend nothing\n"
	"  lock [FLOW] [--project DIR] [--json] [--verification cached|strict|fast]\n"
	"                           write or refresh a Flow's bun.lock with the pinned Bun against the\n"
	"                           operator's registry (npm.json), in the installer scope; its Plan first\n"
	"  gc [--dry-run] [--project DIR] [--json]\n"
	"                           free what the admitted Plan and retained Run records do not reference\n"
	"                           in the project's Package/0 store (.jig/store); --dry-run frees nothing\n"
	"  inspect PACKET [--json] [--verification cached|strict|fast] [--display web]\n"
	"                           check a published packet against its record and show it\n"
	"  why [PACKET|FLOW] [--json] [--project DIR]\n"
	"                           explain a Run's refusals and failures (a packet's, or the last Run of\n"
	"                           FLOW, even one refused before it ran) and what would allow it\n"
	"  session [--provider ID] [--dry-run] [--json] [--docker|--browser|--voice|--release|--production|--maintenance]\n"
	"      [-- AGENT-ARGS...] | session --evidence [--out FILE]\n"
	"                           an interactive agent session in this repository, as the repository map\n"
	"                           (sessions.json) and the catalog allow; its plan first (docs/session.md)\n"
	"  scope plan POLICY [--json]\n"
	"                           validate a scope policy and print its permission plan\n"
	"  scope run [--terminal] POLICY [--dry-run] [--json] [--record FILE] -- PROGRAM [ARGS...]\n"
	"                           run PROGRAM in a contained scope (exit: its status; 124 timeout,\n"
	"                           125 out of memory, 128+n signal; the record keeps the real facts)\n"
	"\n"
	"options:\n"
	"  --help, -h               this text (after any command too)\n"
	"  --version                print the version and module ABI\n"
	"  --display web            show the Run or the packet in a browser, on 127.0.0.1 only\n"
	"  --verification MODE      how installed files are checked: cached (default; JIG_VERIFICATION),\n"
	"                           strict (hash every time) or fast (no freshness checks)\n"
	"\n"
	"exit status:\n"
	"  0                        ok\n"
	"  1                        internal error, or the Run failed (its packet says why)\n"
	"  2                        usage: a bad command line or bad input\n"
	"  3                        this host cannot enforce jig's containment (jig host check)\n"
	"  4                        snapshot or module refused, or the Plan is stale (review again)\n"
	"  5                        not admitted: the review was declined, or no --yes without a terminal\n"
	"                           (a Plan already admitted is 0)\n"
	"  6                        dependency preparation could not reach or use the registry\n"
	"                           (check the operator's npm.json; --allow-resolution-network)\n"
	"  scope run                the program's status; 124 timeout, 125 out of memory, 128+n signal\n"
	"\n"
	"files:\n"
	"  ~/.config/jig/           the operator's configuration: npm.json, http.json, agents.json\n"
	"                           (XDG_CONFIG_HOME); sessions.json (always the passwd home's)\n"
	"  PROJECT/jig.json         the project; PROJECT/.jig its private state (store, admission)\n"
	"\n"
	"see docs/cli.md and docs/flow-format.md; man jig\n";

static int want_json(int argc, char **argv, int from, const char *cmd)
{
	int json = 0;
	for (int i = from; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else {
			jig_cli_usage(argc, argv, "%s: unknown argument \"%s\"; see 'jig help'", cmd, argv[i]);
			return -1;
		}
	}
	return json;
}

#if defined(__SANITIZE_ADDRESS__)
/* The sanitizer build only: LeakSanitizer's exit-time scan faults on the
 * dynamic TLS of a module that was unloaded (the http module's libcurl and
 * OpenSSL: "Tracer caught signal 11"), unless it leaves __tls_get_addr
 * alone. ASAN_OPTIONS from the environment still add to this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "intercept_tls_get_addr=0";
}
#endif

int main(int argc, char **argv)
{
	JIG_TRACE_POINT("main");
	jig_note_to(stderr); /* the rooms' notes (util/note.h): only host/cli prints */
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	/* Set only by jig itself when it re-executes under a transient systemd
	 * scope (see scope.c); it allows no second attempt. */
	int in_transient_scope = 0;
	if (strcmp(argv[1], "--in-transient-scope") == 0 && argc >= 3) {
		in_transient_scope = 1;
		argv++;
		argc--;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("jig %s (module ABI %d.%d, %s)\n", JIG_VERSION, JIG_ABI_MAJOR, JIG_ABI_MINOR,
		       jig_cli_key_summary());
		return 0;
	}
	/* help, or --help or -h anywhere before a scope's "-- PROGRAM": this text. */
	bool help = strcmp(cmd, "help") == 0;
	for (int i = 1; !help && i < argc && strcmp(argv[i], "--") != 0; i++)
		help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
	if (help) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "modules") == 0 && argc >= 3) {
		const char *sub = argv[2];
		if (strcmp(sub, "verify") == 0) {
			int json = 0;
			const char *verification = NULL;
			for (int i = 3; i < argc; i++) {
				if (strcmp(argv[i], "--json") == 0)
					json = 1;
				else if (strcmp(argv[i], "--verification") == 0 && i + 1 < argc)
					verification = argv[++i];
				else {
					return jig_cli_usage(argc, argv, "modules verify: unknown argument \"%s\"; see 'jig help'", argv[i]);
				}
			}
			return jig_cmd_modules_verify(json, verification);
		}
		int json = want_json(argc, argv, 3, "modules");
		if (json < 0)
			return 2;
		if (strcmp(sub, "list") == 0)
			return jig_cmd_modules_list(json);
	}
	if (strcmp(cmd, "host") == 0 && argc >= 3 && strcmp(argv[2], "check") == 0) {
		int json = want_json(argc, argv, 3, "host check");
		if (json < 0)
			return 2;
		return jig_cmd_host_check(json);
	}
	if (strcmp(cmd, "inspect") == 0)
		return jig_cmd_inspect(argc - 2, argv + 2);
	if (strcmp(cmd, "why") == 0)
		return jig_cmd_why(argc - 2, argv + 2);
	if (strcmp(cmd, "init") == 0)
		return jig_cmd_init(argc - 2, argv + 2);
	if (strcmp(cmd, "list") == 0)
		return jig_cmd_list(argc - 2, argv + 2);
	if (strcmp(cmd, "run") == 0)
		return jig_cmd_run(argc - 2, argv + 2, in_transient_scope);
	if (strcmp(cmd, "review") == 0)
		return jig_cmd_review(argc - 2, argv + 2);
	if (strcmp(cmd, "lock") == 0)
		return jig_cmd_lock(argc - 2, argv + 2);
	if (strcmp(cmd, "gc") == 0)
		return jig_cmd_gc(argc - 2, argv + 2);
	if (strcmp(cmd, "scope") == 0)
		return jig_cmd_scope(argc - 2, argv + 2, in_transient_scope);
	if (strcmp(cmd, "session") == 0)
		return jig_cmd_session(argc - 2, argv + 2, in_transient_scope);
	return jig_cli_usage(argc, argv, "unknown command \"%s%s%s\"; see 'jig help'", cmd, argc >= 3 ? " " : "",
			     argc >= 3 ? argv[2] : "");
}
