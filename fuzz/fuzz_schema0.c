/* Schema/0: a schema NUL a value; the schema checked, then the value
 * validated against it. */
#include <jansson.h>

#include "util/schema0.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const char *a, *b;
	size_t an, bn;
	fuzz_split(d, n, &a, &an, &b, &bn);
	json_t *schema = json_loadb(a, an, JSON_REJECT_DUPLICATES, NULL);
	json_t *value = json_loadb(b, bn, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	struct jig_error e = {0};
	if (schema && jig_schema0_check(schema, &e) == 0 && value)
		jig_schema0_validate(schema, value, &e);
	json_decref(schema);
	json_decref(value);
	return 0;
}
