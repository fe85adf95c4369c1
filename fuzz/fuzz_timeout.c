/* --timeout's value. */
#include "flow/timeout.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 256)
		return 0;
	char *s = fuzz_cstr(d, n);
	uint64_t ms;
	struct jig_error e = {0};
	jig_parse_timeout(s, &ms, &e);
	free(s);
	return 0;
}
