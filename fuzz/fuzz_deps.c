/* A Flow's package.json NUL bun.lock, checked as review does. */
#include "prepare/deps.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const char *a, *b;
	size_t an, bn;
	fuzz_split(d, n, &a, &an, &b, &bn);
	fuzz_put("package.json", a, an);
	fuzz_put("bun.lock", b, bn);
	int fd = open(fuzz_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct jig_deps deps;
	struct jig_error e = {0};
	if (jig_deps_check(fd, "fuzz", &deps, &e) == 0)
		jig_deps_free(&deps);
	close(fd);
	return 0;
}
