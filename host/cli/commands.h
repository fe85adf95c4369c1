#ifndef JIG_CLI_COMMANDS_H
#define JIG_CLI_COMMANDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../snapshot/snapshot.h"
#include "../snapshot/verify.h"
#include "../util/json.h"
#include "../util/progress.h"
#include "../util/text.h"

int jig_cmd_modules_list(int json);
/* verification NULL: JIG_VERIFICATION, else strict (this command checks everything). */
int jig_cmd_modules_verify(int json, const char *verification);
int jig_cmd_host_check(int json);
int jig_cmd_review(int argc, char **argv);
int jig_cmd_run(int argc, char **argv, int in_transient_scope);
int jig_cmd_inspect(int argc, char **argv);
int jig_cmd_list(int argc, char **argv);
int jig_cmd_why(int argc, char **argv);
int jig_cmd_scope(int argc, char **argv, int in_transient_scope);
int jig_cmd_session(int argc, char **argv, int in_transient_scope);
int jig_cmd_lock(int argc, char **argv);
int jig_cmd_gc(int argc, char **argv);
int jig_cmd_init(int argc, char **argv);

/* Shared by the commands. */
struct jig_project;
/* The one "no such Flow" refusal: "project P has no Flow \"x\"; its Flows:
 * a, b" (jig_project_no_flow); returns -JIG_E_USAGE. run, list, why, lock
 * and every command taking a FLOW use it. */
int jig_cli_known_flows(const struct jig_project *p, const char *flow, struct jig_error *e);
const char *jig_cli_key_summary(void);
/* Opens the installed snapshot; on failure prints the one-line error. */
int jig_cli_open_snapshot(struct jig_snapshot *s, int json);
/* Verifies the installed files Flows use by v's mode (and says so when the
 * cache was ignored). */
int jig_cli_verify_installation(const struct jig_snapshot *s, struct jig_verifier *v, struct jig_error *e);
/* A note on stderr when v ignored the stored cache. */
void jig_cli_verification_note(const struct jig_verifier *v);
json_t *jig_cli_snapshot_json(const struct jig_snapshot *s);
void jig_cli_print_json(json_t *doc);
void jig_cli_fail(int json, const struct jig_error *e);
/* A usage error as one line (jig-error/1 too when argv has --json);
 * returns JIG_E_USAGE. */
int jig_cli_usage(int argc, char **argv, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The arguments list, why, lock and gc share: --json, --project DIR (default
 * "."), at most one positional (when positional is non-NULL), and one flag
 * of the command's own: with a value (valued) or bare (bare, counted in
 * flag). Anything else is the usage error "CMD: unknown argument"; returns
 * 0 or JIG_E_USAGE (printed). */
struct jig_cli_args {
	const char *cmd, *usage;
	const char *valued, *bare; /* the command's own flag, or NULL */
	const char **positional;   /* NULL: the command takes none */
	const char *project, *value;
	int json, flag;
};
int jig_cli_parse(int argc, char **argv, struct jig_cli_args *a);

/* The abandoned-run sweep (publish/sweep.h) over /tmp, each line on stderr;
 * every command that launches scopes calls it first. */
void jig_cli_sweep(void);

/* A transient Delegate=yes scope from the systemd user manager, when the
 * caller has no delegated cgroup (docs/scope-policy.md, "Delegation"). */
#define JIG_SYSTEMD_RUN "/usr/bin/systemd-run"

/* The schemas of the commands' --json output (docs/cli.md). */
#define JIG_MODULES_SCHEMA "jig-modules/1"
#define JIG_MODULES_VERIFY_SCHEMA "jig-modules-verify/1"
#define JIG_INIT_SCHEMA "jig-init/1"
#define JIG_GC_SCHEMA "jig-gc/1"
#define JIG_REVIEW_SCHEMA "jig-review/1"
#define JIG_LIST_SCHEMA "jig-list/1"
#define JIG_INSPECT_SCHEMA "jig-inspect/1"
#define JIG_LOCK_SCHEMA "jig-lock/1"
#define JIG_HOST_CHECK_SCHEMA "jig-host-check/1"
#define JIG_SCOPE_RESULT_SCHEMA "jig-scope-result/1"
bool jig_cli_systemd_usable(char *why, size_t cap);
/* Replaces this process with systemd-run ... -- jig --in-transient-scope CMD
 * ARGS; returns only if the exec failed. */
void jig_cli_reexec_in_transient_scope(const char *cmd, int argc, char **argv);

#endif
