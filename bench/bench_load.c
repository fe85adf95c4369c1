/* verify+load time per module: SHA-256 (in place for an unprivileged caller
 * and a module root owns, else while copying into a sealed memfd), dlopen,
 * descriptor checks, init/fini, dlclose. With "cached", as jig's commands
 * load modules by default: a verifier in cached mode vouches for an
 * unchanged root-owned inode it saw hashed (decision 85), so only the first
 * load hashes. Usage: bench_load DIR MODULE [N [cached]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapshot/loader.h"
#include "snapshot/verify.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = argc > 3 ? atoi(argv[3]) : 200;
	struct jig_snapshot s;
	struct jig_error e = {0};
	if (jig_snapshot_open_dir(&s, argv[1], &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	struct jig_verifier v;
	bool cached = argc > 4 && strcmp(argv[4], "cached") == 0;
	if (cached) {
		if (jig_verifier_init(&v, "cached", JIG_VERIFY_CACHED, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
		s.verifier = &v;
	}
	const struct jig_manifest_module *mm = jig_manifest_find_module(&s.m, argv[2]);
	if (!mm)
		return 1;
	double best = 1e9, total = 0;
	for (int i = 0; i < n; i++) {
		struct jig_module_handle h;
		double t0 = now();
		if (jig_module_load(&s, argv[2], 0, &h, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
		jig_module_unload(&h);
		double dt = now() - t0;
		total += dt;
		if (dt < best)
			best = dt;
	}
	printf("%s: %llu bytes, %d loads%s: mean %.1f us, best %.1f us\n", argv[2],
	       (unsigned long long)mm->file->size, n, cached ? " (cached verification)" : "", total / n * 1e6,
	       best * 1e6);
	jig_snapshot_close(&s);
	return 0;
}
