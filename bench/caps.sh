#!/bin/sh
# The trusted side's memory under a hostile Flow (issue 31), inside the
# supported-host VM:
#   tests/vm/run --timeout 1800 -- sh bench/caps.sh build
# Runs tests/flow/saturate (every channel to the trusted side at once: ~1 MiB
# log lines straight to Run/0, every effect at its count cap with evidence
# over its size cap, and four children flooding their own Run/0 ("saturate")
# or 16 one-MiB checkpoints ("hoard"; review never grants a checkpoint
# beside bindings)) at growing sizes, and with no log line. For each:
# the peak resident memory (VmHWM, sampled every 100 ms) of every jig
# process (outer command, coordinator, supervisors, recovery), the largest
# and their sum, the wall time, and record.json's size. The bound to compare
# with is docs/reliability.md's ("The trusted side's memory").
# jig runs from a copy on the guest's tmpfs (see bench/scope.sh).
set -eu
B=$(cd "${1:-build}" && pwd)
S=$(cd "$(dirname "$0")/.." && pwd)
. "$S/tests/flow/rss.sh"
T=$(mktemp -d)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
cp -a "$B/test-prefix" "$T/prefix"
JIG=$T/prefix/bin/jig
cp -r "$S/tests/flow/saturate" "$T/p"
cd "$T/p"
"$JIG" review --yes >/dev/null

# sample NAME FLOW PLAN: one jig run of FLOW with PLAN.
sample() {
	echo "$3" >"$T/plan"
	chmod -R u+w "$T/out" 2>/dev/null || true
	rm -rf "$T/out"
	start=$(date +%s%N)
	"$JIG" run "$2" --output "$T/out" --input plan="$T/plan" --timeout 20m >"$T/run.out" 2>&1 &
	pid=$!
	rss_watch "$pid"
	rc=0
	wait "$pid" || rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	one=$(awk '$2 > m {m = $2} END {print int(m / 1024)}' "$T/rss")
	all=$(awk '{s += $2} END {print int(s / 1024)}' "$T/rss")
	n=$(wc -l <"$T/rss")
	size=$(stat -c %s "$T/out/record.json" 2>/dev/null || echo 0)
	status=$(jq -r .status "$T/out/record.json" 2>/dev/null || echo none)
	inspect=ok
	"$JIG" inspect "$T/out" >/dev/null 2>&1 || inspect=REFUSED
	echo "$1: exit $rc, $status, $ms ms; $n jig processes, largest peak $one MiB, sum of peaks $all MiB; record.json $size bytes, jig inspect $inspect"
}

sample "saturate, no log line (every effect, 4 children)" saturate '{"logs": 0, "kid_logs": 0}'
sample "saturate, 200 one-MiB lines (issue 31's), 4 children of 50" saturate '{"logs": 200, "kid_logs": 50}'
sample "hoard, 200 one-MiB lines, 16 one-MiB checkpoints" hoard '{"logs": 200}'
