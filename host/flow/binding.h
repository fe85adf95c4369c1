/* Bindings (issue 17, docs/bindings.md): a Flow's named child Flows of
 * the same project (flow.json "bindings"), each with a deadline, a read
 * map (child input <- the caller's whole input) and a write map (child
 * output -> the caller's output), and the fixed root budget they are
 * reserved against. Review checks the contract's shape rules for every
 * Flow as a root and pins each binding's branch reservation in the Plan;
 * a Run reserves it before dispatch (run/call.c). */
#ifndef JIG_FLOW_BINDING_H
#define JIG_FLOW_BINDING_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flow/project.h"
#include "util/limits.h"


/* The fixed reservation policy (the contract's root budget; its numbers are util/limits.h's). */
#define JIG_ROOT_BUDGET_FORMAT "jig-root-budget/1"

struct jig_binding_map {
	char *child, *caller; /* read: child input <- caller input; write: child output -> caller output */
};

/* A read-only project-relative resource tree (R-S04): the child's input
 * child, captured at review into Package/0 as its own jig-package/1
 * manifest (sha256), pinned in the Plan and projected into each Run. */
struct jig_binding_res {
	char *child, *path;
	char sha256[JIG_SHA256_HEX]; /* set by capture */
	uint64_t bytes;
	size_t files;
};

struct jig_binding {
	char *name, *flow;
	uint64_t timeout_ms;
	struct jig_binding_map *read, *write;
	size_t n_read, n_write;
	struct jig_binding_res *res;
	size_t n_res;
};

struct jig_reservation {
	uint64_t memory_bytes;
	uint64_t tasks;
	uint64_t cpu_quota_us;
};

/* flow.json "bindings": {NAME: {"flow", "timeout_ms", "read"?, "write"?,
 * "resources"?}}. */
int jig_binding_parse(json_t *obj, const char *what, struct jig_flow *f, struct jig_error *e);
void jig_binding_free(struct jig_flow *f);
/* After every Flow is parsed: each target exists, each map names the
 * child's and the caller's declared inputs and outputs, and the Flows in
 * a binding relation are marked bound (their scope kind is flow-bound). */
int jig_binding_link(struct jig_project *p, struct jig_error *e);
/* Captures every binding's resource trees (beneath the project root) into
 * the store (store) or only hashes them (a Run's check against the Plan).
 * *used is the store's size, updated. */
int jig_binding_capture(struct jig_project *p, bool store, uint64_t *used, struct jig_error *e);

const struct jig_binding *jig_flow_binding(const struct jig_flow *f, const char *name);

/* Reservation arithmetic: a + b, and whether r fits the root budget. */
void jig_reservation_add(struct jig_reservation *a, const struct jig_reservation *b);
int jig_reservation_fits(const struct jig_reservation *r);
json_t *jig_reservation_json(const struct jig_reservation *r);
int jig_reservation_from_json(json_t *v, struct jig_reservation *r);

#endif
