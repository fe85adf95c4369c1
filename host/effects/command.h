/* Project Commands (issue 17, docs/commands.md): the coordinator's half.
 * A Flow supplies a small program's text per call ({"op":"command",
 * "route", "files", "entry", "args"?, "stdin"?}); jig checks every cap
 * before anything is written, writes the files into a fresh private
 * directory of the run directory, and runs them with the installed Bun in
 * the route's own keyless, offline scope (catalog kind "command"), stdin
 * from a sealed memfd. A collector thread here, outside the scope, reads
 * stdout and stderr, keeps the first JIG_COMMAND_RETAIN bytes of each and
 * counts and discards the rest, so the command never blocks on a full
 * pipe. The record keeps the files' digest and sizes, never their bytes.
 *
 * What comes back (an exit status and output) does not prove what the
 * command did: it is the candidate's own account. */
#ifndef JIG_EFFECTS_COMMAND_H
#define JIG_EFFECTS_COMMAND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "flow/plan.h"
#include "flow/project.h"
#include "sandbox/door.h"

struct jig_command_effect_env {
	struct jig_sandbox *sandbox;
	const struct jig_plan *plan; /* the routes' composed scopes */
	int init_fd;		     /* the trusted launcher */
	int abort_fd;		     /* readable when the Run ends: the command is fenced */
	int companion_pid;	     /* see struct jig_scope */
	const char *run_dir;	     /* "@run/" binds: the command's files and the attachments */
	int rundir;		     /* the same, open */
};

/* Runs the Run/0 operation op for Flow f. Always sets *reply (for the
 * Flow) and *evidence (for the record). *interrupted is the stop signal
 * the command's supervisor took, or 0. */
void jig_command_effect(const struct jig_command_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
			json_t **evidence, int *interrupted);

/* What the collector keeps of one of the command's streams (the command's
 * own bytes, untrusted): the first JIG_COMMAND_RETAIN in kept (a buffer of
 * that size), and how many came. */
struct jig_command_stream {
	int fd;
	unsigned char *kept;
	size_t n_kept;
	uint64_t total;
};
void jig_command_keep(struct jig_command_stream *s, const unsigned char *buf, size_t n);

/* A command that ran (res->outcome one of exited, signaled, crashed,
 * timeout, oom, or failed after its payload started: "killed"): its measurements into ev, and the Flow's reply (outcome,
 * exit code or signal, the kept bytes as base64, the counts). Fuzzed on
 * their own with the streams' bytes (fuzz/). */
void jig_command_measure(json_t *ev, const struct jig_scope_result *res, const struct jig_command_stream out[2],
			 bool confirmed);
json_t *jig_command_reply(json_t *ev, const struct jig_scope_result *res, const struct jig_command_stream out[2]);

#endif
