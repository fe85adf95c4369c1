/* The operator's agents.json (provider "fake", with its credential). */
#include "effects/agents.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static int once;
	if (!once++) {
		char p[512];
		snprintf(p, sizeof(p), "%s/jig", fuzz_dir());
		mkdir(p, 0700);
		setenv("XDG_CONFIG_HOME", fuzz_dir(), 1);
	}
	fuzz_put("jig/agents.json", d, n);
	struct jig_agent_provider p;
	struct jig_error e = {0};
	jig_agent_provider_get("fake", true, &p, &e);
	jig_agent_provider_free(&p);
	return 0;
}
