/* Opening an installed snapshot, as every command does: the libdir and
 * snapshot directory checks, reading manifest.json and manifest.sig, the
 * Ed25519 verification and parsing the manifest. Usage:
 * bench_open LIBDIR [N]  (LIBDIR: <prefix>/lib/jig) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snapshot/snapshot.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int n = argc > 2 ? atoi(argv[2]) : 100;
	double best = 1e9, total = 0;
	size_t files = 0;
	for (int i = 0; i < n; i++) {
		struct jig_snapshot s;
		struct jig_error e = {0};
		double t0 = now();
		if (jig_snapshot_open_installed(&s, argv[1], &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
		double dt = now() - t0;
		files = s.m.nfiles;
		jig_snapshot_close(&s);
		total += dt;
		if (dt < best)
			best = dt;
	}
	printf("open %s: %zu files, %d opens: mean %.2f ms, best %.2f ms\n", argv[1], files, n, total / n * 1e3,
	       best * 1e3);
	return 0;
}
