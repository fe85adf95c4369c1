/* One child Flow of a binding, dispatched by call.c in a thread of its
 * own: see child.c. */
#ifndef JIG_RUN_CHILD_H
#define JIG_RUN_CHILD_H

#include <limits.h>

#include "run/call.h"
#include "run/flow_effects.h"

struct jig_child {
	struct jig_call_caller *caller;
	struct jig_run0 *r0; /* the caller's: the reply goes there */
	const struct jig_binding *b;
	const struct jig_flow *f;
	json_int_t id;
	unsigned seq;
	bool launched; /* a scope was asked for: its cleanup must be confirmed */
	char key[48]; /* the ledger's id */
	char dir[32]; /* child-<seq> beside the root's package */
	char run_dir[PATH_MAX];
	struct jig_reservation res;
	bool picked; /* per-call inputs: only the read map's entries in pick */
	bool pick[JIG_MAX_DECLARED];
	json_t *inputs; /* borrowed from the op, during admit */
	bool stage_slot;
	bool stage_left; /* its import stage's removal was not confirmed: the caller was ended (R-S05) */
	uint64_t wall_ms;
	long long started_ms; /* wall clock (ms since the epoch) just before its launch, for the record's timeline */
	int dirfd, devnull, sv[2], ab[2], cancel[2], relay_stop[2];
	struct jig_run0 cr0;
	bool have_cr0;
	struct jig_call_caller callee;
	struct jig_flow_effects fx;
	struct jig_scope_result sr;
	json_t *node, *outputs, *staged;
	char why[700];
	const char *status;
};

/* A child of caller for binding b (Run/0 call id, per-call inputs or
 * NULL), not yet admitted; NULL when out of memory. */
struct jig_child *jig_child_new(struct jig_call_caller *caller, struct jig_run0 *r0, const struct jig_binding *b,
				json_int_t id, json_t *inputs);
/* The child's thread (admitted, reserved): run, collect, clean up,
 * release, answer on the caller's Run/0, free. */
void *jig_child_main(void *arg);
void jig_child_free(struct jig_child *c);

#endif
