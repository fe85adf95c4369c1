/* The scope catalog (policy/catalog.json). */
#include "fuzz.h"
#include "policy/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct jig_catalog c;
	struct jig_error e = {0};
	if (jig_catalog_parse((const char *)d, n, &c, &e) == 0)
		jig_catalog_free(&c);
	return 0;
}
