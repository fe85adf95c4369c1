#!/bin/sh
# Per-phase times of one jig command built with -DJIG_TRACE=ON: reads the
# command's stderr and prints, for each "jig-trace PID MS PHASE" line, the
# milliseconds since the previous one and the phase that ended there.
#   cmake -S . -B build-trace -DJIG_TRACE=ON && cmake --build build-trace
#   build-trace/jig scope run POLICY -- /bin/true 2>&1 | sh bench/trace.sh
awk '$1 == "jig-trace" {
	if (n++) printf "%9.3f ms  %s\n", $3 - prev, substr($0, index($0, $4));
	else printf "%9s     %s (pid %s)\n", "", substr($0, index($0, $4)), $2;
	if (n == 1) first = $3;
	prev = $3
} END { if (n) printf "%9.3f ms  in all, first to last point\n", prev - first }'
