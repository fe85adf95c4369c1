/* jig scope run's core: one policy from the operator, run as it is (no
 * slots), the standard streams relayed through pipes. */
#ifndef JIG_RUN_SCOPE_RUN_H
#define JIG_RUN_SCOPE_RUN_H

#include <jig/sandbox.h>

#include "policy/scope_policy.h"
#include "proc/terminal.h"
#include "util/error.h"

/* Runs prog in the scope p describes and fills *res (complete when the
 * scope is fenced). A launch the module refused is an error with
 * res->needs_delegation telling whether a delegated cgroup would help.
 * term (opened, NULL: none): p may use the descriptor slot "@terminal"
 * (and no other), filled with its slave; a slave at descriptor 0 becomes
 * the payload's controlling terminal; the relay runs while the scope
 * does and is stopped (the operator's mode restored) before this returns. */
int jig_scope_run(const struct jig_scope_policy *p, char *const *prog, struct jig_terminal *term,
		  struct jig_scope_result *res, struct jig_error *e);

/* The command's exit status for a result: the payload's, 124 timeout,
 * 125 OOM, 128+n signal, 1 failed or cleanup not confirmed. */
int jig_scope_exit_status(const struct jig_scope_result *res);

#endif
