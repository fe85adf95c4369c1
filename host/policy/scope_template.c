/* A composed scope template kept as data and restored (a remembered
 * admission, flow/memo.h; decision 179): the only place outside
 * composition that fills a template's argv. */
#include "policy/catalog.h"

#include <stdlib.h>
#include <string.h>

int jig_scope_template_restore(const char *policy, const json_t *argv, const char *hold, const char *home,
			       struct jig_scope_template *t)
{
	memset(t, 0, sizeof(*t));
	struct jig_error ignored;
	size_t n = json_array_size(argv);
	if (!policy || n == 0 || jig_scope_policy_parse(policy, strlen(policy), home, JIG_POLICY_SLOTS, &t->policy, &ignored) < 0)
		return -1;
	int r = (t->argv = calloc(n + 1, sizeof(char *))) && (!hold || (t->hold = strdup(hold))) ? 0 : -1;
	for (size_t i = 0; !r && i < n; i++)
		if (!json_is_string(json_array_get(argv, i)) || !(t->argv[i] = strdup(json_string_value(json_array_get(argv, i)))))
			r = -1;
	if (r)
		jig_scope_template_free(t);
	return r;
}
