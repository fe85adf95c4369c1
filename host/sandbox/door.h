/* The host's door to the sandbox kind: the platform's sandbox module,
 * opened once from the installed snapshot, its ops checked once. No other
 * file of the host names a backend. */
#ifndef JIG_SANDBOX_DOOR_H
#define JIG_SANDBOX_DOOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <jig/sandbox.h>

#include "snapshot/loader.h"
#include "snapshot/snapshot.h"
#include "util/error.h"

/* The platform's sandbox module's name comes from the build
 * (JIG_SANDBOX_MODULE, CMakeLists.txt); its file in a snapshot is
 * JIG_SANDBOX_MODULE_FILE (flow/plan.h, which pins it). */
#ifndef JIG_SANDBOX_MODULE
#error "JIG_SANDBOX_MODULE is defined by the build (CMakeLists.txt)"
#endif

struct jig_sandbox {
	struct jig_module_handle h;
	const struct jig_sandbox_ops *ops;
};

/* Loads and checks the module (probe, launch and recover present). */
int jig_sandbox_open(struct jig_sandbox *sb, const struct jig_snapshot *s, struct jig_error *e);
void jig_sandbox_close(struct jig_sandbox *sb);

int jig_sandbox_probe(struct jig_sandbox *sb, struct jig_probe_result *out, struct jig_error *e);
/* Starts the scope and returns when it is fenced (res is complete). */
int jig_sandbox_launch(struct jig_sandbox *sb, const struct jig_scope *sc, struct jig_scope_result *res);
/* Fences and removes what a lost coordinator (pid) left. */
int jig_sandbox_recover(struct jig_sandbox *sb, pid_t pid, char *err, size_t cap);
/* The abandoned-run sweep's part (the coordinator pid is proved gone):
 * removes its empty cgroups beside where, never kills; removed gets one
 * line each. JIG_MOD_OK when none is left, else err says what was kept. */
int jig_sandbox_sweep(struct jig_sandbox *sb, pid_t pid, const char *where, char *removed, size_t removed_len, char *err,
		      size_t cap);

/* The host's stop request for a launch (struct jig_scope.interrupt_fd):
 * SIGINT, SIGTERM and SIGHUP blocked in the calling thread (the previous
 * mask in *saved) and a signalfd for them; -1 on failure. */
int jig_sandbox_interrupt_open(sigset_t *saved);
void jig_sandbox_interrupt_close(int fd, const sigset_t *saved);

/* enum jig_scope_outcome as a word for records and messages. */
const char *jig_scope_outcome_name(uint32_t outcome);
/* Whether the payload started (ABI 1.4, enum jig_scope_start): 1, 0, or
 * -1 when the module does not say (built before 1.4). */
int jig_scope_payload_started(const struct jig_scope_result *r);
/* The same for records and results: true, false or null. */
json_t *jig_scope_payload_started_json(const struct jig_scope_result *r);
/* A scope that failed after its payload started: killed from outside
 * while it ran (its bwrap or launcher gone), not one that never ran. The
 * host's own stops (abort, interrupt) are not this. */
bool jig_scope_killed_while_running(const struct jig_scope_result *r);
/* "WHO was killed by SIGSEGV (signal 11, core dumped)[; ALSO]". */
void jig_scope_signal_text(char *buf, size_t cap, const char *who, int sig, int core, const char *also);

#endif
