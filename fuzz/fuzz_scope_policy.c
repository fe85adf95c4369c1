/* A scope policy (jig scope run POLICY): plain, and with runtime slots. */
#include "fuzz.h"
#include "policy/scope_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	for (unsigned flags = 0; flags <= JIG_POLICY_SLOTS; flags++) {
		struct jig_scope_policy p;
		struct jig_error e = {0};
		if (jig_scope_policy_parse((const char *)d, n, "/home/operator", flags, &p, &e) == 0)
			jig_scope_policy_free(&p);
	}
	return 0;
}
