/* One Flow run, the coordinator's side: the short spine
 *
 *   admit -> prepare -> launch || Run/0 -> collect -> publish
 *
 * admit:   the Plan rebuilt from the project and the installed snapshot
 *          must be the admitted one (else "review again", nothing runs);
 * prepare: the package materialised from the store and the attachments
 *          captured into the outer command's private run directory;
 * launch:  the Plan's composed scope for this Flow, its slots filled, run
 *          by the sandbox door while a thread reads Run/0;
 * collect: after fencing, final validation of the output into a private
 *          stage next to the destination;
 * publish: record.json + files/, renameat2(RENAME_NOREPLACE).
 *
 * The outer command (run/outer.h) owns the run directory and the
 * coordinator, and cleans up after a lost one. */
#ifndef JIG_RUN_FLOW_RUN_H
#define JIG_RUN_FLOW_RUN_H

#include <jansson.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/limits.h"
#include "util/error.h"

struct jig_run_input {
	const char *name, *path;
};

struct jig_run_request {
	const char *flow, *output, *project, *verification;
	uint64_t timeout_ms; /* the Run's deadline, from its acceptance (R-L01) */
	uint64_t expiry_ms;  /* the command's absolute expiry from its start, 0: none (R-L05; for the record) */
	struct jig_run_input inputs[JIG_MAX_INPUTS];
	size_t n_inputs;
	const char *run_dir; /* the outer command's private directory */
	int outer_pid;	     /* the outer command: it may share our cgroup */
	/* Without a delegated cgroup: ask for a transient scope, or say why
	 * there is none. */
	bool may_need_transient_scope;
	const char *no_transient_scope_why;
	/* --display web: a live view after admission (display/live.c), the
	 * link on display_to (the command's stdout); it retires before the
	 * packet is committed. */
	bool display;
	FILE *display_to;
};

/* A Run that published its packet (whatever its status). */
struct jig_run_outcome {
	json_t *record; /* owned by the caller */
	bool succeeded;
	bool needs_transient_scope; /* nothing ran: ask systemd for a delegated scope */
};

/* 0 with *out (a packet was published, or needs_transient_scope), or a
 * negative code with e (nothing was published). */
int jig_run_flow(const struct jig_run_request *req, struct jig_run_outcome *out, struct jig_error *e);

#endif
