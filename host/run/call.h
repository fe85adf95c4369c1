/* Bindings at run time (issue 17, docs/bindings.md): `await jig.call(b)`
 * dispatches the reviewed child Flow of binding b in a scope of its own
 * while its caller stays live.
 *
 *   shape:    the root has at most two calls in flight, a child one; at
 *             most five child levels
 *   reserve:  before dispatch, the binding's branch reservation (pinned in
 *             the Plan) is added to the root's durable ledger
 *             (<run dir>/reservations.json, written and synced); a sum over
 *             the root budget is refused and nothing runs
 *   run:      package, the read map's whole inputs of the caller, the
 *             child's own Run/0, effects and bindings; its deadline is the
 *             binding's, capped by the root's
 *   collect:  after fencing, final validation of the child's output; the
 *             write map's files streamed into one of the caller's (at most
 *             two) import stages, hidden on the caller's own output tmpfs
 *             (decision 115), then renamed into its /output, no-replace
 *   release:  the reservation goes only when the child's cgroup cleanup and
 *             the removal of its directory are confirmed; otherwise it is
 *             held for the rest of the Run (the record says so)
 *
 * The record of the root Run holds the tree: every child with its binding,
 * scope policy digest, reservation, outcome, termination facts, cleanup,
 * effects and children. */
#ifndef JIG_RUN_CALL_H
#define JIG_RUN_CALL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "flow/binding.h"
#include "flow/plan.h"
#include "flow/project.h"
#include "util/limits.h"
#include "run/run0.h"
#include "sandbox/door.h"

/* One root Run's ledger and what every child launch needs. */
struct jig_call_root {
	pthread_mutex_t lock;
	struct jig_project *p;
	const struct jig_plan *pl;
	struct jig_sandbox *sb;
	int init_fd, outer_pid;
	const char *run_dir; /* the root's private run directory; children below it */
	int rundir;
	long long deadline_ms; /* the root's, CLOCK_MONOTONIC */
	struct jig_reservation reserved, peak;
	json_t *live; /* the live reservations, as in reservations.json */
	unsigned seq;
	unsigned edges; /* child edges live (JIG_CALL_MAX_LIVE) */
	bool held; /* a reservation is held after unconfirmed cleanup */
};

/* One Flow that may call (the root or a child with a binding). */
struct jig_call_caller {
	struct jig_call_root *root;
	const struct jig_flow *f;
	unsigned level; /* 0: the root */
	int rundir;	/* its private directory: input/ */
	int outroot;	/* its output tmpfs's root (pub/, stage/), or -1 (decision 115) */
	int abort_fd;	/* readable when the caller is fenced: its children are */
	json_t *children; /* its record subtree (under root->lock) */
	unsigned in_flight, stages;
	pthread_t threads[JIG_CALL_MAX_CALLS];
	size_t n_threads;
};

/* The root's own envelope is the ledger's first entry. */
int jig_call_root_init(struct jig_call_root *root, const struct jig_scope_template *own, struct jig_error *e);
void jig_call_root_free(struct jig_call_root *root);
/* The ledger's summary for the record. */
json_t *jig_call_root_json(struct jig_call_root *root);

/* Run/0's "call" and "imported" for caller (struct jig_call_caller *). */
void jig_call_op(void *caller, struct jig_run0 *r0, json_t *op);
/* Waits for every child of caller (they are fenced when its abort_fd is
 * readable). */
void jig_call_join(struct jig_call_caller *c);
/* The sandbox's output_ready for a caller (struct jig_call_caller *):
 * its output tmpfs's root, where its import stages go. */
void jig_call_output_ready(void *caller, int root_fd);
/* Closes the caller's output root (after its children are joined). */
void jig_call_output_close(struct jig_call_caller *c);

#endif
