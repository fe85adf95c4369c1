/* A Markdown recipe's front matter (host/flow/recipe.c, libyaml). */
#include "flow/recipe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > JIG_RECIPE_MAX_BYTES)
		return 0;
	json_t *fm = NULL;
	size_t body;
	struct jig_error e = {0};
	if (jig_recipe_front_matter((const char *)d, n, "recipe", &fm, &body, &e) == 0 && body > n)
		abort();
	json_decref(fm);
	return 0;
}
