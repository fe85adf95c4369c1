/* Development aid, not part of the module ABI: built with -DJIG_TRACE=ON,
 * every JIG_TRACE_POINT("phase") prints "jig-trace PID MS phase" (MS on
 * CLOCK_MONOTONIC) to stderr, in the host and in modules alike, so one
 * launch can be split into phases (bench/trace.sh). Otherwise the points
 * compile to nothing. */
#ifndef JIG_TRACE_H
#define JIG_TRACE_H

#ifdef JIG_TRACE
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#define JIG_TRACE_POINT(phase)                                                                    \
	do {                                                                                      \
		struct timespec jig_ts_;                                                          \
		clock_gettime(CLOCK_MONOTONIC, &jig_ts_);                                         \
		fprintf(stderr, "jig-trace %d %.3f %s\n", (int)getpid(),                          \
			(double)jig_ts_.tv_sec * 1e3 + (double)jig_ts_.tv_nsec / 1e6, (phase));    \
	} while (0)
#else
#define JIG_TRACE_POINT(phase) ((void)0)
#endif

#endif
