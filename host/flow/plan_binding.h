/* The Plan's part of bindings (flow/binding.h): the shape rules and the
 * reservations of every Flow taken as a root, and their text. */
#ifndef JIG_FLOW_PLAN_BINDING_H
#define JIG_FLOW_PLAN_BINDING_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

struct jig_plan;
struct jig_project;

/* The shape rules and the reservations of every Flow taken as a root,
 * from the Plan's composed scopes: each binding's "reserves" and each
 * bound Flow's "root_reservation" into its entry of flows, and the fixed
 * policy into *budget (NULL when no Flow has bindings, so such Plans keep
 * their identity). A violation is one line naming the rule. */
int jig_binding_plan(const struct jig_project *p, const struct jig_plan *pl, json_t *flows, json_t **budget,
		     struct jig_error *e);

/* The Plan text of a Flow's bindings (its entry fj); one exactly as in
 * was (the admitted Plan's entry of the Flow, or NULL) is not printed
 * again: returns how many. */
size_t jig_binding_print(FILE *out, json_t *fj, json_t *was);

#endif
