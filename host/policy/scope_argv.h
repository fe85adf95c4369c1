/* The argv a scope is launched with (issue 32): the composed template's,
 * which the Plan prints, followed by the values of one call. Built here
 * and nowhere else, so a kind's fixed argv in the catalog is never
 * dropped on the way to the launch. */
#ifndef JIG_POLICY_SCOPE_ARGV_H
#define JIG_POLICY_SCOPE_ARGV_H

#include <stddef.h>

#include "policy/catalog.h"
#include "util/error.h"

/* out[0..cap): the template's argv, then call[0..n_call), then NULL. The
 * strings are borrowed. 0, or a negative code when they do not fit. */
int jig_scope_argv(const struct jig_scope_template *t, const char *const *call, size_t n_call, const char **out,
		   size_t cap, struct jig_error *e);

#endif
