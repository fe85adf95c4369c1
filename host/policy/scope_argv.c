/* A scope's launch argv from its composed template (see scope_argv.h). */
#include "policy/scope_argv.h"

int jig_scope_argv(const struct jig_scope_template *t, const char *const *call, size_t n_call, const char **out,
		   size_t cap, struct jig_error *e)
{
	size_t n;
	for (n = 0; t->argv[n] && n < cap; n++)
		out[n] = t->argv[n];
	if (t->argv[n] || n + n_call + 1 > cap)
		return jig_err(e, JIG_E_INTERNAL, "a scope's argv over %zu entries", cap - 1);
	for (size_t i = 0; i < n_call; i++)
		out[n++] = call[i];
	out[n] = NULL;
	return 0;
}
