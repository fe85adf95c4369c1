/* The snapshot manifest: manifest.json NUL manifest.files. */
#include "fuzz.h"
#include "snapshot/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const char *a, *b;
	size_t an, bn;
	fuzz_split(d, n, &a, &an, &b, &bn);
	struct jig_manifest m;
	struct jig_error e = {0};
	if (jig_manifest_parse(&m, a, an, b, bn, &e) == 0) {
		for (size_t i = 0; i < m.nfiles; i++)
			if (jig_manifest_find_file(&m, m.files[i].path) != &m.files[i])
				abort();
		jig_manifest_free(&m);
	}
	return 0;
}
