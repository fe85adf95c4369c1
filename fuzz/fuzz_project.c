/* A project: jig.json NUL flow.json (of the flow at "f"), opened as every
 * command opens it. */
#include "flow/project.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const char *a, *b;
	size_t an, bn;
	static int once;
	if (!once++) {
		char p[512];
		snprintf(p, sizeof(p), "%s/f", fuzz_dir());
		mkdir(p, 0700);
	}
	fuzz_split(d, n, &a, &an, &b, &bn);
	fuzz_put("jig.json", a, an);
	fuzz_put("f/flow.json", b, bn);
	struct jig_project p;
	struct jig_error e = {0};
	if (jig_project_open(fuzz_dir(), &p, &e) == 0)
		jig_project_close(&p);
	return 0;
}
