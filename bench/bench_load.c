/* verify+load time per module: copy into a sealed memfd, SHA-256, dlopen,
 * descriptor checks, init/fini, dlclose. Usage: bench_load DIR MODULE [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snapshot/loader.h"

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
	printf("%s: %llu bytes, %d loads: mean %.1f us, best %.1f us\n", argv[2],
	       (unsigned long long)mm->file->size, n, total / n * 1e6, best * 1e6);
	jig_snapshot_close(&s);
	return 0;
}
